//! LeRobot v3.0 recording: layout, schema and values of the written dataset.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use arrow_array::{Array, BooleanArray, FixedSizeListArray, Int64Array, StringArray, StructArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use roboaudit_testbed::*;

fn read(path: &std::path::Path) -> arrow_array::RecordBatch {
    let f = std::fs::File::open(path).unwrap();
    let r = ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .with_batch_size(1 << 20)
        .build()
        .unwrap();
    let batches: Vec<_> = r.map(|b| b.unwrap()).collect();
    arrow_select_concat(&batches)
}

fn arrow_select_concat(b: &[arrow_array::RecordBatch]) -> arrow_array::RecordBatch {
    assert_eq!(b.len(), 1, "small test files come back as one batch");
    b[0].clone()
}

#[test]
fn recorded_expert_episodes_form_a_lerobot_v3_dataset() {
    let tasks = [
        TaskKind::Push {
            block: Color::Green,
            dir: PushDir::Forward,
        },
        TaskKind::Push {
            block: Color::Red,
            dir: PushDir::Right,
        },
    ];
    let mut records = Vec::new();
    for (i, task) in tasks.into_iter().enumerate() {
        let c = CompiledScene::new(&Scene::default_for(task.family()), 64).unwrap();
        let mut ep = Episode::new(
            &c,
            task,
            &EpisodeConfig {
                seed: i as u64,
                ..Default::default()
            },
        )
        .unwrap();
        let mut ex = Expert::new(task, ExpertParams::default(), i as u64);
        let mut r = SceneRenderer::new(&ep, 64).unwrap();
        records.push(record_expert_episode(&mut ep, &mut ex, &mut r, i == 0, i as u64).unwrap());
    }
    // Only one episode has wrist images, so the wrist column is left out.
    let tmp = tempfile::tempdir().unwrap();
    // Set KEEP_LEROBOT_TEST_DATASET=<dir> to inspect the dataset (e.g. with pyarrow) after the test.
    let root = std::env::var_os("KEEP_LEROBOT_TEST_DATASET")
        .map_or(tmp.path().to_path_buf(), std::path::PathBuf::from);
    let s = write_lerobot_v3(root.as_path(), &records).unwrap();
    let n: usize = records.iter().map(|r| r.frames.len()).sum();
    assert_eq!((s.episodes, s.frames, s.tasks), (2, n, 2));
    assert!(records.iter().all(EpisodeRecord::success));

    let info: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.as_path().join("meta/info.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(info["codebase_version"], "v3.0");
    assert_eq!(info["total_frames"], n);
    assert_eq!(
        info["features"]["observation.images.scene"]["dtype"],
        "image"
    );
    assert_eq!(
        info["features"]["observation.images.scene"]["shape"],
        serde_json::json!([64, 64, 3])
    );
    assert!(info["features"].get("observation.images.wrist").is_none());
    assert_eq!(info["features"]["next.success"]["dtype"], "bool");

    let data = read(&root.as_path().join("data/chunk-000/file-000.parquet"));
    assert_eq!(data.num_rows(), n);
    let img = data
        .column_by_name("observation.images.scene")
        .unwrap()
        .as_any()
        .downcast_ref::<StructArray>()
        .unwrap();
    let bytes = img
        .column_by_name("bytes")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::BinaryArray>()
        .unwrap();
    assert!(bytes.value(0).starts_with(b"\x89PNG\r\n\x1a\n"));
    let state = data
        .column_by_name("observation.state")
        .unwrap()
        .as_any()
        .downcast_ref::<FixedSizeListArray>()
        .unwrap();
    assert_eq!(state.value_length(), 15);
    let done = data
        .column_by_name("next.done")
        .unwrap()
        .as_any()
        .downcast_ref::<BooleanArray>()
        .unwrap();
    let ep_idx = data
        .column_by_name("episode_index")
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    let first_len = records[0].frames.len();
    assert!(done.value(first_len - 1) && !done.value(first_len - 2) && done.value(n - 1));
    assert_eq!(
        (ep_idx.value(first_len - 1), ep_idx.value(first_len)),
        (0, 1)
    );
    let task_idx = data
        .column_by_name("task_index")
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!((task_idx.value(0), task_idx.value(n - 1)), (0, 1));

    let tasks_pq = read(&root.as_path().join("meta/tasks.parquet"));
    let names = tasks_pq
        .column_by_name("task")
        .unwrap()
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!(names.value(0), "push the green block forward");
    let f = std::fs::File::open(root.as_path().join("meta/tasks.parquet")).unwrap();
    let schema = ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .schema()
        .clone();
    assert!(
        schema
            .metadata()
            .get("pandas")
            .unwrap()
            .contains("\"index_columns\":[\"task\"]")
    );

    let eps = read(
        &root
            .as_path()
            .join("meta/episodes/chunk-000/file-000.parquet"),
    );
    let to = eps
        .column_by_name("dataset_to_index")
        .unwrap()
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!((to.value(0), to.value(1)), (first_len as i64, n as i64));
    assert_eq!(eps.column_by_name("tasks").unwrap().len(), 2);
}
