//! What the `testbed` commands say after their pipelines ([`crate::request`]) ran (the CLI
//! prints it; nothing is printed here).

use std::fmt::Write as _;

use crate::TaskKind;
use crate::request::{RenderRequest, RolloutOutcome, RolloutRequest, ScenesRequest};

impl RenderRequest {
    /// The line for the frame of `task` written to `out` (no newline): file, side in pixels,
    /// task.
    #[must_use]
    pub fn summary(&self, task: TaskKind) -> String {
        let size = self.size;
        format!(
            "wrote {} ({size}x{size}, {})",
            self.out.display(),
            task.name()
        )
    }
}

impl RolloutRequest {
    /// The lines for `outcome` (each ending in a newline): the dataset recorded (when one
    /// was), then the successes over the episodes asked for and the episodes file.
    #[must_use]
    pub fn summary(&self, outcome: &RolloutOutcome) -> String {
        let mut out = String::new();
        if let Some(d) = &outcome.dataset {
            let _ = writeln!(
                out,
                "recorded {} episodes, {} frames (LeRobot v3.0) in {}",
                d.episodes,
                d.frames,
                self.out.display()
            );
        }
        let _ = writeln!(
            out,
            "{}: {}/{} successes; wrote {}",
            outcome.task.name(),
            outcome.successes,
            self.episodes,
            outcome.episodes_csv.display()
        );
        out
    }
}

impl ScenesRequest {
    /// The line for a set of `n` scenes written to `out` (no newline).
    #[must_use]
    pub fn summary(&self, n: usize) -> String {
        let noun = if n == 1 { "scene" } else { "scenes" };
        format!("wrote {n} {noun} to {}", self.out.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::SceneDraws;
    use crate::{Family, SceneSetSpec};

    #[test]
    fn one_scene_is_singular() {
        let req = ScenesRequest {
            task: "stack".into(),
            spec: SceneSetSpec {
                family: Family::Stack,
                seed: 0,
                n_base: 1,
                n_appearance: 0,
                n_layout: 0,
                n_fresh: 0,
                n_draws: 0,
            },
            images: None,
            size: 16,
            out: "s.csv".into(),
        };
        assert_eq!(req.summary(1), "wrote 1 scene to s.csv");
        assert_eq!(req.summary(3), "wrote 3 scenes to s.csv");
        let render = RenderRequest {
            task: "door".into(),
            scene: SceneDraws {
                layout_level: 0,
                layout_seed: 0,
                appearance_draw: 0,
                appearance_seed: 0,
            },
            size: 64,
            wrist: false,
            steps: 0,
            out: "f.png".into(),
        };
        assert_eq!(render.summary(TaskKind::Door), "wrote f.png (64x64, door)");
    }
}
