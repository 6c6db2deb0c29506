//! Bad input: each failure is a typed error that names the file (and, for a query, which one).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{fixture, reference};
use roboaudit_video::{DEFAULT_TOLERANCE_S, QueryError, VideoError, VideoReader, frames_at_times};

/// Opens and serves every frame time of a 10 fps file; the first error.
fn read_all(path: &Path) -> Result<usize, QueryError> {
    let mut reader = VideoReader::open(path).map_err(|error| QueryError { query: None, error })?;
    let times: Vec<f64> = (0..20).map(|k| f64::from(k as f32 / 10.0)).collect();
    let mut n = 0;
    frames_at_times::<QueryError>(&mut reader, &times, DEFAULT_TOLERANCE_S, &mut |_| {
        n += 1;
        Ok(())
    })?;
    Ok(n)
}

fn copy_with(dir: &Path, name: &str, edit: impl FnOnce(&mut Vec<u8>)) -> std::path::PathBuf {
    let mut bytes = std::fs::read(fixture(name)).unwrap();
    edit(&mut bytes);
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_missing_file_is_an_open_error_naming_it() {
    let path = fixture("no_such_episode.mp4");
    let err = VideoReader::open(&path).err().unwrap();
    assert!(matches!(err, VideoError::Open { .. }), "{err:?}");
    assert_eq!(err.file(), path);
    assert!(err.to_string().contains("no_such_episode.mp4"), "{err}");
}

#[test]
fn a_truncated_file_fails_with_the_file_named() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["synthetic_av1.mp4", "synthetic_h264.mp4"] {
        // PyAV writes the index (moov) last: cutting the file loses it.
        let path = copy_with(dir.path(), name, |b| b.truncate(b.len() / 2));
        let err = read_all(&path).unwrap_err();
        assert_eq!(err.error.file(), path, "{err}");
        assert!(err.to_string().contains(name), "{err}");
    }
}

#[test]
fn a_codec_without_a_decoder_is_named() {
    let dir = tempfile::tempdir().unwrap();
    // The brand and sample entry `av01` and the configuration box `av1C` renamed to codes no decoder
    // claims: FFmpeg sees a stream of unknown codec.
    let path = copy_with(dir.path(), "synthetic_av1.mp4", |b| {
        for (from, to) in [(b"av01", b"zzzz"), (b"av1C", b"zzzC")] {
            while let Some(at) = b.windows(4).position(|w| w == from) {
                b[at..at + 4].copy_from_slice(to);
            }
        }
    });
    match VideoReader::open(&path) {
        Err(VideoError::NoDecoder { file, codec }) => {
            assert_eq!(file, path);
            assert_eq!(codec, "none");
        }
        other => panic!("expected NoDecoder, got {:?}", other.err()),
    }
}

#[test]
fn a_corrupt_keyframe_is_a_decode_error_for_the_first_query() {
    let all = reference();
    let dir = tempfile::tempdir().unwrap();
    for name in ["synthetic_av1", "synthetic_h264", "synthetic_mpeg4"] {
        let packet = &all[name]["first_keyframe_packet"];
        let (pos, size) = (
            packet["pos"].as_u64().unwrap() as usize,
            packet["size"].as_u64().unwrap() as usize,
        );
        let path = copy_with(dir.path(), &format!("{name}.mp4"), |b| {
            for (k, x) in b[pos..pos + size].iter_mut().enumerate() {
                *x = (k * 151 % 256) as u8;
            }
        });
        let err = read_all(&path).unwrap_err();
        assert!(
            matches!(err.error, VideoError::Decode { .. }),
            "{name}: {err:?}"
        );
        assert_eq!(err.query, Some(0), "{name}: {err}");
        assert_eq!(err.error.file(), path);
    }
}

#[test]
fn a_time_outside_the_video_names_both_times() {
    let mut reader = VideoReader::open(&fixture("synthetic_av1.mp4")).unwrap();
    let err =
        frames_at_times::<QueryError>(&mut reader, &[0.0, 2.5], DEFAULT_TOLERANCE_S, &mut |_| {
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.query, Some(1));
    match &err.error {
        VideoError::Tolerance {
            query_s, nearest_s, ..
        } => {
            assert_eq!(*query_s, 2.5);
            assert_eq!(*nearest_s, Some(1.9));
        }
        other => panic!("{other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("2.500000 s") && text.contains("1.900000 s"),
        "{text}"
    );
    assert!(text.contains("synthetic_av1.mp4"), "{text}");
}
