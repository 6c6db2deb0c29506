//! LeRobot reader on tiny synthetic datasets written here: known values, images, error paths
//! and the inconsistencies `inspect` must name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod lerobot_common;

use std::fs;

use lerobot_common::*;
use roboaudit_data::DataError;
use roboaudit_data::lerobot::{
    FeatureKind, ImageLayout, LeRobotDataset, LeRobotVersion, SuccessSource, read_labels_file,
    read_policy_actions, render_inspect,
};

fn v3() -> (tempfile::TempDir, LeRobotDataset) {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    (dir, ds)
}

fn v21() -> (tempfile::TempDir, LeRobotDataset) {
    let dir = tempfile::tempdir().unwrap();
    write_v21(dir.path());
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    (dir, ds)
}

#[test]
fn v3_metadata_is_read() {
    let (_d, ds) = v3();
    assert_eq!(ds.version(), LeRobotVersion::V3_0);
    assert!((ds.fps() - 12.5).abs() < 1e-12, "float fps kept");
    assert_eq!(ds.robot_type(), Some("toy_arm"));
    let state = ds.feature("observation.state").unwrap();
    assert_eq!(
        state.names.as_deref().unwrap(),
        ["x", "y"],
        "names as dict flattened"
    );
    assert_eq!(state.kind, FeatureKind::Numeric);
    let image = ds.feature("observation.image").unwrap();
    assert_eq!(
        (image.kind, image.layout),
        (FeatureKind::Image, Some(ImageLayout::Chw))
    );
    let video = ds.feature("observation.images.wrist").unwrap();
    assert_eq!(video.kind, FeatureKind::Video);
    assert_eq!(
        video.video.as_ref().unwrap().codec.as_deref(),
        Some("av1"),
        "video_info read"
    );
    let eps = ds.episodes();
    assert_eq!(eps.len(), 2);
    assert_eq!(
        (
            eps[1].index,
            eps[1].length,
            eps[1].from_index,
            eps[1].to_index
        ),
        (1, Some(2), Some(3), Some(5))
    );
    assert_eq!(eps[1].tasks, ["place"]);
    assert_eq!(
        eps[0].data_file.to_str().unwrap(),
        "data/chunk-000/file-000.parquet"
    );
    assert_eq!(
        eps[0].videos[0].file.to_str().unwrap(),
        "videos/observation.images.wrist/chunk-000/file-000.mp4"
    );
    let tasks: Vec<&str> = ds.tasks().iter().map(|t| t.task.as_str()).collect();
    assert_eq!(tasks, ["pick", "place"], "tasks from __index_level_0__");
}

#[test]
fn v3_frames_have_known_values() {
    let (_d, ds) = v3();
    let ep = ds
        .read_episode_frames(1, &["observation.state", "action", "next.reward"])
        .unwrap();
    assert_eq!(ep.index, [3, 4]);
    assert_eq!(ep.frame_index, [0, 1]);
    assert_eq!(
        ep.column("observation.state").unwrap(),
        [state(1, 0), state(1, 1)]
    );
    assert_eq!(
        ep.column("action").unwrap(),
        [action(1, 0), action(1, 1)],
        "variable list read"
    );
    assert_eq!(ep.column("next.reward").unwrap(), [vec![0.0], vec![1.0]]);
    let all = ds.read_frames(&["action"]).unwrap();
    assert_eq!(all.iter().map(|e| e.len()).collect::<Vec<_>>(), [3, 2]);
    assert_eq!(all[0].column("action").unwrap()[2], action(0, 2));
}

#[test]
fn png_image_feature_decodes_to_rgb8() {
    let (_d, ds) = v3();
    let img = ds.read_image(1, 1, "observation.image").unwrap();
    assert_eq!((img.width, img.height, img.pixels.len()), (5, 4, 60));
    assert_eq!(img.pixel(3, 2), Some(rgb_at(1, 1, 3, 2)));
    assert_eq!(img.pixel(0, 0), Some([0, 0, 110]));
    assert_eq!(img.pixel(5, 0), None);
}

