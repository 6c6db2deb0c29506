#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Write-then-read equality in every format, including a property test over random records.

mod common;

use std::collections::BTreeMap;

use proptest::prelude::*;
use roboaudit_data::{
    ExecutionLogWriter, RetrievalPaths, load_retrieval_inputs, read_embeddings, read_executions,
    read_experiences, read_scenes, read_selections, write_embeddings, write_embeddings_parquet,
    write_executions, write_executions_parquet, write_experiences, write_experiences_csv,
    write_scenes, write_scenes_csv,
};
use roboaudit_types::{
    EmbeddingKind, EmbeddingRecord, ExecutionRecord, ExperienceRecord, Perturbation, RecordedAt,
    SceneRecord,
};

#[test]
fn every_kind_round_trips_in_every_format() {
    let inputs = common::sample();
    for ext in ["csv", "parquet", "jsonl", "ndjson"] {
        let dir = tempfile::tempdir().unwrap();
        let paths = common::write_run(dir.path(), &inputs, ext);
        assert_eq!(
            read_executions(&paths.executions).unwrap(),
            inputs.executions,
            "{ext}"
        );
        assert_eq!(read_scenes(&paths.scenes).unwrap(), inputs.scenes, "{ext}");
        assert_eq!(
            read_experiences(&paths.experiences).unwrap(),
            inputs.experiences,
            "{ext}"
        );
        assert_eq!(
            read_embeddings(&paths.embeddings).unwrap(),
            inputs.embeddings,
            "{ext}"
        );
        assert_eq!(
            read_selections(paths.selections.as_ref().unwrap()).unwrap(),
            inputs.selections.clone().unwrap(),
            "{ext}"
        );
        assert_eq!(load_retrieval_inputs(&paths).unwrap(), inputs, "{ext}");
    }
}

#[test]
fn run_dir_layout_loads_with_named_writers() {
    let inputs = common::sample();
    let dir = tempfile::tempdir().unwrap();
    write_executions_parquet(dir.path().join("executions.parquet"), &inputs.executions).unwrap();
    write_scenes_csv(dir.path().join("scenes.csv"), &inputs.scenes).unwrap();
    write_experiences_csv(dir.path().join("experiences.csv"), &inputs.experiences).unwrap();
    write_embeddings_parquet(dir.path().join("embeddings.parquet"), &inputs.embeddings).unwrap();
    let paths = RetrievalPaths::from_run_dir(dir.path());
    assert_eq!(paths.selections, None);
    let loaded = load_retrieval_inputs(&paths).unwrap();
    assert_eq!(loaded.selections, None);
    assert_eq!(loaded.executions, inputs.executions);
    assert_eq!(loaded.embeddings, inputs.embeddings);

    common::write_text(
        dir.path(),
        "selections.csv",
        "scene_id,experience_id\ns0,e0\ns1,e0\ns2,e1\n",
    );
    let paths = RetrievalPaths::from_run_dir(dir.path());
    let loaded = load_retrieval_inputs(&paths).unwrap();
    assert_eq!(loaded.selections.unwrap()[2].experience_id, "e1");
}

#[test]
fn csv_layout_is_what_users_write() {
    let inputs = common::sample();
    let dir = tempfile::tempdir().unwrap();
    let paths = common::write_run(dir.path(), &inputs, "csv");
    let text = std::fs::read_to_string(&paths.executions).unwrap();
    assert!(text.starts_with("experience_id,scene_id,seed,success\ne0,s0,0,1\ne0,s0,1,0\n"));
    let scenes = std::fs::read_to_string(&paths.scenes).unwrap();
    assert!(scenes.starts_with("scene_id,perturbation,layout_level,appearance_draw,light\ns0,appearance,0,4,0.3\ns1,layout,2,0,\n"));
    let embeddings = std::fs::read_to_string(&paths.embeddings).unwrap();
    assert!(
        embeddings.contains("\npix,experience,e0,-0.3 -0.20000002 -0.10000001\n"),
        "{embeddings}"
    );
}

#[test]
fn timestamps_round_trip_as_rfc3339_text() {
    let records = vec![
        ExperienceRecord {
            experience_id: "a".into(),
            base_scene_id: None,
            recorded_at: Some(RecordedAt::Timestamp {
                unix_seconds: 1_714_564_800,
                nanos: 250_000_000,
            }),
            own_base_success: None,
        },
        ExperienceRecord {
            experience_id: "b".into(),
            base_scene_id: None,
            recorded_at: None,
            own_base_success: Some(0.0),
        },
    ];
    for ext in ["csv", "parquet", "jsonl"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("x.{ext}"));
        write_experiences(&path, &records).unwrap();
        assert_eq!(read_experiences(&path).unwrap(), records, "{ext}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.csv");
    write_experiences(&path, &records).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("a,,2024-05-01T12:00:00.25Z,\n"), "{text}");
}

