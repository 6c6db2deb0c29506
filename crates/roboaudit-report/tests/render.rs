//! End-to-end tests of `build_report` and `write_report` on small generated audit outputs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use roboaudit_report::{
    PlotKind, Report, ReportError, build_report, render_html, render_markdown, write_report,
};
use std::path::{Path, PathBuf};

/// A folder with every kind of output: a retrieval run with its audit, a memory audit, an FQE
/// report; returns (root, the DIR arguments).
fn all_fixtures() -> (tempfile::TempDir, Vec<PathBuf>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    common::retrieval_fixture(&root.join("retrieval"));
    common::memory_fixture(&root.join("memory"));
    common::fqe_fixture(&root.join("fqe"));
    let dirs = vec![
        root.join("retrieval/run/audit"),
        root.join("memory"),
        root.join("fqe"),
    ];
    (tmp, dirs)
}

fn scrub(text: &str, root: &Path) -> String {
    text.replace(&root.display().to_string(), "[TMP]")
}

#[test]
fn markdown_snapshot() {
    let (tmp, dirs) = all_fixtures();
    let report = build_report(&dirs).unwrap();
    insta::assert_snapshot!("report_md", scrub(&render_markdown(&report), tmp.path()));
}

#[test]
fn json_snapshot() {
    let (tmp, dirs) = all_fixtures();
    let report = build_report(&dirs).unwrap();
    let json = serde_json::to_string_pretty(&report).unwrap();
    insta::assert_snapshot!("report_json", scrub(&json, tmp.path()));
}

