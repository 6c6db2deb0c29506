//! `--steps auto`: when a neural fit stops before its step cap.
//!
//! A fit stops at a learning-curve point once (1) it has made at least as many Bellman backups as
//! the median episode has frames — a terminal label reaches an episode's first frame only after
//! about one backup per frame, so before that a flat curve shows the initialization, not an
//! estimate — and (2) over the last `max(SETTLE_WINDOW, points / 4)` curve points the mean value
//! has moved (max − min) by at most `SETTLE_ABS + SETTLE_REL · |value|` and the Bellman loss has
//! not doubled. (2) is stricter than the "not flattened" warning of
//! [`crate::notes::curve_unsettled`] (0.05 + 0.1·|value| between two points), so a fit stopped
//! here does not carry that warning. The rule reads only the fit's own curve, so each
//! (policy, seed) fit stops at the same step whatever the thread count.

use super::{CurvePoint, NeuralFqeConfig};
use crate::inputs::FqeInputs;

/// Curve points the settling window holds at least.
pub const SETTLE_WINDOW: usize = 5;
/// Absolute part of the settling tolerance on the curve's mean value.
pub const SETTLE_ABS: f64 = 0.01;
/// Relative part of the settling tolerance (times `|value|`).
pub const SETTLE_REL: f64 = 0.02;

/// How many times the median episode's backups (its frames × the target period) fit into the
/// steps of a fit whose target period [`target_period`] chooses.
pub const CAP_BACKUPS: f64 = 3.2;
/// The shortest target period [`target_period`] chooses.
pub const MIN_TARGET_PERIOD: usize = 10;

/// The target-network copy period for a fit of `steps` gradient steps (the cap of `--steps
/// auto`) on episodes whose median has `median_frames` frames: `⌊steps / (CAP_BACKUPS ·
/// median_frames)⌋`, at least [`MIN_TARGET_PERIOD`].
///
/// A terminal label reaches an episode's first frame after about one backup per frame, and a
/// backup takes one target period, so a fixed period gives long episodes too few backups
/// within the cap to settle. At a period of 100 the testbed push suite (62-frame median,
/// 20,000 steps) settled with room to spare while Meta-World's 150-frame episodes stopped at the
/// cap with their estimates pulled toward the data's mean (median cell ARE 15.7 %, 6.8 % at
/// period 50); `CAP_BACKUPS` keeps the push suite at 100 and gives the demo (61-frame median,
/// 8,000 steps) the 40 it was tuned to on its own (crate README, "Target period").
#[must_use]
pub fn target_period(steps: usize, median_frames: usize) -> usize {
    let period = (steps as f64 / (CAP_BACKUPS * median_frames.max(1) as f64)).floor() as usize;
    period.max(MIN_TARGET_PERIOD)
}

/// The terminal note of a fit whose target period [`target_period`] chose from the median
/// episode's `frames`: the period and the rounds of the median episode's backups that the
/// steps of `config` (the cap of `--steps auto`) hold, or at the floor the rounds the fit
/// really gets.
pub(crate) fn target_period_note(config: &NeuralFqeConfig, frames: usize) -> String {
    let period = config.target_update_every;
    let steps = format!(
        "the {}-step {}",
        config.steps,
        if config.auto_steps { "cap" } else { "fit" }
    );
    let rounds = config.steps as f64 / (period * frames.max(1)) as f64;
    let why = if rounds >= CAP_BACKUPS {
        format!(
            "so that {steps} holds {CAP_BACKUPS} rounds of backups of the {frames}-frame \
             median episode"
        )
    } else {
        format!(
            "the shortest period chosen: {steps} holds {} rounds of backups of the \
             {frames}-frame median episode, not {CAP_BACKUPS}",
            crate::number::compact((rounds * 100.0).floor() / 100.0),
        )
    };
    format!(
        "note: neural FQE: target network copied every {period} steps, {why} \
         (--target-update sets it)"
    )
}

/// The stop rule of one fit.
pub(super) struct StopRule {
    min_steps: usize,
}

impl StopRule {
    /// The rule for a fit of `config` on `inputs` (whose median episode length sets the
    /// minimum number of backups).
    pub(super) fn new(config: &NeuralFqeConfig, inputs: &FqeInputs) -> Self {
        let frames = inputs.median_episode_frames().unwrap_or(1);
        let min_steps = if config.target_tau > 0.0 {
            (frames as f64 / config.target_tau).ceil() as usize
        } else {
            frames.saturating_mul(config.target_update_every)
        };
        Self { min_steps }
    }

    /// Whether the fit may stop after the last point of `curve`.
    pub(super) fn settled(&self, curve: &[CurvePoint]) -> bool {
        settled(curve, self.min_steps)
    }
}

fn settled(curve: &[CurvePoint], min_steps: usize) -> bool {
    let Some(last) = curve.last() else {
        return false;
    };
    let window = SETTLE_WINDOW.max(curve.len() / 4);
    if last.step < min_steps || curve.len() < window {
        return false;
    }
    let tail = &curve[curve.len() - window..];
    let (lo, hi) = tail
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
            (lo.min(c.mean_value), hi.max(c.mean_value))
        });
    let flat = hi - lo <= SETTLE_ABS + SETTLE_REL * last.mean_value.abs();
    let loss_ok = !(tail[0].loss > 0.0 && last.loss > 2.0 * tail[0].loss);
    // The note's own test too: its quarter can reach one point further back than the window.
    flat && loss_ok && last.mean_value.is_finite() && !crate::notes::curve_unsettled(curve)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_period_gives_the_median_episode_a_share_of_the_steps() {
        // The push suite, Meta-World's bridge run and the demo.
        assert_eq!(target_period(20_000, 62), 100);
        assert_eq!(target_period(20_000, 150), 41);
        assert_eq!(target_period(8_000, 61), 40);
        // 20,000 / 64 = 312.5 → 97.65…: floored, not rounded.
        assert_eq!(target_period(20_000, 64), 97);
        assert_eq!(target_period(1_000, 62), MIN_TARGET_PERIOD);
        assert_eq!(target_period(20_000, 0), 6_250);
    }

    fn curve(values: &[f64]) -> Vec<CurvePoint> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| CurvePoint {
                step: (i + 1) * 100,
                loss: 0.01,
                mean_value: *v,
            })
            .collect()
    }

    #[test]
    fn stops_only_when_flat_and_past_the_backups() {
        let flat = curve(&[0.5, 0.3, 0.40, 0.405, 0.41, 0.40, 0.402]);
        // Window of 5: 0.40..0.41 moved 0.01 ≤ 0.01 + 0.02·0.402.
        assert!(settled(&flat, 700));
        // Not yet enough backups.
        assert!(!settled(&flat, 800));
        // Moving by 0.03 in the window.
        let moving = curve(&[0.5, 0.3, 0.40, 0.41, 0.42, 0.43, 0.43]);
        assert!(!settled(&moving, 0));
        // Too few points for the window.
        assert!(!settled(&curve(&[0.4, 0.4, 0.4, 0.4]), 0));
        let mut growing = curve(&[0.4; 6]);
        growing[5].loss = 0.03;
        assert!(!settled(&growing, 0));
        // 20 points: the window holds the last 5, the note's quarter starts at point 14, where
        // the loss was less than half the last one; a stopped fit must not carry the warning.
        let mut late = curve(&[0.4; 20]);
        late[14].loss = 0.004;
        assert!(crate::notes::curve_unsettled(&late));
        assert!(!settled(&late, 0));
        late[14].loss = 0.01;
        assert!(settled(&late, 0));
    }
}
