//! Unit tests of the internal pieces, on matrices worked by hand (no statistics crate needed).

use crate::geometry::{GeoScore, Geometry, normal_sf};
use crate::interventions::quality_equalized;
use crate::matrix::{OwnBase, Reference, SceneSet, Transfer, variance_shares};
use crate::metrics::{core, gap_on, oracle_top_share};
use crate::rules::{RuleContext, RuleKind, recency_keys};
use crate::shuffle::{Null, PowerPlan, fisher_yates, power};
use crate::synthetic::{CaseEmbedding, from_matrix};
use crate::{AuditConfig, Metric, RetrievalError};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use roboaudit_types::{ExecutionRecord, Perturbation, RecordedAt};

const TOL: f64 = 1e-12;

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < TOL, "{a} != {b}");
}

/// One experience dominates: e0 = [1, 1, 1, .5], e1 = [0, .5, 0, 1], e2 = [0, 0, .5, 0].
fn dominant() -> Vec<Vec<f64>> {
    vec![
        vec![1.0, 1.0, 1.0, 0.5],
        vec![0.0, 0.5, 0.0, 1.0],
        vec![0.0, 0.0, 0.5, 0.0],
    ]
}

fn basis(i: usize, dim: usize) -> Vec<f32> {
    (0..dim).map(|j| if i == j { 1.0 } else { 0.0 }).collect()
}

fn identity_case() -> (Vec<Vec<f64>>, Vec<CaseEmbedding>) {
    let p = (0..3)
        .map(|e| (0..3).map(|s| if e == s { 1.0 } else { 0.0 }).collect())
        .collect();
    let v: Vec<Vec<f32>> = (0..3).map(|i| basis(i, 3)).collect();
    (p, vec![("vis".to_string(), v.clone(), v)])
}

fn ctx<'a>(t: &'a Transfer, geos: &'a [Geometry]) -> RuleContext<'a> {
    RuleContext {
        t,
        geos,
        recency: Ok((0..t.k).map(|e| (e as i64, 0)).collect()),
        user: None,
        csls_k: 10,
    }
}

#[test]
fn transfer_matrix_is_mean_over_seeds() {
    let t = Transfer::build(&from_matrix(&dominant(), 2, &[], &[])).unwrap();
    assert_eq!((t.k, t.n), (3, 4));
    close(t.at(0, 3), 0.5);
    close(t.at(1, 1), 0.5);
    assert_eq!(t.cells[3], vec![true, false]);
    // Row order of the log does not matter: cells are ordered by seed.
    let mut inputs = from_matrix(&dominant(), 2, &[], &[]);
    inputs.executions.reverse();
    assert_eq!(Transfer::build(&inputs).unwrap().cells, t.cells);
}

#[test]
fn missing_cell_and_unknown_ids_are_named() {
    let mut inputs = from_matrix(&dominant(), 2, &[], &[]);
    inputs
        .executions
        .retain(|x| !(x.experience_id == "e2" && x.scene_id == "s1"));
    assert_eq!(
        Transfer::build(&inputs).unwrap_err(),
        RetrievalError::MissingCell {
            experience: "e2".into(),
            scene: "s1".into()
        }
    );
    let mut inputs = from_matrix(&dominant(), 2, &[], &[]);
    inputs.executions.push(ExecutionRecord {
        experience_id: "e0".into(),
        scene_id: "nowhere".into(),
        seed: 9,
        success: true,
    });
    assert!(matches!(
        Transfer::build(&inputs),
        Err(RetrievalError::UnknownScene { .. })
    ));
}

#[test]
fn own_base_success_comes_from_record_then_log() {
    let mut inputs = from_matrix(&dominant(), 2, &[], &[]);
    inputs.experiences[0].own_base_success = Some(0.9);
    inputs.experiences[1].base_scene_id = Some("home1".into());
    inputs.experiences[2].base_scene_id = Some("s2".into());
    for (seed, success) in [(0, true), (1, true), (2, false), (3, true)] {
        inputs.executions.push(ExecutionRecord {
            experience_id: "e1".into(),
            scene_id: "home1".into(),
            seed,
            success,
        });
    }
    let t = Transfer::build(&inputs).unwrap();
    let own: Vec<Option<f64>> = t.own_base.iter().map(|o| o.map(OwnBase::value)).collect();
    assert_eq!(own, vec![Some(0.9), Some(0.75), Some(0.5)]);
    assert_eq!(t.base_query_scene, vec![None, None, Some(2)]);
}

