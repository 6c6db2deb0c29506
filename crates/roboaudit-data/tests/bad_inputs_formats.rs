#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Inputs whose format, not their values, is off: empty and wrongly delimited CSVs, integers
//! out of range, extra columns of any type, rows only another command writes. Every rejected
//! input names the file, the 1-based data row and the column.

mod common;

use common::{assert_names, write_text};
use roboaudit_data::{read_executions, read_scenes};

const EXEC_HEADER: &str = "experience_id,scene_id,seed,success\n";

/// A 0-byte CSV says it is empty (not "missing required column"), and a header separated by
/// ';' gets a hint at the delimiter.
#[test]
fn empty_and_semicolon_csv_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_text(dir.path(), "zero.csv", "");
    let err = read_executions(&path).unwrap_err();
    assert_names(&err, &path, None, None, "the file is empty (0 bytes");
    assert!(
        !err.to_string().contains("missing required column"),
        "{err}"
    );

    let path = write_text(
        dir.path(),
        "semi.csv",
        "experience_id;scene_id;seed;success\ne0;s0;0;1\n",
    );
    let err = read_executions(&path).unwrap_err();
    assert_names(
        &err,
        &path,
        None,
        Some("experience_id"),
        "looks separated by ';'",
    );
}

/// A uint64 seed above i64::MAX (Parquet) or a decimal one too large (CSV) is named out of
/// range rather than "expected an integer".
#[test]
fn seeds_beyond_i64_are_out_of_range() {
    use arrow_array::{ArrayRef, BooleanArray, RecordBatch, StringArray, UInt64Array};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.parquet");
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("experience_id", Arc::new(StringArray::from(vec!["e0"]))),
        ("scene_id", Arc::new(StringArray::from(vec!["s0"]))),
        ("seed", Arc::new(UInt64Array::from(vec![1u64 << 63]))),
        ("success", Arc::new(BooleanArray::from(vec![true]))),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let needle = "integer 9223372036854775808 is out of range";
    assert_names(
        &read_executions(&path).unwrap_err(),
        &path,
        Some(1),
        Some("seed"),
        needle,
    );
    let path = write_text(
        dir.path(),
        "big.csv",
        &format!("{EXEC_HEADER}e0,s0,9223372036854775808,1\n"),
    );
    assert_names(
        &read_executions(&path).unwrap_err(),
        &path,
        Some(1),
        Some("seed"),
        needle,
    );
}

/// Extra columns of any type are ignored, as documented: a list and a struct column in a
/// Parquet scenes file, an array and an object in JSONL, and extra list columns in the other
/// readers; scalar extras are still kept as text.
#[test]
fn extra_columns_of_any_type_are_ignored() {
    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, StructArray};
    use arrow_schema::{DataType, Field};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let mut list = ListBuilder::new(StringBuilder::new());
    list.values().append_value("x");
    list.append(true);
    let list: ArrayRef = Arc::new(list.finish());
    let structure: ArrayRef = Arc::new(StructArray::from(vec![(
        Arc::new(Field::new("a", DataType::Int64, false)),
        Arc::new(Int64Array::from(vec![1])) as ArrayRef,
    )]));
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("scene_id", Arc::new(StringArray::from(vec!["s0"]))),
        ("perturbation", Arc::new(StringArray::from(vec!["fresh"]))),
        ("layout_level", Arc::new(Int64Array::from(vec![1]))),
        ("appearance_draw", Arc::new(Int64Array::from(vec![0]))),
        ("note", Arc::new(StringArray::from(vec!["kept"]))),
        ("extra_list", list),
        ("extra_struct", structure),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let path = dir.path().join("scenes.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let scenes = read_scenes(&path).unwrap();
    assert_eq!(scenes.len(), 1);
    assert_eq!(
        scenes[0].extra.iter().collect::<Vec<_>>(),
        [(&"note".to_owned(), &"kept".to_owned())]
    );

    let path = write_text(
        dir.path(),
        "scenes.jsonl",
        r#"{"scene_id":"s0","perturbation":"fresh","layout_level":1,"appearance_draw":0,"tags":["a"],"meta":{"k":1},"w":2}"#,
    );
    let scenes = read_scenes(&path).unwrap();
    assert_eq!(
        scenes[0].extra.iter().collect::<Vec<_>>(),
        [(&"w".to_owned(), &"2".to_owned())]
    );
    let path = write_text(
        dir.path(),
        "executions.jsonl",
        r#"{"experience_id":"e0","scene_id":"s0","seed":0,"success":1,"tags":["a"],"meta":{"k":1}}"#,
    );
    assert_eq!(read_executions(&path).unwrap().len(), 1);
}

/// A `perturbation=base` row (as `testbed scenes` writes) says what to do with it.
#[test]
fn a_base_scene_row_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_text(
        dir.path(),
        "scenes.csv",
        "scene_id,perturbation,layout_level,appearance_draw\nb0,base,0,0\n",
    );
    assert_names(
        &read_scenes(&path).unwrap_err(),
        &path,
        Some(1),
        Some("perturbation"),
        "drop the base rows",
    );
}
