//! The real recordings beside the repository (`ROBOAUDIT_SHARED_DATASETS`, run by
//! `.ci/run`): every frame of the two g1 AV1 episodes and the lingzu MPEG-4 file
//! decodes, on the 30 fps grid, as many frames as the episodes metadata says
//! (`g1_inspire_v21/meta/episodes.jsonl`: 221 and 277; lingzu episode 28: 440).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use roboaudit_video::VideoReader;

fn shared() -> PathBuf {
    let dir = PathBuf::from(
        std::env::var("ROBOAUDIT_SHARED_DATASETS")
            .expect("set ROBOAUDIT_SHARED_DATASETS to the shared datasets folder"),
    );
    assert!(dir.is_dir(), "{} is not a folder", dir.display());
    dir
}

#[test]
#[ignore = "needs the shared datasets (ROBOAUDIT_SHARED_DATASETS)"]
fn real_files_decode_whole_on_the_frame_grid() {
    let root = shared();
    for (file, codec, frames) in [
        (
            "g1_inspire_v21/videos/chunk-000/observation.images.cam_high/episode_000029.mp4",
            "av1",
            221,
        ),
        (
            "g1_inspire_v21/videos/chunk-000/observation.images.cam_high/episode_000030.mp4",
            "av1",
            277,
        ),
        (
            "lingzu_open50_v30/video/image/chunk-000/file-028.mp4",
            "mpeg4",
            440,
        ),
    ] {
        let mut reader = VideoReader::open(&root.join(file)).unwrap();
        assert_eq!(reader.info().codec, codec, "{file}");
        assert_eq!(
            (reader.info().width, reader.info().height),
            (640, 480),
            "{file}"
        );
        let mut k = 0u32;
        while let Some(d) = reader.next_frame().unwrap() {
            assert!(
                (d.time_s - f64::from(k) / 30.0).abs() < 1e-9,
                "{file} frame {k}: {}",
                d.time_s
            );
            if k == 0 {
                let rgb = reader.to_rgb(&d).unwrap();
                assert_eq!(rgb.pixels.len(), 640 * 480 * 3);
            }
            k += 1;
        }
        assert_eq!(k, frames, "{file}");
        assert_eq!(reader.info().frames, Some(u64::from(frames)), "{file}");
    }
}
