//! `read_memory_records` / `write_memory_records` (roboaudit-data): round trips in the three
//! formats and errors that name file, row and column.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{build, chunk, goes_to};
use roboaudit_data::{read_memory_records, write_memory_records};
use roboaudit_memory::{MemoryLabel, MemoryRecord};

fn sample() -> Vec<MemoryRecord> {
    let mut records = build(3, &[0, 7], |p, m, _| {
        let mut act = goes_to(m, chunk(m));
        act.action = vec![0.1 * p as f32, -1.5e-7, f32::MAX];
        act.value_a = 0.25;
        act
    });
    for r in &mut records {
        r.stratum = Some("s1".into());
        if r.pair_id == "p001" {
            r.route = Some("left".into());
        }
    }
    records
}

#[test]
fn round_trips_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let records = sample();
    for ext in ["csv", "jsonl", "parquet"] {
        let path = dir.path().join(format!("records.{ext}"));
        write_memory_records(&path, &records).unwrap();
        assert_eq!(read_memory_records(&path).unwrap(), records, "{ext}");
    }
}

/// Writes `records` as CSV, edits one line, and returns the reader's error.
fn csv_error(
    records: &[MemoryRecord],
    edit: impl Fn(&mut Vec<String>),
) -> roboaudit_data::DataError {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.csv");
    write_memory_records(&path, records).unwrap();
    let mut lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    edit(&mut lines);
    std::fs::write(&path, lines.join("\n")).unwrap();
    read_memory_records(&path).unwrap_err()
}

#[test]
fn bad_values_name_row_and_column() {
    let records = build(2, &[0], |_, m, _| goes_to(m, chunk(m)));
    // Header: pair_id,memory,action_seed,world,progress_warranted,progress_other,value,action,present_equal
    let set = |line: &mut String, col: usize, value: &str| {
        let mut fields: Vec<String> = line.split(',').map(str::to_owned).collect();
        fields[col] = value.to_owned();
        *line = fields.join(",");
    };
    let err = csv_error(&records, |l| set(&mut l[3], 6, "1.5"));
    assert_eq!((err.row(), err.column()), (Some(3), Some("value")));
    let err = csv_error(&records, |l| set(&mut l[2], 1, "C"));
    assert_eq!((err.row(), err.column()), (Some(2), Some("memory")));
    let err = csv_error(&records, |l| set(&mut l[4], 7, "1 NaN"));
    assert_eq!((err.row(), err.column()), (Some(4), Some("action")));
    let err = csv_error(&records, |l| set(&mut l[5], 7, "1 2 3"));
    assert_eq!((err.row(), err.column()), (Some(5), Some("action")));
    assert!(err.to_string().contains("row 1 has 2"), "{err}");
    // World B row of (p000, A, 0) carries another action than its world A row.
    let err = csv_error(&records, |l| set(&mut l[2], 7, "0 1"));
    assert_eq!((err.row(), err.column()), (Some(2), Some("action")));
    // present_equal must be constant within a pair.
    let err = csv_error(&records, |l| set(&mut l[2], 8, "0"));
    assert_eq!((err.row(), err.column()), (Some(2), Some("present_equal")));
}

#[test]
fn duplicates_and_incomplete_pairs_are_errors() {
    let records = build(2, &[0, 1], |_, m, _| goes_to(m, chunk(m)));
    let mut dup = records.clone();
    dup.push(records[0].clone());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dup.jsonl");
    write_memory_records(&path, &dup).unwrap();
    let err = read_memory_records(&path).unwrap_err();
    assert_eq!(err.row(), Some(records.len() + 1));
    assert!(err.to_string().contains("first at row 1"), "{err}");

    let incomplete: Vec<MemoryRecord> = records
        .iter()
        .filter(|r| {
            !(r.pair_id == "p001"
                && r.action_seed == 1
                && r.memory == MemoryLabel::B
                && r.world == MemoryLabel::A)
        })
        .cloned()
        .collect();
    let path = dir.path().join("incomplete.parquet");
    write_memory_records(&path, &incomplete).unwrap();
    let err = read_memory_records(&path).unwrap_err();
    assert!(
        err.to_string()
            .contains("pair \"p001\" has no row for (memory B, action_seed 1, world A)"),
        "{err}"
    );
}

#[test]
fn pyarrow_written_parquet_reads_and_audits() {
    // scripts/make_memory_fixtures.py: q0 faithful, q1 always branch A, q2 excluded; 2 seeds.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/records_pyarrow.parquet");
    let records = read_memory_records(&path).unwrap();
    assert_eq!(records.len(), 24);
    assert_eq!(records[0].memory, MemoryLabel::A);
    assert_eq!(records[2].memory, MemoryLabel::B);
    assert_eq!(records[1].world, MemoryLabel::B);
    assert_eq!(records[4].action_seed, 1);
    assert_eq!(records[4].action, vec![0.5, 1.0, 0.25]);
    assert!(!records[23].present_equal);
    let a = roboaudit_memory::analyze(&records, &common::plan(500)).unwrap();
    assert_eq!((a.n_pairs, a.n_excluded), (2, 1));
    // q0: s = 1; q1: memory A +1, memory B −1 → 0. F = 0.5; U1: q0 1, q1 0 → 0.5.
    assert_eq!(a.faithfulness.value, Some(0.5));
    assert_eq!(a.u1.value, Some(0.5));
    assert_eq!(a.sensitivity, Some(1.0)); // q0: ‖(0,2,0)‖ = 2, q1: 0
    assert_eq!(a.stratified.unwrap().strata.len(), 2);
}
