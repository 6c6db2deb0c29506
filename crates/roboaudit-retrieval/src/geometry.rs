//! Embedding geometry of one representation and the similarity scores of the geometric rules
//! (SPEC.md §1: nearest neighbour, CSLS, mutual proximity).
//!
//! Every score is "higher = better match"; a rule selects the per-scene argmax (lowest library
//! position among exact ties) and its pooled / within-query AUROC uses the same score.

use crate::{Metric, RetrievalError};
use roboaudit_types::{EmbeddingKind, RetrievalInputs};
use std::collections::HashMap;

/// Similarity score family of a geometric rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GeoScore {
    /// `−d(z_e, z_s)` with the given distance.
    Nn(Metric),
    /// `2cos(e,s) − r_S(e) − r_E(s)`.
    Csls,
    /// Empirical mutual proximity as in scikit-hubness (`skhubness.reduction.MutualProximity`,
    /// method `"empiric"`), SPEC.md §1: the scene `s` is the query, the K library experiences
    /// are the index, and `j` runs over the library:
    /// `#{j : d(e,j) > d(s,e) and d(s,j) > d(s,e)} / K` (= 1 − MP distance), `d(e,j)` the
    /// experience–experience cosine distance. `j = e` never counts (`d(s,e) > d(s,e)` is
    /// false), so excluding or including it — scikit-hubness fits the index without self
    /// distances — gives the same value; the denominator `N = K` counts it, as scikit-hubness
    /// divides by the number of indexed candidates.
    MpEmpirical,
    /// Gaussian mutual proximity as in scikit-hubness (method `"normal"`):
    /// `SF(d; μ_s, σ_s)·SF(d; μ_e, σ_e)`, `d = d(s,e)`, with ddof-0 moments of `s` over its
    /// distances to the K library experiences and of `e` over its distances to the other K − 1
    /// experiences (scikit-hubness fits the index with `kneighbors(X=None)`, which leaves self
    /// out). σ = 0 is the step limit of SF (scipy would return NaN).
    MpGaussian,
}

/// Pairwise geometry of one representation, precomputed once for the whole library.
#[derive(Debug, Clone)]
pub(crate) struct Geometry {
    n: usize,
    k: usize,
    /// Why cosine-based scores are undefined (a zero vector), if they are.
    cosine_undefined: Option<String>,
    /// Cosine similarity experience × scene, `K × n` row-major.
    cos_es: Vec<f64>,
    /// Euclidean distance experience × scene, `K × n`.
    l2_es: Vec<f64>,
    /// Cosine distance experience × experience, `K × K`, diagonal exactly 0.
    cosd_ee: Vec<f64>,
    /// Scene-side CSLS term `r_S(e)`: mean cosine of `e` to its `k` nearest scenes.
    r_scene: Vec<f64>,
}

/// One representation's vectors in library and scene order, checked against the embeddings
/// contract (SPEC.md §1): one vector per experience and per scene, all of one non-zero
/// dimension.
#[derive(Debug, Clone)]
pub(crate) struct RepVectors<'a> {
    /// The representation's name.
    pub name: String,
    exps: Vec<&'a [f32]>,
    scenes: Vec<&'a [f32]>,
}

impl<'a> RepVectors<'a> {
    /// Collects the vectors of representation `name`.
    ///
    /// Errors: a missing, duplicate or wrongly sized vector.
    pub fn collect(inputs: &'a RetrievalInputs, name: &str) -> Result<Self, RetrievalError> {
        let err = |message: String| RetrievalError::Embedding {
            representation: name.to_string(),
            message,
        };
        let mut exp_map: HashMap<&str, &'a [f32]> = HashMap::new();
        let mut scene_map: HashMap<&str, &'a [f32]> = HashMap::new();
        for rec in inputs
            .embeddings
            .iter()
            .filter(|r| r.representation == name)
        {
            let map = match rec.kind {
                EmbeddingKind::Experience => &mut exp_map,
                EmbeddingKind::Scene => &mut scene_map,
            };
            if map.insert(rec.id.as_str(), rec.vector.as_slice()).is_some() {
                return Err(err(format!("two embeddings for {:?}", rec.id)));
            }
        }
        let fetch =
            |map: &HashMap<&str, &'a [f32]>, id: &str| -> Result<&'a [f32], RetrievalError> {
                map.get(id)
                    .copied()
                    .ok_or_else(|| err(format!("no embedding for {id:?}")))
            };
        let exps = inputs
            .experiences
            .iter()
            .map(|e| fetch(&exp_map, &e.experience_id))
            .collect::<Result<Vec<_>, _>>()?;
        let scenes = inputs
            .scenes
            .iter()
            .map(|s| fetch(&scene_map, &s.scene_id))
            .collect::<Result<Vec<_>, _>>()?;
        let dim = exps.first().map_or(0, |v| v.len());
        if dim == 0 || exps.iter().chain(&scenes).any(|v| v.len() != dim) {
            return Err(err("vectors must share one non-zero dimension".into()));
        }
        Ok(Self {
            name: name.to_string(),
            exps,
            scenes,
        })
    }
}