#[test]
fn reference_points_of_dominant_library() {
    let t = Transfer::build(&from_matrix(&dominant(), 2, &[], &[])).unwrap();
    let all: Vec<usize> = (0..4).collect();
    let r = Reference::compute(&t, &[0, 1, 2], &all);
    close(r.random, 11.0 / 24.0);
    close(r.oracle, 1.0);
    close(r.best_fixed, 0.875);
    assert_eq!(r.best_fixed_pos, 0);
    close(r.best_fixed_advantage().unwrap(), 10.0 / 13.0);
    let share = oracle_top_share(&t, &[0, 1, 2], &all);
    close(share.value(), 0.75);
    // The oracle picks e0, e0, e0, e1: success 1, f = (3/4, 1/4), Σ f q = 3/4·7/8 + 1/4·3/8 = 3/4.
    let c = core(&t, &[0, 1, 2], &r, &share, &[0, 0, 0, 1], 0.05);
    close(c.success, 1.0);
    close(c.advantage.unwrap(), 1.0);
    close(c.expected, 0.75);
    close(c.gap, 0.25);
    close(c.top_share, 0.75);
    close(c.concentration, 1.0);
    close(c.margin, 0.875 - 11.0 / 24.0);
    close(c.entropy, -(0.75f64 * 0.75f64.ln() + 0.25 * 0.25f64.ln()));
    close(gap_on(&t, &[0, 1, 2], &[0, 0, 0, 1], &all).unwrap(), 0.25);
}

#[test]
fn oracle_ties_are_split_fractionally_and_advantage_is_undefined() {
    // Every scene is tied at its maximum: P = [[1, 0], [1, 0]].
    let t = Transfer::build(&from_matrix(&[vec![1.0, 0.0], vec![1.0, 0.0]], 1, &[], &[])).unwrap();
    let r = Reference::compute(&t, &[0, 1], &[0, 1]);
    assert_eq!(r.advantage_exact(1), None);
    let share = oracle_top_share(&t, &[0, 1], &[0, 1]);
    close(share.value(), 0.5);
    let c = core(&t, &[0, 1], &r, &share, &[0, 0], 0.05);
    assert!(c.unstable);
    close(c.concentration, 2.0);
    assert!(c.concentrated);
    let (scene, exp) = variance_shares(&t).unwrap();
    close(scene, 1.0);
    close(exp, 0.0);
    // A partial tie: s0 tied between e0 and e1, s1 won by e1 → shares (1/2, 3/2)/2.
    let t = Transfer::build(&from_matrix(&[vec![1.0, 0.0], vec![1.0, 1.0]], 1, &[], &[])).unwrap();
    close(oracle_top_share(&t, &[0, 1], &[0, 1]).value(), 0.75);
}

#[test]
fn constant_matrix_has_no_variance_share() {
    let t = Transfer::build(&from_matrix(&vec![vec![0.5; 3]; 2], 2, &[], &[])).unwrap();
    assert_eq!(variance_shares(&t), None);
}

#[test]
fn bootstrap_gap_recomputes_f_and_q_on_repeated_scenes() {
    let (p, _) = identity_case();
    let t = Transfer::build(&from_matrix(&p, 1, &[], &[])).unwrap();
    // Scenes {0, 0, 1} under the perfect rule: SR = 1, f = (2/3, 1/3), q = (2/3, 1/3) → G = 4/9.
    close(
        gap_on(&t, &[0, 1, 2], &[0, 1, 2], &[0, 0, 1]).unwrap(),
        4.0 / 9.0,
    );
    close(
        gap_on(&t, &[0, 1, 2], &[0, 1, 2], &[0, 1, 2]).unwrap(),
        2.0 / 3.0,
    );
    assert_eq!(gap_on(&t, &[0, 1, 2], &[0, 1, 2], &[]), None);
}

