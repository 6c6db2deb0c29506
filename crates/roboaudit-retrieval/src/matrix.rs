//! The transfer matrix `P[e,s]` and the reference points built on it (SPEC.md §1).

use crate::RetrievalError;
use roboaudit_types::{Perturbation, RetrievalInputs};
use std::collections::HashMap;

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
    /// Row-major `P[e * n + s]`, mean success over the cell's executions, in [0, 1].
    pub p: Vec<f64>,
    /// Outcomes of each cell's executions ordered by execution seed (`cells[e * n + s]`, never
    /// empty), so nothing depends on the row order of the log.
    pub cells: Vec<Vec<bool>>,
    pub perturbation: Vec<Perturbation>,
    /// Own-base success per experience (record value, else mean of own-base executions).
    pub own_base: Vec<Option<f64>>,
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
        let mut p = vec![0.0; k * n];
        let cells: Vec<Vec<bool>> = seeded
            .into_iter()
            .map(|mut cell| {
                cell.sort_unstable();
                cell.into_iter().map(|(_, success)| success).collect()
            })
            .collect();
        for (i, cell) in cells.iter().enumerate() {
            if cell.is_empty() {
                return Err(RetrievalError::MissingCell {
                    experience: inputs.experiences[i / n].experience_id.clone(),
                    scene: inputs.scenes[i % n].scene_id.clone(),
                });
            }
            p[i] = cell.iter().filter(|&&x| x).count() as f64 / cell.len() as f64;
        }
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
            .map(|e| {
                inputs.experiences[e]
                    .own_base_success
                    .or_else(|| match base_query_scene[e] {
                        Some(s) => Some(p[e * n + s]),
                        None if own_runs[e].1 > 0 => {
                            Some(own_runs[e].0 as f64 / own_runs[e].1 as f64)
                        }
                        None => None,
                    })
            })
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
            cells,
            perturbation: inputs.scenes.iter().map(|s| s.perturbation).collect(),
            own_base,
            base_query_scene,
        })
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
        let mut d: u64 = 1;
        for cell in &self.cells {
            let count = cell.len() as u64;
            if count == 0 {
                return None;
            }
            d = d / gcd(d, count) * count;
            if d > 1 << 32 {
                return None;
            }
        }
        let y = self
            .cells
            .iter()
            .map(|cell| cell.iter().filter(|&&y| y).count() as u64 * (d / cell.len() as u64))
            .collect();
        Some((y, d))
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

    /// `q(e) = mean_{s ∈ scenes} P[e,s]` for each experience of `lib` (SPEC.md §1).
    pub fn quality(&self, lib: &[usize], scenes: &[usize]) -> Vec<f64> {
        lib.iter()
            .map(|&e| mean(scenes.iter().map(|&s| self.at(e, s))))
            .collect()
    }
}

/// Reference points of a library on a scene set (SPEC.md §1), `lib` and `scenes` non-empty.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reference {
    /// `q(e)` in library order.
    pub q: Vec<f64>,
    /// `R = mean_{e,s} P[e,s]`.
    pub random: f64,
    /// `O = mean_s max_e P[e,s]`.
    pub oracle: f64,
    /// `BF = max_e q(e)`.
    pub best_fixed: f64,
    /// Library position of the best-fixed experience (lowest index among ties).
    pub best_fixed_pos: usize,
}

impl Reference {
    pub fn compute(t: &Transfer, lib: &[usize], scenes: &[usize]) -> Self {
        let q = t.quality(lib, scenes);
        let random = mean(q.iter().copied());
        let oracle = mean(scenes.iter().map(|&s| {
            lib.iter()
                .map(|&e| t.at(e, s))
                .fold(f64::NEG_INFINITY, f64::max)
        }));
        let best_fixed_pos = argmax(&q);
        Self {
            best_fixed: q[best_fixed_pos],
            q,
            random,
            oracle,
            best_fixed_pos,
        }
    }

    /// `A = (SR − R)/(O − R)`: `None` when `O = R` (no headroom at all).
    pub fn advantage(&self, success: f64) -> Option<f64> {
        let denom = self.oracle - self.random;
        (denom > 0.0).then(|| (success - self.random) / denom)
    }
}

/// Mean of an iterator; 0 for an empty one (callers never pass one).
pub(crate) fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
    if count == 0 { 0.0 } else { sum / count as f64 }
}

/// Position of the largest value, lowest position among exact ties; 0 for an empty slice.
pub(crate) fn argmax(values: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in values.iter().enumerate().skip(1) {
        if v > values[best] {
            best = i;
        }
    }
    best
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
    let grand = mean(t.p.iter().copied());
    let total: f64 = t.p.iter().map(|v| (v - grand).powi(2)).sum();
    if total <= 0.0 {
        return None;
    }
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

/// Greatest common divisor (Euclid).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}
