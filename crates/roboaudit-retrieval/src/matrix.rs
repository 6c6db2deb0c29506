//! The transfer matrix `P[e,s]` and the reference points built on it (SPEC.md §1).

use crate::RetrievalError;
use roboaudit_stats::{Rate, exact_ratio, exact_signed_ratio, first_max, gcd};
use roboaudit_types::{Perturbation, RetrievalInputs};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::num::NonZeroU64;

/// The scene subsets on which reference points and gaps are reported (SPEC.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SceneSet {
    All,
    Appearance,
    Layout,
    Fresh,
}

/// `P[e,s]` for the whole library × query scenes, plus what the rules need from the log.
#[derive(Debug, Clone)]
pub(crate) struct Transfer {
    pub exp_ids: Vec<String>,
    pub scene_ids: Vec<String>,
    /// Library size K.
    pub k: usize,
    /// Query scenes n.
    pub n: usize,
    /// Row-major `P[e * n + s]`, mean success over the cell's executions, in [0, 1] (the float
    /// nearest to the cell's fraction; for arithmetic, never for comparisons).
    pub p: Vec<f64>,
    /// `P` exactly: `P[e, s] = num[e·n + s] / den` (SPEC.md §0). Every comparison, argmax and
    /// rank keyed on a rate uses these whole numbers.
    pub num: Vec<u64>,
    /// The least common multiple of the cells' execution counts; `den · n` fits in `u64`, so
    /// that any mean of `P` over scenes is a [`Rate`].
    pub den: NonZeroU64,
    /// Outcomes of each cell's executions ordered by execution seed (`cells[e * n + s]`, never
    /// empty), so nothing depends on the row order of the log.
    pub cells: Vec<Vec<bool>>,
    pub perturbation: Vec<Perturbation>,
    /// Own-base success per experience (record value, else mean of own-base executions, else
    /// `P` at its base scene when that is a query scene).
    pub own_base: Vec<Option<OwnBase>>,
    /// Query-scene index of each experience's base scene, when that scene is a query scene.
    pub base_query_scene: Vec<Option<usize>>,
}

impl Transfer {
    /// Builds `P` from the execution log. Errors name the first offending id or cell.
    pub fn build(inputs: &RetrievalInputs) -> Result<Self, RetrievalError> {
        if inputs.scenes.is_empty() {
            return Err(RetrievalError::Empty { what: "scenes" });
        }
        if inputs.experiences.is_empty() {
            return Err(RetrievalError::Empty {
                what: "experiences",
            });
        }
        let scene_index = index_of(inputs.scenes.iter().map(|s| s.scene_id.as_str()), "scene")?;
        let exp_index = index_of(
            inputs.experiences.iter().map(|e| e.experience_id.as_str()),
            "experience",
        )?;
        let (k, n) = (inputs.experiences.len(), inputs.scenes.len());
        // Where each row goes: a cell, or the own-base tally of its experience. Logs list an
        // experience's (and a scene's) executions together, so the previous row's ids are
        // tried before hashing.
        let mut own_runs: Vec<(usize, usize)> = vec![(0, 0); k];
        let mut targets: Vec<Option<usize>> = Vec::with_capacity(inputs.executions.len());
        let mut per_cell = vec![0usize; k * n];
        let mut last_exp: Option<(&str, usize)> = None;
        let mut last_scene: Option<(&str, usize)> = None;
        for (row, ex) in inputs.executions.iter().enumerate() {
            let e = match last_exp {
                Some((id, e)) if id == ex.experience_id => e,
                _ => *exp_index.get(ex.experience_id.as_str()).ok_or_else(|| {
                    RetrievalError::UnknownExperience {
                        id: ex.experience_id.clone(),
                        context: format!("execution row {row}"),
                    }
                })?,
            };
            last_exp = Some((ex.experience_id.as_str(), e));
            let scene = match last_scene {
                Some((id, s)) if id == ex.scene_id => Some(s),
                _ => scene_index.get(ex.scene_id.as_str()).copied(),
            };
            if let Some(s) = scene {
                last_scene = Some((ex.scene_id.as_str(), s));
                targets.push(Some(e * n + s));
                per_cell[e * n + s] += 1;
            } else if inputs.experiences[e].base_scene_id.as_deref() == Some(ex.scene_id.as_str()) {
                own_runs[e].0 += usize::from(ex.success);
                own_runs[e].1 += 1;
                targets.push(None);
            } else {
                return Err(RetrievalError::UnknownScene {
                    id: ex.scene_id.clone(),
                    context: format!("execution row {row}"),
                });
            }
        }
        let mut seeded: Vec<Vec<(i64, bool)>> =
            per_cell.iter().map(|&c| Vec::with_capacity(c)).collect();
        for (ex, target) in inputs.executions.iter().zip(targets) {
            if let Some(cell) = target {
                seeded[cell].push((ex.seed, ex.success));
            }
        }
        let cells: Vec<Vec<bool>> = seeded
            .into_iter()
            .map(|mut cell| {
                cell.sort_unstable();
                cell.into_iter().map(|(_, success)| success).collect()
            })
            .collect();
        if let Some(i) = cells.iter().position(Vec::is_empty) {
            return Err(RetrievalError::MissingCell {
                experience: inputs.experiences[i / n].experience_id.clone(),
                scene: inputs.scenes[i % n].scene_id.clone(),
            });
        }
        let (p, num, den) = counted(&cells, n)?;
        let base_query_scene: Vec<Option<usize>> = inputs
            .experiences
            .iter()
            .map(|e| {
                e.base_scene_id
                    .as_deref()
                    .and_then(|b| scene_index.get(b).copied())
            })
            .collect();
        let own_base = (0..k)
            .map(
                |e| match (inputs.experiences[e].own_base_success, base_query_scene[e]) {
                    (Some(x), _) => Some(OwnBase::Recorded(x)),
                    (None, Some(s)) => Some(OwnBase::Counted(Rate::per(num[e * n + s], den))),
                    (None, None) => NonZeroU64::new(own_runs[e].1 as u64)
                        .map(|runs| OwnBase::Counted(Rate::per(own_runs[e].0 as u64, runs))),
                },
            )
            .collect();
        Ok(Self {
            exp_ids: inputs
                .experiences
                .iter()
                .map(|e| e.experience_id.clone())
                .collect(),
            scene_ids: inputs.scenes.iter().map(|s| s.scene_id.clone()).collect(),
            k,
            n,
            p,
            num,
            den,
            cells,
            perturbation: inputs.scenes.iter().map(|s| s.perturbation).collect(),
            own_base,
            base_query_scene,
        })
    }

