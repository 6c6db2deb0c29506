//! FQE frame features from `video` features. The reference is PyAV: the v2.1 fixture of
//! roboaudit-data with both episodes' MP4 replaced by `synthetic_av1.mp4`, whose every frame
//! PyAV decoded into `synthetic_av1.rgb.png` (roboaudit-video's fixtures, written by
//! `scripts/make_video_fixtures.py`). So frame `i` of either episode must be PyAV's frame `i`,
//! and the loaded components must be those of the raw encoder on PyAV's frames. Also: the
//! cache is keyed by file content and time (a copy of a file is not decoded again), and a
//! failing video names file, episode and frame and leaves no cache behind.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use roboaudit_data::DataError;
use roboaudit_data::lerobot::{LeRobotDataset, Rgb8Image, SuccessSource};
use roboaudit_fqe::FqeError;
use roboaudit_fqe::encoder::{Encoder, area_resample};
use roboaudit_fqe::load::{FrameFeatures, LoadOptions, load_lerobot};
use roboaudit_fqe::pca::CovarianceAccumulator;

const KEY: &str = "observation.images.cam";
/// The loader's subspace iterations (`load::PCA_ITERATIONS`).
const PCA_ITERATIONS: usize = 10;

fn fixture() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../roboaudit-data/tests/fixtures/video_v21"
    ))
}

fn video_fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../roboaudit-video/tests/fixtures"
    ))
    .join(name)
}

fn episode_video(root: &Path, episode: usize) -> PathBuf {
    root.join(format!("videos/chunk-000/{KEY}/episode_{episode:06}.mp4"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The v2.1 fixture with both episodes' video replaced by `synthetic_av1.mp4` (20 frames at
/// 10 fps: enough for episode 0's 12 and episode 1's 9 timestamps).
fn pyav_dataset(dir: &Path) -> PathBuf {
    let root = dir.join("ds");
    copy_dir(&fixture(), &root);
    for ep in 0..2 {
        std::fs::copy(video_fixture("synthetic_av1.mp4"), episode_video(&root, ep)).unwrap();
    }
    root
}

/// PyAV's decode of `synthetic_av1.mp4`: 20 RGB24 frames of 64×48 stacked vertically.
fn pyav_frames() -> Vec<Rgb8Image> {
    let file = std::fs::File::open(video_fixture("synthetic_av1.rgb.png")).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (64, 960));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    buf.chunks_exact(64 * 48 * 3)
        .map(|pixels| Rgb8Image {
            width: 64,
            height: 48,
            pixels: pixels.to_vec(),
        })
        .collect()
}

fn options(cache: &Path) -> LoadOptions {
    LoadOptions {
        features: FrameFeatures::Image(KEY.into()),
        state_feature: Some("observation.state".into()),
        action_feature: "action".into(),
        labels: SuccessSource::Column("next.success".into()),
        encoder: Encoder::raw32(),
        components: 4,
        component_frames: 1000,
        cache_dir: Some(cache.to_path_buf()),
        seed: 0,
        time_input: false,
    }
}

#[test]
fn video_features_are_the_raw_encoder_on_pyav_frames_and_a_copy_is_a_cache_hit() {
    let dir = tempfile::tempdir().unwrap();
    let root = pyav_dataset(dir.path());
    let cache = dir.path().join("cache");
    let ds = LeRobotDataset::open(&root).unwrap();
    let first = load_lerobot(&ds, &options(&cache)).unwrap();
    assert_eq!(first.summary.frames, 21);
    assert_eq!(first.summary.features, format!("image:{KEY}"));
    // Episode 1's file has episode 0's content: its 9 frames share keys (file hash, time) with
    // episode 0's first 9, so only episode 0's 12 frames are decoded and encoded.
    assert_eq!((first.summary.cache_hits, first.summary.encoded), (9, 12));
    let again = load_lerobot(&ds, &options(&cache)).unwrap();
    assert_eq!((again.summary.cache_hits, again.summary.encoded), (21, 0));
    assert_eq!(first.inputs.parts[0].values, again.inputs.parts[0].values);

    // The same pipeline on PyAV's frames: rows in episode then frame order, frame i of each
    // episode is PyAV's frame i, components fitted on every row (21 < component_frames).
    let pyav = pyav_frames();
    let frames: Vec<usize> = (0..12).chain(0..9).collect();
    let raw: Vec<Vec<f32>> = frames
        .iter()
        .map(|&i| area_resample(&pyav[i], 32).unwrap())
        .collect();
    let mut acc = CovarianceAccumulator::new(32 * 32 * 3);
    for x in &raw {
        acc.add(x).unwrap();
    }
    let pca = acc.fit(4, PCA_ITERATIONS, 0).unwrap();
    let expected: Vec<f32> = raw.iter().flat_map(|x| pca.project(x)).collect();
    let part = &first.inputs.parts[0];
    assert_eq!(part.name, format!("{KEY}:raw32-pca4"));
    assert_eq!(part.width, 4);
    assert_eq!(part.values.len(), expected.len());
    for (k, (got, want)) in part.values.iter().zip(&expected).enumerate() {
        assert!(
            got == want,
            "row {} component {}: {got} vs PyAV's {want}",
            k / 4,
            k % 4
        );
    }
    // Not a tautology: the components of neighbouring frames differ.
    assert_ne!(part.values[..4], part.values[4..8]);
}

#[test]
fn a_truncated_video_fails_naming_file_and_episode_and_keeps_no_cache() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let ep1 = episode_video(dir.path(), 1);
    let bytes = std::fs::read(&ep1).unwrap();
    std::fs::write(&ep1, &bytes[..bytes.len() / 2]).unwrap();
    let cache = dir.path().join("cache");
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    let err = load_lerobot(&ds, &options(&cache)).unwrap_err();
    match &err {
        FqeError::Data(DataError::Video { episode, .. }) => assert_eq!(*episode, 1),
        other => panic!("{other:?}"),
    }
    assert!(
        roboaudit_types::error_chain(&err).contains("episode_000001.mp4"),
        "{err}"
    );
    // Episode 0's frames were encoded before the failure, but nothing was committed.
    assert!(!cache.exists(), "cache folder left behind");
}

#[test]
fn a_missing_video_fails_naming_file_and_episode() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let ep0 = episode_video(dir.path(), 0);
    std::fs::remove_file(&ep0).unwrap();
    let cache = dir.path().join("cache");
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    let err = load_lerobot(&ds, &options(&cache)).unwrap_err();
    match &err {
        FqeError::Data(DataError::Video { episode, .. }) => assert_eq!(*episode, 0),
        other => panic!("{other:?}"),
    }
    assert!(
        roboaudit_types::error_chain(&err).contains("episode_000000.mp4"),
        "{err}"
    );
    assert!(!cache.exists(), "cache folder left behind");
}

