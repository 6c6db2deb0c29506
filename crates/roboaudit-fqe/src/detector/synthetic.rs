//! A synthetic LeRobot v3.0 dataset whose success is visible in the last frame, for testing the
//! success detector: a red block slides over a grey table with a green goal zone on the right;
//! an episode succeeds when the block ends inside the zone. Nuisances the detector must see
//! past: the table's brightness varies per episode, a blue distractor block sits anywhere
//! (inside the zone too), and every pixel carries seeded noise. Success and failure end
//! positions are a few pixels apart, so a detector that reads the image can be right on every
//! episode, while one that ignores it is right only at the majority rate.

use std::path::Path;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::FqeError;
use crate::synthetic::{SyntheticDataset, write_dataset};

/// Block side in pixels.
const BLOCK: usize = 3;

/// Settings of [`write_goal_dataset`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoalRun {
    /// Episodes (≥ 1).
    pub episodes: usize,
    /// Frames per episode (≥ 2).
    pub frames: usize,
    /// Image side in pixels (≥ 12): the goal zone is the right third.
    pub side: usize,
    /// Probability that an episode succeeds, in `[0, 1]`.
    pub success_rate: f64,
    /// Seed of every draw.
    pub seed: u64,
    /// Global `index` of a frame whose PNG is cut to half its bytes (undecodable), to test
    /// what readers do with a damaged dataset; `None` for none.
    pub corrupt_png: Option<usize>,
    /// Global `index` of a frame whose `observation.state` x is NaN; `None` for none.
    pub nan_state: Option<usize>,
}

impl Default for GoalRun {
    fn default() -> Self {
        Self {
            episodes: 120,
            frames: 4,
            side: 16,
            success_rate: 0.4,
            seed: 0,
            corrupt_png: None,
            nan_state: None,
        }
    }
}

/// The task text of the goal dataset.
pub const GOAL_TASK: &str = "push the red block into the green zone";

fn encode_png(side: usize, rgb: &[u8]) -> Result<Vec<u8>, FqeError> {
    let bad = |e: png::EncodingError| FqeError::InvalidInputs(format!("PNG encoding: {e}"));
    let s = u32::try_from(side).map_err(|_| FqeError::InvalidConfig("image too large".into()))?;
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, s, s);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(bad)?;
        writer.write_image_data(rgb).map_err(bad)?;
    }
    Ok(out)
}

/// One frame: table of brightness `table`, goal zone from `goal_x`, the blue distractor at
/// `blue`, the red block at `red` (top-left corners), noise from `rng`.
fn frame(
    side: usize,
    table: u8,
    red: (usize, usize),
    blue: (usize, usize),
    rng: &mut ChaCha8Rng,
) -> Vec<u8> {
    let goal_x = side - side / 3;
    let inside = |(bx, by): (usize, usize), x: usize, y: usize| {
        (bx..bx + BLOCK).contains(&x) && (by..by + BLOCK).contains(&y)
    };
    let mut rgb = Vec::with_capacity(side * side * 3);
    for y in 0..side {
        for x in 0..side {
            let base: [u8; 3] = if inside(red, x, y) {
                [220, 40, 30]
            } else if inside(blue, x, y) {
                [30, 50, 210]
            } else if x >= goal_x {
                [table / 2, table.saturating_add(60), table / 2]
            } else {
                [table, table, table]
            };
            for c in base {
                let noise: i16 = rng.random_range(-12..=12);
                rgb.push((i16::from(c) + noise).clamp(0, 255) as u8);
            }
        }
    }
    rgb
}

/// Writes the dataset into `dir/dataset` (LeRobot v3.0: `observation.image` PNG frames,
/// `observation.state` = the red block's `[x, y]` in `[0, 1]`, `action` (the block's step),
/// `next.success` true on the last frame of a successful episode) and returns each episode's
/// true label, in episode order.
///
/// # Errors
/// [`FqeError::InvalidConfig`] for no episodes, fewer than 2 frames, a side below 12 or a
/// success rate outside `[0, 1]`; I/O and Parquet errors.
#[allow(clippy::too_many_lines)]
pub fn write_goal_dataset(dir: &Path, run: &GoalRun) -> Result<Vec<bool>, FqeError> {
    if run.episodes == 0
        || run.frames < 2
        || run.side < 12
        || !(0.0..=1.0).contains(&run.success_rate)
    {
        return Err(FqeError::InvalidConfig(
            "goal dataset needs episodes, ≥ 2 frames, a side ≥ 12 and a success rate in [0, 1]"
                .into(),
        ));
    }
    let side = run.side;
    let goal_x = side - side / 3;
    let far = side - BLOCK;
    let mut rng = ChaCha8Rng::seed_from_u64(run.seed);
    let (mut states, mut actions, mut images, mut success) = (vec![], vec![], vec![], vec![]);
    let (mut lengths, mut truth) = (vec![], vec![]);
    for _ in 0..run.episodes {
        let ok = rng.random::<f64>() < run.success_rate;
        // Success ends wholly inside the zone; failure ends at least two pixels short of it.
        let end_x = if ok {
            rng.random_range(goal_x..=far)
        } else {
            rng.random_range(0..=goal_x - BLOCK - 2)
        };
        let start_x = rng.random_range(0..=goal_x - BLOCK - 2);
        let y = rng.random_range(0..=far);
        let blue = (rng.random_range(0..=far), rng.random_range(0..=far));
        let table: u8 = rng.random_range(60..=140);
        let mut prev = start_x as f32;
        for t in 0..run.frames {
            let x = start_x as f64
                + (end_x as f64 - start_x as f64) * t as f64 / (run.frames - 1) as f64;
            let x = x.round() as usize;
            let mut png = encode_png(side, &frame(side, table, (x, y), blue, &mut rng))?;
            let global = images.len();
            if run.corrupt_png == Some(global) {
                png.truncate(png.len() / 2);
            }
            images.push(png);
            let state_x = if run.nan_state == Some(global) {
                f32::NAN
            } else {
                x as f32 / far as f32
            };
            states.push(vec![state_x, y as f32 / far as f32]);
            actions.push(vec![x as f32 - prev]);
            prev = x as f32;
            success.push(ok && t + 1 == run.frames);
        }
        lengths.push(run.frames);
        truth.push(ok);
    }
    let episode_tasks = vec![GOAL_TASK; run.episodes];
    write_dataset(
        &dir.join("dataset"),
        &SyntheticDataset {
            robot: "goal",
            side: (side, side),
            images: &images,
            states: (&states, &["x", "y"]),
            actions: (&actions, &["dx"]),
            success,
            episode_tasks: &episode_tasks,
            lengths: &lengths,
        },
    )?;
    Ok(truth)
}
