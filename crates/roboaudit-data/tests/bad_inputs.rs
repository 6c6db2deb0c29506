#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every rejected input names the file, the 1-based data row and the column.

mod common;

use std::path::{Path, PathBuf};

use common::{assert_names, write_text};
use roboaudit_data::{
    DataError, RetrievalPaths, load_retrieval_inputs, read_embeddings, read_executions,
    read_experiences, read_scenes, read_selections, write_executions_parquet,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// File, reader, expected row, column and message fragment.
type Case = (
    PathBuf,
    fn(&Path) -> Result<(), DataError>,
    usize,
    &'static str,
    &'static str,
);

const EXEC_HEADER: &str = "experience_id,scene_id,seed,success\n";

#[test]
fn bad_success_value_message_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_text(
        dir.path(),
        "executions.csv",
        &format!("{EXEC_HEADER}e0,s0,0,1\ne0,s0,1,yes\n"),
    );
    let err = read_executions(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "row 2, column \"success\": expected 0/1 or true/false, got \"yes\", in {}",
            path.display()
        )
    );
}

#[test]
fn csv_value_errors_name_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<Case> = vec![
        (
            write_text(d, "a.csv", &format!("{EXEC_HEADER}e0,s0,0,1\ne0,,1,0\n")),
            |p| read_executions(p).map(drop),
            2,
            "scene_id",
            "missing value",
        ),
        (
            write_text(d, "b.csv", &format!("{EXEC_HEADER}e0,s0,1.5,1\n")),
            |p| read_executions(p).map(drop),
            1,
            "seed",
            "expected an integer, got \"1.5\"",
        ),
        (
            write_text(d, "c.csv", &format!("{EXEC_HEADER}e0,s0,0,2\n")),
            |p| read_executions(p).map(drop),
            1,
            "success",
            "got \"2\"",
        ),
        (
            write_text(
                d,
                "scenes.csv",
                "scene_id,perturbation,layout_level,appearance_draw\ns0,fresh,0,0\ns1,rotated,0,0\n",
            ),
            |p| read_scenes(p).map(drop),
            2,
            "perturbation",
            "expected appearance, layout or fresh, got \"rotated\"",
        ),
        (
            write_text(
                d,
                "scenes2.csv",
                "scene_id,perturbation,layout_level,appearance_draw\ns0,fresh,0,0\ns1,layout,,0\n",
            ),
            |p| read_scenes(p).map(drop),
            2,
            "layout_level",
            "missing value",
        ),
        (
            write_text(
                d,
                "exp1.csv",
                "experience_id,own_base_success\ne0,0.5\ne1,1.5\n",
            ),
            |p| read_experiences(p).map(drop),
            2,
            "own_base_success",
            "expected a rate in [0, 1], got 1.5",
        ),
        (
            write_text(d, "exp2.csv", "experience_id,own_base_success\ne0,-0.1\n"),
            |p| read_experiences(p).map(drop),
            1,
            "own_base_success",
            "got -0.1",
        ),
        (
            write_text(d, "exp3.csv", "experience_id,own_base_success\ne0,NaN\n"),
            |p| read_experiences(p).map(drop),
            1,
            "own_base_success",
            "finite",
        ),
        (
            write_text(
                d,
                "exp4.csv",
                "experience_id,recorded_at\ne0,2024-13-01T00:00:00Z\n",
            ),
            |p| read_experiences(p).map(drop),
            1,
            "recorded_at",
            "RFC 3339",
        ),
        (
            write_text(
                d,
                "exp5.csv",
                "experience_id,recorded_at\ne0,3\ne1,\ne2,2024-01-01T00:00:00Z\n",
            ),
            |p| read_experiences(p).map(drop),
            3,
            "recorded_at",
            "mixes integer orders and RFC 3339 timestamps (row 1 has an integer order)",
        ),
        (
            write_text(
                d,
                "emb1.csv",
                "representation,kind,id,vector\nr,experience,e0,1 2\nr,scene,s0,1 NaN\n",
            ),
            |p| read_embeddings(p).map(drop),
            2,
            "vector",
            "element 2 is NaN",
        ),
        (
            write_text(
                d,
                "emb2.csv",
                "representation,kind,id,vector\nr,experience,e0,inf 2\n",
            ),
            |p| read_embeddings(p).map(drop),
            1,
            "vector",
            "element 1 is inf",
        ),
        (
            write_text(
                d,
                "emb_overflow.csv",
                "representation,kind,id,vector\nr,experience,e0,1 2\nr,scene,s0,1 1e40\n",
            ),
            |p| read_embeddings(p).map(drop),
            2,
            "vector",
            "element 2 is 1e40, beyond the float32 range",
        ),
        (
            write_text(
                d,
                "emb3.csv",
                "representation,kind,id,vector\nr,experience,e0,1 2\nq,scene,s0,1\nr,scene,s0,1 2 3\n",
            ),
            |p| read_embeddings(p).map(drop),
            3,
            "vector",
            "representation \"r\" has dimension 2 (row 1), this vector has 3",
        ),
        (
            write_text(
                d,
                "emb4.csv",
                "representation,kind,id,vector\nr,query,s0,1 2\n",
            ),
            |p| read_embeddings(p).map(drop),
            1,
            "kind",
            "expected experience or scene, got \"query\"",
        ),
        (
            write_text(
                d,
                "emb5.csv",
                "representation,kind,id,vector\nr,scene,s0,1 two\n",
            ),
            |p| read_embeddings(p).map(drop),
            1,
            "vector",
            "element 2 is \"two\"",
        ),
        // The vectors are parsed after the rows are read: an earlier row's bad vector or
        // dimension is still reported before a later row's bad kind, and an earlier bad kind
        // before a later bad vector, as a row-by-row reader would.
        (
            write_text(
                d,
                "emb6.csv",
                "representation,kind,id,vector\nr,scene,s0,1 2\nr,scene,s1,1 x\nr,query,s2,1 2\n",
            ),
            |p| read_embeddings(p).map(drop),
            2,
            "vector",
            "element 2 is \"x\"",
        ),
        (
            write_text(
                d,
                "emb7.csv",
                "representation,kind,id,vector\nr,scene,s0,1 2\nr,scene,s1,1\nr,query,s2,1 2\n",
            ),
            |p| read_embeddings(p).map(drop),
            2,
            "vector",
            "representation \"r\" has dimension 2 (row 1), this vector has 1",
        ),
        (
            write_text(
                d,
                "emb8.csv",
                "representation,kind,id,vector\nr,scene,s0,1 2\nr,query,s1,1 2\nr,scene,s2,1 x\n",
            ),
            |p| read_embeddings(p).map(drop),
            2,
            "kind",
            "expected experience or scene, got \"query\"",
        ),
        (
            write_text(
                d,
                "dup_scene.csv",
                "scene_id,perturbation,layout_level,appearance_draw\ns0,fresh,0,0\ns1,fresh,0,0\ns0,layout,1,0\n",
            ),
            |p| read_scenes(p).map(drop),
            3,
            "scene_id",
            "duplicate id \"s0\", first at row 1",
        ),
        (
            write_text(d, "dup_exp.csv", "experience_id\ne0\ne0\n"),
            |p| read_experiences(p).map(drop),
            2,
            "experience_id",
            "duplicate id \"e0\", first at row 1",
        ),
        (
            write_text(d, "dup_sel.csv", "scene_id,experience_id\ns0,e0\ns0,e1\n"),
            |p| read_selections(p).map(drop),
            2,
            "scene_id",
            "duplicate id \"s0\"",
        ),
    ];
    for (path, read, row, column, needle) in cases {
        let err = read(&path).unwrap_err();
        assert_names(&err, &path, Some(row), Some(column), needle);
    }
}