impl Geometry {
    /// [`RepVectors::collect`] then [`Geometry::from_vectors`].
    ///
    /// Errors: as [`RepVectors::collect`].
    #[cfg(test)]
    pub fn build(
        inputs: &RetrievalInputs,
        name: &str,
        csls_k: usize,
    ) -> Result<Self, RetrievalError> {
        Ok(Self::from_vectors(
            &RepVectors::collect(inputs, name)?,
            inputs,
            csls_k,
        ))
    }

    /// Precomputes the distances of one representation's vectors (`inputs` names the items of
    /// a zero vector). A zero vector is not an error: it only makes the cosine-based scores of
    /// this representation undefined.
    pub fn from_vectors<'a>(v: &RepVectors<'a>, inputs: &RetrievalInputs, csls_k: usize) -> Self {
        let name = v.name.as_str();
        let (exps, scenes): (&[&'a [f32]], &[&'a [f32]]) = (&v.exps, &v.scenes);
        let (k, n) = (exps.len(), scenes.len());
        // Rows in parallel (one representation can hold most of the dimensions); each entry is
        // computed the same way whatever the thread count.
        let crate::pairwise::Tables {
            cos_es,
            l2_es,
            cosd_ee,
            norms,
        } = crate::pairwise::tables(exps, scenes);
        // A zero vector (e.g. a state at the origin) leaves cosine undefined but L2 usable.
        let ids = inputs
            .experiences
            .iter()
            .map(|e| e.experience_id.as_str())
            .chain(inputs.scenes.iter().map(|s| s.scene_id.as_str()));
        let cosine_undefined = norms
            .iter()
            .zip(ids)
            .find(|(norm, _)| !(**norm > 0.0 && norm.is_finite()))
            .map(|(_, id)| {
                format!("representation {name:?} has a zero vector for {id:?}: cosine is undefined")
            });
        let r_scene = (0..k)
            .map(|e| top_mean(&mut cos_es[e * n..(e + 1) * n].to_vec(), csls_k))
            .collect();
        Self {
            cosine_undefined,
            n,
            k,
            cos_es,
            l2_es,
            cosd_ee,
            r_scene,
        }
    }

    /// Scores `lib.len() × n` (row = library position) of `kind` for the library `lib` (global
    /// experience indices). CSLS and mutual proximity depend on the library, so they are
    /// recomputed for each sub-library.
    pub fn scores(&self, kind: GeoScore, lib: &[usize], csls_k: usize) -> Result<Vec<f64>, String> {
        if let (Some(reason), false) = (&self.cosine_undefined, kind == GeoScore::Nn(Metric::L2)) {
            return Err(reason.clone());
        }
        let n = self.n;
        let cosd = |e: usize, s: usize| 1.0 - self.cos_es[e * n + s];
        let mut out = Vec::with_capacity(lib.len() * n);
        match kind {
            GeoScore::Nn(Metric::Cosine) => lib
                .iter()
                .for_each(|&e| out.extend((0..n).map(|s| -cosd(e, s)))),
            GeoScore::Nn(Metric::L2) => lib
                .iter()
                .for_each(|&e| out.extend((0..n).map(|s| -self.l2_es[e * n + s]))),
            GeoScore::Csls => {
                let r_lib: Vec<f64> = (0..n)
                    .map(|s| {
                        let mut col: Vec<f64> =
                            lib.iter().map(|&e| self.cos_es[e * n + s]).collect();
                        top_mean(&mut col, csls_k)
                    })
                    .collect();
                for &e in lib {
                    out.extend(
                        (0..n).map(|s| 2.0 * self.cos_es[e * n + s] - self.r_scene[e] - r_lib[s]),
                    );
                }
            }
            GeoScore::MpEmpirical => {
                // Scene-major copy of the library's distances, so that each count is a
                // branch-free pass over two contiguous rows.
                let by_scene: Vec<f64> = (0..n)
                    .flat_map(|s| lib.iter().map(move |&j| cosd(j, s)))
                    .collect();
                let kk = lib.len();
                let mut ee_row = vec![0.0; kk];
                for &e in lib {
                    for (slot, &j) in ee_row.iter_mut().zip(lib) {
                        *slot = self.cosd_ee[e * self.k + j];
                    }
                    for s in 0..n {
                        let d = cosd(e, s);
                        let count: usize = ee_row
                            .iter()
                            .zip(&by_scene[s * kk..(s + 1) * kk])
                            .map(|(&de, &ds)| usize::from((de > d) & (ds > d)))
                            .sum();
                        out.push(count as f64 / kk as f64);
                    }
                }
            }
            GeoScore::MpGaussian => {
                let scene_moments: Vec<(f64, f64)> = (0..n)
                    .map(|s| moments(lib.iter().map(|&j| cosd(j, s))))
                    .collect();
                for &e in lib {
                    let exp_moments = moments(
                        lib.iter()
                            .filter(|&&j| j != e)
                            .map(|&j| self.cosd_ee[e * self.k + j]),
                    );
                    for (s, &scene) in scene_moments.iter().enumerate() {
                        let d = cosd(e, s);
                        out.push(normal_sf(d, exp_moments) * normal_sf(d, scene));
                    }
                }
            }
        }
        Ok(out)
    }
}

