//! Rendering: image snapshots of a few scenes, determinism, appearance changes, wrist camera.
//! Reference PNGs live in tests/snapshots/; regenerate with `UPDATE_SNAPSHOTS=1 cargo test -p
//! roboaudit-testbed --test render` and look at them before committing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mujoco_rs::renderer::png;
use roboaudit_testbed::*;
use std::path::PathBuf;

fn episode(task: TaskKind, level: u8, draw: u32) -> Episode {
    let s = Scene::from_draws(task.family(), "r", Perturbation::Base, level, 4, 21, draw).unwrap();
    let c = CompiledScene::new(&s, 128).unwrap();
    Episode::new(
        &c,
        task,
        &EpisodeConfig {
            seed: 1,
            ..Default::default()
        },
    )
    .unwrap()
}

fn decode(path: &PathBuf) -> Vec<u8> {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    buf
}

fn check_snapshot(name: &str, img: &Image) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.png"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        img.save_png(&path).unwrap();
        return;
    }
    let reference = decode(&path);
    assert_eq!(reference.len(), img.rgb.len(), "{name}");
    // Software rasterizers of other Mesa versions may differ by a few levels on edges; a wrong scene
    // (moved object, other colour, other camera) differs by far more than this.
    let mad = reference
        .iter()
        .zip(&img.rgb)
        .map(|(a, b)| f64::from(a.abs_diff(*b)))
        .sum::<f64>()
        / reference.len() as f64;
    assert!(
        mad < 2.0,
        "{name}: mean absolute difference {mad:.2} to {}",
        path.display()
    );
}

#[test]
fn image_snapshots_of_a_few_scenes() {
    let cases = [
        (
            "stack_l0_canonical",
            TaskKind::Stack,
            0,
            0,
            CameraKind::Scene,
        ),
        ("stack_l3_draw2", TaskKind::Stack, 3, 2, CameraKind::Scene),
        ("door_l2_canonical", TaskKind::Door, 2, 0, CameraKind::Scene),
        (
            "language_l1_draw3",
            TaskKind::language_suite()[0],
            1,
            3,
            CameraKind::Scene,
        ),
        ("put_back_wrist", TaskKind::PutBack, 0, 0, CameraKind::Wrist),
    ];
    for (name, task, level, draw, cam) in cases {
        let mut ep = episode(task, level, draw);
        let mut r = SceneRenderer::new(&ep, 128).unwrap();
        let img = r.render(&mut ep, cam).unwrap();
        assert_eq!(
            (img.width, img.height, img.rgb.len()),
            (128, 128, 128 * 128 * 3)
        );
        check_snapshot(name, &img);
    }
}

