//! Selection rules (SPEC.md §1): each maps a library (global experience indices, library order)
//! to one chosen library position per query scene. Ties go to the lowest library position.

use crate::geometry::{GeoScore, Geometry};
use crate::matrix::{Reference, Transfer};
use crate::{Metric, RetrievalError};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Beta, Distribution};
use roboaudit_stats::first_max;

use crate::report::RuleFamily;
use roboaudit_types::{RecordedAt, RetrievalInputs};

/// What a rule does; `rep` indexes the audit's representations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleKind {
    Random,
    Oracle,
    BestFixed,
    Recency,
    TrackRecord,
    Geo { rep: usize, score: GeoScore },
    Structural { rep: usize, metric: Metric },
    UserSelection,
}

impl RuleKind {
    /// The rule's family, as reports name it.
    pub fn family(self) -> RuleFamily {
        match self {
            Self::Random => RuleFamily::Random,
            Self::Oracle => RuleFamily::Oracle,
            Self::BestFixed => RuleFamily::BestFixed,
            Self::Recency => RuleFamily::Recency,
            Self::TrackRecord => RuleFamily::TrackRecord,
            Self::Geo { score, .. } => match score {
                GeoScore::Nn(_) => RuleFamily::Nn,
                GeoScore::Csls => RuleFamily::Csls,
                GeoScore::MpEmpirical => RuleFamily::MpEmpirical,
                GeoScore::MpGaussian => RuleFamily::MpGaussian,
            },
            Self::Structural { .. } => RuleFamily::Structural,
            Self::UserSelection => RuleFamily::UserSelection,
        }
    }

    /// Whether the rule's choices are a deterministic function of the library, so it can be
    /// re-run on sub-libraries (interventions).
    pub fn rerunnable(self) -> bool {
        !matches!(self, Self::Random | Self::TrackRecord | Self::UserSelection)
    }

    /// The score used for AUROC, or why there is none.
    pub fn auroc_score(self) -> Result<&'static str, &'static str> {
        match self {
            Self::Geo {
                score: GeoScore::Nn(Metric::Cosine),
                ..
            } => Ok("-cosine_distance"),
            Self::Geo {
                score: GeoScore::Nn(Metric::L2),
                ..
            } => Ok("-l2_distance"),
            Self::Structural {
                metric: Metric::Cosine,
                ..
            } => Ok("-cosine_distance"),
            Self::Structural {
                metric: Metric::L2, ..
            } => Ok("-l2_distance"),
            Self::Geo {
                score: GeoScore::Csls,
                ..
            } => Ok("csls_similarity"),
            Self::Geo {
                score: GeoScore::MpEmpirical,
                ..
            } => Ok("mp_empirical_similarity (1 - MP distance)"),
            Self::Geo {
                score: GeoScore::MpGaussian,
                ..
            } => Ok("mp_gaussian_similarity (1 - MP distance)"),
            _ => Err("rule has no distance or similarity score"),
        }
    }
}

/// A named rule of the audit.
#[derive(Debug, Clone)]
pub(crate) struct RuleSpec {
    pub name: String,
    pub kind: RuleKind,
    pub representation: Option<String>,
}

/// Everything a rule may look at besides the library.
pub(crate) struct RuleContext<'a> {
    pub t: &'a Transfer,
    pub geos: &'a [Geometry],
    /// Recency keys per experience (larger = later), or why recency cannot run.
    pub recency: Result<Vec<(i64, u32)>, String>,
    /// The user's choice (global experience index) per query scene, if given.
    pub user: Option<Vec<usize>>,
    pub csls_k: usize,
}

/// A rule's choices on one library.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    /// Chosen library position per query scene.
    pub picks: Vec<usize>,
    /// `lib.len() × n` scores (higher = better) for rules that have one.
    pub scores: Option<Vec<f64>>,
}