    /// Recomputes `p`, `num` and `den` from `cells` (after a test edits the outcomes).
    ///
    /// # Errors
    /// As [`Transfer::build`] for execution counts without a usable common denominator.
    #[cfg(test)]
    pub fn recount(&mut self) -> Result<(), RetrievalError> {
        (self.p, self.num, self.den) = counted(&self.cells, self.n)?;
        Ok(())
    }

    /// `P[e,s]` for global experience index `e` and scene `s`.
    #[inline]
    pub fn at(&self, e: usize, s: usize) -> f64 {
        self.p[e * self.n + s]
    }

    /// `P` as whole numbers over one denominator: `(y, d)` with `P[e, s] = y[e·n + s] / d`
    /// exactly, `d` the least common multiple of the cells' execution counts (the count itself
    /// when every cell has the same), `y` each cell's successes times `d / count`. `None` when `d`
    /// would exceed 2^32. Sums of such numerators are exact in any integer or `f64` arithmetic
    /// that holds them, so the replicates built on them carry no rounding (an exact zero stays
    /// zero).
    pub fn common_denominator(&self) -> Option<(Vec<u64>, u64)> {
        whole_numbers(&self.cells, 1 << 32)
    }

    /// Query-scene indices of a scene set, in file order.
    pub fn scenes_of(&self, set: SceneSet) -> Vec<usize> {
        (0..self.n)
            .filter(|&s| match set {
                SceneSet::All => true,
                SceneSet::Appearance => self.perturbation[s] == Perturbation::Appearance,
                SceneSet::Layout => self.perturbation[s] == Perturbation::Layout,
                SceneSet::Fresh => self.perturbation[s] == Perturbation::Fresh,
            })
            .collect()
    }

    /// `q(e) = mean_{s ∈ scenes} P[e,s]` for each experience of `lib` (SPEC.md §1), the
    /// nearest floats of [`Transfer::quality_exact`] (for output).
    pub fn quality(&self, lib: &[usize], scenes: &[usize]) -> Vec<f64> {
        self.quality_exact(lib, scenes)
            .into_iter()
            .map(Rate::to_f64)
            .collect()
    }

    /// `q(e)` exactly, `Σ_s num[e, s] / (den · |scenes|)`, for each experience of `lib`
    /// (`scenes` non-empty, at most `n` entries).
    pub fn quality_exact(&self, lib: &[usize], scenes: &[usize]) -> Vec<Rate> {
        lib.iter()
            .map(|&e| self.rate(self.row_sum(e, scenes), scenes.len()))
            .collect()
    }

    /// `Σ_{s ∈ scenes} num[e, s]` (at most `den · n`).
    #[inline]
    pub fn row_sum(&self, e: usize, scenes: &[usize]) -> u64 {
        let row = &self.num[e * self.n..(e + 1) * self.n];
        scenes.iter().map(|&s| row[s]).sum()
    }