#[test]
fn grey_and_rgba_pngs_become_rgb() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    let grey = png_bytes(2, 1, png::ColorType::Grayscale, &|x, _| {
        vec![u8::try_from(x).unwrap() * 7]
    });
    let rgba = png_bytes(2, 1, png::ColorType::Rgba, &|x, _| {
        vec![1, 2, 3 + u8::try_from(x).unwrap(), 9]
    });
    let file = dir.path().join("data/chunk-000/file-000.parquet");
    // Rewrite with a 2-row file holding the two images (episode 0 only).
    write_parquet(
        &file,
        vec![
            (
                "observation.state",
                fixed_vectors(&[state(0, 0), state(0, 1)], 2),
            ),
            ("action", list_vectors(&[action(0, 0), action(0, 1)])),
            ("observation.image", image_structs(&[grey, rgba])),
            ("episode_index", ints(&[0, 0])),
            ("frame_index", ints(&[0, 1])),
            ("index", ints(&[0, 1])),
        ],
    );
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    let g = ds.read_image(0, 0, "observation.image").unwrap();
    assert_eq!(g.pixels, [0, 0, 0, 7, 7, 7]);
    let c = ds.read_image(0, 1, "observation.image").unwrap();
    assert_eq!(c.pixels, [1, 2, 3, 1, 2, 4]);
}

#[test]
fn video_features_are_refused_where_an_image_or_number_is_wanted() {
    let (_d, ds) = v3();
    let err = ds.read_image(0, 0, "observation.images.wrist").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("is a video") && msg.contains("not an image") && msg.contains("av1"),
        "{msg}"
    );
    let err = ds
        .read_episode_frames(0, &["observation.images.wrist"])
        .unwrap_err();
    assert!(err.to_string().contains("is a video"), "{err}");
    assert_eq!(err.column(), Some("observation.images.wrist"));
    let err = ds.read_episode_frames(0, &["nope"]).unwrap_err();
    assert!(err.to_string().contains("not declared"), "{err}");
    let err = ds.read_episode_frames(7, &["action"]).unwrap_err();
    assert!(
        err.to_string()
            .contains("episode 7 is not in the episodes metadata"),
        "{err}"
    );
}

#[test]
fn corrupt_png_names_file_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    write_parquet(
        &dir.path().join("data/chunk-000/file-000.parquet"),
        vec![
            ("observation.image", image_structs(&[b"not a png".to_vec()])),
            ("episode_index", ints(&[0])),
            ("frame_index", ints(&[0])),
        ],
    );
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    let err = ds.read_image(0, 0, "observation.image").unwrap_err();
    assert_eq!(
        (err.row(), err.column()),
        (Some(1), Some("observation.image"))
    );
    assert!(err.to_string().contains("not a valid PNG"), "{err}");
    assert!(err.file().ends_with("data/chunk-000/file-000.parquet"));
}

#[test]
fn width_mismatch_is_an_error_with_row() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    edit_json(&dir.path().join("meta/info.json"), |v| {
        v["features"]["action"]["shape"] = serde_json::json!([4]);
    });
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    let err = ds.read_episode_frames(0, &["action"]).unwrap_err();
    assert_eq!((err.row(), err.column()), (Some(1), Some("action")));
    assert!(err.to_string().contains("expected 4 values"), "{err}");
}

#[test]
fn clean_v3_inspects_without_problems() {
    let (_d, ds) = v3();
    let report = ds.inspect().unwrap();
    let problems: Vec<String> = report.problems.iter().map(|p| p.message.clone()).collect();
    // Only the absent MP4 of the video feature is a problem.
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("1 of 1 video files are missing"),
        "{problems:?}"
    );
    assert_eq!(
        (
            report.frames,
            report.episodes_in_data,
            report.episode_length_range
        ),
        (5, 2, Some((2, 3)))
    );
    assert_eq!(
        report.labels.success_columns,
        [("next.success".to_owned(), 1)]
    );
    assert_eq!(report.labels.done_frames, Some(2));
    assert!(
        report
            .labels
            .verdict
            .contains("use column \"next.success\" (true in 1 of 2")
    );
    let reward = report.labels.reward.as_ref().unwrap();
    assert!(reward.binary);
    assert!((reward.mean - 0.2).abs() < 1e-12);
    let storage = |n: &str| {
        report
            .features
            .iter()
            .find(|f| f.name == n)
            .unwrap()
            .storage
            .clone()
    };
    assert_eq!(
        storage("observation.state").as_deref(),
        Some("fixed_size_list<Float32>[2]")
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["version"], "v3.0");
    let text = render_inspect(&report);
    assert!(
        text.contains("version    v3.0") && text.contains("MP4 frames, decoded by timestamp"),
        "{text}"
    );
}

