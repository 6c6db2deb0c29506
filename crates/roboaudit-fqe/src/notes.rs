//! Warnings a reader must see beside the estimates ([`FqeReport::notes`]): a neural fit whose
//! learning curve has not flattened or that made fewer Bellman backups than an episode has
//! frames, estimates outside `[0, 1]`, and ground truth that left (policy, task) cells unscored.
//!
//! The return is a terminal success `r_i ∈ {0, 1}` discounted by `γ ∈ (0, 1]` (SPEC §3), so every
//! true `Q` and `V^π` lies in `[0, 1]`: an estimate outside it is an estimator failure (divergence,
//! extrapolation off the data), not a value. The SPEC fixes the bootstrapped target exactly, so the
//! estimators do not clip it; these notes say so instead.

use crate::neural::CurvePoint;
use crate::report::FqeReport;

/// Slack on `[0, 1]` before an estimate is called out of range (rounding of a converged fit).
pub const RANGE_SLACK: f64 = 0.02;

/// Change of the curve's mean value over its last quarter, as `abs + rel · |value|`, beyond which
/// the neural fit is called not converged.
const FLAT_ABS: f64 = 0.05;
const FLAT_REL: f64 = 0.1;

/// Loss growth over the last quarter beyond which the Bellman loss is called diverging.
const LOSS_GROWTH: f64 = 2.0;

/// Prefix of every note about neural FQE.
pub const NEURAL_PREFIX: &str = "neural FQE:";
/// Prefix of every note about linear FQE.
pub const LINEAR_PREFIX: &str = "linear FQE:";
/// Prefix of every note about how the ground truth matched the estimates' cells.
pub const TRUTH_PREFIX: &str = "ground truth:";

/// Whether `notes` (a report's [`reliability_notes`]) hold a warning about `estimator`
/// (`"neural"` or `"linear"`, the names in `FqeReport::metrics`): its numbers are then not to be
/// shown bare. The naive average never has one.
pub fn flags_estimator(notes: &[String], estimator: &str) -> bool {
    notes.iter().any(|n| {
        n.strip_prefix(estimator)
            .is_some_and(|rest| rest.starts_with(" FQE:"))
    })
}

fn out_of_range(v: f64) -> bool {
    !(-RANGE_SLACK..=1.0 + RANGE_SLACK).contains(&v)
}

/// Whether a learning curve has not flattened: over its last quarter the mean value moved by more
/// than `0.05 + 0.1·|value|`, or the Bellman loss more than doubled. A curve of fewer than 3
/// points is not judged (`false`).
pub fn curve_unsettled(curve: &[CurvePoint]) -> bool {
    if curve.len() < 3 {
        return false;
    }
    let last = &curve[curve.len() - 1];
    let back = &curve[(curve.len() - 1) * 3 / 4];
    let moved = (last.mean_value - back.mean_value).abs();
    let value_moving = moved > FLAT_ABS + FLAT_REL * back.mean_value.abs();
    let loss_growing = back.loss > 0.0 && last.loss > LOSS_GROWTH * back.loss;
    value_moving || loss_growing || !last.mean_value.is_finite()
}

/// How many times the target network moved to the online one over the fit: the number of
/// Bellman backups the estimate can contain (a copy every `N` steps: `steps / N`; a Polyak
/// average at rate `τ`: `steps · τ`, the copies its time constant amounts to).
fn bellman_backups(n: &crate::NeuralFqeConfig) -> f64 {
    if n.target_tau > 0.0 {
        n.steps as f64 * n.target_tau
    } else {
        (n.steps / n.target_update_every.max(1)) as f64
    }
}

/// `policy/task` labels of the cells where `value` is out of `[0, 1]` (beyond [`RANGE_SLACK`]),
/// with the value.
fn outside(r: &FqeReport, value: impl Fn(&crate::report::Cell) -> Option<f64>) -> Vec<String> {
    r.policies
        .iter()
        .flat_map(|p| {
            p.tasks.iter().filter_map(|c| {
                value(c)
                    .filter(|v| out_of_range(*v))
                    .map(|v| format!("{} / {} = {v:.3}", p.policy, c.task))
            })
        })
        .collect()
}

