//! Coverage diagnostics (seed 003 App. A.4): a target policy whose actions the dataset never took
//! at similar inputs is flagged, and its estimate is worse than an in-support policy's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use roboaudit_fqe::synthetic::chain_truth;
use roboaudit_fqe::{
    ActionTerms, EpisodeSpan, FqeInputs, InputPart, LinearFqeConfig, SupportIndex, TargetActions,
    coverage, fit_linear,
};

const S: usize = 6;
const GAMMA: f64 = 0.9;

/// Chain of `S` positions, one task "push right"; the sign of the scalar action moves the agent.
/// Behaviour pushes ±1 at random.
fn chain() -> FqeInputs {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let (mut x, mut a, mut episodes) = (vec![], vec![], vec![]);
    for i in 0..300 {
        let start = a.len();
        let mut s = rng.random_range(0..S);
        let success = loop {
            let right = rng.random::<f64>() < 0.5;
            let mut one_hot = vec![0.0f32; S];
            one_hot[s] = 1.0;
            x.extend(one_hot);
            a.push(if right { 1.0f32 } else { -1.0 });
            match (right, s) {
                (true, p) if p + 1 == S => break true,
                (false, 0) => break false,
                (true, _) => s += 1,
                (false, _) => s -= 1,
            }
        };
        episodes.push(EpisodeSpan {
            episode_index: i,
            start,
            len: a.len() - start,
            task: 0,
            success,
        });
    }
    let n = a.len();
    FqeInputs {
        parts: vec![InputPart {
            name: "position".into(),
            width: S,
            values: x,
        }],
        action_dim: 1,
        actions: a,
        episodes,
        tasks: vec!["push right".into()],
        frame_index: (0..n as i64).collect(),
    }
}

/// Always pushes right with action `magnitude`.
fn push_right(inputs: &FqeInputs, magnitude: f32) -> TargetActions {
    TargetActions {
        samples: 1,
        action_dim: 1,
        values: vec![magnitude; inputs.n_frames()],
    }
}

#[test]
fn far_target_actions_are_flagged_and_estimated_worse() {
    let inputs = chain();
    let index = SupportIndex::new(&inputs).unwrap();
    let near = push_right(&inputs, 1.0);
    let far = push_right(&inputs, 4.0);
    let near_cov = coverage(&inputs, &index, &near, 1.0).unwrap();
    let far_cov = coverage(&inputs, &index, &far, 1.0).unwrap();
    // The dataset pushed right at every position: the near policy is fully covered.
    assert_eq!(near_cov[0].mean_distance, Some(0.0));
    assert!(!near_cov[0].out_of_support);
    // Action 4 is 3 units from the nearest logged action 1; the action deviation is ~1.
    let d = far_cov[0].mean_distance.unwrap();
    assert!(d > 2.5 && d < 3.5, "{d}");
    assert!(far_cov[0].out_of_support);
    assert_eq!(far_cov[0].far_fraction, Some(1.0));

    // Both policies move right every step: the same true value. Only the covered one is
    // estimated well; the other is Q extrapolated to an action the data never took.
    let truth: f64 = {
        let (_, _) = chain_truth(S, 1.0, GAMMA);
        let starts: Vec<f64> = inputs
            .episodes
            .iter()
            .map(|e| {
                let s = inputs.parts[0].values[e.start * S..(e.start + 1) * S]
                    .iter()
                    .position(|v| *v == 1.0)
                    .unwrap();
                GAMMA.powi(i32::try_from(S - 1 - s).unwrap())
            })
            .collect();
        starts.iter().sum::<f64>() / starts.len() as f64
    };
    let config = LinearFqeConfig {
        gamma: GAMMA,
        ridge: 1e-9,
        action_terms: ActionTerms::Linear,
        ..LinearFqeConfig::default()
    };
    let near_err = (fit_linear(&inputs, &near, &config).unwrap().tasks[0]
        .value
        .unwrap()
        - truth)
        .abs();
    assert!(near_err < 1e-6, "{near_err}");
    // Action 4 lies outside the logged range [−1, 1]: the estimators clip it to 1 before it
    // reaches the model (nothing in the data says what a larger push does), so here, where any
    // push right moves one cell, the clipped estimate is the near policy's. The flag above is
    // what tells the reader that the estimate rests on that clipping.
    let far_est = fit_linear(&inputs, &far, &config).unwrap().tasks[0]
        .value
        .unwrap();
    assert!((far_est - truth).abs() < 1e-6, "{far_est} vs {truth}");

    // Action 0 lies inside the range but was never logged (the data pushed ±1 only). A policy
    // that holds still never reaches the goal (V = 0); linear FQE can only interpolate Q between
    // the logged pushes. It is flagged, and its error is large.
    let still = push_right(&inputs, 0.0);
    let still_cov = coverage(&inputs, &index, &still, 0.5).unwrap();
    assert!(still_cov[0].out_of_support);
    let still_est = fit_linear(&inputs, &still, &config).unwrap().tasks[0]
        .value
        .unwrap();
    assert!(still_est > 0.1, "{still_est} vs the true 0");
}
