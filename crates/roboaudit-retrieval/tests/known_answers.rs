//! Known-answer audits of matrices worked by hand (values derived in the comments).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roboaudit_retrieval::synthetic::{CaseEmbedding, from_matrix};
use roboaudit_retrieval::{AuditConfig, AuditReport, RetrievalError, RuleReport, run_audit};
use roboaudit_types::Perturbation;

const TOL: f64 = 1e-12;

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < TOL, "{a} != {b}");
}

fn config() -> AuditConfig {
    AuditConfig {
        seed: 11,
        resamples: 2_000,
        permutations: 2_000,
        library_sizes: vec![],
        random_subsets: 0,
        power_rates: vec![1.0],
        power_replicates: 50,
        ..AuditConfig::default()
    }
}

fn audit(p: &[Vec<f64>], seeds: usize, emb: &[CaseEmbedding]) -> AuditReport {
    let perts = [Perturbation::Appearance, Perturbation::Layout];
    run_audit(
        &from_matrix(p, seeds, &perts, emb),
        &config().check().unwrap(),
    )
    .unwrap()
}

fn rule<'a>(report: &'a AuditReport, name: &str) -> &'a RuleReport {
    report
        .rules
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no rule {name}"))
}

fn basis(i: usize) -> Vec<f32> {
    (0..3).map(|j| if i % 3 == j { 1.0 } else { 0.0 }).collect()
}

fn identity() -> Vec<Vec<f64>> {
    (0..3)
        .map(|e| (0..3).map(|s| if e == s { 1.0 } else { 0.0 }).collect())
        .collect()
}

/// Top-pick deletion off (the core audit the benchmark times): every rule's deletion is null with
/// the reason, and nothing else of the report moves.
#[test]
fn top_pick_deletion_off_changes_nothing_else() {
    let p = vec![
        vec![1.0, 0.0, 0.5],
        vec![0.5, 1.0, 0.0],
        vec![0.0, 0.5, 1.0],
    ];
    let emb = vec![(
        "vis".to_string(),
        vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![-1.0, 0.5]],
        vec![vec![1.0, 0.2], vec![0.1, 1.0], vec![-1.0, 0.4]],
    )];
    let perts = [Perturbation::Appearance, Perturbation::Layout];
    let inputs = from_matrix(&p, 2, &perts, &emb);
    let on = run_audit(&inputs, &config().check().unwrap()).unwrap();
    let off_config = AuditConfig {
        top_pick_deletion: false,
        ..config()
    };
    let mut off = run_audit(&inputs, &off_config.check().unwrap()).unwrap();
    let nn = rule(&on, "nn/vis/cosine");
    assert!(
        nn.top_pick_deletion.is_some(),
        "deterministic rules re-run by default"
    );
    for r in &mut off.rules {
        assert!(r.top_pick_deletion.is_none());
        assert_eq!(
            r.top_pick_deletion_reason.as_deref(),
            Some("top-pick deletion is off (config top_pick_deletion = false)")
        );
        let same = on.rules.iter().find(|o| o.name == r.name).unwrap();
        r.top_pick_deletion.clone_from(&same.top_pick_deletion);
        r.top_pick_deletion_reason
            .clone_from(&same.top_pick_deletion_reason);
    }
    off.config.top_pick_deletion = true;
    assert_eq!(off, on);
}