#[test]
fn geometric_scores_on_orthogonal_embeddings() {
    let (p, emb) = identity_case();
    let inputs = from_matrix(&p, 1, &[], &emb);
    let g = Geometry::build(&inputs, "vis", 10).unwrap();
    let lib = [0, 1, 2];
    // CSLS: cos = I, r_S = r_E = 1/3 → 2·I − 2/3.
    let csls = g.scores(GeoScore::Csls, &lib, 10).unwrap();
    close(csls[0], 2.0 - 2.0 / 3.0);
    close(csls[1], -2.0 / 3.0);
    // MP (scikit-hubness): j over the library; the matching pair beats both other experiences
    // on both sides (2/3), a mismatch none (0).
    let mp = g.scores(GeoScore::MpEmpirical, &lib, 10).unwrap();
    close(mp[0], 2.0 / 3.0);
    close(mp[1], 0.0);
    // Gaussian MP: an experience's distances to the other two are both 1 (σ = 0, step SF: 1
    // below, ½ at μ); a scene's distances to the library are {0, 1, 1}: μ = 2/3, σ = √2/3.
    let gm = g.scores(GeoScore::MpGaussian, &lib, 10).unwrap();
    let scene = (2.0 / 3.0, 2f64.sqrt() / 3.0);
    close(gm[0], 1.0 * normal_sf(0.0, scene));
    close(gm[1], 0.5 * normal_sf(1.0, scene));
    let nn = g.scores(GeoScore::Nn(Metric::L2), &lib, 10).unwrap();
    close(nn[1], -(2f64.sqrt()));
}

#[test]
fn normal_survival_function_matches_scipy() {
    close(normal_sf(0.0, (0.0, 1.0)), 0.5);
    // scipy.stats.norm.sf(1.96) = 0.024997895148220435
    assert!((normal_sf(1.96, (0.0, 1.0)) - 0.024_997_895_148_220_435).abs() < 1e-15);
    assert_eq!(normal_sf(0.2, (0.5, 0.0)), 1.0);
    assert_eq!(normal_sf(0.5, (0.5, 0.0)), 0.5);
}

#[test]
fn zero_vector_disables_cosine_only() {
    let (p, mut emb) = identity_case();
    emb[0].1[1] = vec![0.0; 3];
    let inputs = from_matrix(&p, 1, &[], &emb);
    let g = Geometry::build(&inputs, "vis", 10).unwrap();
    assert!(
        g.scores(GeoScore::Nn(Metric::Cosine), &[0, 1, 2], 10)
            .unwrap_err()
            .contains("\"e1\"")
    );
    assert!(g.scores(GeoScore::MpEmpirical, &[0, 1, 2], 10).is_err());
    assert_eq!(
        g.scores(GeoScore::Nn(Metric::L2), &[0, 1, 2], 10).unwrap()[3],
        -1.0
    );
    emb[0].1[1] = vec![0.0; 2];
    let inputs = from_matrix(&p, 1, &[], &emb);
    assert!(matches!(
        Geometry::build(&inputs, "vis", 10),
        Err(RetrievalError::Embedding { .. })
    ));
}

#[test]
fn ties_go_to_the_lowest_library_index() {
    // Identical experience vectors and equal quality: every rule must pick e0.
    let p = vec![vec![1.0, 0.0]; 3];
    let v = vec![vec![1.0f32, 0.0]; 3];
    let inputs = from_matrix(
        &p,
        1,
        &[],
        &[("vis".into(), v, vec![vec![1.0, 0.0], vec![0.0, 1.0]])],
    );
    let t = Transfer::build(&inputs).unwrap();
    let geos = [Geometry::build(&inputs, "vis", 10).unwrap()];
    let mut c = ctx(&t, &geos);
    c.recency = Ok(vec![(5, 0), (7, 0), (7, 0)]);
    let lib = [0, 1, 2];
    for kind in [
        RuleKind::Oracle,
        RuleKind::BestFixed,
        RuleKind::Geo {
            rep: 0,
            score: GeoScore::Nn(Metric::Cosine),
        },
        RuleKind::Geo {
            rep: 0,
            score: GeoScore::MpGaussian,
        },
        RuleKind::Geo {
            rep: 0,
            score: GeoScore::MpEmpirical,
        },
    ] {
        assert_eq!(
            c.select(kind, &lib, 0).unwrap().unwrap().picks,
            vec![0, 0],
            "{kind:?}"
        );
    }
    assert_eq!(
        c.select(RuleKind::Recency, &lib, 0).unwrap().unwrap().picks,
        vec![1, 1]
    );
}

