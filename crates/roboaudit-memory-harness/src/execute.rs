//! Executing saved chunks from the shared present in an evaluator world, and progress toward a
//! branch (SPEC.md §2: progress, normalized value).
//!
//! Progress toward tray `t` of a chunk is the reduction of the held block's planar distance to
//! tray `t`'s centre over the chunk, divided by the reduction the reference chunk toward `t`
//! achieves from the same present (the scripted transport without noise): 1 = as far as the
//! reference, 0 = no closer, negative = farther. `v(a, w) = clamp(progress toward b_w, 0, 1)`.

use roboaudit_testbed::{Action, Episode, Snapshot};

use crate::error::HarnessError;
use crate::pairs::enter_world;
use crate::policy::{ACTION_DIM, ActionChunk};

/// Where the held block ended and the raw bits of the final physics (for the check that the
/// world label never reaches the physics).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Held block centre in the plane after the chunk (m).
    pub block_xy: [f64; 2],
    /// Physics state bits after the chunk.
    pub physics_bits: Vec<u64>,
}

/// Restores `present` as the world with `origins`, executes `chunk` open-loop, reports the held
/// block's final planar position.
///
/// # Errors
/// Simulator failures; [`HarnessError::Testbed`] for a non-finite action.
pub fn execute(
    ep: &mut Episode,
    present: &Snapshot,
    origins: &[usize],
    chunk: &ActionChunk,
    held: usize,
) -> Result<Outcome, HarnessError> {
    enter_world(ep, present, origins)?;
    for a in chunk.values.chunks(ACTION_DIM) {
        let v: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
        ep.step(&Action::from_slice(&v)?)?;
    }
    let p = ep
        .world()
        .block_pose(held)
        .map_or([f64::NAN; 2], |p| [p.pos[0], p.pos[1]]);
    Ok(Outcome {
        block_xy: p,
        physics_bits: ep
            .snapshot()
            .physics()
            .iter()
            .map(|x| x.to_bits())
            .collect(),
    })
}

/// Planar distance from `p` to tray `t`'s centre in `ep`'s scene (`f64::NAN` for a missing tray).
pub fn tray_distance(ep: &Episode, p: [f64; 2], t: usize) -> f64 {
    ep.scene()
        .layout
        .trays
        .get(t)
        .map_or(f64::NAN, |c| (p[0] - c.x).hypot(p[1] - c.y))
}

/// Normalized progress toward tray `t`: `(d0 − d) / (d0 − d_ref)`.
pub fn progress(d0: f64, d: f64, d_ref: f64) -> f64 {
    (d0 - d) / (d0 - d_ref)
}