#[test]
fn byte_order_marks_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_text(
        dir.path(),
        "bom.csv",
        &format!("\u{feff}{EXEC_HEADER}e0,s0,0,true\n"),
    );
    let jsonl = write_text(
        dir.path(),
        "bom.jsonl",
        "\u{feff}{\"experience_id\":\"e0\",\"scene_id\":\"s0\",\"seed\":0,\"success\":1}\n",
    );
    for path in [csv, jsonl] {
        let got = read_executions(&path).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].experience_id, "e0");
        assert!(got[0].success);
    }
}

#[test]
fn duplicate_execution_names_both_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_text(
        dir.path(),
        "executions.csv",
        &format!("{EXEC_HEADER}e0,s0,4,1\ne0,s1,4,1\ne0,s0,4,0\n"),
    );
    let err = read_executions(&path).unwrap_err();
    assert_names(
        &err,
        &path,
        Some(3),
        None,
        "duplicate execution (experience \"e0\", scene \"s0\", seed 4) already at row 1",
    );
}

#[test]
fn duplicate_embedding_names_both_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_text(
        dir.path(),
        "e.jsonl",
        "{\"representation\":\"r\",\"kind\":\"scene\",\"id\":\"s0\",\"vector\":[1,2]}\n\
         {\"representation\":\"r\",\"kind\":\"experience\",\"id\":\"s0\",\"vector\":[1,2]}\n\
         {\"representation\":\"r\",\"kind\":\"scene\",\"id\":\"s0\",\"vector\":[3,4]}\n",
    );
    let err = read_embeddings(&path).unwrap_err();
    assert_names(
        &err,
        &path,
        Some(3),
        None,
        "duplicate embedding (representation \"r\", scene \"s0\"), first at row 1",
    );
}