    /// The rate `sum / (den · m)` of a sum of numerators over `m ≤ n` scenes.
    #[inline]
    pub fn rate(&self, sum: u64, m: usize) -> Rate {
        // den · m ≤ den · n fits in u64 (checked when the matrix is built); callers pass m ≥ 1.
        Rate::per(sum, self.den.saturating_mul(nonzero(m)))
    }
}

/// `m` as a `NonZeroU64`, 1 for 0.
#[inline]
pub(crate) fn nonzero(m: usize) -> NonZeroU64 {
    NonZeroU64::new(m as u64).unwrap_or(NonZeroU64::MIN)
}

/// `P` as floats and as whole numbers over the cells' common denominator (the least common
/// multiple of their execution counts); `cells` non-empty.
///
/// # Errors
/// [`RetrievalError::RateDenominator`] when that multiple times `n` exceeds `u64`.
fn counted(
    cells: &[Vec<bool>],
    n: usize,
) -> Result<(Vec<f64>, Vec<u64>, NonZeroU64), RetrievalError> {
    let limit = u64::MAX / n.max(1) as u64;
    let (num, den) = whole_numbers(cells, limit).ok_or_else(|| {
        let mut counts: Vec<usize> = cells.iter().map(Vec::len).collect();
        counts.sort_unstable();
        counts.dedup();
        RetrievalError::RateDenominator { n, counts }
    })?;
    let p = cells
        .iter()
        .map(|cell| cell.iter().filter(|&&x| x).count() as f64 / cell.len() as f64)
        .collect();
    Ok((p, num, NonZeroU64::new(den).unwrap_or(NonZeroU64::MIN)))
}

/// `(y, d)` with `P[i] = y[i] / d` exactly, `d` the least common multiple of the cells'
/// execution counts, or `None` when `d` would exceed `limit` (or a cell is empty).
fn whole_numbers(cells: &[Vec<bool>], limit: u64) -> Option<(Vec<u64>, u64)> {
    let mut d: u64 = 1;
    for cell in cells {
        let count = cell.len() as u64;
        if count == 0 {
            return None;
        }
        // gcd(d, count) ≤ count fits in u64.
        let g = gcd(u128::from(d), u128::from(count)) as u64;
        d = (d / g).checked_mul(count)?;
        if d > limit {
            return None;
        }
    }
    let y = cells
        .iter()
        .map(|cell| cell.iter().filter(|&&y| y).count() as u64 * (d / cell.len() as u64))
        .collect();
    Some((y, d))
}

/// An experience's own-base success: a value recorded in the experiences file, or a rate from
/// its executions. Ordered exactly (a recorded float is the binary fraction it holds), so that
/// equal success counts tie in the own-base Spearman.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OwnBase {
    /// `own_base_success` as read.
    Recorded(f64),
    /// Successes over executions.
    Counted(Rate),
}

impl OwnBase {
    /// The value for output (the nearest float of a rate).
    pub fn value(self) -> f64 {
        match self {
            Self::Recorded(x) => x,
            Self::Counted(r) => r.to_f64(),
        }
    }
}

impl Ord for OwnBase {
    fn cmp(&self, other: &Self) -> Ordering {
        match (*self, *other) {
            (Self::Recorded(a), Self::Recorded(b)) => (a + 0.0).total_cmp(&(b + 0.0)),
            (Self::Counted(a), Self::Counted(b)) => a.cmp(&b),
            (Self::Counted(a), Self::Recorded(b)) => a.cmp_f64(b),
            (Self::Recorded(a), Self::Counted(b)) => b.cmp_f64(a).reverse(),
        }
    }
}