#[test]
fn report_json_round_trips_and_keeps_each_audit_unchanged() {
    let (tmp, dirs) = all_fixtures();
    let report = build_report(&dirs).unwrap();
    let back: Report = serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
    assert_eq!(back, report);
    let on_disk: roboaudit_retrieval::AuditReport = serde_json::from_slice(
        &std::fs::read(tmp.path().join("retrieval/run/audit/audit.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report.retrieval[0].audit, on_disk);
}

#[test]
fn transfer_matrix_reproduces_the_audit() {
    let (_tmp, dirs) = all_fixtures();
    let report = build_report(&dirs).unwrap();
    let s = &report.retrieval[0];
    let m = s
        .transfer
        .as_ref()
        .expect("matrix found in the parent run folder");
    assert!(s.run_dir.as_ref().unwrap().ends_with("run"));
    let spec = common::spec(1);
    assert_eq!(
        (m.experiences.len(), m.scenes.len()),
        (spec.experiences, spec.scenes)
    );
    assert_eq!(m.executions, spec.experiences * spec.scenes * spec.seeds);
    // Row means are the audit's q(e); the column maxima average to the oracle.
    for (row, e) in m.success.iter().zip(&s.audit.experiences) {
        let q = row.iter().sum::<f64>() / row.len() as f64;
        assert!((q - e.quality).abs() < 1e-12, "{} {q} {}", e.id, e.quality);
    }
    let oracle = (0..m.scenes.len())
        .map(|j| m.success.iter().map(|r| r[j]).fold(0.0, f64::max))
        .sum::<f64>()
        / m.scenes.len() as f64;
    assert!((oracle - s.audit.reference.oracle).abs() < 1e-12);
    // Every cell is a mean over 2 seeds.
    assert!(
        m.success
            .iter()
            .flatten()
            .all(|v| [0.0, 0.5, 1.0].contains(v))
    );
}

#[test]
fn every_available_plot_is_drawn_with_its_caption() {
    let (_tmp, dirs) = all_fixtures();
    let report = build_report(&dirs).unwrap();
    assert_eq!(report.plots.len(), 10);
    // The fixture's fit records no dataset, so its frame strip (tests/frames.rs) is skipped;
    // every chart is drawn.
    let (charts, strips): (Vec<_>, Vec<_>) = report
        .plots
        .iter()
        .partition(|p| p.kind != PlotKind::FqeFrames);
    assert!(charts.iter().all(|p| p.available), "{charts:?}");
    assert_eq!(
        strips.iter().map(|p| p.note.as_deref()).collect::<Vec<_>>(),
        [Some(
            "the fit recorded no dataset (its fqe.json has no `dataset` field)"
        )]
    );
    let html = render_html(&report).unwrap();
    for p in &charts {
        let start = html
            .find(&format!("<figure id=\"{}\"", p.id))
            .unwrap_or_else(|| panic!("{} missing", p.id));
        let end = start + html[start..].find("</figure>").unwrap();
        let figure = &html[start..end];
        assert!(figure.contains("<svg"), "{} has no svg", p.id);
        let caption = p
            .caption
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        assert!(figure.contains(&caption), "{} has no caption", p.id);
        assert!(figure.contains("<text"), "{} has no axis text", p.id);
        assert!(!p.x_label.is_empty() && !p.y_label.is_empty());
        assert!(
            p.caption.ends_with('.') && p.caption.matches(". ").count() == 0,
            "one sentence: {}",
            p.caption
        );
    }
    assert_eq!(html.matches("<svg").count(), charts.len());
}

#[test]
fn html_is_self_contained() {
    let (_tmp, dirs) = all_fixtures();
    let html = render_html(&build_report(&dirs).unwrap())
        .unwrap()
        .to_lowercase();
    for bad in [
        "<script",
        "<link",
        "<img",
        "<iframe",
        "@import",
        "url(",
        "src=",
        "href=\"http",
        "href='http",
    ] {
        assert!(!html.contains(bad), "found {bad}");
    }
    // The only absolute URL is the SVG namespace, which browsers never fetch.
    let urls = html.matches("http://").count() + html.matches("https://").count();
    assert_eq!(
        urls,
        html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
    );
}

/// The notes of skipped retrieval plots say why: no --library-size given (not "no size below
/// K"), and distance-based rules that ran with undefined AUROCs (not "no rule ran").
#[test]
fn skipped_retrieval_plots_give_the_real_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let mut audit = common::write_retrieval_run(&tmp.path().join("run"), 3);
    audit.library_interventions.clear();
    let mut scored = 0;
    for r in &mut audit.rules {
        scored += usize::from(r.auroc_score.is_some());
        r.pooled_auroc = None;
        r.within_query_auroc = None;
        r.pooled_auroc_reason = Some("every execution has the same outcome".to_owned());
    }
    assert!(scored > 0, "the fixture has distance-based rules");
    common::write_json(&tmp.path().join("run/audit"), "audit.json", &audit);
    let report = build_report(&[tmp.path().join("run/audit")]).unwrap();
    let note = |kind: PlotKind| {
        report
            .plots
            .iter()
            .find(|p| p.kind == kind)
            .and_then(|p| p.note.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        note(PlotKind::SubsetConcentration),
        "no --library-size was given, so no library interventions ran"
    );
    assert_eq!(
        note(PlotKind::Auroc),
        "the distance-based rules ran, but no AUROC is defined: every execution has the same outcome"
    );
}

#[test]
fn missing_data_skips_plots_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    // An audit without its run folder and an FQE report without ground truth or curves.
    let audit = common::write_retrieval_run(&tmp.path().join("elsewhere"), 3);
    common::write_json(&tmp.path().join("a/b"), "audit.json", &audit);
    common::fqe_fixture(&tmp.path().join("fqe"));
    let path = tmp.path().join("fqe/fqe.json");
    let mut fqe: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for p in fqe["policies"].as_array_mut().unwrap() {
        p["curves"] = serde_json::json!([]);
        for c in p["tasks"].as_array_mut().unwrap() {
            c["truth"] = serde_json::Value::Null;
        }
    }
    std::fs::write(&path, serde_json::to_vec(&fqe).unwrap()).unwrap();
    let report = build_report(&[tmp.path().join("a/b"), tmp.path().join("fqe")]).unwrap();
    let skipped: Vec<PlotKind> = report
        .plots
        .iter()
        .filter(|p| !p.available)
        .map(|p| p.kind)
        .collect();
    assert_eq!(
        skipped,
        [
            PlotKind::TransferHeatmap,
            PlotKind::FqeFrames,
            PlotKind::FqeEstimates,
            PlotKind::FqeCurves
        ]
    );
    let html = render_html(&report).unwrap();
    for p in report.plots.iter().filter(|p| !p.available) {
        assert!(html.contains(&format!("data-plot=\"{}\"", p.id)));
        assert!(!html.contains(&format!("<figure id=\"{}\"", p.id)));
    }
    assert!(
        render_markdown(&report).contains("Plot skipped (Transfer matrix): no run folder found")
    );
    // The run folder given as another DIR fills the heat map in.
    let report = build_report(&[tmp.path().join("a/b"), tmp.path().join("elsewhere")]).unwrap();
    assert!(report.retrieval[0].transfer.is_some());
    assert!(
        report
            .plots
            .iter()
            .all(|p| p.available || p.kind == PlotKind::FqeFrames)
    );
}

#[test]
fn demo_folder_gives_one_section_per_task_with_its_matrix() {
    let tmp = tempfile::tempdir().unwrap();
    common::demo_fixture(tmp.path());
    let report = build_report(&[tmp.path().to_path_buf()]).unwrap();
    let names: Vec<&str> = report.retrieval.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["stack", "door"]);
    assert!(report.retrieval.iter().all(|s| s.transfer.is_some()));
    let ids: std::collections::BTreeSet<&str> =
        report.plots.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids.len(), report.plots.len(), "plot ids are unique");
}

