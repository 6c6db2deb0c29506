//! Scene-bootstrap intervals and AUROCs of a rule (SPEC.md §0, §1).

use crate::RetrievalError;
use crate::draws::SharedDraws;
use crate::matrix::Transfer;
use roboaudit_stats::{
    IntervalMethod, ResampleMatrix, StatsError, auroc, bootstrap_with_matrix, grouped_auroc,
    percentile_levels, quantiles_in_place,
};

/// How the scene bootstrap is run: one resample matrix shared by every rule (so rules are
/// compared on the same resamples), its precomputed counts and qualities, its level and interval
/// method.
pub(crate) struct SceneBootstrap {
    pub matrix: ResampleMatrix,
    pub draws: SharedDraws,
    pub level: f64,
    pub method: IntervalMethod,
}

impl SceneBootstrap {
    /// Interval of `statistic` over scene resamples: `Ok(Err(reason))` when undefined.
    ///
    /// `fast` gives the replicates of every resample in order (`None` where undefined) from the
    /// precomputed draws; the percentile interval uses them directly. `statistic` (on a list of
    /// scene indices) decides whether the statistic is defined on the data and serves BCa's
    /// leave-one-scene-out jackknife, which then recomputes the replicates from the rows.
    pub fn interval<F>(
        &self,
        what: &str,
        statistic: F,
        fast: impl FnOnce() -> Vec<Option<f64>>,
    ) -> Result<Result<[f64; 2], String>, RetrievalError>
    where
        F: Fn(&[usize]) -> Option<f64> + Sync,
    {
        let all: Vec<usize> = (0..self.matrix.n_clusters()).collect();
        if statistic(&all).is_none() {
            return Ok(Err(format!("{what} is undefined on the data")));
        }
        let too_few = || format!("{what} is defined on fewer than 2 resamples");
        if self.method == IntervalMethod::Percentile {
            let mut defined: Vec<f64> = fast().into_iter().flatten().collect();
            if defined.len() < 2 {
                return Ok(Err(too_few()));
            }
            if let Some(index) = defined.iter().position(|v| !v.is_finite()) {
                return Err(RetrievalError::stats(format!("scene bootstrap of {what}"))(
                    StatsError::NonFinite {
                        what: "bootstrap replicates",
                        index,
                    },
                ));
            }
            let ci = quantiles_in_place(&mut defined, &percentile_levels(self.level))
                .map_err(RetrievalError::stats(format!("scene bootstrap of {what}")))?;
            return Ok(Ok([ci[0], ci[1]]));
        }
        let result = bootstrap_with_matrix(&self.matrix, self.level, self.method, statistic)
            .map_err(RetrievalError::stats(format!("scene bootstrap of {what}")))?;
        Ok(result.interval.map(|i| [i.lo, i.hi]).ok_or_else(too_few))
    }
}

/// Pooled and within-query AUROC of one score matrix.
pub(crate) struct Aurocs {
    pub pooled: Result<f64, String>,
    pub within: Result<f64, String>,
    pub eligible: usize,
    pub within_ci: Option<[f64; 2]>,
}

/// AUROCs of `scores` (`lib.len() × n`, higher = predicted success), one sample per logged
/// execution of a library × query cell. Within-query: AUROC per scene over that scene's
/// executions, unweighted mean over scenes with both outcomes, interval by scene bootstrap
/// (a resample's statistic is the mean over its drawn eligible scenes, repeats counted).
pub(crate) fn aurocs(
    t: &Transfer,
    lib: &[usize],
    scores: &[f64],
    boot: &SceneBootstrap,
) -> Result<Aurocs, RetrievalError> {
    let n = t.n;
    // Every execution of a cell shares the cell's score, so each cell enters as (at most) one
    // positive and one negative sample weighted by its success and failure counts: the same
    // Mann–Whitney statistic (a pair weighs w_i·w_j) on K·n instead of K·n·seeds samples.
    // Scene-major, so that the groups of the within-query AUROC arrive contiguous and its
    // stable group sort has nothing to move. (Within a group, and in the pooled sample, the
    // order of samples cannot change the value: ties are summed with integer weights, exactly.)
    let (mut xs, mut ys, mut ws, mut gs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for s in 0..n {
        for (pos, &e) in lib.iter().enumerate() {
            let cell = &t.cells[e * n + s];
            let wins = cell.iter().filter(|&&y| y).count();
            for (label, count) in [(true, wins), (false, cell.len() - wins)] {
                if count > 0 {
                    xs.push(scores[pos * n + s]);
                    ys.push(label);
                    ws.push(count as f64);
                    gs.push(s);
                }
            }
        }
    }
    let pooled = auroc(&xs, &ys, Some(&ws))
        .map_err(RetrievalError::stats("pooled AUROC"))?
        .ok_or_else(|| "every execution has the same outcome".to_string());
    let grouped = grouped_auroc(&xs, &ys, &gs, Some(&ws))
        .map_err(RetrievalError::stats("within-query AUROC"))?;
    let mut per_scene = vec![None; n];
    for g in &grouped.groups {
        if let Some(slot) = per_scene.get_mut(g.group) {
            *slot = g.auroc;
        }
    }
    let within = grouped
        .mean
        .ok_or_else(|| "no scene has both outcomes".to_string());
    let within_ci = boot
        .interval(
            "within-query AUROC",
            |idx| {
                let (sum, count) = idx
                    .iter()
                    .filter_map(|&s| per_scene[s])
                    .fold((0.0, 0usize), |(a, c), v| (a + v, c + 1));
                (count > 0).then(|| sum / count as f64)
            },
            || boot.draws.mean_replicates(&per_scene),
        )?
        .ok();
    Ok(Aurocs {
        pooled,
        within,
        eligible: grouped.n_eligible,
        within_ci,
    })
}