/// Files longer than one batch of the embeddings reader (1,024 rows, vectors parsed in
/// parallel per batch) report the error a row-by-row reader meets first: a bad vector after the
/// first batch before a later bad kind, a bad kind before a later bad vector, a valid file of
/// 2,100 rows reads whole, and a duplicate of a first-batch row is found in a later batch.
#[test]
fn embedding_errors_across_batches_come_in_row_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, edit: &dyn Fn(usize) -> Option<String>| {
        let mut text = String::from("representation,kind,id,vector\n");
        for row in 1..=2_100 {
            let line = edit(row).unwrap_or_else(|| format!("r,scene,s{row},{row} 1"));
            text.push_str(&line);
            text.push('\n');
        }
        write_text(dir.path(), name, &text)
    };
    let path = file("ok.csv", &|_| None);
    let records = read_embeddings(&path).unwrap();
    assert_eq!(records.len(), 2_100);
    assert_eq!(records[1_500].id, "s1501");
    assert_eq!(records[1_500].vector, vec![1_501.0, 1.0]);
    let path = file("vector_then_kind.csv", &|row| match row {
        1_030 => Some("r,scene,s1030,1 x".into()),
        1_040 => Some("r,query,s1040,1 2".into()),
        _ => None,
    });
    let err = read_embeddings(&path).unwrap_err();
    assert_names(
        &err,
        &path,
        Some(1_030),
        Some("vector"),
        "element 2 is \"x\"",
    );
    let path = file("kind_then_vector.csv", &|row| match row {
        1_010 => Some("r,query,s1010,1 2".into()),
        1_030 => Some("r,scene,s1030,1 x".into()),
        _ => None,
    });
    let err = read_embeddings(&path).unwrap_err();
    assert_names(&err, &path, Some(1_010), Some("kind"), "got \"query\"");
    let path = file("first_batch_vector.csv", &|row| match row {
        1_000 => Some("r,scene,s1000,1 2 3".into()),
        1_500 => Some("r,query,s1500,1 2".into()),
        _ => None,
    });
    let err = read_embeddings(&path).unwrap_err();
    assert_names(
        &err,
        &path,
        Some(1_000),
        Some("vector"),
        "has dimension 2 (row 1)",
    );
    let path = file("late_duplicate.csv", &|row| {
        (row == 2_050).then(|| "r,scene,s3,5 5".to_string())
    });
    let err = read_embeddings(&path).unwrap_err();
    assert_names(
        &err,
        &path,
        Some(2_050),
        None,
        "duplicate embedding (representation \"r\", scene \"s3\"), first at row 3",
    );
}

