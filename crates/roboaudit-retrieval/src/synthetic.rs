//! Deterministic synthetic audit inputs (feature `synthetic`) for benches, examples and tests.
//!
//! Generative model: experiences and scenes carry a latent vector (dimension 8), experiences a
//! quality and scenes a difficulty (standard normal). `P(success) = σ(0.8 a_e − b_s + 1.2 ⟨u_e, v_s⟩/√8)`.
//! Representation `r` embeds the latent through a fixed random `dim × 8` matrix plus Gaussian
//! noise of standard deviation `0.25 (r + 1)` (later representations are noisier). Scenes cycle
//! appearance, layout, appearance, layout, fresh. Experiences have integer `recorded_at` in a
//! shuffled order; even ones carry `own_base_success`, odd ones have own-base executions in the log.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use roboaudit_types::{
    EmbeddingKind, EmbeddingRecord, ExecutionRecord, ExperienceRecord, Perturbation, RecordedAt,
    RetrievalInputs, SceneRecord,
};
use std::collections::BTreeMap;

const LATENT: usize = 8;
const NAMES: [&str; 5] = ["pixels32", "resnet18", "dinov2", "clip", "policy"];

/// Size of a synthetic audit.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticSpec {
    /// Library size K ≥ 1.
    pub experiences: usize,
    /// Query scenes n ≥ 1.
    pub scenes: usize,
    /// Executions per (experience, scene) cell ≥ 1.
    pub seeds: usize,
    /// Number of representations (named `pixels32`, `resnet18`, `dinov2`, `clip`, `policy`, then `rep5`, …).
    pub representations: usize,
    /// Embedding dimension ≥ 1.
    pub dim: usize,
    /// Generator seed.
    pub seed: u64,
}

impl Default for SyntheticSpec {
    /// The benchmark case: K = 50, n = 40, 5 seeds, 5 representations of dimension 32.
    fn default() -> Self {
        Self {
            experiences: 50,
            scenes: 40,
            seeds: 5,
            representations: 5,
            dim: 32,
            seed: 0,
        }
    }
}

fn normals(rng: &mut ChaCha8Rng, count: usize) -> Vec<f64> {
    (0..count).map(|_| StandardNormal.sample(rng)).collect()
}

/// Generates inputs satisfying every invariant of [`RetrievalInputs`]; same spec, same inputs.
pub fn generate(spec: &SyntheticSpec) -> RetrievalInputs {
    let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
    let (k, n) = (spec.experiences.max(1), spec.scenes.max(1));
    let exp_latent: Vec<Vec<f64>> = (0..k).map(|_| normals(&mut rng, LATENT)).collect();
    let scene_latent: Vec<Vec<f64>> = (0..n).map(|_| normals(&mut rng, LATENT)).collect();
    let quality = normals(&mut rng, k);
    let difficulty = normals(&mut rng, n);
    let exp_id = |e: usize| format!("exp{e:03}");
    let scene_id = |s: usize| format!("scene{s:03}");
    let mut order: Vec<i64> = (0..k as i64).collect();
    crate::shuffle::fisher_yates(&mut order, &mut rng);
    let experiences = (0..k)
        .map(|e| ExperienceRecord {
            experience_id: exp_id(e),
            base_scene_id: Some(format!("base{e:03}")),
            recorded_at: Some(RecordedAt::Order(order[e])),
            own_base_success: (e % 2 == 0).then(|| 0.6 + 0.4 * rng.random::<f64>()),
        })
        .collect();
    let scenes = (0..n)
        .map(|s| SceneRecord {
            scene_id: scene_id(s),
            perturbation: match s % 5 {
                0 | 2 => Perturbation::Appearance,
                1 | 3 => Perturbation::Layout,
                _ => Perturbation::Fresh,
            },
            layout_level: (s % 4) as i64,
            appearance_draw: (s % 5) as i64,
            extra: BTreeMap::new(),
        })
        .collect();
    let mut executions = Vec::with_capacity(k * n * spec.seeds);
    for e in 0..k {
        for s in 0..n {
            let affinity: f64 = exp_latent[e]
                .iter()
                .zip(&scene_latent[s])
                .map(|(a, b)| a * b)
                .sum::<f64>()
                / (LATENT as f64).sqrt();
            let p = 1.0 / (1.0 + (-(0.8 * quality[e] - difficulty[s] + 1.2 * affinity)).exp());
            for seed in 0..spec.seeds {
                executions.push(ExecutionRecord {
                    experience_id: exp_id(e),
                    scene_id: scene_id(s),
                    seed: seed as i64,
                    success: rng.random::<f64>() < p,
                });
            }
        }
        if e % 2 == 1 {
            for seed in 0..spec.seeds {
                executions.push(ExecutionRecord {
                    experience_id: exp_id(e),
                    scene_id: format!("base{e:03}"),
                    seed: seed as i64,
                    success: rng.random::<f64>() < 0.85,
                });
            }
        }
    }
    let mut embeddings = Vec::with_capacity(spec.representations * (k + n));
    for r in 0..spec.representations {
        let name = NAMES
            .get(r)
            .map_or_else(|| format!("rep{r}"), |s| (*s).to_string());
        let projection: Vec<Vec<f64>> = (0..spec.dim.max(1))
            .map(|_| normals(&mut rng, LATENT))
            .collect();
        let noise = 0.25 * (r + 1) as f64;
        let embed = |latent: &[f64], rng: &mut ChaCha8Rng| -> Vec<f32> {
            projection
                .iter()
                .map(|row| {
                    let z: f64 = row.iter().zip(latent).map(|(a, b)| a * b).sum::<f64>();
                    let eps: f64 = StandardNormal.sample(rng);
                    (z + noise * eps) as f32
                })
                .collect()
        };
        for (e, latent) in exp_latent.iter().enumerate() {
            let vector = embed(latent, &mut rng);
            embeddings.push(EmbeddingRecord {
                representation: name.clone(),
                kind: EmbeddingKind::Experience,
                id: exp_id(e),
                vector,
            });
        }
        for (s, latent) in scene_latent.iter().enumerate() {
            let vector = embed(latent, &mut rng);
            embeddings.push(EmbeddingRecord {
                representation: name.clone(),
                kind: EmbeddingKind::Scene,
                id: scene_id(s),
                vector,
            });
        }
    }
    RetrievalInputs {
        executions,
        scenes,
        experiences,
        embeddings,
        selections: None,
    }
}