#[test]
fn inconsistent_v3_problems_say_what_and_where() {
    let dir = tempfile::tempdir().unwrap();
    write_v3(dir.path());
    edit_json(&dir.path().join("meta/info.json"), |v| {
        v["total_frames"] = serde_json::json!(6)
    });
    // Episode 1's second frame: frame_index 2 instead of 1, timestamp off, index 9.
    let file = dir.path().join("data/chunk-000/file-000.parquet");
    write_parquet(
        &file,
        vec![
            (
                "observation.state",
                fixed_vectors(
                    &[
                        state(0, 0),
                        state(0, 1),
                        state(0, 2),
                        state(1, 0),
                        state(1, 1),
                    ],
                    2,
                ),
            ),
            (
                "action",
                list_vectors(&[
                    action(0, 0),
                    action(0, 1),
                    action(0, 2),
                    action(1, 0),
                    vec![1.0],
                ]),
            ),
            ("next.reward", f32s(&[0.0; 5])),
            ("next.success", bools(&[false; 5])),
            ("next.done", bools(&[false, true, true, false, false])),
            ("timestamp", f32s(&[0.0, 0.08, 0.16, 0.0, 0.5])),
            ("frame_index", ints(&[0, 1, 2, 0, 2])),
            ("episode_index", ints(&[0, 0, 0, 1, 1])),
            ("index", ints(&[0, 1, 2, 3, 9])),
            ("task_index", ints(&[0, 0, 0, 1, 5])),
        ],
    );
    let report = LeRobotDataset::open(dir.path()).unwrap().inspect().unwrap();
    let find = |needle: &str| {
        report
            .problems
            .iter()
            .find(|p| p.message.contains(needle))
            .unwrap_or_else(|| panic!("no problem containing {needle:?} in {:#?}", report.problems))
    };
    assert!(
        find("total_frames is 6, the data files hold 5 rows")
            .file
            .ends_with("meta/info.json")
    );
    let p = find("frame_index is 2, expected 1");
    assert_eq!((p.episode, p.row), (Some(1), Some(5)));
    assert!(p.file.ends_with("data/chunk-000/file-000.parquet"));
    let p = find("timestamp is 0.5 s, frame_index/fps = 2/12.5 = 0.16 s");
    assert_eq!(p.row, Some(5));
    let p = find("column \"action\": 1 rows do not have the 3 values");
    assert_eq!(p.row, Some(5));
    assert_eq!(
        find("task_index 5 is not in the tasks metadata").row,
        Some(5)
    );
    let p = find("dataset_from_index..dataset_to_index is 3..5, its rows have index 3..10");
    assert_eq!(p.episode, Some(1));
    assert!(
        find("global index over all data files is not 0..4")
            .message
            .contains("skips to 9")
    );
    assert!(
        find("\"next.success\" is never true in any of the 2 episodes")
            .file
            .ends_with("data/chunk-000/file-000.parquet")
    );
    assert!(
        find("declared feature \"observation.image\" has no column")
            .row
            .is_none()
    );
    assert_eq!(find("\"next.done\" is true on frames other than the last in 1 of 2 episodes (e.g. episode 0: frames [1, 2] of 0..=2)").episode, Some(0));
    assert_eq!(
        find("\"next.done\" is false on the last frame of 1 of 2 episodes (e.g. episode 1)")
            .episode,
        Some(1)
    );
    assert_eq!(report.problems.len(), 12, "{:#?}", report.problems);
}

#[test]
fn missing_data_file_and_length_mismatch_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    write_v21(dir.path());
    fs::remove_file(dir.path().join("data/chunk-000/episode_000000.parquet")).unwrap();
    let episodes = "{\"episode_index\": 0, \"tasks\": [\"walk\"], \"length\": 2}\n{\"episode_index\": 1, \"tasks\": [\"walk\"], \"length\": 4}\n";
    fs::write(dir.path().join("meta/episodes.jsonl"), episodes).unwrap();
    let report = LeRobotDataset::open(dir.path()).unwrap().inspect().unwrap();
    let messages: Vec<String> = report
        .problems
        .iter()
        .map(|p| format!("{} @ {}", p.message, p.file.display()))
        .collect();
    assert!(messages.iter().any(|m| m == "data file is missing; it holds episodes [0] @ data/chunk-000/episode_000000.parquet"), "{messages:#?}");
    assert!(
        messages.iter().any(
            |m| m.starts_with("episode 1 has length 4 in the metadata, 3 rows")
                && m.ends_with("@ meta/episodes.jsonl")
        ),
        "{messages:#?}"
    );
    let p = report
        .problems
        .iter()
        .find(|p| p.message.contains("length 4"))
        .unwrap();
    assert_eq!(p.row, Some(2));
}