#[test]
fn file_level_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    let path = write_text(d, "executions.txt", EXEC_HEADER);
    let err = read_executions(&path).unwrap_err();
    assert!(matches!(err, DataError::UnsupportedFormat { .. }));
    assert_names(&err, &path, None, None, "unsupported file extension");

    let path = write_text(d, "x.csv", "experience_id,scene_id,success\ne0,s0,1\n");
    let err = read_executions(&path).unwrap_err();
    assert!(matches!(err, DataError::MissingColumn { .. }));
    assert_names(
        &err,
        &path,
        None,
        Some("seed"),
        "missing required column \"seed\"",
    );

    let path = write_text(
        d,
        "dupcol.csv",
        "experience_id,seed,scene_id,seed,success\n",
    );
    assert_names(
        &read_executions(&path).unwrap_err(),
        &path,
        None,
        Some("seed"),
        "more than once",
    );
    // Two columns without a name are stray delimiters, said as such; one (pandas' index) is read.
    let path = write_text(d, "unnamed.csv", "experience_id,,scene_id,seed,success,\n");
    assert_names(
        &read_executions(&path).unwrap_err(),
        &path,
        None,
        None,
        "columns 2 and 6 of the header have no name (stray delimiters?)",
    );
    let path = write_text(
        d,
        "index.csv",
        ",experience_id,scene_id,seed,success\n0,e0,s0,0,1\n",
    );
    assert_eq!(read_executions(&path).unwrap().len(), 1);

    for (name, text) in [("empty.csv", EXEC_HEADER), ("empty.jsonl", "\n\n")] {
        let path = write_text(d, name, text);
        let err = read_executions(&path).unwrap_err();
        assert!(matches!(err, DataError::Empty { .. }), "{err}");
        assert_names(&err, &path, None, None, "no data rows");
    }
    let path = d.join("empty.parquet");
    write_executions_parquet(&path, &[]).unwrap();
    assert!(matches!(
        read_executions(&path).unwrap_err(),
        DataError::Empty { .. }
    ));

    let path = d.join("absent.csv");
    let err = read_scenes(&path).unwrap_err();
    assert!(matches!(err, DataError::Io { .. }));
    assert_names(&err, &path, None, None, "cannot open");

    let path = write_text(
        d,
        "ragged.csv",
        &format!("{EXEC_HEADER}e0,s0,0,1\ne0,s0,1\n"),
    );
    let err = read_executions(&path).unwrap_err();
    assert!(matches!(err, DataError::Csv { .. }));
    assert_eq!(err.row(), Some(2), "{err}");

    let path = write_text(
        d,
        "bad.jsonl",
        "{\"experience_id\":\"e0\",\"scene_id\":\"s0\",\"seed\":0,\"success\":true}\n[1,2]\n",
    );
    let err = read_executions(&path).unwrap_err();
    assert_names(&err, &path, Some(2), None, "expected a JSON object");

    let path = write_text(
        d,
        "missing_key.jsonl",
        "{\"experience_id\":\"e0\",\"scene_id\":\"s0\",\"success\":true}\n",
    );
    assert_names(
        &read_executions(&path).unwrap_err(),
        &path,
        Some(1),
        Some("seed"),
        "missing value",
    );
}

#[test]
fn pyarrow_bad_fixtures() {
    let path = fixture("bad_executions_null_seed.parquet");
    assert_names(
        &read_executions(&path).unwrap_err(),
        &path,
        Some(2),
        Some("seed"),
        "missing value",
    );
    let path = fixture("bad_executions_float_seed.parquet");
    assert_names(
        &read_executions(&path).unwrap_err(),
        &path,
        Some(1),
        Some("seed"),
        "expected an integer, got float 1.5",
    );
    let path = fixture("bad_embeddings_nan.parquet");
    assert_names(
        &read_embeddings(&path).unwrap_err(),
        &path,
        Some(2),
        Some("vector"),
        "element 1 is NaN",
    );
    let path = fixture("bad_embeddings_null_element.parquet");
    assert_names(
        &read_embeddings(&path).unwrap_err(),
        &path,
        Some(1),
        Some("vector"),
        "a list with null elements",
    );
}