#[test]
fn recency_needs_comparable_timestamps() {
    let mut inputs = from_matrix(&dominant(), 1, &[], &[]);
    assert_eq!(recency_keys(&inputs).unwrap(), vec![(0, 0), (1, 0), (2, 0)]);
    inputs.experiences[1].recorded_at = Some(RecordedAt::Timestamp {
        unix_seconds: 3,
        nanos: 0,
    });
    assert!(recency_keys(&inputs).unwrap_err().contains("mixes"));
    inputs.experiences[1].recorded_at = None;
    assert!(recency_keys(&inputs).unwrap_err().contains("e1"));
}

#[test]
fn thompson_sampling_locks_onto_the_only_good_experience() {
    let p = vec![vec![0.0; 40], vec![1.0; 40], vec![0.0; 40]];
    let t = Transfer::build(&from_matrix(&p, 2, &[], &[])).unwrap();
    let c = ctx(&t, &[]);
    let picks = c
        .select(RuleKind::TrackRecord, &[0, 1, 2], 3)
        .unwrap()
        .unwrap()
        .picks;
    assert_eq!(
        picks,
        c.select(RuleKind::TrackRecord, &[0, 1, 2], 3)
            .unwrap()
            .unwrap()
            .picks
    );
    assert!(picks[20..].iter().all(|&p| p == 1), "{picks:?}");
}

#[test]
fn quality_equalized_library_has_the_narrowest_q_range() {
    // q = (0.9, 0.1, 0.5, 0.55, 0.2): the narrowest pair is {e2, e3}; of triples {e2, e3, e0}
    // has range 0.4, {e4, e2, e3} 0.35, {e1, e4, e2} 0.4.
    let p: Vec<Vec<f64>> = [0.9, 0.1, 0.5, 0.55, 0.2]
        .iter()
        .map(|&q| vec![q; 2])
        .collect();
    let t = Transfer::build(&from_matrix(&p, 20, &[], &[])).unwrap();
    assert_eq!(quality_equalized(&t, 2), vec![2, 3]);
    assert_eq!(quality_equalized(&t, 3), vec![2, 3, 4]);
}

#[test]
fn power_is_zero_for_a_constant_rule_and_planted_gap_is_exact_for_full_rate() {
    let (p, _) = identity_case();
    let t = Transfer::build(&from_matrix(&p, 1, &[], &[])).unwrap();
    let plan = PowerPlan {
        rates: &[1.0],
        replicates: 50,
        seed: 1,
    };
    let constant = power(
        &t,
        &[0, 1, 2],
        &[0, 0, 0],
        Null {
            envelope: [1.0 / 3.0; 2],
            expected: 1.0 / 3.0,
        },
        &plan,
    );
    close(constant[0].mean_planted_gap, 0.0);
    close(constant[0].detection_rate, 0.0);
    // Greedy re-dealing of a permutation on the identity matrix always recovers the diagonal.
    let perfect = power(
        &t,
        &[0, 1, 2],
        &[2, 0, 1],
        Null {
            envelope: [0.0, 0.9],
            expected: 1.0 / 3.0,
        },
        &plan,
    );
    close(perfect[0].mean_planted_gap, 2.0 / 3.0);
    close(perfect[0].detection_rate, 1.0);
}

#[test]
fn config_is_checked_once() {
    assert!(
        AuditConfig {
            level: 1.0,
            ..AuditConfig::default()
        }
        .check()
        .is_err()
    );
    assert!(
        AuditConfig {
            resamples: 1,
            ..AuditConfig::default()
        }
        .check()
        .is_err()
    );
    assert!(
        AuditConfig {
            power_rates: vec![0.0],
            ..AuditConfig::default()
        }
        .check()
        .is_err()
    );
    assert!(
        AuditConfig {
            library_sizes: vec![0],
            ..AuditConfig::default()
        }
        .check()
        .is_err()
    );
    assert_eq!(
        AuditConfig::default().check().unwrap().permutations(),
        10_000
    );
}