#[test]
fn rendering_is_deterministic_and_reads_state_only() {
    let mut a = episode(TaskKind::Stack, 1, 1);
    let mut b = episode(TaskKind::Stack, 1, 1);
    let mut ra = SceneRenderer::new(&a, 128).unwrap();
    let mut rb = SceneRenderer::new(&b, 128).unwrap();
    let before = a.world().physics_state();
    let ia = ra.render(&mut a, CameraKind::Scene).unwrap();
    let ia2 = ra.render(&mut a, CameraKind::Scene).unwrap();
    let ib = rb.render(&mut b, CameraKind::Scene).unwrap();
    assert_eq!(ia, ia2);
    assert_eq!(ia, ib);
    let after = a.world().physics_state();
    assert_eq!(
        before.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        after.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn appearance_draws_change_pixels_and_motion_changes_the_image() {
    let mut base = episode(TaskKind::Stack, 0, 0);
    let mut r = SceneRenderer::new(&base, 128).unwrap();
    let i0 = r.render(&mut base, CameraKind::Scene).unwrap();
    for draw in 1..=3 {
        let mut ep = episode(TaskKind::Stack, 0, draw);
        let mut r2 = SceneRenderer::new(&ep, 128).unwrap();
        let i = r2.render(&mut ep, CameraKind::Scene).unwrap();
        let diff = i0
            .rgb
            .iter()
            .zip(&i.rgb)
            .filter(|(a, b)| a.abs_diff(**b) > 10)
            .count();
        assert!(
            diff > i0.rgb.len() / 10,
            "draw {draw} changed only {diff} bytes"
        );
    }
    let mut ex = Expert::new(TaskKind::Stack, ExpertParams::default(), 0);
    for _ in 0..30 {
        let a = ex.act(&base);
        base.step(&a).unwrap();
    }
    let moved = r.render(&mut base, CameraKind::Scene).unwrap();
    assert_ne!(moved, i0);
}

/// One renderer passed episodes of several appearance draws (same model layout, other texture
/// pixels) gives each the image a renderer made for it gives: the textures follow the scene.
#[test]
fn a_renderer_reused_across_appearance_draws_shows_each_draws_textures() {
    let mut first = episode(TaskKind::Stack, 0, 0);
    let mut shared = SceneRenderer::new(&first, 128).unwrap();
    shared.render(&mut first, CameraKind::Scene).unwrap();
    for draw in [1, 2, 3, 0] {
        let mut ep = episode(TaskKind::Stack, 0, draw);
        let reused = shared.render(&mut ep, CameraKind::Scene).unwrap();
        let mut own = SceneRenderer::new(&ep, 128).unwrap();
        assert_eq!(
            reused,
            own.render(&mut ep, CameraKind::Scene).unwrap(),
            "draw {draw}"
        );
    }
}

/// One renderer serves a thread's episodes: after drawing scenes of other layouts (levels, with
/// and without obstacles), other appearances and the other task, it draws each scene exactly as
/// a renderer made for that scene alone does.
#[test]
fn a_renderer_reused_across_layouts_and_tasks_draws_what_a_fresh_one_does() {
    let scenes = [
        (TaskKind::Stack, 0, 0),
        (TaskKind::Stack, 2, 0),
        (TaskKind::Door, 0, 2),
        (TaskKind::Stack, 3, 1),
        (TaskKind::Door, 3, 0),
        (TaskKind::Stack, 0, 0),
        (TaskKind::Stack, 1, 3),
    ];
    let mut first = episode(TaskKind::Door, 1, 1);
    let mut shared = SceneRenderer::new(&first, 128).unwrap();
    shared.render(&mut first, CameraKind::Scene).unwrap();
    for (task, level, draw) in scenes {
        let mut ep = episode(task, level, draw);
        for camera in [CameraKind::Scene, CameraKind::Wrist] {
            let reused = shared.render(&mut ep, camera).unwrap();
            let mut own = SceneRenderer::new(&ep, 128).unwrap();
            assert_eq!(
                reused,
                own.render(&mut ep, camera).unwrap(),
                "{task:?} level {level} draw {draw} {camera:?}"
            );
        }
    }
}

#[test]
fn oversized_render_is_an_error() {
    let ep = episode(TaskKind::Stack, 0, 0);
    assert!(SceneRenderer::new(&ep, 512).is_err());
    assert!(SceneRenderer::new(&ep, 0).is_err());
}

#[test]
fn images_do_not_depend_on_other_threads_rendering() {
    let render_seq = |draw: u32| {
        let mut ep = episode(TaskKind::Door, 1, draw);
        let mut r = SceneRenderer::new(&ep, 128).unwrap();
        let mut ex = Expert::new(TaskKind::Door, ExpertParams::default(), 0);
        let mut imgs = Vec::new();
        for _ in 0..5 {
            let a = ex.act(&ep);
            ep.step(&a).unwrap();
            imgs.push(r.render(&mut ep, CameraKind::Scene).unwrap());
        }
        imgs
    };
    let sequential: Vec<_> = (0..3).map(render_seq).collect();
    let threaded: Vec<_> = std::thread::scope(|s| {
        (0..3)
            .map(|d| s.spawn(move || render_seq(d)))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(sequential, threaded);
}
