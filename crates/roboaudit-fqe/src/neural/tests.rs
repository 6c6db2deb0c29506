//! The hand-written network against candle: the same initial parameters from the same seed, the
//! same `Q`, the gradient of the Bellman MSE against candle's autograd, and one AdamW step
//! against candle-nn's optimizer.

use candle_core::{Device, Tensor, Var};
use candle_nn::{Optimizer, ParamsAdamW};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::config::{NeuralFqeConfig, QHead};
use super::mlp::{AdamW, Mlp, Work};
use super::net::Net;

/// `(columns, embedding width)`: the last is a narrower part like the time input.
const PARTS: [(usize, usize); 3] = [(5, 4), (3, 4), (1, 2)];
const DA: usize = 2;
const TASKS: usize = 3;
const ROWS: usize = 7;

fn config(head: QHead) -> NeuralFqeConfig {
    NeuralFqeConfig {
        hidden: 12,
        part_embedding: 4,
        action_embedding: 3,
        task_embedding: 2,
        weight_decay: 1e-2,
        head,
        ..NeuralFqeConfig::default()
    }
}

fn flat(vars: &[Var]) -> Vec<f32> {
    vars.iter()
        .flat_map(|v| {
            v.as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        })
        .collect()
}

/// A random mini-batch `(x, a, t, y)`: `rows` inputs of width `dx` and `per_row` action values
/// each, both uniform in [−2, 2); tasks uniform in `0..tasks`; targets uniform in [0, 1).
fn random_batch(
    rng: &mut ChaCha8Rng,
    rows: usize,
    dx: usize,
    per_row: usize,
    tasks: u32,
) -> (Vec<f32>, Vec<f32>, Vec<u32>, Vec<f32>) {
    let x = (0..rows * dx)
        .map(|_| rng.random::<f32>() * 4.0 - 2.0)
        .collect();
    let a = (0..rows * per_row)
        .map(|_| rng.random::<f32>() * 4.0 - 2.0)
        .collect();
    let t = (0..rows).map(|_| rng.random_range(0..tasks)).collect();
    let y = (0..rows).map(|_| rng.random::<f32>()).collect();
    (x, a, t, y)
}

/// The fixed batch of the one-step checks, its tasks in turn so that every task row is used.
fn data(m: usize) -> (Vec<f32>, Vec<f32>, Vec<u32>, Vec<f32>) {
    let dx: usize = PARTS.iter().map(|p| p.0).sum();
    let tasks = u32::try_from(TASKS).unwrap();
    let (x, a, _, y) = random_batch(&mut ChaCha8Rng::seed_from_u64(99), ROWS, dx, m * DA, tasks);
    let t = (0..ROWS)
        .map(|i| u32::try_from(i % TASKS).unwrap())
        .collect();
    (x, a, t, y)
}

struct Pair {
    net: Net,
    vars: Vec<Var>,
    mlp: Mlp,
    theta: Vec<f32>,
}

fn pair(head: QHead) -> Pair {
    let c = config(head);
    let net = Net::new(PARTS.to_vec(), &c);
    let vars = net
        .init(&mut ChaCha8Rng::seed_from_u64(5), DA, TASKS)
        .unwrap();
    let mlp = Mlp::new(&PARTS, DA, TASKS, &c);
    let theta = mlp.init(&mut ChaCha8Rng::seed_from_u64(5));
    Pair {
        net,
        vars,
        mlp,
        theta,
    }
}