#[test]
fn execution_log_writer_appends_resumes_and_reads_in_order() {
    let inputs = common::sample();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("executions");
    let (first, rest) = inputs.executions.split_at(5);
    let mut writer = ExecutionLogWriter::open(&log).unwrap();
    let part0 = writer.append(first).unwrap();
    assert!(part0.ends_with("part-000000.parquet"));
    assert!(writer.append(&[]).is_err());
    drop(writer);
    // A crash mid-write leaves a temporary file; reopening removes it and continues numbering.
    common::write_text(&log, ".roboaudit-crashed.tmp", "garbage");
    let mut writer = ExecutionLogWriter::open(&log).unwrap();
    assert_eq!(writer.next_part(), 1);
    assert!(!log.join(".roboaudit-crashed.tmp").exists());
    let (second, third) = rest.split_at(7);
    writer.append(second).unwrap();
    let part2 = writer.append(third).unwrap();
    assert!(part2.ends_with("part-000002.parquet"));
    assert_eq!(read_executions(&log).unwrap(), inputs.executions);

    // from_run_dir falls back to the part directory.
    common::write_run(dir.path(), &inputs, "csv");
    let mut paths = RetrievalPaths::from_run_dir(dir.path());
    assert_eq!(paths.executions, log);
    paths.scenes = dir.path().join("scenes.csv");
    paths.experiences = dir.path().join("experiences.csv");
    paths.embeddings = dir.path().join("embeddings.csv");
    assert_eq!(load_retrieval_inputs(&paths).unwrap(), inputs);
}

#[test]
fn duplicate_across_parts_names_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let record = ExecutionRecord {
        experience_id: "e".into(),
        scene_id: "s".into(),
        seed: 3,
        success: true,
    };
    let mut writer = ExecutionLogWriter::open(dir.path()).unwrap();
    let first = writer.append(std::slice::from_ref(&record)).unwrap();
    let second = writer.append(&[record]).unwrap();
    let err = read_executions(dir.path()).unwrap_err();
    common::assert_names(
        &err,
        &second,
        Some(1),
        None,
        &format!("already at row 1 of {}", first.display()),
    );
}

/// A cross-file error about a row of a part directory names the part and its own row, not the
/// folder and a row of the concatenated log (row 5 + 7 = 12 there).
#[test]
fn unknown_id_in_a_part_names_the_part_and_its_row() {
    let mut inputs = common::sample();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("executions");
    inputs.executions[5 + 1].experience_id = "zzz".into();
    let (first, rest) = inputs.executions.split_at(5);
    let mut writer = ExecutionLogWriter::open(&log).unwrap();
    writer.append(first).unwrap();
    let part1 = writer.append(rest).unwrap();
    drop(writer);
    let paths = RetrievalPaths {
        executions: log,
        ..common::write_run(dir.path(), &inputs, "csv")
    };
    let err = load_retrieval_inputs(&paths).unwrap_err();
    common::assert_names(
        &err,
        &part1,
        Some(2),
        Some("experience_id"),
        "unknown experience \"zzz\"",
    );
}

/// A folder without parts (a run folder given as --executions, or an empty executions/) says
/// so and names the log file it holds, instead of "no data rows".
#[test]
fn a_folder_without_parts_says_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    common::write_run(dir.path(), &common::sample(), "csv");
    let err = read_executions(dir.path()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("holds no part-NNNNNN.parquet files"),
        "{text}"
    );
    assert!(text.contains("embeddings.csv, executions.csv"), "{text}");
    assert!(
        text.contains(&format!(
            "pass the file itself: {}",
            dir.path().join("executions.csv").display()
        )),
        "{text}"
    );
    let empty = dir.path().join("executions");
    std::fs::create_dir(&empty).unwrap();
    // An empty part directory does not hide the executions.csv beside it.
    assert_eq!(
        RetrievalPaths::from_run_dir(dir.path()).executions,
        dir.path().join("executions.csv")
    );
    std::fs::remove_file(dir.path().join("executions.csv")).unwrap();
    assert_eq!(RetrievalPaths::from_run_dir(dir.path()).executions, empty);
    let text = read_executions(&empty).unwrap_err().to_string();
    assert!(
        text.contains("no part-NNNNNN.parquet files (it is empty)"),
        "{text}"
    );
}

fn id() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,6}"
}

fn perturbation() -> impl Strategy<Value = Perturbation> {
    prop_oneof![
        Just(Perturbation::Appearance),
        Just(Perturbation::Layout),
        Just(Perturbation::Fresh)
    ]
}

