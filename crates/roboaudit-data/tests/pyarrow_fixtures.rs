#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Parquet files written by pyarrow (scripts/make_data_fixtures.py) read as the records the
//! script recorded in tests/fixtures/expected.json.

use std::path::{Path, PathBuf};

use roboaudit_data::{read_embeddings, read_executions, read_experiences, read_scenes};
use roboaudit_types::{EmbeddingRecord, ExecutionRecord, ExperienceRecord, SceneRecord};
use serde::de::DeserializeOwned;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn expected<T: DeserializeOwned>(key: &str) -> T {
    let text = std::fs::read_to_string(fixture("expected.json")).unwrap();
    let all: serde_json::Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(all[key].clone()).unwrap()
}

#[test]
fn executions_with_dictionary_large_string_int32_and_int_success() {
    let want: Vec<ExecutionRecord> = expected("executions");
    assert_eq!(want.len(), 6);
    assert_eq!(
        read_executions(fixture("executions_dict_int32.parquet")).unwrap(),
        want
    );
    assert_eq!(
        read_executions(fixture("executions_int_success.parquet")).unwrap(),
        want
    );
}

#[test]
fn scenes_keep_extra_columns_as_text_and_drop_nulls() {
    let want: Vec<SceneRecord> = expected("scenes");
    let got = read_scenes(fixture("scenes.parquet")).unwrap();
    assert_eq!(got, want);
    assert_eq!(got[0].extra.get("light").map(String::as_str), Some("0.5"));
}

#[test]
fn experiences_with_timestamps_orders_and_nulls() {
    let want: Vec<ExperienceRecord> = expected("experiences_timestamps");
    assert_eq!(
        read_experiences(fixture("experiences_timestamps.parquet")).unwrap(),
        want
    );
    let want: Vec<ExperienceRecord> = expected("experiences_orders");
    assert_eq!(
        read_experiences(fixture("experiences_orders.parquet")).unwrap(),
        want
    );
}

#[test]
fn embeddings_in_every_list_flavour() {
    let want: Vec<EmbeddingRecord> = expected("embeddings");
    for name in [
        "embeddings_list_f32.parquet",
        "embeddings_large_list_f64.parquet",
        "embeddings_fixed_f32.parquet",
    ] {
        assert_eq!(read_embeddings(fixture(name)).unwrap(), want, "{name}");
    }
}
