//! Scene-bootstrap intervals and AUROCs of a rule (SPEC.md §0, §1).

use crate::RetrievalError;
use crate::draws::SharedDraws;
use crate::matrix::Transfer;
use roboaudit_stats::{
    IntervalMethod, ResampleMatrix, bootstrap_with_matrix, percentile_levels,
    pooled_and_grouped_auroc_tallies, quantiles_in_place,
};

/// How the scene bootstrap is run: one set of resamples shared by every rule (so rules are
/// compared on the same resamples), their precomputed counts and qualities, the level and the
/// interval method. The index rows themselves are drawn only for BCa, whose jackknife and
/// replicates are recomputed from them.
pub(crate) struct SceneBootstrap {
    /// The resample rows (`ResampleMatrix::generate` with the draws' seed), BCa only.
    pub matrix: Option<ResampleMatrix>,
    /// Query scenes (the clusters).
    pub n: usize,
    pub draws: SharedDraws,
    pub level: f64,
    pub method: IntervalMethod,
}

impl SceneBootstrap {
    /// Interval of `statistic` over scene resamples: `Ok(Err(reason))` when undefined.
    ///
    /// `fast` gives the defined replicates (those of the resamples where the statistic is
    /// defined, in resample order) from the shared draws; the percentile interval uses them
    /// directly. `statistic` (on a list of scene indices) decides whether the statistic is
    /// defined on the data and serves BCa's leave-one-scene-out jackknife, which then
    /// recomputes the replicates from the rows.
    pub fn interval<F>(
        &self,
        what: &str,
        statistic: F,
        fast: impl FnOnce() -> Vec<f64>,
    ) -> Result<Result<[f64; 2], String>, RetrievalError>
    where
        F: Fn(&[usize]) -> Option<f64> + Sync,
    {
        let all: Vec<usize> = (0..self.n).collect();
        if statistic(&all).is_none() {
            return Ok(Err(format!("{what} is undefined on the data")));
        }
        let too_few = || format!("{what} is defined on fewer than 2 resamples");
        let matrix = match (&self.matrix, self.method) {
            (Some(matrix), IntervalMethod::Bca) => matrix,
            _ => {
                let mut defined = fast();
                if defined.len() < 2 {
                    return Ok(Err(too_few()));
                }
                // `quantiles_in_place` rejects a non-finite replicate (NonFinite, with its index).
                let ci = quantiles_in_place(&mut defined, &percentile_levels(self.level))
                    .map_err(RetrievalError::stats(format!("scene bootstrap of {what}")))?;
                return Ok(Ok([ci[0], ci[1]]));
            }
        };
        let result = bootstrap_with_matrix(matrix, self.level, self.method, statistic)
            .map_err(RetrievalError::stats(format!("scene bootstrap of {what}")))?;
        Ok(result.interval.map(|i| [i.lo, i.hi]).ok_or_else(too_few))
    }
}

/// Pooled and within-query AUROC of one score matrix (the interval comes later, from the
/// shared replicates).
pub(crate) struct Aurocs {
    pub pooled: Result<f64, String>,
    pub within: Result<f64, String>,
    pub eligible: usize,
    /// Within-query AUROC of each scene (`None` for a scene with one outcome).
    pub per_scene: Vec<Option<f64>>,
}

/// The outcomes of every library × query cell as AUROC samples, scene-major (`[s·K + p]` for
/// library position `p`): every execution of a cell shares the cell's score, so each cell enters
/// as one sample with its success and failure counts as positive and negative weights — the same
/// Mann–Whitney statistic (a pair weighs w_i·w_j) on K·n instead of K·n·seeds samples.
/// Scene-major, so that the groups of the within-query AUROC arrive contiguous. (Within a group,
/// and in the pooled sample, the order of samples cannot change the value: ties are summed with
/// integer weights, exactly.) Counted once per library and shared by every rule's [`aurocs`].
pub(crate) struct CellTallies {
    n: usize,
    library: usize,
    positives: Vec<f64>,
    negatives: Vec<f64>,
    groups: Vec<usize>,
}

impl CellTallies {
    /// The tallies of the library `lib` (global experience indices) over every query scene.
    pub fn new(t: &Transfer, lib: &[usize]) -> Self {
        let n = t.n;
        let cells = n * lib.len();
        let (mut positives, mut negatives, mut groups) = (
            Vec::with_capacity(cells),
            Vec::with_capacity(cells),
            Vec::with_capacity(cells),
        );
        for s in 0..n {
            for &e in lib {
                let cell = &t.cells[e * n + s];
                let wins = cell.iter().filter(|&&y| y).count();
                positives.push(wins as f64);
                negatives.push((cell.len() - wins) as f64);
                groups.push(s);
            }
        }
        Self {
            n,
            library: lib.len(),
            positives,
            negatives,
            groups,
        }
    }
}

/// AUROCs of `scores` (`K × n` for the library of `cells`, higher = predicted success), one
/// sample per logged execution of a library × query cell. Within-query: AUROC per scene over
/// that scene's executions, unweighted mean over scenes with both outcomes.
pub(crate) fn aurocs(cells: &CellTallies, scores: &[f64]) -> Result<Aurocs, RetrievalError> {
    let n = cells.n;
    let xs: Vec<f64> = (0..n)
        .flat_map(|s| (0..cells.library).map(move |p| scores[p * n + s]))
        .collect();
    let (pos, neg, gs) = (&cells.positives, &cells.negatives, &cells.groups);
    // One call: the scenes' sorted groups are merged for the pooled sort.
    let (pooled, grouped) = pooled_and_grouped_auroc_tallies(&xs, pos, neg, gs)
        .map_err(RetrievalError::stats("pooled and within-query AUROC"))?;
    let pooled = pooled.ok_or_else(|| "every execution has the same outcome".to_string());
    let mut per_scene = vec![None; n];
    for g in &grouped.groups {
        if let Some(slot) = per_scene.get_mut(g.group) {
            *slot = g.auroc;
        }
    }
    let within = grouped
        .mean
        .ok_or_else(|| "no scene has both outcomes".to_string());
    Ok(Aurocs {
        pooled,
        within,
        eligible: grouped.n_eligible,
        per_scene,
    })
}

/// The within-query AUROC statistic on a list of scenes (repeats counted): the mean of the
/// defined per-scene values, `None` when there is none.
pub(crate) fn within_mean(per_scene: &[Option<f64>], scenes: &[usize]) -> Option<f64> {
    let (sum, count) = scenes
        .iter()
        .filter_map(|&s| per_scene[s])
        .fold((0.0, 0usize), |(a, c), v| (a + v, c + 1));
    (count > 0).then(|| sum / count as f64)
}