/// Writes the sample run as CSV, replaces one file's text, and loads it.
fn load_with(file: &str, text: &str) -> (RetrievalPaths, DataError) {
    let dir = tempfile::tempdir().unwrap().keep();
    let paths = common::write_run(&dir, &common::sample(), "csv");
    write_text(&dir, file, text);
    let err = load_retrieval_inputs(&paths).unwrap_err();
    (paths, err)
}

fn sample_csv(file: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    common::write_run(dir.path(), &common::sample(), "csv");
    std::fs::read_to_string(dir.path().join(file)).unwrap()
}

#[test]
fn cross_file_errors() {
    let executions = sample_csv("executions.csv");

    let (paths, err) = load_with("executions.csv", &format!("{executions}e9,s0,0,1\n"));
    assert_names(
        &err,
        &paths.executions,
        Some(21),
        Some("experience_id"),
        "unknown experience \"e9\" (not in experiences.csv)",
    );

    // e1's own base scene is b1: an execution of e0 there is unknown.
    let (paths, err) = load_with("executions.csv", &format!("{executions}e0,b1,0,1\n"));
    assert_names(
        &err,
        &paths.executions,
        Some(21),
        Some("scene_id"),
        "unknown scene \"b1\" (not in scenes.csv and not the base scene of experience \"e0\")",
    );

    // Dropping both seeds of (e1, s2) leaves that cell empty.
    let without: String = executions
        .lines()
        .filter(|l| !l.starts_with("e1,s2,"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (paths, err) = load_with("executions.csv", &without);
    assert_names(
        &err,
        &paths.executions,
        None,
        None,
        "no execution of experience \"e1\" in scene \"s2\" (1 of 9 experience × scene cells have none)",
    );

    let embeddings = sample_csv("embeddings.csv");
    let without: String = embeddings
        .lines()
        .filter(|l| !l.starts_with("dino,scene,s1,"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (paths, err) = load_with("embeddings.csv", &without);
    assert_names(
        &err,
        &paths.embeddings,
        None,
        None,
        "representation \"dino\" has no embedding for scene \"s1\"",
    );
    let without: String = embeddings
        .lines()
        .filter(|l| !l.starts_with("pix,experience,e2,"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (paths, err) = load_with("embeddings.csv", &without);
    assert_names(
        &err,
        &paths.embeddings,
        None,
        None,
        "representation \"pix\" has no embedding for experience \"e2\"",
    );

    let (paths, err) = load_with(
        "embeddings.csv",
        &format!("{embeddings}dino,scene,b0,1 2\n"),
    );
    assert_names(
        &err,
        &paths.embeddings,
        Some(13),
        Some("id"),
        "unknown scene \"b0\" (not in scenes.csv)",
    );

    let (paths, err) = load_with("selections.csv", "scene_id,experience_id\ns0,e0\ns1,e7\n");
    assert_names(
        &err,
        paths.selections.as_ref().unwrap(),
        Some(2),
        Some("experience_id"),
        "unknown experience \"e7\"",
    );
    let (paths, err) = load_with("selections.csv", "scene_id,experience_id\nb0,e0\n");
    assert_names(
        &err,
        paths.selections.as_ref().unwrap(),
        Some(1),
        Some("scene_id"),
        "unknown query scene \"b0\"",
    );
    let (paths, err) = load_with("selections.csv", "scene_id,experience_id\ns0,e0\ns2,e0\n");
    assert_names(
        &err,
        paths.selections.as_ref().unwrap(),
        None,
        None,
        "no selection for query scene \"s1\"",
    );
}