/// Mean of the `k` largest values (`k` capped at the slice length; 0 for an empty slice);
/// MUSE's `csls_knn_k` term. The `k` largest are selected, then summed largest first: the sum
/// of a full descending sort's first `k`, bit for bit, without sorting the rest. `values` is
/// left permuted.
fn top_mean(values: &mut [f64], k: usize) -> f64 {
    let k = k.min(values.len());
    if k == 0 {
        return 0.0;
    }
    let descending = |a: &f64, b: &f64| b.total_cmp(a);
    if k < values.len() {
        values.select_nth_unstable_by(k - 1, descending);
    }
    let top = &mut values[..k];
    top.sort_unstable_by(descending);
    top.iter().sum::<f64>() / k as f64
}

/// Mean and population standard deviation (ddof 0); `(0, 0)` for no values.
fn moments(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let count = values.clone().count();
    if count == 0 {
        return (0.0, 0.0);
    }
    let mu = values.clone().sum::<f64>() / count as f64;
    let var = values.map(|v| (v - mu) * (v - mu)).sum::<f64>() / count as f64;
    (mu, var.sqrt())
}

/// Normal survival function `P(X > d)`, `X ~ N(μ, σ²)`. A degenerate σ = 0 is the step limit:
/// 1 below μ, ½ at μ, 0 above (an experience with no other library item has σ = μ = 0).
pub(crate) fn normal_sf(d: f64, (mu, sigma): (f64, f64)) -> f64 {
    if sigma > 0.0 {
        0.5 * libm::erfc((d - mu) / (sigma * std::f64::consts::SQRT_2))
    } else if d < mu {
        1.0
    } else if d == mu {
        0.5
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::top_mean;

    /// The selected top `k` sum to the bits of a full descending sort's first `k`, with ties,
    /// signed zeros, `k` past the length and `k` = 1.
    #[test]
    fn top_mean_equals_the_sorted_prefix_mean() {
        let mut state = 11u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            state >> 40
        };
        for len in [1usize, 2, 7, 40, 50] {
            let values: Vec<f64> = (0..len)
                .map(|i| match next() % 4 {
                    0 => 0.25,
                    1 => -0.0,
                    _ => (next() % 1000) as f64 / 997.0 - 0.5 + i as f64 * 1e-3,
                })
                .collect();
            for k in [1usize, 3, 10, 60] {
                let mut sorted = values.clone();
                sorted.sort_by(|a, b| b.total_cmp(a));
                let kk = k.min(len);
                let want = sorted[..kk].iter().sum::<f64>() / kk as f64;
                let got = top_mean(&mut values.clone(), k);
                assert_eq!(got.to_bits(), want.to_bits(), "len {len}, k {k}");
            }
        }
        assert_eq!(top_mean(&mut [], 3), 0.0);
    }
}