/// `--library-size 3 3 3` gave three identical sections; a repeated size is refused by name.
#[test]
fn a_repeated_library_size_is_refused() {
    let err = AuditConfig {
        library_sizes: vec![3, 10, 3],
        ..AuditConfig::default()
    }
    .check()
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid audit configuration: library size 3 is given twice; give each size once"
    );
    assert!(
        AuditConfig {
            library_sizes: vec![10, 3],
            ..AuditConfig::default()
        }
        .check()
        .is_ok()
    );
}

#[test]
fn scene_sets_follow_perturbations() {
    let perts = [
        Perturbation::Appearance,
        Perturbation::Layout,
        Perturbation::Fresh,
    ];
    let t = Transfer::build(&from_matrix(&dominant(), 1, &perts, &[])).unwrap();
    assert_eq!(t.scenes_of(SceneSet::Appearance), vec![0, 3]);
    assert_eq!(t.scenes_of(SceneSet::Layout), vec![1]);
    assert_eq!(t.scenes_of(SceneSet::Fresh), vec![2]);
    assert_eq!(t.scenes_of(SceneSet::All), vec![0, 1, 2, 3]);
}

proptest! {
    #[test]
    fn fisher_yates_keeps_selection_counts(picks in proptest::collection::vec(0usize..6, 1..40), seed in any::<u64>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut work = picks.clone();
        for _ in 0..5 {
            if seed % 2 == 0 {
                fisher_yates(&mut work, &mut rng);
            } else {
                crate::shuffle::batched_shuffle(&mut work, &mut rng);
            }
            let mut a = work.clone();
            let mut b = picks.clone();
            a.sort_unstable();
            b.sort_unstable();
            prop_assert_eq!(a, b);
        }
    }
}

#[test]
fn batched_shuffle_draws_every_permutation_uniformly() {
    // 60,000 shuffles of 3 items: each of the 6 orders 10,000 times in expectation (sd ≈ 91);
    // 120,000 of 5 items: each of the 120 orders 1,000 times (sd ≈ 32).
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mut counts = std::collections::HashMap::new();
    for _ in 0..60_000 {
        let mut v = [0u8, 1, 2];
        crate::shuffle::batched_shuffle(&mut v, &mut rng);
        *counts.entry(v).or_insert(0usize) += 1;
    }
    assert_eq!(counts.len(), 6);
    assert!(
        counts.values().all(|&c| c.abs_diff(10_000) < 500),
        "{counts:?}"
    );
    let mut counts = std::collections::HashMap::new();
    for _ in 0..120_000 {
        let mut v = [0u8, 1, 2, 3, 4];
        crate::shuffle::batched_shuffle(&mut v, &mut rng);
        *counts.entry(v).or_insert(0usize) += 1;
    }
    assert_eq!(counts.len(), 120);
    assert!(
        counts.values().all(|&c| c.abs_diff(1_000) < 200),
        "{counts:?}"
    );
}

/// The batched shuffle is Fisher–Yates whose swap positions of each batch are the mixed-radix
/// digits of one Lemire draw below the batch's product (u128 reference, documented batching:
/// consecutive bounds from `len` down to 2 while the product stays at most 2^24).
#[test]
fn batched_shuffle_follows_the_documented_draws() {
    use rand::Rng;
    for len in [40usize, 7, 2, 300] {
        let mut a = ChaCha8Rng::seed_from_u64(3);
        let mut b = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..50 {
            let mut got: Vec<usize> = (0..len).collect();
            crate::shuffle::batched_shuffle(&mut got, &mut a);
            let mut want: Vec<usize> = (0..len).collect();
            let mut bound = len;
            while bound > 1 {
                let mut batch = vec![bound];
                while *batch.last().unwrap() > 2
                    && batch.iter().product::<usize>() * (batch.last().unwrap() - 1) <= 1 << 24
                {
                    batch.push(batch.last().unwrap() - 1);
                }
                let product = batch.iter().product::<usize>() as u128;
                let v = loop {
                    let m = u128::from(b.next_u32()) * product;
                    if m % (1 << 32) >= (1 << 32) % product {
                        break m >> 32;
                    }
                };
                let mut rest = v;
                let mut digits = Vec::new();
                for &radix in batch.iter().rev() {
                    digits.push((rest % radix as u128) as usize);
                    rest /= radix as u128;
                }
                digits.reverse();
                for (&bd, &j) in batch.iter().zip(&digits) {
                    want.swap(bd - 1, j);
                }
                bound = batch.last().unwrap() - 1;
            }
            assert_eq!(got, want, "len {len}");
        }
    }
}

