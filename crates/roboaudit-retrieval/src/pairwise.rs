//! The pairwise tables of one representation (experience × scene cosine and L2, experience ×
//! experience cosine distance), computed from the stored `f32` vectors with the accumulators in
//! registers and 512- or 256-bit registers where the CPU has them ([`roboaudit_stats::run_wide`]).
//!
//! Every table entry comes from sums over the dimensions of the raw vectors: the dot product
//! `Σ x_j y_j`, the squared distance `Σ (x_j − y_j)²` and each vector's squared norm `Σ x_j²`.
//! Each sum is [`lanes`]: eight interleaved lanes over the whole 8-wide chunks of the
//! dimensions, in dimension order, one fused multiply-add per term (`f64::mul_add`: one
//! rounding; the difference `x − y` of two `f32` values is exact in `f64` unless their
//! magnitudes differ by more than 2^29), combined as `((l0 + l4) + (l1 + l5)) + ((l2 + l6) +
//! (l3 + l7))`, plus the leftover dimensions summed in order.
//! Then `cos = dot / (‖x‖·‖y‖)` (0 when a norm is 0: cosine is undefined then, and the caller
//! says so), `L2 = √(squared distance)` and the cosine distance `1 − cos`.
//!
//! The eight lanes of one entry are one vector of accumulators, so the rows are read as they
//! are stored (eight `f32` at a time, widened in registers) and a register tile of a few
//! experiences × a few items adds every chunk of each of its rows to all its entries at once.
//! Each lane adds in dimension order, so the tables are bit-identical to one [`lanes`] call per
//! entry, whatever the tile and the thread count.

use rayon::prelude::*;
use roboaudit_stats::WideKernel;

/// Eight dimensions' worth of one entry's partial sums: one AVX-512 register, two AVX2 ones.
type Lanes = [f64; 8];

/// The tables of one representation, all from the raw vectors (module docs).
pub(crate) struct Tables {
    /// Cosine similarity experience × scene, `K × n` row-major.
    pub cos_es: Vec<f64>,
    /// Euclidean distance experience × scene, `K × n`.
    pub l2_es: Vec<f64>,
    /// Cosine distance experience × experience, `K × K`, symmetric, diagonal exactly 0.
    pub cosd_ee: Vec<f64>,
    /// Euclidean norm of each experience vector (library order), then of each scene vector.
    pub norms: Vec<f64>,
}

/// Experiences per task: a library of 50 in two tasks (the representations run in parallel
/// besides).
const GROUP: usize = 25;

/// The [`Tables`] of experience vectors `exps` and scene vectors `scenes`, all of one non-zero
/// dimension.
pub(crate) fn tables(exps: &[&[f32]], scenes: &[&[f32]]) -> Tables {
    // Tiles whose accumulators and chunks fit the registers: in 32 AVX-512 registers 4 × 2
    // entries of eight lanes with two sums each (experience × scene) and 4 × 4 with one
    // (experience × experience); 2 × 2 for both in 16 AVX2 or SSE2 ones (measured fastest of
    // 3 × 2 to 4 × 4, and of 1 × 2 to 3 × 1). The tables do not depend on the tiles.
    if roboaudit_stats::wide_lanes() >= 8 {
        tables_tiled::<4, 2, 4, 4>(exps, scenes)
    } else {
        tables_tiled::<2, 2, 2, 2>(exps, scenes)
    }
}