fn listing(cells: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = cells
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if cells.len() > SHOWN {
        s.push_str(&format!("; … {} more", cells.len() - SHOWN));
    }
    s
}

/// The notes of a fitted report, in order: neural fit not converged, neural fit with fewer
/// backups than the median episode's frames (when the report knows them), neural estimates outside
/// `[0, 1]`, linear solve not converged, linear estimates outside `[0, 1]`, then
/// [`truth_notes`]. Every note starts with [`NEURAL_PREFIX`], [`LINEAR_PREFIX`] or
/// [`TRUTH_PREFIX`]. Empty when nothing is wrong.
pub fn reliability_notes(r: &FqeReport) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(n) = &r.neural_config {
        let unsettled: Vec<&str> = r
            .policies
            .iter()
            .filter(|p| p.curves.iter().any(|c| curve_unsettled(c)))
            .map(|p| p.policy.as_str())
            .collect();
        let seeds = r.seeds.len();
        let plural = if seeds == 1 { "" } else { "s" };
        if !unsettled.is_empty() {
            notes.push(format!(
                "{NEURAL_PREFIX} {} steps, {seeds} seed{plural}: the learning curve has not \
                 flattened for {} of {} policies ({}); too short to converge: read it for its \
                 learning curve, not as an estimate",
                n.steps,
                unsettled.len(),
                r.policies.len(),
                unsettled.join(", ")
            ));
        }
        if let Some(frames) = r.median_episode_frames {
            let backups = bellman_backups(n);
            if backups < frames as f64 {
                let schedule = if n.target_tau > 0.0 {
                    format!("a Polyak rate of {}", crate::number::compact(n.target_tau))
                } else {
                    format!(
                        "the target network copied every {} steps",
                        n.target_update_every
                    )
                };
                notes.push(format!(
                    "{NEURAL_PREFIX} {} steps with {schedule} make about {backups:.0} Bellman \
                     backups, fewer than the {frames} frames of the median episode: a terminal \
                     success label reaches an episode's initial inputs only after about one \
                     backup per frame, so these estimates still mostly reflect the \
                     initialization, not the data",
                    n.steps
                ));
            }
        }
        let cells = outside(r, |c| c.neural.as_ref().map(|s| s.mean));
        if !cells.is_empty() {
            notes.push(format!(
                "{NEURAL_PREFIX} {} estimates outside [0, 1], where every true value lies \
                 (terminal success in {{0, 1}}, discounted): {}",
                cells.len(),
                listing(&cells)
            ));
        }
    }
    let diverged: Vec<&str> = r
        .policies
        .iter()
        .filter(|p| !p.linear_converged)
        .map(|p| p.policy.as_str())
        .collect();
    if !diverged.is_empty() {
        notes.push(format!(
            "{LINEAR_PREFIX} the {} solve did not converge for {} of {} policies ({}): their \
             estimates are missing (—) where it diverged and unreliable where given, and a policy \
             missing a task's estimate is left out of the suite metrics",
            format!("{:?}", r.linear_config.solver).to_lowercase(),
            diverged.len(),
            r.policies.len(),
            listing(&diverged.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
        ));
    }
    let cells = outside(r, |c| c.linear);
    if !cells.is_empty() {
        notes.push(format!(
            "{LINEAR_PREFIX} {} estimates outside [0, 1], where every true value lies (terminal \
             success in {{0, 1}}, discounted; extrapolation off the data): {}",
            cells.len(),
            listing(&cells)
        ));
    }
    notes.extend(truth_notes(r));
    notes
}

