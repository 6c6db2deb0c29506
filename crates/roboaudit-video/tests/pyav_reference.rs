//! Decoded frames and picked frames against PyAV's own decode of the same files, written by
//! `scripts/make_video_fixtures.py` (LeRobot's encoder settings; libsvtav1, libx264, mpeg4;
//! and trimmed copies of the real g1 AV1 and lingzu MPEG-4 recordings).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{crc32, fixture, psnr, read_png, reference};
use roboaudit_video::{DEFAULT_TOLERANCE_S, QueryError, VideoError, VideoReader, frames_at_times};

const FILES: [&str; 5] = [
    "synthetic_av1",
    "synthetic_h264",
    "synthetic_mpeg4",
    "g1_trim",
    "lingzu_trim",
];

#[test]
fn every_frame_matches_pyav_bit_for_bit_in_yuv_and_within_45_db_in_rgb() {
    let all = reference();
    for name in FILES {
        let r = &all[name];
        let mut reader = VideoReader::open(&fixture(&format!("{name}.mp4"))).unwrap();
        let strip = name
            .starts_with("synthetic")
            .then(|| read_png(&fixture(&format!("{name}.rgb.png"))));
        let frames = r["frames"].as_array().unwrap();
        let mut k = 0;
        while let Some(d) = reader.next_frame().unwrap() {
            let want = &frames[k];
            assert!(
                (d.time_s - want["time_s"].as_f64().unwrap()).abs() < 1e-9,
                "{name} frame {k}: time {} vs PyAV {}",
                d.time_s,
                want["time_s"]
            );
            // The normative decode: identical samples whatever the decoder build.
            assert_eq!(
                u64::from(crc32(&d.planes().unwrap())),
                want["yuv_crc32"].as_u64().unwrap(),
                "{name} frame {k}: YUV planes differ from PyAV's"
            );
            let rgb = reader.to_rgb(&d).unwrap();
            let (w, h) = (rgb.width as usize, rgb.height as usize);
            if u64::from(crc32(&rgb.pixels)) != want["rgb_crc32"].as_u64().unwrap() {
                // Another swscale build may round the colour conversion differently.
                let (_, _, pixels) = strip.as_ref().unwrap_or_else(|| {
                    panic!("{name} frame {k}: RGB differs from PyAV's and no strip to compare")
                });
                let theirs = &pixels[k * w * h * 3..(k + 1) * w * h * 3];
                let db = psnr(&rgb.pixels, theirs);
                assert!(db >= 45.0, "{name} frame {k}: PSNR {db:.2} dB against PyAV");
            }
            k += 1;
        }
        assert_eq!(k, frames.len(), "{name}: frame count");
        assert_eq!(reader.decoded_frames(), frames.len() as u64);
        if let Some(expected) = r["decoder"].as_str().filter(|d| *d != "libdav1d") {
            assert_eq!(reader.info().decoder.as_deref(), Some(expected));
        }
    }
}

#[test]
fn picked_frames_are_the_ones_lerobots_pyav_path_picks() {
    let all = reference();
    for name in FILES {
        let r = &all[name];
        let path = fixture(&format!("{name}.mp4"));
        let frames = r["frames"].as_array().unwrap();
        let queries = r["queries"].as_array().unwrap();
        let times: Vec<f64> = queries
            .iter()
            .map(|q| q["query_s"].as_f64().unwrap())
            .collect();
        // With a wide tolerance every query is served: the nearest frame must be LeRobot's.
        let mut reader = VideoReader::open(&path).unwrap();
        let mut served = vec![None; times.len()];
        frames_at_times::<QueryError>(&mut reader, &times, 10.0, &mut |p| {
            served[p.query] = Some(p.frame_s);
            Ok(())
        })
        .unwrap();
        for (k, q) in queries.iter().enumerate() {
            let want = frames[q["picked"].as_u64().unwrap() as usize]["time_s"]
                .as_f64()
                .unwrap();
            assert_eq!(served[k], Some(want), "{name} query {k} at {} s", times[k]);
        }
        // With LeRobot's tolerance, each query alone passes or fails as LeRobot's does.
        for (k, q) in queries.iter().enumerate() {
            let mut reader = VideoReader::open(&path).unwrap();
            let got = frames_at_times::<QueryError>(
                &mut reader,
                &times[k..=k],
                DEFAULT_TOLERANCE_S,
                &mut |_| Ok(()),
            );
            match (q["within"].as_bool().unwrap(), got) {
                (true, Ok(())) => {}
                (
                    false,
                    Err(QueryError {
                        query: Some(0),
                        error: VideoError::Tolerance { .. },
                    }),
                ) => {}
                (want, got) => panic!(
                    "{name} query {k} at {} s: within {want}, got {got:?}",
                    times[k]
                ),
            }
        }
    }
}

#[test]
fn a_pass_over_every_frame_decodes_the_file_once() {
    let r = &reference()["synthetic_h264"];
    let n = r["frames"].as_array().unwrap().len();
    let times: Vec<f64> = (0..n).rev().map(|k| f64::from(k as f32 / 10.0)).collect();
    let mut reader = VideoReader::open(&fixture("synthetic_h264.mp4")).unwrap();
    let mut order = Vec::new();
    frames_at_times::<QueryError>(&mut reader, &times, DEFAULT_TOLERANCE_S, &mut |p| {
        order.push(p.query);
        Ok(())
    })
    .unwrap();
    // Served in time order (the slice was reversed), each frame decoded exactly once.
    assert_eq!(order, (0..n).rev().collect::<Vec<_>>());
    assert_eq!(reader.decoded_frames(), n as u64);
}

#[test]
fn a_seek_lands_on_a_keyframe_before_the_query_and_loses_no_frame() {
    // lingzu_trim: MPEG-4, 14 frames, keyframes at frames 0 and 12 (30 fps). A seek aims
    // SEEK_BACKOFF_FRAMES (17) frames before its query, for reordered frames: a query at frame 13
    // lands on the keyframe at 0, not 12. Decoding forward from there reaches the query frame
    // with every frame in between.
    for (query, keyframe) in [(13u32, 0u32)] {
        let mut reader = VideoReader::open(&fixture("lingzu_trim.mp4")).unwrap();
        reader.seek(f64::from(query) / 30.0).unwrap();
        let mut k = keyframe;
        while k <= query {
            let d = reader.next_frame().unwrap().unwrap();
            assert!(
                (d.time_s - f64::from(k) / 30.0).abs() < 1e-9,
                "query {query}: expected frame {k}, got {} s",
                d.time_s
            );
            k += 1;
        }
    }
}