impl PartialOrd for OwnBase {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for OwnBase {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for OwnBase {}

/// Reference points of a library on a scene set (SPEC.md §1), `lib` and `scenes` non-empty.
/// Built from the exact numerators: the floats are the nearest ones to the fractions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reference {
    /// `q(e)` in library order (nearest floats of `q_exact`).
    pub q: Vec<f64>,
    /// `q(e)` exactly.
    pub q_exact: Vec<Rate>,
    /// `R = mean_{e,s} P[e,s]`.
    pub random: f64,
    /// `O = mean_s max_e P[e,s]`.
    pub oracle: f64,
    /// `BF = max_e q(e)`.
    pub best_fixed: f64,
    /// Library position of the best-fixed experience (lowest index among exact ties).
    pub best_fixed_pos: usize,
    /// `Σ_{e,s} num[e,s]` over the library and scenes.
    sum_all: u128,
    /// `Σ_s max_e num[e,s]`.
    sum_max: u128,
    /// `den · |scenes|`, the denominator of every mean over the scenes.
    den_scenes: u128,
    /// `|lib|`.
    size: u128,
}

impl Reference {
    pub fn compute(t: &Transfer, lib: &[usize], scenes: &[usize]) -> Self {
        let q_exact = t.quality_exact(lib, scenes);
        let sum_all: u128 = q_exact.iter().map(|q| u128::from(q.num())).sum();
        let sum_max: u128 = scenes
            .iter()
            .map(|&s| {
                let best = lib.iter().map(|&e| t.num[e * t.n + s]).max();
                u128::from(best.unwrap_or(0))
            })
            .sum();
        let den_scenes = u128::from(t.den.get()) * scenes.len() as u128;
        let size = lib.len() as u128;
        let best_fixed_pos = first_max(&q_exact).unwrap_or(0);
        let q: Vec<f64> = q_exact.iter().map(|r| r.to_f64()).collect();
        Self {
            best_fixed: q[best_fixed_pos],
            random: exact_ratio(sum_all, den_scenes * size),
            oracle: exact_ratio(sum_max, den_scenes),
            q,
            q_exact,
            best_fixed_pos,
            sum_all,
            sum_max,
            den_scenes,
            size,
        }
    }

    /// `O − R`, the nearest float of the exact difference (≥ 0; exactly 0 only when every scene
    /// has all experiences tied).
    pub fn headroom_over_random(&self) -> f64 {
        exact_ratio(
            self.size * self.sum_max - self.sum_all,
            self.den_scenes * self.size,
        )
    }

    /// `A = (SR − R)/(O − R)` for a rule whose success is `sel_sum / (den · |scenes|)` (the sum
    /// of its picked numerators), computed as one exact fraction: `None` when `O = R` exactly.
    pub fn advantage_exact(&self, sel_sum: u128) -> Option<f64> {
        let denom = self.size * self.sum_max - self.sum_all;
        (denom > 0).then(|| {
            // Cast: sums of u64 numerators over < 2^64 cells
            let num = (self.size * sel_sum) as i128 - self.sum_all as i128;
            exact_signed_ratio(num, denom)
        })
    }

    /// Headroom `O − BF`, the exact difference rounded once.
    pub fn headroom(&self) -> f64 {
        let bf = u128::from(self.q_exact[self.best_fixed_pos].num());
        exact_ratio(self.sum_max - bf, self.den_scenes)
    }

    /// `A(best-fixed)`: the advantage of always choosing the best-fixed experience.
    pub fn best_fixed_advantage(&self) -> Option<f64> {
        self.advantage_exact(u128::from(self.q_exact[self.best_fixed_pos].num()))
    }

    /// `q(pos) − mean_e q(e)` exactly, rounded once.
    pub fn margin(&self, pos: usize) -> f64 {
        let num = (self.size * u128::from(self.q_exact[pos].num())) as i128 - self.sum_all as i128;
        exact_signed_ratio(num, self.den_scenes * self.size)
    }
}

/// Mean of an iterator; 0 for an empty one (callers never pass one).
pub(crate) fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    if count == 0 { 0.0 } else { sum / count as f64 }
}

fn index_of<'a>(
    ids: impl Iterator<Item = &'a str>,
    what: &'static str,
) -> Result<HashMap<&'a str, usize>, RetrievalError> {
    let mut map = HashMap::new();
    for (i, id) in ids.enumerate() {
        if map.insert(id, i).is_some() {
            return Err(RetrievalError::DuplicateId {
                what,
                id: id.to_string(),
            });
        }
    }
    Ok(map)
}

/// Scene- and experience-difficulty variance shares (SPEC.md §1):
/// `Σ_s K (p̄_s − p̄)² / Σ_{e,s} (P − p̄)²` and `Σ_e n (q_e − p̄)² / Σ_{e,s} (P − p̄)²`.
/// `None` when `P` is constant.
pub(crate) fn variance_shares(t: &Transfer) -> Option<(f64, f64)> {
    let all: Vec<usize> = (0..t.n).collect();
    let lib: Vec<usize> = (0..t.k).collect();
    // Constant exactly, not "zero after rounding": equal rates are equal numerators.
    if t.num.iter().all(|&v| v == t.num[0]) {
        return None;
    }
    let grand = mean(t.p.iter().copied());
    let total: f64 = t.p.iter().map(|v| (v - grand).powi(2)).sum();
    let scene: f64 = all
        .iter()
        .map(|&s| t.k as f64 * (mean(lib.iter().map(|&e| t.at(e, s))) - grand).powi(2))
        .sum();
    let exp: f64 = t
        .quality(&lib, &all)
        .iter()
        .map(|q| t.n as f64 * (q - grand).powi(2))
        .sum();
    Some((scene / total, exp / total))
}