/// e0 = [1, 1, 1, .5], e1 = [0, .5, 0, 1], e2 = [0, 0, .5, 0] (2 seeds); every scene embedding
/// is closest to e0. q = (7/8, 3/8, 1/8), R = 11/24, O = 1, BF = 7/8.
#[test]
fn one_experience_dominates() {
    let p = vec![
        vec![1.0, 1.0, 1.0, 0.5],
        vec![0.0, 0.5, 0.0, 1.0],
        vec![0.0, 0.0, 0.5, 0.0],
    ];
    let emb = vec![(
        "vis".to_string(),
        vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![-1.0, 0.0]],
        vec![vec![1.0, 0.2]; 4],
    )];
    let report = audit(&p, 2, &emb);
    let r = &report.reference;
    close(r.random, 11.0 / 24.0);
    close(r.oracle, 1.0);
    close(r.best_fixed, 0.875);
    assert_eq!(r.best_fixed_experience, "e0");
    close(r.headroom, 0.125);
    close(r.best_fixed_advantage.unwrap(), 10.0 / 13.0);
    close(r.oracle_top_pick_share, 0.75);
    assert!(!r.advantage_unstable);
    for name in ["nn/vis/cosine", "nn/vis/l2"] {
        let nn = rule(&report, name);
        close(nn.success, 0.875);
        close(nn.advantage.unwrap(), 10.0 / 13.0);
        assert_eq!(nn.top_pick, "e0");
        close(nn.top_pick_share, 1.0);
        close(nn.concentration, 4.0 / 3.0);
        close(nn.top_pick_margin, 10.0 / 24.0);
        close(nn.entropy, 0.0);
        close(nn.effective_number, 1.0);
        close(nn.shuffle.expected, 0.875);
        assert_eq!(nn.shuffle.envelope, [0.875, 0.875]);
        assert!(nn.shuffle.inside);
        close(nn.gap, 0.0);
        assert_eq!(nn.gap_ci, Some([0.0, 0.0]));
        assert_eq!(nn.gap_significant, Some(false));
        // Pooled: positives e0×7, e1×3, e2×1 vs negatives e0×1, e1×5, e2×7 with scores
        // e0 > e1 > e2: (7·12.5 + 3·9.5 + 1·3.5) / (11·13) = 119.5/143.
        close(nn.pooled_auroc.unwrap(), 119.5 / 143.0);
        // Within: scenes 1, 8.5/9, 6.5/9, 6.5/9 → 61/72.
        close(nn.within_query_auroc.unwrap(), 61.0 / 72.0);
        assert_eq!(nn.within_query_eligible, Some(4));
        // Without e0 the rule picks e1 everywhere: SR = 3/8, R' = 1/4, O' = 1/2 → A' = 1/2.
        let del = nn.top_pick_deletion.as_ref().unwrap();
        assert_eq!(del.removed, "e0");
        close(del.rerun.success, 0.375);
        close(del.rerun.advantage.unwrap(), 0.5);
    }
    let bf = rule(&report, "best_fixed");
    close(bf.success, 0.875);
    assert_eq!(bf.selection.get("e0"), Some(&1.0));
    // Recency picks the latest recorded experience, e2.
    close(rule(&report, "recency").success, 0.125);
    let oracle = rule(&report, "oracle");
    close(oracle.success, 1.0);
    close(oracle.advantage.unwrap(), 1.0);
    close(oracle.gap, 0.25);
    assert!(oracle.pooled_auroc.is_none() && oracle.pooled_auroc_reason.is_some());
    // Appearance scenes s0, s2; layout s1, s3. Oracle on appearance: picks e0 twice → G = 0.
    // On layout: picks e0 (s1), e1 (s3): SR = 1, q = (3/4, 3/4), G = 1 − 3/4 = 1/4.
    close(oracle.gap_by_set.appearance.unwrap(), 0.0);
    close(oracle.gap_by_set.layout.unwrap(), 0.25);
    let app = report.reference_by_set.appearance.as_ref().unwrap();
    close(app.random, (1.0 + 0.0 + 0.25) / 3.0);
    close(app.oracle, 1.0);
}

/// Every scene is tied at its maximum: P = [[1, 0], [1, 0]]. O = R = 1/2, so advantage is
/// undefined; the oracle's fractional top share is 1/2 while the tie-broken oracle rule always
/// picks e0 (C = 2); all variance is scene difficulty.
#[test]
fn oracle_ties_everywhere() {
    let p = vec![vec![1.0, 0.0], vec![1.0, 0.0]];
    let emb = vec![(
        "vis".to_string(),
        vec![vec![1.0, 0.0], vec![0.0, 1.0]],
        vec![vec![1.0, 0.5], vec![0.5, 1.0]],
    )];
    let report = audit(&p, 1, &emb);
    let r = &report.reference;
    close(r.oracle, 0.5);
    close(r.random, 0.5);
    close(r.headroom, 0.0);
    assert!(r.best_fixed_advantage.is_none() && r.best_fixed_advantage_reason.is_some());
    assert!(r.advantage_unstable);
    close(report.variance_share.scene.unwrap(), 1.0);
    close(report.variance_share.experience.unwrap(), 0.0);
    let oracle = rule(&report, "oracle");
    assert!(oracle.advantage.is_none() && oracle.advantage_reason.is_some());
    close(oracle.oracle_top_pick_share, 0.5);
    close(oracle.concentration, 2.0);
    let nn = rule(&report, "nn/vis/cosine");
    assert_eq!(nn.choices, vec!["e0", "e1"]);
    close(nn.concentration, 1.0);
    // Pooled: positives score (0.894, 0.447), negatives (0.447, 0.894) → 2/4.
    close(nn.pooled_auroc.unwrap(), 0.5);
    // Each scene has one outcome only: no scene is eligible.
    assert_eq!(nn.within_query_eligible, Some(0));
    assert!(nn.within_query_auroc.is_none() && nn.within_query_auroc_reason.is_some());
    let json = serde_json::to_string(&report).unwrap();
    assert!(!json.contains("NaN") && !json.contains("inf"));
}