impl RuleContext<'_> {
    /// Runs `kind` on `lib`. `Ok(Err(reason))`: the rule cannot run on this library (no usable
    /// timestamps, cosine on a zero vector, user log on a sub-library). Errors come only from a
    /// failed Beta draw.
    pub fn select(
        &self,
        kind: RuleKind,
        lib: &[usize],
        seed: u64,
    ) -> Result<Result<Selection, String>, RetrievalError> {
        let (t, n) = (self.t, self.t.n);
        let all: Vec<usize> = (0..n).collect();
        let by_scores = |scores: Vec<f64>| {
            let picks = (0..n)
                .map(|s| {
                    let mut best = 0;
                    for pos in 1..lib.len() {
                        if scores[pos * n + s] > scores[best * n + s] {
                            best = pos;
                        }
                    }
                    best
                })
                .collect();
            Selection {
                picks,
                scores: Some(scores),
            }
        };
        let constant = |pos: usize| Selection {
            picks: vec![pos; n],
            scores: None,
        };
        let sel = match kind {
            RuleKind::Geo { rep, score } => match self.geos[rep].scores(score, lib, self.csls_k) {
                Ok(scores) => by_scores(scores),
                Err(reason) => return Ok(Err(reason)),
            },
            RuleKind::Structural { rep, metric } => {
                match self.geos[rep].scores(GeoScore::Nn(metric), lib, self.csls_k) {
                    Ok(scores) => by_scores(scores),
                    Err(reason) => return Ok(Err(reason)),
                }
            }
            RuleKind::Oracle => Selection {
                picks: (0..n)
                    .map(|s| {
                        // Exact numerators: equal rates tie, the lowest position wins.
                        let column: Vec<u64> = lib.iter().map(|&e| t.num[e * n + s]).collect();
                        first_max(&column).unwrap_or(0)
                    })
                    .collect(),
                scores: None,
            },
            RuleKind::BestFixed => constant(Reference::compute(t, lib, &all).best_fixed_pos),
            RuleKind::Recency => match &self.recency {
                Ok(keys) => {
                    let mut best = 0;
                    for pos in 1..lib.len() {
                        if keys[lib[pos]] > keys[lib[best]] {
                            best = pos;
                        }
                    }
                    constant(best)
                }
                Err(reason) => return Ok(Err(reason.clone())),
            },
            RuleKind::Random => {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                Selection {
                    picks: (0..n).map(|_| rng.random_range(0..lib.len())).collect(),
                    scores: None,
                }
            }
            RuleKind::TrackRecord => Selection {
                picks: self.thompson(lib, seed)?,
                scores: None,
            },
            RuleKind::UserSelection => match &self.user {
                Some(choice) if lib.len() == t.k => Selection {
                    picks: choice.clone(),
                    scores: None,
                },
                Some(_) => {
                    return Ok(Err(
                        "a user selection log covers the full library only".into()
                    ));
                }
                None => return Ok(Err("no user selection log".into())),
            },
        };
        Ok(Ok(sel))
    }

    /// Thompson sampling over the scene sequence in file order (SPEC.md §1): Beta(1 + wins,
    /// 1 + losses) per experience, argmax of one draw each (lowest position among ties), then one
    /// of the chosen cell's logged executions, drawn uniformly, is observed.
    fn thompson(&self, lib: &[usize], seed: u64) -> Result<Vec<usize>, RetrievalError> {
        let t = self.t;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut wins = vec![0u32; lib.len()];
        let mut losses = vec![0u32; lib.len()];
        let mut picks = Vec::with_capacity(t.n);
        for s in 0..t.n {
            let mut best = 0;
            let mut best_theta = f64::NEG_INFINITY;
            for pos in 0..lib.len() {
                let beta = Beta::new(1.0 + f64::from(wins[pos]), 1.0 + f64::from(losses[pos]))
                    .map_err(|e| {
                        RetrievalError::InvalidConfig(format!("Thompson sampling Beta prior: {e}"))
                    })?;
                let theta: f64 = beta.sample(&mut rng);
                if theta > best_theta {
                    best_theta = theta;
                    best = pos;
                }
            }
            let cell = &t.cells[lib[best] * t.n + s];
            if cell[rng.random_range(0..cell.len())] {
                wins[best] += 1;
            } else {
                losses[best] += 1;
            }
            picks.push(best);
        }
        Ok(picks)
    }
}

/// Recency keys (larger = later), or why the recency rule cannot run.
pub(crate) fn recency_keys(inputs: &RetrievalInputs) -> Result<Vec<(i64, u32)>, String> {
    let mut kinds = (false, false);
    let keys = inputs
        .experiences
        .iter()
        .map(|e| match &e.recorded_at {
            Some(RecordedAt::Order(o)) => {
                kinds.0 = true;
                Ok((*o, 0))
            }
            Some(RecordedAt::Timestamp {
                unix_seconds,
                nanos,
            }) => {
                kinds.1 = true;
                Ok((*unix_seconds, *nanos))
            }
            None => Err(format!(
                "experience {:?} has no recorded_at",
                e.experience_id
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if kinds.0 && kinds.1 {
        return Err("recorded_at mixes integer orders and timestamps".into());
    }
    Ok(keys)
}

/// The user's choice per query scene as global experience indices.
///
/// # Errors
/// [`RetrievalError::InvalidSelection`] for an unknown id, a scene chosen twice or a scene
/// without a choice.
pub(crate) fn user_choices(
    inputs: &RetrievalInputs,
    t: &Transfer,
) -> Result<Option<Vec<usize>>, RetrievalError> {
    let Some(rows) = &inputs.selections else {
        return Ok(None);
    };
    let mut choice = vec![None; t.n];
    for row in rows {
        let s = t
            .scene_ids
            .iter()
            .position(|id| *id == row.scene_id)
            .ok_or_else(|| {
                RetrievalError::InvalidSelection(format!("unknown scene {:?}", row.scene_id))
            })?;
        let e = t
            .exp_ids
            .iter()
            .position(|id| *id == row.experience_id)
            .ok_or_else(|| {
                RetrievalError::InvalidSelection(format!(
                    "unknown experience {:?}",
                    row.experience_id
                ))
            })?;
        if choice[s].replace(e).is_some() {
            return Err(RetrievalError::InvalidSelection(format!(
                "scene {:?} is chosen twice",
                row.scene_id
            )));
        }
    }
    choice
        .iter()
        .enumerate()
        .map(|(s, c)| {
            c.ok_or_else(|| {
                RetrievalError::InvalidSelection(format!(
                    "no choice for scene {:?}",
                    t.scene_ids[s]
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}