#[test]
fn planted_gap_and_detection_grow_with_the_rate() {
    let inputs = crate::synthetic::generate(&crate::synthetic::SyntheticSpec {
        experiences: 10,
        scenes: 40,
        seeds: 4,
        representations: 0,
        dim: 1,
        seed: 4,
    });
    let t = Transfer::build(&inputs).unwrap();
    let lib: Vec<usize> = (0..10).collect();
    let picks: Vec<usize> = (0..40).map(|s| (s * 7) % 10).collect();
    let all: Vec<usize> = (0..40).collect();
    let r = Reference::compute(&t, &lib, &all);
    let c = core(
        &t,
        &lib,
        &r,
        &oracle_top_share(&t, &lib, &all),
        &picks,
        0.05,
    );
    let draws = crate::draws::SharedDraws::from_counts(&t, vec![1; 2 * 40], 2_000, 8).unwrap();
    let rule = crate::draws::RuleDraws {
        picks: &picks,
        per_scene: None,
    };
    let shuffled = draws
        .replicates_many(&t, &[rule], false)
        .unwrap()
        .remove(0)
        .shuffled;
    let env = shuffled.quantiles(&[0.025, 0.975]).unwrap();
    let plan = PowerPlan {
        rates: &[0.1, 0.5, 1.0],
        replicates: 300,
        seed: 2,
    };
    let points = power(
        &t,
        &lib,
        &picks,
        Null {
            envelope: [env[0], env[1]],
            expected: c.expected,
        },
        &plan,
    );
    assert!(
        points
            .windows(2)
            .all(|w| w[0].mean_planted_gap < w[1].mean_planted_gap),
        "{points:?}"
    );
    assert!(
        points
            .windows(2)
            .all(|w| w[0].detection_rate <= w[1].detection_rate),
        "{points:?}"
    );
    assert!(
        points[0].mean_planted_gap > 0.0 && points[2].detection_rate > 0.9,
        "{points:?}"
    );
}

/// Regression: best-fixed's success `0.37499999999999994` against its one-point envelope
/// `[0.3749999999999999, 0.3749999999999999]` (summation order) was reported "outside", and its
/// power analysis detected a planted gap of zero every time.
#[test]
fn constant_rule_one_point_envelope_is_inside() {
    let envelope = [0.374_999_999_999_999_9, 0.374_999_999_999_999_9];
    assert!(!crate::shuffle::outside_envelope(
        0.374_999_999_999_999_94,
        envelope
    ));
    assert!(crate::shuffle::outside_envelope(0.375 + 1e-9, envelope));
    assert!(crate::shuffle::outside_envelope(0.375 - 1e-9, envelope));
}

/// `P` over one denominator: the least common multiple of the cells' execution counts, with
/// numerators that give every `P[e, s]` exactly; none past 2^32.
#[test]
fn common_denominator_of_uneven_cells() {
    let inputs = crate::synthetic::generate(&crate::synthetic::SyntheticSpec {
        experiences: 3,
        scenes: 4,
        seeds: 2,
        representations: 0,
        dim: 1,
        seed: 1,
    });
    let mut t = Transfer::build(&inputs).unwrap();
    assert_eq!(t.common_denominator().map(|(_, d)| d), Some(2));
    t.cells[5] = vec![true, false, false];
    t.cells[7] = vec![true, true, false, true];
    t.recount().unwrap();
    assert_eq!(t.den.get(), 12);
    let (y, d) = t.common_denominator().unwrap();
    assert_eq!(d, 12);
    assert_eq!((y[5], y[7]), (4, 9));
    for (i, &v) in y.iter().enumerate() {
        assert_eq!(v as f64 / d as f64, t.p[i], "cell {i}");
    }
    // 2·3·5·…·31 > 2^32
    for (i, prime) in [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31]
        .into_iter()
        .enumerate()
    {
        t.cells[i] = vec![true; prime];
    }
    assert!(t.common_denominator().is_none());
}