/// Identity P (3×3) with scene s_i embedded on e_i: every visual rule is the oracle.
#[test]
fn visual_rule_is_perfect() {
    let v: Vec<Vec<f32>> = (0..3).map(basis).collect();
    let report = audit(&identity(), 2, &[("vis".to_string(), v.clone(), v)]);
    for name in [
        "nn/vis/cosine",
        "nn/vis/l2",
        "csls/vis",
        "mp_empirical/vis",
        "mp_gaussian/vis",
    ] {
        let r = rule(&report, name);
        assert_eq!(r.choices, vec!["e0", "e1", "e2"], "{name}");
        close(r.success, 1.0);
        close(r.advantage.unwrap(), 1.0);
        close(r.shuffle.expected, 1.0 / 3.0);
        close(r.gap, 2.0 / 3.0);
        close(r.top_pick_share, 1.0 / 3.0);
        close(r.oracle_top_pick_share, 1.0 / 3.0);
        close(r.concentration, 1.0);
        close(r.top_pick_margin, 0.0);
        close(r.effective_number, 3.0);
        close(r.pooled_auroc.unwrap(), 1.0);
        close(r.within_query_auroc.unwrap(), 1.0);
        assert_eq!(r.within_query_eligible, Some(3));
        // Shuffled SR = fixed points / 3 ∈ {0 (p 1/3), 1/3 (1/2), 1 (1/6)}.
        assert_eq!(r.shuffle.envelope, [0.0, 1.0]);
        assert!(r.shuffle.inside);
        // Every resample has G = 1 − Σ (c_e/3)² ∈ [0, 2/3].
        let [lo, hi] = r.gap_ci.unwrap();
        assert!(0.0 <= lo && lo <= hi && hi <= 2.0 / 3.0 + TOL, "{lo} {hi}");
        // Without e0, s0 is tied (cos 0 to e1 and e2) and goes to e1: SR = 2/3 = O'.
        close(
            r.top_pick_deletion
                .as_ref()
                .unwrap()
                .rerun
                .advantage
                .unwrap(),
            1.0,
        );
    }
    let rnd = rule(&report, "random");
    assert!((0.0..=1.0).contains(&rnd.success));
}

/// Identity P with scene s_i embedded at e_{i+1} + ½ e_{i+2}: the visual rule always picks a
/// failing experience and ranks the succeeding one last.
#[test]
fn visual_rule_is_anti_correlated() {
    let exps: Vec<Vec<f32>> = (0..3).map(basis).collect();
    let scenes: Vec<Vec<f32>> = (0..3)
        .map(|i| {
            basis(i + 1)
                .iter()
                .zip(basis(i + 2))
                .map(|(a, b)| a + 0.5 * b)
                .collect()
        })
        .collect();
    let report = audit(&identity(), 2, &[("vis".to_string(), exps, scenes)]);
    for name in ["nn/vis/cosine", "nn/vis/l2"] {
        let r = rule(&report, name);
        assert_eq!(r.choices, vec!["e1", "e2", "e0"]);
        close(r.success, 0.0);
        close(r.advantage.unwrap(), -0.5);
        close(r.gap, -1.0 / 3.0);
        close(r.pooled_auroc.unwrap(), 0.0);
        close(r.within_query_auroc.unwrap(), 0.0);
        // Every resample has G = −Σ c_i c_{i+1} / 9 ∈ [−1/3, 0].
        let [lo, hi] = r.gap_ci.unwrap();
        assert!(-1.0 / 3.0 - TOL <= lo && lo <= hi && hi <= 0.0, "{lo} {hi}");
    }
}