/// A task audited under two reuse mechanisms gets one section each, named apart, and one
/// side-by-side table; a task under one mechanism gets none. Tasks without a `mechanism` (files
/// written before the learned mechanisms) are Replay.
#[test]
fn one_task_under_two_mechanisms_is_compared_side_by_side() {
    let tmp = tempfile::tempdir().unwrap();
    common::demo_fixture(tmp.path());
    let path = tmp.path().join("audit.json");
    let mut demo: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let mut policy = demo["tasks"][0].clone();
    policy["mechanism"] = serde_json::json!("policy");
    policy["appearance_caused_failures"] =
        serde_json::json!({"executions": 4, "failed": 1, "experiences": 2, "own_base": [4, 0]});
    // A rule only Replay ran (as `policy_encoder` rules only Policy+DR runs) is named apart.
    let only_replay = policy["audit"]["rules"]
        .as_array_mut()
        .unwrap()
        .pop()
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_owned();
    demo["tasks"].as_array_mut().unwrap().push(policy);
    std::fs::write(&path, serde_json::to_vec(&demo).unwrap()).unwrap();

    let report = build_report(&[tmp.path().to_path_buf()]).unwrap();
    let names: Vec<&str> = report.retrieval.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["stack", "door", "stack (policy)"]);
    let ids: Vec<&str> = report.retrieval.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "retrieval-stack",
            "retrieval-door",
            "retrieval-stack-policy"
        ]
    );
    let mechanisms: Vec<&str> = report
        .retrieval
        .iter()
        .map(|s| s.mechanism.as_ref().unwrap().mechanism.as_str())
        .collect();
    assert_eq!(mechanisms, ["replay", "replay", "policy"]);

    let md = render_markdown(&report);
    assert_eq!(
        md.matches("## Reuse mechanisms side by side").count(),
        1,
        "{md}"
    );
    assert!(md.contains("| stack | Replay | Policy |"), "{md}");
    assert!(
        md.contains(
            "| appearance-caused failures | — | 1 of 4 failed (25.0 %), 2 experience(s); own base: 0 of 4 failed |"
        ),
        "{md}"
    );
    // The section itself states it too (a task under one mechanism has no side-by-side table).
    assert_eq!(
        md.matches("Appearance-caused failures (executions").count(),
        1,
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "Rules not run under every mechanism, so not compared here (see each audit's own tables): {only_replay}."
        )),
        "{md}"
    );
    assert!(!md.contains(&format!("| gap G, {only_replay} |")), "{md}");
    // The same audit twice: every number of the two columns agrees.
    let a = &report.retrieval[0].audit.reference;
    let row = format!(
        "| R / O / BF, all scenes | {0:.3} / {1:.3} / {2:.3} | {0:.3} / {1:.3} / {2:.3} |",
        a.random, a.oracle, a.best_fixed
    );
    assert!(md.contains(&row), "{row}\n{md}");
    assert!(
        render_html(&report)
            .unwrap()
            .contains("id=\"mechanisms-stack\"")
    );
}