fn finite_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        proptest::num::f32::NORMAL | proptest::num::f32::SUBNORMAL | proptest::num::f32::ZERO,
        -10.0f32..10.0
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_records_round_trip(
        executions in proptest::collection::vec((id(), id(), any::<i64>(), any::<bool>()), 1..20),
        scenes in proptest::collection::vec(
            (perturbation(), 0..=i64::MAX, any::<i64>(),
             proptest::collection::btree_map("x[a-z]{1,4}", "[A-Za-z0-9.]{1,5}", 0..3)),
            1..6),
        experiences in proptest::collection::vec(
            (proptest::option::of(id()), proptest::option::of(any::<i64>()),
             proptest::option::of(0.0f64..=1.0)),
            1..6),
        vectors in proptest::collection::vec(proptest::collection::vec(finite_f32(), 4), 1..6),
        ext in prop_oneof![Just("csv"), Just("parquet"), Just("jsonl")],
    ) {
        let dir = tempfile::tempdir().unwrap();
        // Seeds are made unique by position so that the log has no duplicate rows.
        let executions: Vec<ExecutionRecord> = executions
            .into_iter()
            .enumerate()
            .map(|(k, (e, s, seed, success))| ExecutionRecord {
                experience_id: e,
                scene_id: s,
                seed: if k % 2 == 0 { seed } else { k as i64 },
                success,
            })
            .collect();
        let mut seen = std::collections::HashSet::new();
        let executions: Vec<_> = executions
            .into_iter()
            .filter(|r| seen.insert((r.experience_id.clone(), r.scene_id.clone(), r.seed)))
            .collect();
        let scenes: Vec<SceneRecord> = scenes
            .into_iter()
            .enumerate()
            .map(|(k, (perturbation, layout_level, appearance_draw, extra))| SceneRecord {
                scene_id: format!("s{k}"),
                perturbation,
                layout_level,
                appearance_draw,
                extra: extra.into_iter().collect::<BTreeMap<_, _>>(),
            })
            .collect();
        let experiences: Vec<ExperienceRecord> = experiences
            .into_iter()
            .enumerate()
            .map(|(k, (base_scene_id, order, own_base_success))| ExperienceRecord {
                experience_id: format!("e{k}"),
                base_scene_id,
                recorded_at: order.map(RecordedAt::Order),
                own_base_success,
            })
            .collect();
        let embeddings: Vec<EmbeddingRecord> = vectors
            .into_iter()
            .enumerate()
            .map(|(k, vector)| EmbeddingRecord {
                representation: "r".into(),
                kind: if k % 2 == 0 { EmbeddingKind::Experience } else { EmbeddingKind::Scene },
                id: format!("i{k}"),
                vector,
            })
            .collect();
        let path = |stem: &str| dir.path().join(format!("{stem}.{ext}"));
        write_executions(path("executions"), &executions).unwrap();
        write_scenes(path("scenes"), &scenes).unwrap();
        write_experiences(path("experiences"), &experiences).unwrap();
        write_embeddings(path("embeddings"), &embeddings).unwrap();
        prop_assert_eq!(read_executions(path("executions")).unwrap(), executions);
        prop_assert_eq!(read_scenes(path("scenes")).unwrap(), scenes);
        prop_assert_eq!(read_experiences(path("experiences")).unwrap(), experiences);
        let read = read_embeddings(path("embeddings")).unwrap();
        // Bitwise equality: -0.0 and subnormals must survive every format.
        let bits = |v: &[EmbeddingRecord]| -> Vec<Vec<u32>> {
            v.iter().map(|r| r.vector.iter().map(|x| x.to_bits()).collect()).collect()
        };
        prop_assert_eq!(bits(&read), bits(&embeddings));
    }
}

#[test]
fn writers_are_byte_deterministic() {
    let inputs = common::sample();
    for ext in ["csv", "parquet", "jsonl"] {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        common::write_run(a.path(), &inputs, ext);
        common::write_run(b.path(), &inputs, ext);
        for stem in [
            "executions",
            "scenes",
            "experiences",
            "embeddings",
            "selections",
        ] {
            let name = format!("{stem}.{ext}");
            assert_eq!(
                std::fs::read(a.path().join(&name)).unwrap(),
                std::fs::read(b.path().join(&name)).unwrap(),
                "{name}"
            );
        }
    }
}

#[cfg(unix)]
#[test]
fn written_files_get_ordinary_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    std::fs::File::create(&plain).unwrap();
    let written = dir.path().join("x.csv");
    write_executions(&written, &common::sample().executions).unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&written), mode(&plain));
}