/// Notes on how the ground truth a report was scored against ([`FqeReport::ground_truth`] set)
/// matched its (policy, task) cells: none at all (no metrics), policies with no cell matched
/// (left out of the metrics) and policies matched on only some tasks (their suite value averages
/// fewer tasks than the others'). Every note starts with [`TRUTH_PREFIX`]; empty for a report not
/// scored or scored on every cell.
pub fn truth_notes(r: &FqeReport) -> Vec<String> {
    if r.ground_truth.is_none() {
        return Vec::new();
    }
    let scored =
        |p: &crate::report::PolicyReport| p.tasks.iter().filter(|c| c.truth.is_some()).count();
    let cells: usize = r.policies.iter().map(|p| p.tasks.len()).sum();
    if r.policies.iter().all(|p| scored(p) == 0) {
        return vec![format!(
            "{TRUTH_PREFIX} it matched none of the {cells} policy × task cells (policies by name, \
             tasks by text or task_index): nothing is scored"
        )];
    }
    let mut notes = Vec::new();
    let none: Vec<String> = r
        .policies
        .iter()
        .filter(|p| scored(p) == 0)
        .map(|p| p.policy.clone())
        .collect();
    if !none.is_empty() {
        notes.push(format!(
            "{TRUTH_PREFIX} none for {} of {} policies ({}): left out of the metrics",
            none.len(),
            r.policies.len(),
            listing(&none)
        ));
    }
    let partial: Vec<String> = r
        .policies
        .iter()
        .filter(|p| (1..p.tasks.len()).contains(&scored(p)))
        .map(|p| {
            let missing: Vec<&str> = p
                .tasks
                .iter()
                .filter(|c| c.truth.is_none())
                .map(|c| c.task.as_str())
                .collect();
            format!("{} (none for \"{}\")", p.policy, missing.join("\", \""))
        })
        .collect();
    if !partial.is_empty() {
        notes.push(format!(
            "{TRUTH_PREFIX} {} of {} policies have it for only some tasks: {}; their suite \
             values average fewer tasks than the others', so the rankings across policies mix \
             task sets",
            partial.len(),
            r.policies.len(),
            listing(&partial)
        ));
    }
    notes
}

/// Replaces the [`TRUTH_PREFIX`] notes of `r` by [`truth_notes`] (after scoring, once
/// [`FqeReport::ground_truth`] is set).
pub fn refresh_truth_notes(r: &mut FqeReport) {
    r.notes.retain(|n| !n.starts_with(TRUTH_PREFIX));
    let fresh = truth_notes(r);
    r.notes.extend(fresh);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(step: usize, loss: f64, mean_value: f64) -> CurvePoint {
        CurvePoint {
            step,
            loss,
            mean_value,
        }
    }

    #[test]
    fn flat_curve_is_settled_and_moving_or_diverging_is_not() {
        let flat: Vec<_> = (0..9).map(|k| pt(k * 10, 0.01, 0.5)).collect();
        assert!(!curve_unsettled(&flat));
        let mut rising = flat.clone();
        rising[8].mean_value = 0.62;
        assert!(curve_unsettled(&rising));
        let mut diverging = flat.clone();
        diverging[8].loss = 0.03;
        assert!(curve_unsettled(&diverging));
        // Within 0.05 + 0.1·0.5 = 0.1: still flat.
        let mut drift = flat;
        drift[8].mean_value = 0.59;
        assert!(!curve_unsettled(&drift));
        assert!(!curve_unsettled(&rising[..2]));
    }

    #[test]
    fn range_has_slack() {
        assert!(!out_of_range(1.01));
        assert!(!out_of_range(-0.01));
        assert!(out_of_range(1.03));
        assert!(out_of_range(-15.2));
        assert!(out_of_range(f64::NAN));
    }

    #[test]
    fn a_warning_flags_only_the_estimator_it_names() {
        let notes = vec![format!(
            "{NEURAL_PREFIX} the learning curve has not settled"
        )];
        assert!(flags_estimator(&notes, "neural"));
        assert!(!flags_estimator(&notes, "linear"));
        assert!(!flags_estimator(&notes, "naive"));
        // A name that only starts like another is not that estimator.
        assert!(!flags_estimator(&notes, "neu"));
        let notes = vec![format!("{LINEAR_PREFIX} estimates outside [0, 1]")];
        assert!(flags_estimator(&notes, "linear"));
        assert!(!flags_estimator(&notes, "neural"));
        assert!(!flags_estimator(&[], "neural"));
    }
}