/// [`tables`] in register tiles of `A` experiences × `B` scenes (dot products and squared
/// distances) and `C` × `D` experiences (dot products).
fn tables_tiled<const A: usize, const B: usize, const C: usize, const D: usize>(
    exps: &[&[f32]],
    scenes: &[&[f32]],
) -> Tables {
    let (k, n) = (exps.len(), scenes.len());
    let all: Vec<&[f32]> = exps.iter().chain(scenes).copied().collect();
    let norms: Vec<f64> = roboaudit_stats::run_wide(Norms(&all));
    let (exp_norms, scene_norms) = norms.split_at(k);
    let starts: Vec<usize> = (0..k).step_by(GROUP).collect();
    // One group's rows: (dot, squared distance) to every scene, dot to every later experience.
    let groups: Vec<Vec<GroupRow>> = starts
        .par_iter()
        .map(|&first| {
            roboaudit_stats::run_wide(Tiled::<A, B, C, D> {
                exps,
                scenes,
                members: first..(first + GROUP).min(k),
            })
        })
        .collect();
    let cosine = |dot: f64, a: f64, b: f64| {
        if a > 0.0 && b > 0.0 {
            dot / (a * b)
        } else {
            0.0
        }
    };
    let mut cos_es = Vec::with_capacity(k * n);
    let mut l2_es = Vec::with_capacity(k * n);
    let mut cosd_ee = vec![0.0; k * k];
    for (e, row) in groups.into_iter().flatten().enumerate() {
        cos_es.extend(
            row.dot
                .iter()
                .zip(scene_norms)
                .map(|(&d, &ns)| cosine(d, exp_norms[e], ns)),
        );
        l2_es.extend(row.sq.iter().map(|v| v.sqrt()));
        for (b, &d) in (e + 1..k).zip(&row.dot_later) {
            let c = 1.0 - cosine(d, exp_norms[e], exp_norms[b]);
            cosd_ee[e * k + b] = c;
            cosd_ee[b * k + e] = c;
        }
    }
    Tables {
        cos_es,
        l2_es,
        cosd_ee,
        norms,
    }
}

/// One experience's sums: dot products and squared distances to every scene, dot products to
/// every later experience.
struct GroupRow {
    dot: Vec<f64>,
    sq: Vec<f64>,
    dot_later: Vec<f64>,
}

/// The Euclidean norm of every vector, `√(lanes(v, v))`.
struct Norms<'a>(&'a [&'a [f32]]);

impl WideKernel for Norms<'_> {
    type Output = Vec<f64>;

    #[inline(always)]
    fn run(self) -> Vec<f64> {
        // Loops, not iterator closures: a closure is compiled without this copy's target
        // features, and its fused multiply-adds would become calls.
        let mut norms = Vec::with_capacity(self.0.len());
        for v in self.0 {
            let (chunks, tail) = v.as_chunks::<8>();
            let mut acc = [0.0; 8];
            for chunk in chunks {
                let x = widen(chunk);
                for l in 0..8 {
                    acc[l] = x[l].mul_add(x[l], acc[l]);
                }
            }
            let mut t = 0.0;
            for &x in tail {
                let x = f64::from(x);
                t = x.mul_add(x, t);
            }
            norms.push(combine(&acc, t).sqrt());
        }
        norms
    }
}

/// The [`GroupRow`]s of the experiences `members`, in register tiles of `A` experiences × `B`
/// scenes and `C` × `D` experiences.
struct Tiled<'a, const A: usize, const B: usize, const C: usize, const D: usize> {
    exps: &'a [&'a [f32]],
    scenes: &'a [&'a [f32]],
    members: std::ops::Range<usize>,
}

impl<const A: usize, const B: usize, const C: usize, const D: usize> WideKernel
    for Tiled<'_, A, B, C, D>
{
    type Output = Vec<GroupRow>;

    #[inline(always)]
    fn run(self) -> Vec<GroupRow> {
        let Tiled {
            exps,
            scenes,
            members,
        } = self;
        let (k, n) = (exps.len(), scenes.len());
        let mut rows: Vec<GroupRow> = members
            .clone()
            .map(|e| GroupRow {
                dot: vec![0.0; n],
                sq: vec![0.0; n],
                dot_later: vec![0.0; k - e - 1],
            })
            .collect();
        let first = members.start;
        // No closures here: a closure is compiled without this copy's target features, and
        // its fused multiply-adds would become calls.
        // Experience × scene: both sums.
        for a0 in members.clone().step_by(A) {
            let a = tile_indices::<A>(a0, members.end);
            let x: [&[f32]; A] = std::array::from_fn(|t| exps[a[t]]);
            for b0 in (0..n).step_by(B) {
                let b = tile_indices::<B>(b0, n);
                let y: [&[f32]; B] = std::array::from_fn(|t| scenes[b[t]]);
                let (dot, sq) = tile::<A, B, true>(&x, &y);
                for (ta, &e) in a.iter().enumerate() {
                    for (tb, &s) in b.iter().enumerate() {
                        let row = &mut rows[e - first];
                        row.dot[s] = dot[ta][tb];
                        row.sq[s] = sq[ta][tb];
                    }
                }
            }
        }
        // Experience × later experience: dot products (tiles from the group's first member on;
        // entries of earlier experiences are computed and dropped).
        for a0 in members.clone().step_by(C) {
            let a = tile_indices::<C>(a0, members.end);
            let x: [&[f32]; C] = std::array::from_fn(|t| exps[a[t]]);
            for b0 in (a0 + 1..k).step_by(D) {
                let b = tile_indices::<D>(b0, k);
                let y: [&[f32]; D] = std::array::from_fn(|t| exps[b[t]]);
                let (dot, _) = tile::<C, D, false>(&x, &y);
                for (ta, &e) in a.iter().enumerate() {
                    for (tb, &j) in b.iter().enumerate() {
                        if j > e {
                            rows[e - first].dot_later[j - e - 1] = dot[ta][tb];
                        }
                    }
                }
            }
        }
        rows
    }
}