#[test]
fn v21_is_read_and_inspected() {
    let (_d, ds) = v21();
    assert_eq!(ds.version(), LeRobotVersion::V2_1);
    assert_eq!(
        ds.feature("action").unwrap().names.as_ref().unwrap().len(),
        4,
        "nested names flattened"
    );
    let eps = ds.episodes();
    assert_eq!(
        eps[1].data_file.to_str().unwrap(),
        "data/chunk-000/episode_000001.parquet"
    );
    assert_eq!(
        eps[1].videos[0].file.to_str().unwrap(),
        "videos/chunk-000/observation.images.cam/episode_000001.mp4"
    );
    let ep = ds.read_episode_frames(1, &["observation.state"]).unwrap();
    assert_eq!(ep.index, [2, 3, 4]);
    assert_eq!(
        ep.column("observation.state").unwrap()[2],
        [1.0, 2.0, 0.5, -1.0]
    );
    let report = ds.inspect().unwrap();
    assert_eq!(report.problems.len(), 1, "{:#?}", report.problems);
    assert!(
        report.problems[0]
            .message
            .contains("2 of 2 video files are missing (first: episode 0)")
    );
    assert_eq!(report.videos[0].files_present, 0);
    assert!(report.labels.verdict.contains("supply a labels file"));
}

#[test]
fn unsupported_version_and_missing_meta_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    write_v21(dir.path());
    edit_json(&dir.path().join("meta/info.json"), |v| {
        v["codebase_version"] = serde_json::json!("v2.0")
    });
    let err = LeRobotDataset::open(dir.path()).unwrap_err();
    assert!(
        err.to_string()
            .contains("codebase_version \"v2.0\" is not supported"),
        "{err}"
    );
    let v3dir = tempfile::tempdir().unwrap();
    write_v3(v3dir.path());
    fs::remove_dir_all(v3dir.path().join("meta/episodes")).unwrap();
    let err = LeRobotDataset::open(v3dir.path()).unwrap_err();
    assert!(err.to_string().contains("no episodes metadata"), "{err}");
    fs::create_dir_all(v3dir.path().join("meta/episodes")).unwrap();
    fs::remove_file(v3dir.path().join("meta/tasks.parquet")).unwrap();
    assert!(
        LeRobotDataset::open(v3dir.path()).is_err(),
        "episodes metadata still missing"
    );
    let empty = tempfile::tempdir().unwrap();
    let err = LeRobotDataset::open(empty.path()).unwrap_err();
    assert!(
        matches!(err, DataError::Io { .. }) && err.file().ends_with("meta/info.json"),
        "{err}"
    );
}

#[test]
fn success_labels_from_each_source() {
    let (d, ds) = v3();
    let col = ds
        .success_labels(&SuccessSource::Column("next.success".into()))
        .unwrap();
    assert_eq!(
        col.iter().map(|l| l.success).collect::<Vec<_>>(),
        [false, true]
    );
    let last = ds
        .success_labels(&SuccessSource::LastReward {
            column: "next.reward".into(),
            threshold: 0.5,
        })
        .unwrap();
    assert_eq!(
        last.iter().map(|l| l.success).collect::<Vec<_>>(),
        [false, true]
    );
    let labels = d.path().join("labels.csv");
    fs::write(&labels, "episode_index,success\n1,0\n0,true\n").unwrap();
    let from_file = ds
        .success_labels(&SuccessSource::File(labels.clone()))
        .unwrap();
    assert_eq!(
        from_file
            .iter()
            .map(|l| (l.episode_index, l.success))
            .collect::<Vec<_>>(),
        [(0, true), (1, false)]
    );
    fs::write(&labels, "episode_index,success\n0,1\n3,0\n").unwrap();
    let err = ds
        .success_labels(&SuccessSource::File(labels.clone()))
        .unwrap_err();
    assert_eq!((err.row(), err.column()), (Some(2), Some("episode_index")));
    assert!(
        err.to_string().contains("episode 3 is not in the dataset"),
        "{err}"
    );
    fs::write(&labels, "episode_index,success\n0,1\n").unwrap();
    let err = ds
        .success_labels(&SuccessSource::File(labels.clone()))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("1 of 2 episodes have no label (first: episode 1)"),
        "{err}"
    );
    let err = ds
        .success_labels(&SuccessSource::Column("observation.state".into()))
        .unwrap_err();
    assert!(err.to_string().contains("expected 0/1"), "{err}");
}