fn candle_q(p: &Pair, x: &[f32], a: &[f32], t: &[u32], m: usize) -> Tensor {
    let dx: usize = PARTS.iter().map(|p| p.0).sum();
    let params: Vec<Tensor> = p.vars.iter().map(|v| v.as_tensor().clone()).collect();
    p.net
        .forward(
            &params,
            &Tensor::from_slice(x, (ROWS, dx), &Device::Cpu).unwrap(),
            &Tensor::from_slice(a, (ROWS * m, DA), &Device::Cpu).unwrap(),
            &Tensor::from_slice(t, ROWS, &Device::Cpu).unwrap(),
            m,
        )
        .unwrap()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn same_seed_gives_candles_initial_parameters() {
    let p = pair(QHead::Sigmoid);
    assert_eq!(flat(&p.vars), p.theta);
    assert_eq!(p.mlp.len(), p.theta.len());
}

#[test]
fn forward_with_several_samples_matches_candle() {
    for head in [QHead::Sigmoid, QHead::Linear] {
        let p = pair(head);
        let (x, a, t, _) = data(3);
        let want = candle_q(&p, &x, &a, &t, 3)
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let mut w = Work::default();
        p.mlp.forward(&p.theta, &x, &a, &t, 3, &mut w);
        assert!(
            max_diff(&w.q, &want) < 1e-5,
            "{head:?}: {:?} vs {want:?}",
            w.q
        );
    }
}

#[test]
fn gradient_and_one_adamw_step_match_candle() {
    for head in [QHead::Sigmoid, QHead::Linear] {
        let mut p = pair(head);
        let (x, a, t, y) = data(1);
        let q = candle_q(&p, &x, &a, &t, 1).squeeze(1).unwrap();
        let loss =
            candle_nn::loss::mse(&q, &Tensor::from_slice(&y, ROWS, &Device::Cpu).unwrap()).unwrap();
        let grads = loss.backward().unwrap();
        let want: Vec<f32> = p
            .vars
            .iter()
            .flat_map(|v| {
                grads
                    .get(v.as_tensor())
                    .unwrap()
                    .flatten_all()
                    .unwrap()
                    .to_vec1::<f32>()
                    .unwrap()
            })
            .collect();
        let mut grad = vec![0.0; p.mlp.len()];
        let mut w = Work::default();
        let got_loss = p.mlp.loss_grad(&p.theta, &x, &a, &t, &y, &mut grad, &mut w);
        let want_loss = f64::from(loss.to_scalar::<f32>().unwrap());
        assert!(
            (got_loss - want_loss).abs() < 1e-6,
            "{got_loss} vs {want_loss}"
        );
        // Every parameter block receives a gradient (the test would not see a block left out).
        assert!(want.iter().filter(|g| **g != 0.0).count() > want.len() / 2);
        assert!(max_diff(&grad, &want) < 1e-5, "{head:?}: gradient differs");
        // One AdamW step from the same gradient.
        let c = config(head);
        let mut opt = candle_nn::AdamW::new(
            p.vars.clone(),
            ParamsAdamW {
                lr: 3e-3,
                weight_decay: c.weight_decay,
                ..ParamsAdamW::default()
            },
        )
        .unwrap();
        opt.step(&grads).unwrap();
        let mut mine = AdamW::new(p.mlp.len(), c.weight_decay);
        mine.step(&mut p.theta, &grad, 3e-3);
        assert!(
            max_diff(&p.theta, &flat(&p.vars)) < 1e-6,
            "{head:?}: AdamW step differs"
        );
    }
}

/// A row whose logistic head is saturated toward 0 passes back nothing. At `q = σ(−46) ≈ 10⁻²⁰`
/// and `y = 0` its error term `2/B · q²(1 − q)` is a subnormal float, and so would be the output
/// layer's gradient built from it (every product with one takes a microcode assist). With the
/// output weights zeroed and the bias at −46 every row is saturated: the gradient is exactly 0
/// while the loss still counts the rows.
#[test]
fn a_saturated_logistic_row_passes_back_nothing() {
    let mut p = pair(QHead::Sigmoid);
    let (x, a, t, _) = data(1);
    let y = vec![0.0; ROWS];
    let h = config(QHead::Sigmoid).hidden;
    let n = p.theta.len();
    // The layout ends with the output weights `W3 (H × 1)` and the bias `b3`.
    p.theta[n - 1 - h..n - 1].fill(0.0);
    p.theta[n - 1] = -46.0;
    let mut grad = vec![0.0; n];
    let mut w = Work::default();
    let loss = p.mlp.loss_grad(&p.theta, &x, &a, &t, &y, &mut grad, &mut w);
    let q = 1.0 / (1.0 + 46f64.exp());
    assert!(w.q.iter().all(|&v| (f64::from(v) / q - 1.0).abs() < 1e-5));
    assert!((2.0 / ROWS as f32 * (q * q) as f32).is_subnormal());
    assert!((loss / (q * q) - 1.0).abs() < 1e-3, "{loss}");
    let left: Vec<usize> = (0..n).filter(|&i| grad[i] != 0.0).collect();
    assert!(left.is_empty(), "gradient left at {left:?}");
}

/// Five training steps from the same start, each on a fresh mini-batch with its own learning
/// rate, candle's autograd and AdamW against the hand-written ones: the parameters agree after
/// every step (errors would compound through the moments if a step were off).
#[test]
fn several_training_steps_match_candles_adamw() {
    for head in [QHead::Sigmoid, QHead::Linear] {
        let mut p = pair(head);
        let c = config(head);
        let mut opt = candle_nn::AdamW::new(
            p.vars.clone(),
            ParamsAdamW {
                lr: 1e-2,
                weight_decay: c.weight_decay,
                ..ParamsAdamW::default()
            },
        )
        .unwrap();
        let mut mine = AdamW::new(p.mlp.len(), c.weight_decay);
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let dx: usize = PARTS.iter().map(|p| p.0).sum();
        let mut w = Work::default();
        for step in 0..5 {
            let (x, a, t, y) = random_batch(&mut rng, ROWS, dx, DA, 3);
            let lr = 1e-2 * (1.0 - 0.1 * f64::from(step));
            let q = candle_q(&p, &x, &a, &t, 1).squeeze(1).unwrap();
            let loss =
                candle_nn::loss::mse(&q, &Tensor::from_slice(&y, ROWS, &Device::Cpu).unwrap())
                    .unwrap();
            opt.set_learning_rate(lr);
            opt.backward_step(&loss).unwrap();
            let mut grad = vec![0.0; p.mlp.len()];
            p.mlp.loss_grad(&p.theta, &x, &a, &t, &y, &mut grad, &mut w);
            mine.step(&mut p.theta, &grad, lr);
            let d = max_diff(&p.theta, &flat(&p.vars));
            assert!(d < 1e-5, "{head:?}: step {step} parameters differ by {d}");
        }
    }
}

/// The target cache reuses a frame's value computed in another mini-batch. A row's `Q` is the
/// same function of its own inputs whichever rows share its forward pass, but not the same bits:
/// `gemm` picks its kernel by the number of rows, so sums run in another order. Checked at the
/// push suite's widths for the subset sizes a cache fill produces (one row, a few, more than a
/// 1,024-row chunk's remainder): equal within 4 ulp of values in (0, 1).
#[test]
fn a_rows_q_depends_on_the_rest_of_its_batch_only_by_rounding() {
    let parts = [(64, 64), (15, 64), (1, 16)];
    let (dx, da, tasks, m) = (80, 7, 4, 8);
    let net = Mlp::new(&parts, da, tasks, &NeuralFqeConfig::default());
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let theta = net.init(&mut rng);
    let rows = 600;
    let (x, a, t, _) = random_batch(&mut rng, rows, dx, m * da, 4);
    let mut w = Work::default();
    net.forward(&theta, &x, &a, &t, m, &mut w);
    let all = w.q.clone();
    for size in [1, 2, 5, 17, 129, 433] {
        let pick: Vec<usize> = (0..size).map(|_| rng.random_range(0..rows)).collect();
        let sx: Vec<f32> = pick
            .iter()
            .flat_map(|&r| x[r * dx..(r + 1) * dx].to_vec())
            .collect();
        let sa: Vec<f32> = pick
            .iter()
            .flat_map(|&r| a[r * m * da..(r + 1) * m * da].to_vec())
            .collect();
        let st: Vec<u32> = pick.iter().map(|&r| t[r]).collect();
        net.forward(&theta, &sx, &sa, &st, m, &mut w);
        for (i, &r) in pick.iter().enumerate() {
            for j in 0..m {
                let (got, want) = (w.q[i * m + j], all[r * m + j]);
                assert!(want > 0.0 && want < 1.0, "{want}");
                assert!(
                    got.to_bits().abs_diff(want.to_bits()) <= 4,
                    "{size} rows: row {r} sample {j}: {got} vs {want}"
                );
            }
        }
    }
}