/// The `T` indices of a tile starting at `start`, the last one repeated past `end` (its
/// entries are computed twice, with the same value; `start < end`).
#[inline(always)]
fn tile_indices<const T: usize>(start: usize, end: usize) -> [usize; T] {
    std::array::from_fn(|t| (start + t).min(end - 1))
}

/// Eight `f32` values widened to `f64` (exact).
#[inline(always)]
fn widen(chunk: &[f32; 8]) -> Lanes {
    let mut out = [0.0; 8];
    for l in 0..8 {
        out[l] = f64::from(chunk[l]);
    }
    out
}

/// The dot products and, when `SQ`, the squared distances of a tile: the [`lanes`] sums of
/// every `x[ta]`, `y[tb]` pair (all of one length), with the `A × B` vectors of lanes of each
/// sum in registers: each chunk of a row is loaded and widened once for the whole tile. Without
/// `SQ` the distances are all 0.
#[inline(always)]
fn tile<const A: usize, const B: usize, const SQ: bool>(
    x: &[&[f32]; A],
    y: &[&[f32]; B],
) -> ([[f64; B]; A], [[f64; B]; A]) {
    let xs: [&[[f32; 8]]; A] = std::array::from_fn(|t| x[t].as_chunks::<8>().0);
    let ys: [&[[f32; 8]]; B] = std::array::from_fn(|t| y[t].as_chunks::<8>().0);
    let chunks = xs.iter().chain(&ys).map(|r| r.len()).min().unwrap_or(0);
    let mut dot = [[[0.0f64; 8]; B]; A];
    let mut sq = [[[0.0f64; 8]; B]; A];
    for c in 0..chunks {
        let mut xc = [[0.0; 8]; A];
        let mut yc = [[0.0; 8]; B];
        for t in 0..A {
            xc[t] = widen(&xs[t][c]);
        }
        for t in 0..B {
            yc[t] = widen(&ys[t][c]);
        }
        // Lanes outermost: the lane loop is the one vectorized; the tile loops are unrolled.
        for l in 0..8 {
            for ta in 0..A {
                for tb in 0..B {
                    dot[ta][tb][l] = xc[ta][l].mul_add(yc[tb][l], dot[ta][tb][l]);
                    if SQ {
                        let d = xc[ta][l] - yc[tb][l];
                        sq[ta][tb][l] = d.mul_add(d, sq[ta][tb][l]);
                    }
                }
            }
        }
    }
    let full = chunks * 8;
    let mut dots = [[0.0; B]; A];
    let mut sqs = [[0.0; B]; A];
    for ta in 0..A {
        for tb in 0..B {
            let (xt, yt) = (
                &x[ta][full.min(x[ta].len())..],
                &y[tb][full.min(y[tb].len())..],
            );
            let (mut td, mut ts) = (0.0, 0.0);
            for (&a, &b) in xt.iter().zip(yt) {
                let (a, b) = (f64::from(a), f64::from(b));
                td = a.mul_add(b, td);
                if SQ {
                    ts = (a - b).mul_add(a - b, ts);
                }
            }
            dots[ta][tb] = combine(&dot[ta][tb], td);
            sqs[ta][tb] = combine(&sq[ta][tb], ts);
        }
    }
    (dots, sqs)
}