#[test]
fn a_timestamp_past_the_video_fails_naming_episode_and_frame() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    // Episode 0 has 12 frames (0.0 to 1.1 s); episode 1's video has 9 (to 0.8 s).
    std::fs::copy(episode_video(dir.path(), 1), episode_video(dir.path(), 0)).unwrap();
    let cache = dir.path().join("cache");
    let ds = LeRobotDataset::open(dir.path()).unwrap();
    let err = load_lerobot(&ds, &options(&cache)).unwrap_err();
    match &err {
        FqeError::Data(DataError::Video { episode, frame, .. }) => {
            assert_eq!((*episode, *frame), (0, Some(9)), "{err}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        roboaudit_types::error_chain(&err).contains("episode_000000.mp4"),
        "{err}"
    );
    assert!(!cache.exists(), "cache folder left behind");
}

#[test]
fn the_detector_encodes_the_terminal_frames_of_a_video_feature() {
    use roboaudit_data::lerobot::DEFAULT_TOLERANCE_S;
    use roboaudit_fqe::cache::FeatureCache;
    use roboaudit_fqe::detector::features::terminal_features;

    let dir = tempfile::tempdir().unwrap();
    let root = pyav_dataset(dir.path());
    let cache = dir.path().join("cache");
    let ds = LeRobotDataset::open(&root).unwrap();
    let enc = Encoder::raw32();
    let features = FrameFeatures::Image(KEY.into());
    let t = terminal_features(&ds, &features, &enc, 4, Some(&cache), 0, &mut |_, _| {}).unwrap();
    assert_eq!(t.episode_index, vec![0, 1]);
    assert_eq!((t.cache_hits, t.encoded), (0, 2));
    // Only the last frames were encoded: episode 0's frame 11, episode 1's frame 8, each
    // PyAV's frame of that number.
    let pyav = pyav_frames();
    let mut store = FeatureCache::open(&cache, &enc.id(), &enc.weights_hash(), enc.dim()).unwrap();
    assert_eq!(store.len(), 2);
    let mut seen = Vec::new();
    ds.for_each_video_frame::<DataError>(
        KEY,
        DEFAULT_TOLERANCE_S,
        &mut |id| {
            (id.episode_index, id.frame_index) == (0, 11)
                || (id.episode_index, id.frame_index) == (1, 8)
        },
        &mut |id, _| {
            seen.push((id.episode_index, id.frame_index, id.key));
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(seen.len(), 2);
    for (episode, frame, key) in seen {
        let cached = store.get(key).unwrap().expect("terminal frame cached");
        let frame_no = usize::try_from(frame).unwrap();
        assert_eq!(
            cached,
            area_resample(&pyav[frame_no], 32).unwrap(),
            "episode {episode} frame {frame}"
        );
    }
    // A rerun finds both in the cache.
    let again =
        terminal_features(&ds, &features, &enc, 4, Some(&cache), 0, &mut |_, _| {}).unwrap();
    assert_eq!((again.cache_hits, again.encoded), (2, 0));
    assert_eq!(again.values, t.values);
}