/// The demo's `audit.json` is one type for writer and reader: a file the demo cannot have
/// written (a scale it has no name for, a headline of the wrong shape) is refused naming the
/// file, where the reader used to skip whatever it did not know.
#[test]
fn a_malformed_demo_file_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    common::demo_fixture(tmp.path());
    let path = tmp.path().join("audit.json");
    let good: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for (field, bad) in [
        ("scale", serde_json::json!("huge")),
        ("memory", serde_json::json!([{"policy": "bank"}])),
        (
            "memory_control",
            serde_json::json!({"dir": "control", "pairs": "six"}),
        ),
    ] {
        let mut v = good.clone();
        v[field] = bad;
        std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
        let e = error_of(&[tmp.path().to_path_buf()]);
        assert!(
            matches!(e, ReportError::Json { path: ref p, .. } if *p == path)
                && e.is_invalid_input(),
            "{field}: {e}"
        );
    }
}

#[test]
fn write_report_writes_three_files_and_no_temporaries() {
    let (tmp, dirs) = all_fixtures();
    let report = build_report(&dirs).unwrap();
    let out = tmp.path().join("out/nested");
    write_report(&report, &out).unwrap();
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["index.html", "report.json", "report.md"]);
    let back: Report =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(back, report);
    // Same inputs, same bytes.
    let first = std::fs::read(out.join("index.html")).unwrap();
    write_report(&build_report(&dirs).unwrap(), &out).unwrap();
    assert_eq!(first, std::fs::read(out.join("index.html")).unwrap());
}

fn error_of(dirs: &[PathBuf]) -> ReportError {
    build_report(dirs).expect_err("should fail")
}

#[test]
fn bad_folders_give_typed_errors_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let missing = root.join("nope");
    let e = error_of(std::slice::from_ref(&missing));
    assert!(matches!(e, ReportError::NotAFolder(ref p) if *p == missing) && e.is_invalid_input());

    std::fs::create_dir_all(root.join("empty")).unwrap();
    let e = error_of(&[root.join("empty")]);
    assert!(
        matches!(e, ReportError::NoAudit(_)) && e.is_invalid_input(),
        "{e}"
    );

    std::fs::create_dir_all(root.join("broken")).unwrap();
    std::fs::write(
        root.join("broken/audit.json"),
        "{\"schema\": \"roboaudit.retrieval.v1\",\n  \"n_scenes\": }",
    )
    .unwrap();
    let e = error_of(&[root.join("broken")]);
    let msg = e.to_string();
    assert!(matches!(e, ReportError::Json { .. }), "{msg}");
    // The parser's reason is the source, after the file.
    let chain = roboaudit_types::error_chain(&e);
    assert!(
        msg.ends_with("audit.json") && chain.contains("audit.json: ") && chain.contains("line 2"),
        "{chain}"
    );

    std::fs::create_dir_all(root.join("foreign")).unwrap();
    std::fs::write(root.join("foreign/fqe.json"), "{\"schema\": \"other.v9\"}").unwrap();
    let e = error_of(&[root.join("foreign")]);
    assert!(e.to_string().contains("unknown schema \"other.v9\""), "{e}");
}

/// A memory audit's side file that is a folder is an error naming it, not a report without it.
#[test]
fn a_side_file_that_is_a_folder_is_named() {
    for side in ["control.json", "interventions.json", "natural.json"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        common::memory_fixture(&dir);
        let _ = std::fs::remove_file(dir.join(side));
        std::fs::create_dir_all(dir.join(side)).unwrap();
        let e = error_of(std::slice::from_ref(&dir));
        assert!(
            matches!(e, ReportError::Read { ref path, .. } if *path == dir.join(side)),
            "{side}: {e}"
        );
        assert!(e.is_invalid_input(), "{side}: {e}");
    }
}