#[inline(always)]
fn combine(acc: &Lanes, tail: f64) -> f64 {
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// `Σ_i term(lanes_i, a_i, b_i)` over equal-length slices in 8 lanes (module docs): the
/// reference form of every sum, with `term(acc, x, y)` one lane's step.
#[cfg(test)]
fn lanes(a: &[f32], b: &[f32], term: impl Fn(f64, f64, f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let (a8, a_tail) = a.as_chunks::<8>();
    let (b8, b_tail) = b.as_chunks::<8>();
    for (x, y) in a8.iter().zip(b8) {
        for i in 0..8 {
            acc[i] = term(acc[i], f64::from(x[i]), f64::from(y[i]));
        }
    }
    let tail = a_tail
        .iter()
        .zip(b_tail)
        .fold(0.0, |t, (&x, &y)| term(t, f64::from(x), f64::from(y)));
    combine(&acc, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tiled tables equal one eight-lane sum per entry, bit for bit, for dimensions with and
    /// without a tail, and odd numbers of scenes and experiences, whatever the tile; a zero
    /// vector has cosine 0 (its cosine is undefined) and an L2 distance.
    #[test]
    fn tiled_tables_equal_lanes_per_entry() {
        // (26, 9, 300): two tasks, edge tiles on both sides.
        for (k, n, dim) in [
            (11, 5, 1037),
            (3, 4, 8),
            (9, 7, 13),
            (1, 1, 3),
            (26, 9, 300),
        ] {
            let vec = |seed: usize, i: usize| -> Vec<f32> {
                (0..dim)
                    .map(|d| (((seed * 131 + i * 17 + d * 7) % 97) as f32 / 9.7 - 4.3).sin())
                    .collect()
            };
            let exp32: Vec<Vec<f32>> = (0..k).map(|i| vec(1, i)).collect();
            // Scene 1 (when there is one) is a zero vector.
            let scene32: Vec<Vec<f32>> = (0..n)
                .map(|i| if i == 1 { vec![0.0; dim] } else { vec(2, i) })
                .collect();
            let exps: Vec<&[f32]> = exp32.iter().map(Vec::as_slice).collect();
            let scenes: Vec<&[f32]> = scene32.iter().map(Vec::as_slice).collect();
            let got = tables(&exps, &scenes);
            for other in [
                tables_tiled::<4, 2, 4, 4>(&exps, &scenes),
                tables_tiled::<2, 2, 2, 2>(&exps, &scenes),
                tables_tiled::<1, 3, 3, 1>(&exps, &scenes),
            ] {
                assert!(other.cos_es == got.cos_es && other.l2_es == got.l2_es);
                assert!(other.cosd_ee == got.cosd_ee && other.norms == got.norms);
            }
            let dot = |a: &[f32], b: &[f32]| lanes(a, b, |t, x, y| x.mul_add(y, t));
            let norm = |a: &[f32]| dot(a, a).sqrt();
            for e in 0..k {
                assert_eq!(got.norms[e].to_bits(), norm(&exp32[e]).to_bits());
                for (s, scene) in scene32.iter().enumerate() {
                    let c = if s == 1 {
                        0.0
                    } else {
                        dot(&exp32[e], scene) / (norm(&exp32[e]) * norm(scene))
                    };
                    let d = lanes(&exp32[e], scene, |t, x, y| (x - y).mul_add(x - y, t));
                    assert_eq!(got.cos_es[e * n + s].to_bits(), c.to_bits());
                    assert_eq!(got.l2_es[e * n + s].to_bits(), d.sqrt().to_bits());
                }
                for b in 0..k {
                    let want = if b == e {
                        0.0
                    } else {
                        1.0 - dot(&exp32[e], &exp32[b]) / (norm(&exp32[e]) * norm(&exp32[b]))
                    };
                    assert_eq!(got.cosd_ee[e * k + b].to_bits(), want.to_bits());
                }
            }
            if n > 1 {
                assert_eq!(got.norms[k + 1], 0.0);
            }
        }
    }
}
