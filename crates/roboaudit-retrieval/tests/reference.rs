//! Comparison with the independent NumPy / scikit-learn implementation
//! (`scripts/reference_retrieval.py`, cases in `tests/data/reference/case_*`, see its README).
//!
//! Deterministic quantities must agree to 1e-9. Monte-Carlo quantities (shuffle envelope, gap
//! and within-query intervals) use different random streams in the two implementations, so each
//! endpoint is compared within the case's `mc_tolerance`: the distance from the reference
//! endpoint to the reference distribution's quantiles at `p ± 4·sqrt(p(1−p)/2000)` (2,000 draws),
//! i.e. the spread an independent run of the same size shows with overwhelming probability.
//! `random` and `track_record` are seeded differently: only their invariants are checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_data::{RetrievalPaths, load_retrieval_inputs};
use roboaudit_retrieval::{AuditConfig, run_audit};
use serde_json::Value;
use std::path::{Path, PathBuf};

const EXACT: f64 = 1e-9;

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reference");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.display()))
        .map(|d| d.unwrap().path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("case_")
        })
        .collect();
    dirs.sort();
    dirs
}

/// Equal within `tol` for numbers, exactly otherwise; null only equals null.
fn same(a: &Value, b: &Value, tol: f64) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() <= tol
        }
        _ => a == b,
    }
}

struct Diff<'a> {
    case: &'a str,
    problems: Vec<String>,
    checked: usize,
}

impl Diff<'_> {
    fn check(&mut self, what: &str, ours: &Value, theirs: &Value, tol: f64) {
        self.checked += 1;
        if !same(ours, theirs, tol) {
            self.problems.push(format!(
                "{}: {what}: ours {ours} vs reference {theirs} (tol {tol})",
                self.case
            ));
        }
    }
    fn fail(&mut self, message: String) {
        self.problems.push(format!("{}: {message}", self.case));
    }
}

fn ptr<'v>(v: &'v Value, path: &str) -> &'v Value {
    v.pointer(path).unwrap_or(&Value::Null)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

fn compare_rule(d: &mut Diff<'_>, ours: &Value, theirs: &Value, tolerances: &Value) {
    let name = theirs["name"].as_str().unwrap();
    let exact = [
        "/success",
        "/advantage",
        "/advantage_unstable",
        "/top_pick",
        "/top_pick_share",
        "/oracle_top_pick_share",
        "/concentration",
        "/entropy",
        "/effective_number",
        "/top_pick_margin",
        "/shuffle/expected",
        "/gap",
        "/gap_by_set/appearance",
        "/gap_by_set/layout",
        "/pooled_auroc",
        "/within_query_auroc",
        "/within_query_eligible",
    ];
    for path in exact {
        d.check(
            &format!("{name}{path}"),
            ptr(ours, path),
            ptr(theirs, path),
            EXACT,
        );
    }
    let empty = serde_json::Map::new();
    let (sel_ours, sel_theirs) = (
        ours["selection"].as_object().unwrap_or(&empty),
        theirs["selection"].as_object().unwrap(),
    );
    for id in sel_ours.keys().chain(sel_theirs.keys()) {
        let zero = Value::from(0.0);
        d.check(
            &format!("{name}/selection/{id}"),
            sel_ours.get(id).unwrap_or(&zero),
            sel_theirs.get(id).unwrap_or(&zero),
            EXACT,
        );
    }
    let tol = |key: &str| {
        tolerances
            .get(format!("{name}/{key}"))
            .and_then(Value::as_f64)
            .unwrap_or(0.005)
    };
    let pairs = [
        ("/shuffle/envelope", "env"),
        ("/gap_ci", "gap_ci"),
        ("/within_query_ci", "wq_ci"),
    ];
    for (path, key) in pairs {
        let (a, b) = (ptr(ours, path), ptr(theirs, path));
        match (a, b) {
            (Value::Array(x), Value::Array(y)) => {
                for i in 0..2 {
                    d.check(
                        &format!("{name}{path}[{i}]"),
                        &x[i],
                        &y[i],
                        tol(key) + 1e-12,
                    );
                }
            }
            _ => d.check(&format!("{name}{path}"), a, b, 0.0),
        }
    }
    // Booleans derived from Monte-Carlo intervals: only where the point is clear of both ends.
    let env = ptr(theirs, "/shuffle/envelope");
    let sr = f(&theirs["success"]);
    if env.is_array()
        && (sr - f(&env[0])).abs() > tol("env")
        && (sr - f(&env[1])).abs() > tol("env")
    {
        d.check(
            &format!("{name}/shuffle/inside"),
            ptr(ours, "/shuffle/inside"),
            ptr(theirs, "/shuffle/inside"),
            0.0,
        );
    }
    let ci = ptr(theirs, "/gap_ci");
    if ci.is_array() && f(&ci[0]).abs() > tol("gap_ci") && f(&ci[1]).abs() > tol("gap_ci") {
        d.check(
            &format!("{name}/gap_significant"),
            ptr(ours, "/gap_significant"),
            ptr(theirs, "/gap_significant"),
            0.0,
        );
    }
}