/// A memory audit's side file is read only under its own schema tag: another tag, or none (a
/// file of another program, or of a roboaudit before the tag), is an error naming the file.
#[test]
fn a_side_file_of_another_schema_is_named() {
    for (side, tag) in [
        ("control.json", "roboaudit.memory.control.v1"),
        ("interventions.json", "roboaudit.memory.interventions.v1"),
        ("natural.json", "roboaudit.memory.natural.v1"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        common::memory_fixture(&dir);
        std::fs::write(dir.join(side), "{\"schema\": \"roboaudit.memory.v1\"}").unwrap();
        let e = error_of(std::slice::from_ref(&dir));
        assert!(
            matches!(e, ReportError::Schema { ref path, ref found, ref expected }
                if *path == dir.join(side) && found == "roboaudit.memory.v1"
                    && *expected == format!("\"{tag}\"")),
            "{side}: {e}"
        );
        std::fs::write(dir.join(side), "{\"study\": \"replacement\"}").unwrap();
        let e = error_of(std::slice::from_ref(&dir));
        assert!(
            matches!(e, ReportError::NoSchema { ref path, .. } if *path == dir.join(side)),
            "{side}: {e}"
        );
        assert!(e.is_invalid_input(), "{side}: {e}");
    }
}

#[test]
fn damaged_run_folders_name_row_column_or_cell() {
    let tmp = tempfile::tempdir().unwrap();
    common::retrieval_fixture(tmp.path());
    let run = tmp.path().join("run");
    let executions = std::fs::read_to_string(run.join("executions.csv")).unwrap();
    // Drop every execution of the first row's (experience, scene) cell.
    let mut lines = executions.lines();
    let header = lines.next().unwrap();
    let first: Vec<&str> = lines.clone().next().unwrap().split(',').collect();
    let cols: Vec<&str> = header.split(',').collect();
    let (ei, si) = (
        cols.iter().position(|c| *c == "experience_id").unwrap(),
        cols.iter().position(|c| *c == "scene_id").unwrap(),
    );
    let (exp, scene) = (first[ei].to_owned(), first[si].to_owned());
    let kept: Vec<&str> = lines
        .filter(|l| {
            let f: Vec<&str> = l.split(',').collect();
            !(f[ei] == exp && f[si] == scene)
        })
        .collect();
    std::fs::write(
        run.join("executions.csv"),
        format!("{header}\n{}\n", kept.join("\n")),
    )
    .unwrap();
    let e = error_of(&[run.join("audit")]);
    let msg = e.to_string();
    assert!(matches!(e, ReportError::Matrix { .. }), "{msg}");
    assert!(msg.contains(&exp) && msg.contains(&scene), "{msg}");

    // A malformed success value: the data crate's error names row and column.
    let mut bad = executions.clone();
    let second_line_start = bad.find('\n').unwrap() + 1;
    let line_end = second_line_start + bad[second_line_start..].find('\n').unwrap();
    let fields: Vec<String> = bad[second_line_start..line_end]
        .split(',')
        .map(str::to_owned)
        .collect();
    let success_col = cols.iter().position(|c| *c == "success").unwrap();
    let mut fields = fields;
    fields[success_col] = "maybe".into();
    bad.replace_range(second_line_start..line_end, &fields.join(","));
    std::fs::write(run.join("executions.csv"), bad).unwrap();
    let e = error_of(&[run.join("audit")]);
    let msg = e.to_string();
    assert!(
        matches!(e, ReportError::Data(_)) && e.is_invalid_input(),
        "{msg}"
    );
    assert!(
        msg.contains("success") && msg.contains("executions.csv"),
        "{msg}"
    );
}

#[test]
fn a_run_folder_matching_no_audit_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    common::retrieval_fixture(tmp.path());
    common::write_retrieval_run(&tmp.path().join("other"), 7);
    let e = error_of(&[tmp.path().join("run/audit"), tmp.path().join("other")]);
    // The audit already has its own run (found in the parent)? No: explicit runs come first and
    // `other` reproduces a different matrix, so it matches nothing.
    assert!(matches!(e, ReportError::UnmatchedRun(_)), "{e}");
}

/// The checked-in fixtures under tests/fixtures (read by the CLI test) are what the generators
/// write today; `ROBOAUDIT_UPDATE_FIXTURES=1` rewrites them.
#[test]
fn checked_in_fixtures_are_current() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = tmp.path();
    common::retrieval_fixture(&fresh.join("retrieval"));
    common::memory_fixture(&fresh.join("memory"));
    common::fqe_fixture(&fresh.join("fqe"));
    let files = [
        "retrieval/run/executions.csv",
        "retrieval/run/scenes.csv",
        "retrieval/run/experiences.csv",
        "retrieval/run/audit/audit.json",
        "memory/audit.json",
        "fqe/fqe.json",
    ];
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let update = std::env::var_os("ROBOAUDIT_UPDATE_FIXTURES").is_some();
    for f in files {
        let want = std::fs::read(fresh.join(f)).unwrap();
        let path = fixtures.join(f);
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} is stale: rerun with ROBOAUDIT_UPDATE_FIXTURES=1",
            path.display()
        );
    }
}

