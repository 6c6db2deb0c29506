//! The embed pipeline on a LeRobot dataset: the first frame of each episode of a video camera,
//! decoded through FFmpeg, is the frame PyAV decodes (CRC-32 in roboaudit-data's
//! `fixtures/video_reference.json`), and the file written reads back with the audit's reader.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use roboaudit_encoders::embed::{EmbedSource, read_items};
use roboaudit_encoders::image::area_resample;
use roboaudit_encoders::{EncoderError, RepresentationSpec, embed};
use roboaudit_types::EmbeddingKind;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../roboaudit-data/tests/fixtures/video_v30")
}

#[test]
fn lerobot_first_frames_are_pyavs_and_read_back_as_embeddings() {
    let source = EmbedSource::LeRobot {
        dir: fixture(),
        camera: None,
        kind: EmbeddingKind::Scene,
    };
    let items = read_items(&source).unwrap();
    let reference: serde_json::Value = serde_json::from_str(include_str!(
        "../../roboaudit-data/tests/fixtures/video_reference.json"
    ))
    .unwrap();
    assert_eq!(items.len(), 2);
    for (k, item) in items.iter().enumerate() {
        assert_eq!(item.id, format!("episode_{k}"));
        assert_eq!((item.image.width, item.image.height), (64, 48));
        assert_eq!(
            u64::from(crc32fast::hash(&item.image.pixels)),
            reference["video_v30"][k.to_string()][0].as_u64().unwrap()
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("emb.jsonl");
    let summary = embed(
        &source,
        &[RepresentationSpec::parse("pixels32").unwrap()],
        &out,
    )
    .unwrap();
    assert_eq!(
        (summary.scenes, summary.experiences, summary.rows),
        (2, 0, 2)
    );
    let records = roboaudit_data::read_embeddings(&out).unwrap();
    for (r, item) in records.iter().zip(&items) {
        assert_eq!(
            (r.kind, r.id.as_str()),
            (EmbeddingKind::Scene, item.id.as_str())
        );
        assert_eq!(r.vector, area_resample(&item.image, 32).unwrap());
    }
    // No temporary file is left beside the output.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);

    // A camera the dataset does not have: a wrong option, named with its info.json.
    let e = read_items(&EmbedSource::LeRobot {
        dir: fixture(),
        camera: Some("observation.images.wrist".into()),
        kind: EmbeddingKind::Scene,
    })
    .unwrap_err();
    assert!(
        matches!(&e, EncoderError::InvalidConfig(m)
            if m.starts_with("--camera observation.images.wrist: ") && m.contains("meta/info.json")),
        "{e}"
    );
}