/// Seeded differently from the reference: shares sum to 1, success is a mean of selected cells,
/// the gap identity holds.
fn check_invariants(d: &mut Diff<'_>, ours: &Value, p_min: f64, p_max: f64) {
    let name = ours["name"].as_str().unwrap();
    let total: f64 = ours["selection"].as_object().unwrap().values().map(f).sum();
    let sr = f(&ours["success"]);
    if (total - 1.0).abs() > 1e-12 || !(p_min - 1e-12..=p_max + 1e-12).contains(&sr) {
        d.fail(format!(
            "{name}: shares sum {total}, success {sr} outside [{p_min}, {p_max}]"
        ));
    }
    if (f(&ours["gap"]) - (sr - f(&ours["shuffle"]["expected"]))).abs() > 1e-12 {
        d.fail(format!("{name}: gap != success - expected"));
    }
}

fn compare_case(dir: &Path) -> Vec<String> {
    let case = dir.file_name().unwrap().to_string_lossy().to_string();
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let paths = RetrievalPaths {
        executions: dir.join("executions.csv"),
        scenes: dir.join("scenes.csv"),
        experiences: dir.join("experiences.csv"),
        embeddings: dir.join("embeddings.csv"),
        selections: None,
    };
    let inputs = load_retrieval_inputs(&paths).unwrap_or_else(|e| panic!("{case}: {e}"));
    let audit_config = AuditConfig {
        seed: config["seed"].as_u64().unwrap(),
        resamples: config["resamples"].as_u64().unwrap() as usize,
        permutations: config["permutations"].as_u64().unwrap() as usize,
        csls_k: config["csls_k"].as_u64().unwrap() as usize,
        library_sizes: vec![],
        random_subsets: 0,
        power_rates: vec![],
        ..AuditConfig::default()
    };
    let report = run_audit(&inputs, &audit_config.check().unwrap())
        .unwrap_or_else(|e| panic!("{case}: {e}"));
    let ours = serde_json::to_value(&report).unwrap();
    let mut d = Diff {
        case: &case,
        problems: Vec::new(),
        checked: 0,
    };
    for key in [
        "/n_scenes",
        "/n_experiences",
        "/variance_share/scene",
        "/variance_share/experience",
        "/own_base_spearman",
    ] {
        d.check(key, ptr(&ours, key), ptr(&expected, key), EXACT);
    }
    let fields = [
        "n_scenes",
        "random",
        "oracle",
        "best_fixed",
        "best_fixed_experience",
        "headroom",
    ];
    for set in [
        "/reference",
        "/reference_by_set/all",
        "/reference_by_set/appearance",
        "/reference_by_set/layout",
    ] {
        if ptr(&expected, set).is_null() || ptr(&ours, set).is_null() {
            d.check(
                set,
                &Value::Bool(ptr(&ours, set).is_null()),
                &Value::Bool(ptr(&expected, set).is_null()),
                0.0,
            );
            continue;
        }
        for field in fields
            .iter()
            .filter(|f| set != "/reference" || **f != "n_scenes")
        {
            let path = format!("{set}/{field}");
            d.check(&path, ptr(&ours, &path), ptr(&expected, &path), EXACT);
        }
    }
    let skip: Vec<&str> = config["skip_rules"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let (p_min, p_max) = p_range(&inputs);
    for theirs in expected["rules"].as_array().unwrap() {
        let name = theirs["name"].as_str().unwrap();
        if skip.contains(&name) {
            continue;
        }
        let Some(mine) = ours["rules"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
        else {
            d.fail(format!("rule {name} missing from the Rust report"));
            continue;
        };
        if name == "random" || name == "track_record" {
            check_invariants(&mut d, mine, p_min, p_max);
        } else {
            compare_rule(&mut d, mine, theirs, &config["mc_tolerance"]);
        }
    }
    let rules = expected["rules"].as_array().unwrap().len();
    if d.checked < 20 * rules {
        d.fail(format!(
            "only {} values compared for {rules} rules",
            d.checked
        ));
    }
    d.problems
}

/// Smallest and largest `P[e,s]` over library × query cells.
fn p_range(inputs: &roboaudit_types::RetrievalInputs) -> (f64, f64) {
    let scenes: std::collections::HashSet<&str> =
        inputs.scenes.iter().map(|s| s.scene_id.as_str()).collect();
    let mut cells: std::collections::HashMap<(&str, &str), (f64, f64)> =
        std::collections::HashMap::new();
    for x in inputs
        .executions
        .iter()
        .filter(|x| scenes.contains(x.scene_id.as_str()))
    {
        let cell = cells.entry((&x.experience_id, &x.scene_id)).or_default();
        cell.0 += f64::from(u8::from(x.success));
        cell.1 += 1.0;
    }
    cells
        .values()
        .map(|(w, n)| w / n)
        .fold((1.0, 0.0), |(lo, hi), p| (f64::min(lo, p), f64::max(hi, p)))
}

#[test]
fn matches_numpy_reference_cases() {
    let dirs = cases();
    assert!(
        !dirs.is_empty(),
        "no reference case folders under tests/data/reference"
    );
    let problems: Vec<String> = dirs.iter().flat_map(|d| compare_case(d)).collect();
    assert!(
        problems.is_empty(),
        "{} mismatches:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