/// A natural study beside a memory audit is shown with it, as its own observational cohort.
#[test]
fn a_natural_study_beside_a_memory_audit_is_shown_apart() {
    use roboaudit_memory::natural::{
        COHORT_NOTE, CohortSettings, DECISION_RULE, NATURAL_SCHEMA, NaturalConfig, NaturalEpisode,
        NaturalStudy, analyze_natural,
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("memory");
    common::memory_fixture(&dir);
    let episodes: Vec<NaturalEpisode> = (0..4)
        .map(|i| NaturalEpisode {
            id: format!("n{i:03}"),
            stratum: "level0".into(),
            reached_present: true,
            warranted: 1,
            candidates: vec![0, 1, 2],
            contains_decision: i < 3,
            present_step: Some(90),
            first_direction: Some(if i == 2 { 0 } else { 1 }),
            committed: Some(1),
            success: Some(i != 2),
            remaining_steps: Some(if i == 2 { 110 } else { 50 }),
        })
        .collect();
    let config = NaturalConfig {
        cohort: CohortSettings::with_episodes(4),
        ..NaturalConfig::default()
    };
    let study = NaturalStudy {
        schema: NATURAL_SCHEMA.into(),
        policy: "bank".into(),
        cohort: COHORT_NOTE.into(),
        decision_rule: DECISION_RULE.into(),
        analysis: analyze_natural(&episodes, &config.bootstrap).unwrap(),
        config,
        episodes,
    };
    common::write_json(&dir, "natural.json", &study);
    let report = build_report(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(report.memory[0].natural.as_ref(), Some(&study));
    let md = render_markdown(&report);
    assert!(md.contains("Natural occurrence"), "{md}");
    assert!(md.contains("3/4 untreated native episodes"), "{md}");
    assert!(md.contains("never pooled"), "{md}");
    // Remaining steps over the three decision episodes: 50 (warranted first) − 110 (another).
    assert!(md.contains("| -60.000 |"), "{md}");
}

#[test]
fn standalone_audits_of_collected_runs_are_named_and_compared_by_mechanism() {
    let tmp = tempfile::tempdir().unwrap();
    let audits = [
        ("a", "stack", "replay"),
        ("b", "stack", "policy"),
        ("c", "door", "replay"),
        ("d", "door", "replay"),
        ("e", "stack", "replay"),
    ];
    let mut dirs = Vec::new();
    for (i, (dir, task, mechanism)) in audits.iter().enumerate() {
        let run = tmp.path().join(dir);
        let mut audit = common::write_retrieval_run(&run, 20 + i as u64);
        audit.run = Some(roboaudit_report::TaskMechanism {
            task: (*task).to_owned(),
            mechanism: (*mechanism).to_owned(),
            appearance_caused_failures: None,
        });
        common::write_json(&run.join("audit"), "audit.json", &audit);
        dirs.push(run.join("audit"));
    }
    let report = build_report(&dirs).unwrap();
    let names: Vec<&str> = report.retrieval.iter().map(|s| s.name.as_str()).collect();
    // Named by what was audited, not by the folder (`audit` five times).
    assert_eq!(
        names,
        ["stack", "stack (policy)", "door", "door #2", "stack #2"]
    );
    let ids: Vec<&str> = report.retrieval.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "retrieval-stack",
            "retrieval-stack-policy",
            "retrieval-door",
            "retrieval-door-2",
            "retrieval-stack-2"
        ]
    );
    let md = render_markdown(&report);
    // Door ran under Replay only (twice): no table for it; Stack's two Replay audits are numbered.
    assert_eq!(
        md.matches("## Reuse mechanisms side by side").count(),
        1,
        "{md}"
    );
    assert!(
        md.contains("| stack | Replay | Policy | Replay #2 |"),
        "{md}"
    );
    assert!(md.contains("## Retrieval audit: stack #2"), "{md}");
    assert!(!md.contains("side by side: door"), "{md}");
}