/// One representation of a hand-built case: name, experience vectors (library order) and
/// scene vectors (scene order).
pub type CaseEmbedding = (String, Vec<Vec<f32>>, Vec<Vec<f32>>);

/// Inputs for a hand-built transfer matrix: `p[e][s]` is rounded to a multiple of `1/seeds` and
/// realized as that many successes among `seeds` executions (the first ones succeed).
/// Experiences are `e0, e1, …` with `recorded_at = e`; scenes are `s0, s1, …` with the given
/// perturbations (cycled when shorter than the scene count, `fresh` when empty).
pub fn from_matrix(
    p: &[Vec<f64>],
    seeds: usize,
    perturbations: &[Perturbation],
    embeddings: &[CaseEmbedding],
) -> RetrievalInputs {
    let n = p.first().map_or(0, Vec::len);
    let experiences = (0..p.len())
        .map(|e| ExperienceRecord {
            experience_id: format!("e{e}"),
            base_scene_id: None,
            recorded_at: Some(RecordedAt::Order(e as i64)),
            own_base_success: None,
        })
        .collect();
    let scenes = (0..n)
        .map(|s| SceneRecord {
            scene_id: format!("s{s}"),
            perturbation: if perturbations.is_empty() {
                Perturbation::Fresh
            } else {
                perturbations[s % perturbations.len()]
            },
            layout_level: 0,
            appearance_draw: 0,
            extra: BTreeMap::new(),
        })
        .collect();
    let mut executions = Vec::new();
    for (e, row) in p.iter().enumerate() {
        for (s, &rate) in row.iter().enumerate() {
            let wins = (rate * seeds as f64).round() as usize;
            for seed in 0..seeds {
                executions.push(ExecutionRecord {
                    experience_id: format!("e{e}"),
                    scene_id: format!("s{s}"),
                    seed: seed as i64,
                    success: seed < wins,
                });
            }
        }
    }
    let mut records = Vec::new();
    for (name, exps, scenes) in embeddings {
        for (e, v) in exps.iter().enumerate() {
            records.push(EmbeddingRecord {
                representation: name.clone(),
                kind: EmbeddingKind::Experience,
                id: format!("e{e}"),
                vector: v.clone(),
            });
        }
        for (s, v) in scenes.iter().enumerate() {
            records.push(EmbeddingRecord {
                representation: name.clone(),
                kind: EmbeddingKind::Scene,
                id: format!("s{s}"),
                vector: v.clone(),
            });
        }
    }
    RetrievalInputs {
        executions,
        scenes,
        experiences,
        embeddings: records,
        selections: None,
    }
}
