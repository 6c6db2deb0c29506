//! Renders a small gallery of scenes to /tmp/tb_render and measures 128×128 frames per second:
//! `cargo run -p roboaudit-testbed --example render_gallery`.
#![allow(clippy::unwrap_used, clippy::print_stdout)]
use roboaudit_testbed::*;
fn main() {
    let out = std::path::Path::new("/tmp/tb_render");
    std::fs::create_dir_all(out).unwrap();
    for (i, (task, level, draw)) in [
        (TaskKind::Stack, 0, 0),
        (TaskKind::Stack, 3, 2),
        (TaskKind::Door, 2, 0),
        (TaskKind::Door, 0, 3),
        (TaskKind::PutBack, 0, 1),
        (TaskKind::parse("pick_place:red:blue").unwrap(), 1, 0),
    ]
    .into_iter()
    .enumerate()
    {
        let scene =
            Scene::from_draws(task.family(), "s", Perturbation::Base, level, 3, 11, draw).unwrap();
        let c = CompiledScene::new(&scene, 256).unwrap();
        let mut ep = Episode::new(&c, task, &EpisodeConfig::default()).unwrap();
        let mut r = SceneRenderer::new(&ep, 256).unwrap();
        let img = r.render(&mut ep, CameraKind::Scene).unwrap();
        img.save_png(&out.join(format!(
            "{i}_{}_{level}_{draw}.png",
            task.name().replace(':', "_")
        )))
        .unwrap();
        let w = r.render(&mut ep, CameraKind::Wrist).unwrap();
        w.save_png(&out.join(format!("{i}_wrist.png"))).unwrap();
    }
    let task = TaskKind::Stack;
    let c = CompiledScene::new(&Scene::default_for(task.family()), 128).unwrap();
    let mut ep = Episode::new(&c, task, &EpisodeConfig::default()).unwrap();
    let mut r = SceneRenderer::new(&ep, 128).unwrap();
    let t0 = std::time::Instant::now();
    let n = 500;
    for _ in 0..n {
        let _ = r.render(&mut ep, CameraKind::Scene).unwrap();
    }
    let dt = t0.elapsed().as_secs_f64();
    println!("{:.0} frames/s at 128x128", n as f64 / dt);
}