/// The structural rule uses the named state representation with L2 (left out of the visual
/// families), the user log is scored like any rule, and recency without timestamps is skipped
/// with its reason.
#[test]
fn structural_user_log_and_skipped_recency() {
    let p = vec![
        vec![1.0, 1.0, 1.0, 0.5],
        vec![0.0, 0.5, 0.0, 1.0],
        vec![0.0, 0.0, 0.5, 0.0],
    ];
    // State features: scenes 0-2 sit on e0, scene 3 on e2 (P = 0 there).
    let state = (
        "state".to_string(),
        vec![vec![0.0, 0.0], vec![5.0, 0.0], vec![0.0, 5.0]],
        vec![
            vec![0.1, 0.0],
            vec![0.0, 0.1],
            vec![0.2, 0.2],
            vec![0.0, 4.0],
        ],
    );
    let mut inputs = from_matrix(&p, 2, &[], &[state]);
    inputs.experiences[1].recorded_at = None;
    inputs.selections = Some(
        ["e0", "e0", "e0", "e1"]
            .iter()
            .enumerate()
            .map(|(s, e)| roboaudit_types::SelectionRecord {
                scene_id: format!("s{s}"),
                experience_id: (*e).to_string(),
            })
            .collect(),
    );
    let config = AuditConfig {
        structural: Some("state".into()),
        ..config()
    };
    let report = run_audit(&inputs, &config.clone().check().unwrap()).unwrap();
    let structural = rule(&report, "structural/state");
    assert_eq!(structural.choices, vec!["e0", "e0", "e0", "e2"]);
    close(structural.success, 0.75);
    assert_eq!(structural.auroc_score.as_deref(), Some("-l2_distance"));
    assert!(report.rules.iter().all(|r| !r.name.starts_with("nn/state")));
    let user = rule(&report, "user_selection");
    close(user.success, 1.0);
    close(user.advantage.unwrap(), 1.0);
    assert!(user.top_pick_deletion.is_none() && user.top_pick_deletion_reason.is_some());
    assert_eq!(report.skipped_rules.len(), 1);
    assert_eq!(report.skipped_rules[0].name, "recency");
    assert!(report.skipped_rules[0].reason.contains("e1"));
    let missing = AuditConfig {
        structural: Some("nope".into()),
        ..config
    };
    let e = run_audit(&inputs, &missing.check().unwrap()).unwrap_err();
    assert!(
        matches!(&e, RetrievalError::UnknownRepresentation { name, available }
            if name == "nope" && available.iter().any(|r| r == "state")),
        "{e}"
    );
}

/// Reference points per scene set include the fresh scenes (SPEC.md §1 "per scene set").
/// P = e0 [1, 0, 1, 0], e1 [0, 1, .5, 1] over scenes appearance, layout, fresh, fresh:
/// fresh scenes s2, s3 give q = (1/2, 3/4), R = 5/8, O = 1, BF = 3/4 (e1).
#[test]
fn fresh_scenes_have_their_own_reference_points() {
    let p = vec![vec![1.0, 0.0, 1.0, 0.0], vec![0.0, 1.0, 0.5, 1.0]];
    let perts = [
        Perturbation::Appearance,
        Perturbation::Layout,
        Perturbation::Fresh,
        Perturbation::Fresh,
    ];
    let report = run_audit(&from_matrix(&p, 2, &perts, &[]), &config().check().unwrap()).unwrap();
    let fresh = report.reference_by_set.fresh.as_ref().unwrap();
    close(fresh.random, 5.0 / 8.0);
    close(fresh.oracle, 1.0);
    close(fresh.best_fixed, 0.75);
    assert_eq!(fresh.best_fixed_experience, "e1");
    // Without fresh scenes the field stays out of the JSON (the contract of older reports).
    let none = audit(&p, 2, &[]);
    assert!(none.reference_by_set.fresh.is_none());
    let json = serde_json::to_value(&none).unwrap();
    assert!(json["reference_by_set"].get("fresh").is_none());
}