#[test]
fn labels_file_rejects_duplicates_and_bad_values() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("l.jsonl");
    fs::write(
        &f,
        "{\"episode_index\": 0, \"success\": 1}\n{\"episode_index\": 0, \"success\": 0}\n",
    )
    .unwrap();
    let err = read_labels_file(&f).unwrap_err();
    assert!(
        err.to_string()
            .contains("episode 0 is labelled twice, first at row 1"),
        "{err}"
    );
    fs::write(&f, "{\"episode_index\": 0, \"success\": \"maybe\"}\n").unwrap();
    let err = read_labels_file(&f).unwrap_err();
    assert_eq!((err.row(), err.column()), (Some(1), Some("success")));
}

#[test]
fn policy_actions_are_read_and_checked() {
    let (d, ds) = v3();
    let f = d.path().join("pa.csv");
    let mut text = String::from("index,sample,action\n");
    for i in 0..5 {
        for s in 0..2 {
            text.push_str(&format!("{i},{s},\"{i} {s} 0.5\"\n"));
        }
    }
    fs::write(&f, &text).unwrap();
    let pa = read_policy_actions(&f).unwrap();
    assert_eq!((pa.samples, pa.action_dim, pa.index.len()), (2, 3, 5));
    assert_eq!(pa.sample(4, 1).unwrap(), [4.0, 1.0, 0.5]);
    assert_eq!(pa.frame(2).unwrap(), [2.0, 0.0, 0.5, 2.0, 1.0, 0.5]);
    assert_eq!(ds.check_policy_actions(&pa, "action").unwrap(), 0);
    let err = ds
        .check_policy_actions(&pa, "observation.state")
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("actions have 3 values, the dataset's \"observation.state\" has 2"),
        "{err}"
    );
    fs::write(&f, "index,sample,action\n9,0,1 2 3\n").unwrap();
    let err = ds
        .check_policy_actions(&read_policy_actions(&f).unwrap(), "action")
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("frame index 9 is not in the dataset"),
        "{err}"
    );
    fs::write(&f, "index,sample,action\n0,0,1 2 3\n0,1,1 2 3\n1,0,1 2 3\n").unwrap();
    let err = read_policy_actions(&f).unwrap_err();
    assert!(
        err.to_string()
            .contains("frame 1 has samples [0]; every frame needs samples 0..1"),
        "{err}"
    );
    fs::write(&f, "index,sample,action\n0,0,1 2 3\n0,0,1 2 3\n").unwrap();
    let err = read_policy_actions(&f).unwrap_err();
    assert_eq!(err.row(), Some(2));
    fs::write(&f, "index,sample,action\n0,0,1 2 3\n1,0,1 2\n").unwrap();
    let err = read_policy_actions(&f).unwrap_err();
    assert!(
        err.to_string().contains("action has 2 values, row 1 has 3"),
        "{err}"
    );
}

/// A path template that leaves the dataset folder is refused when the metadata is read, naming
/// the key; templates inside it (LeRobot's own) open.
#[test]
fn path_templates_leaving_the_dataset_folder_are_refused() {
    for (key, template, refused) in [
        (
            "data_path",
            "../outside/file-{file_index:03d}.parquet",
            true,
        ),
        ("data_path", "/etc/file-{file_index:03d}.parquet", true),
        ("video_path", "videos/../../{video_key}.mp4", true),
        (
            "data_path",
            "./data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
            false,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write_v3(dir.path());
        edit_json(&dir.path().join("meta/info.json"), |v| {
            v[key] = serde_json::json!(template)
        });
        match LeRobotDataset::open(dir.path()) {
            Err(err) if refused => {
                assert!(
                    err.to_string()
                        .contains(&format!("{key} \"{template}\" leaves the dataset folder")),
                    "{err}"
                );
                assert!(err.file().ends_with("meta/info.json"), "{err}");
            }
            Ok(_) if !refused => {}
            other => panic!("{key} {template}: {:?}", other.map(|_| ())),
        }
    }
}

/// A run folder (its dataset in `dataset/`) given where a dataset is expected is named as such.
#[test]
fn a_run_folder_given_as_a_dataset_points_to_its_dataset() {
    let run = tempfile::tempdir().unwrap();
    write_v3(&run.path().join("dataset"));
    let err = LeRobotDataset::open(run.path()).unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "{} is not a LeRobot dataset, but {} is",
            run.path().display(),
            run.path().join("dataset").display()
        )),
        "{err}"
    );
    assert!(err.file().ends_with("meta/info.json"), "{err}");
    LeRobotDataset::open(run.path().join("dataset")).unwrap();
}
