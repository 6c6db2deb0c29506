//! The pairwise tables of one representation (experience × scene cosine and L2, experience ×
//! experience cosine distance), computed blocked for the cache and with 256-bit registers
//! where the CPU has them ([`roboaudit_stats::run_wide`]).
//!
//! Every entry is the sum of [`lanes`]: eight interleaved lanes over the whole 8-wide chunks
//! of the dimensions, in dimension order, combined as `((l0 + l4) + (l1 + l5)) + ((l2 + l6) +
//! (l3 + l7))`, plus the leftover dimensions summed in order. The blocked loops keep each lane's
//! additions in that order (they only interrupt a lane between dimension blocks and keep its
//! partial sum in memory), so the tables are bit-identical to one [`lanes`] call per entry.

use rayon::prelude::*;
use roboaudit_stats::WideKernel;

/// One experience's row: (cosine to every scene, L2 to every scene, `1 − cos` to every later
/// experience).
pub(crate) type Row = (Vec<f64>, Vec<f64>, Vec<f64>);

/// Experiences per task: each block of dimensions of the transposed tables is read once per
/// group from memory and then reused from cache by the group's experiences.
const GROUP: usize = 8;
/// Dimensions per block (a multiple of 8).
const DIMS: usize = 256;

/// One row per experience `e`: (cosine to every scene, L2 to every scene, cosine distance
/// `1 − cos` to every experience after `e`). `exp_u`, `scene_u` are unit vectors, `exps`,
/// `scenes` the raw ones; all of one non-zero dimension.
pub(crate) fn rows(
    exps: &[Vec<f64>],
    exp_u: &[Vec<f64>],
    scenes: &[Vec<f64>],
    scene_u: &[Vec<f64>],
) -> Vec<Row> {
    let dim = exps.first().map_or(0, Vec::len);
    let full = dim - dim % 8;
    // Dimension-major copies (`t[j * items + i]`) of the whole 8-chunks: the inner loops then
    // run over the items, contiguous and independent, which the compiler vectorizes.
    let transpose = |vs: &[Vec<f64>]| {
        let mut t = vec![0.0; full * vs.len()];
        for (i, v) in vs.iter().enumerate() {
            for (j, &x) in v[..full].iter().enumerate() {
                t[j * vs.len() + i] = x;
            }
        }
        t
    };
    let tables = Transposed {
        full,
        scene_u: transpose(scene_u),
        scenes: transpose(scenes),
        exp_u: transpose(exp_u),
    };
    let starts: Vec<usize> = (0..exps.len()).step_by(GROUP).collect();
    let groups: Vec<Vec<Row>> = starts
        .par_iter()
        .map(|&first| {
            roboaudit_stats::run_wide(Group {
                first,
                last: (first + GROUP).min(exps.len()),
                exps,
                exp_u,
                scenes,
                scene_u,
                t: &tables,
            })
        })
        .collect();
    groups.into_iter().flatten().collect()
}

struct Transposed {
    full: usize,
    scene_u: Vec<f64>,
    scenes: Vec<f64>,
    exp_u: Vec<f64>,
}

struct Group<'a> {
    first: usize,
    last: usize,
    exps: &'a [Vec<f64>],
    exp_u: &'a [Vec<f64>],
    scenes: &'a [Vec<f64>],
    scene_u: &'a [Vec<f64>],
    t: &'a Transposed,
}

impl WideKernel for Group<'_> {
    type Output = Vec<Row>;

    #[inline(always)]
    fn run(self) -> Self::Output {
        let product = |x: f64, y: f64| x * y;
        let square = |x: f64, y: f64| (x - y) * (x - y);
        let (k, n, full) = (self.exps.len(), self.scenes.len(), self.t.full);
        let members = self.first..self.last;
        // lane-major accumulators: acc[lane * items + item]
        let mut cos: Vec<Vec<f64>> = members.clone().map(|_| vec![0.0; 8 * n]).collect();
        let mut l2 = cos.clone();
        let mut ee: Vec<Vec<f64>> = members.clone().map(|_| vec![0.0; 8 * k]).collect();
        let mut c0 = 0;
        while c0 < full {
            let c1 = (c0 + DIMS).min(full);
            for (g, e) in members.clone().enumerate() {
                let (unit, raw) = (&self.exp_u[e], &self.exps[e]);
                accumulate(unit, &self.t.scene_u, n, 0, c0..c1, &mut cos[g], product);
                accumulate(raw, &self.t.scenes, n, 0, c0..c1, &mut l2[g], square);
                accumulate(unit, &self.t.exp_u, k, e + 1, c0..c1, &mut ee[g], product);
            }
            c0 = c1;
        }
        members
            .enumerate()
            .map(|(g, e)| {
                let c = finish(&self.exp_u[e], self.scene_u, &cos[g], 0, full, product);
                let mut d = finish(&self.exps[e], self.scenes, &l2[g], 0, full, square);
                d.iter_mut().for_each(|v| *v = v.sqrt());
                let mut x = finish(&self.exp_u[e], self.exp_u, &ee[g], e + 1, full, product);
                x.iter_mut().for_each(|v| *v = 1.0 - *v);
                (c, d, x)
            })
            .collect()
    }
}

/// The values of items `from..` from their lane accumulators (`acc[lane * items + i]`, items
/// = `others.len()`) and the leftover dimensions `full..` summed in order.
#[inline(always)]
fn finish(
    a: &[f64],
    others: &[Vec<f64>],
    acc: &[f64],
    from: usize,
    full: usize,
    term: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    let items = others.len();
    (from..items)
        .map(|i| {
            let lanes: [f64; 8] = std::array::from_fn(|l| acc[l * items + i]);
            let tail: f64 = a[full..]
                .iter()
                .zip(&others[i][full..])
                .map(|(&x, &y)| term(x, y))
                .sum();
            combine(&lanes, tail)
        })
        .collect()
}

/// Adds `term(a[j], b_i[j])` for the dimensions `dims` (whole chunks of 8) to lane `j mod 8`
/// of every item `i` in `from..items`, reading the items dimension-major
/// (`t[j * items + i]`), each lane in dimension order.
#[inline(always)]
fn accumulate(
    a: &[f64],
    t: &[f64],
    items: usize,
    from: usize,
    dims: std::ops::Range<usize>,
    acc: &mut [f64],
    term: impl Fn(f64, f64) -> f64 + Copy,
) {
    for j in dims {
        let x = a[j];
        let row = &t[j * items + from..(j + 1) * items];
        let lane = j % 8;
        let lane_acc = &mut acc[lane * items + from..(lane + 1) * items];
        for (s, &y) in lane_acc.iter_mut().zip(row) {
            *s += term(x, y);
        }
    }
}

#[inline(always)]
fn combine(acc: &[f64; 8], tail: f64) -> f64 {
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// `Σ_i term(a_i, b_i)` over equal-length slices in 8 lanes (module docs): the reference form
/// of every table entry.
#[cfg(test)]
fn lanes(a: &[f64], b: &[f64], term: impl Fn(f64, f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let (a8, a_tail) = a.as_chunks::<8>();
    let (b8, b_tail) = b.as_chunks::<8>();
    for (x, y) in a8.iter().zip(b8) {
        for i in 0..8 {
            acc[i] += term(x[i], y[i]);
        }
    }
    let tail: f64 = a_tail.iter().zip(b_tail).map(|(&x, &y)| term(x, y)).sum();
    combine(&acc, tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocked tables equal one eight-lane sum per entry, bit for bit, for dimensions with and
    /// without a tail, spanning several blocks, and odd numbers of scenes and experiences.
    #[test]
    fn blocked_tables_equal_lanes_per_entry() {
        for (k, n, dim) in [(11, 5, 1037), (3, 4, 8), (9, 7, 13), (1, 1, 3)] {
            let vec = |seed: usize, i: usize| -> Vec<f64> {
                (0..dim)
                    .map(|d| (((seed * 131 + i * 17 + d * 7) % 97) as f64 / 9.7 - 4.3).sin())
                    .collect()
            };
            let exps: Vec<Vec<f64>> = (0..k).map(|i| vec(1, i)).collect();
            let scenes: Vec<Vec<f64>> = (0..n).map(|i| vec(2, i)).collect();
            let exp_u: Vec<Vec<f64>> = (0..k).map(|i| vec(3, i)).collect();
            let scene_u: Vec<Vec<f64>> = (0..n).map(|i| vec(4, i)).collect();
            let got = rows(&exps, &exp_u, &scenes, &scene_u);
            for (e, (cos, l2, ee)) in got.iter().enumerate() {
                for s in 0..n {
                    let c = lanes(&exp_u[e], &scene_u[s], |x, y| x * y);
                    let d = lanes(&exps[e], &scenes[s], |x, y| (x - y) * (x - y)).sqrt();
                    assert_eq!(cos[s].to_bits(), c.to_bits());
                    assert_eq!(l2[s].to_bits(), d.to_bits());
                }
                for (j, b) in (e + 1..k).enumerate() {
                    let x = 1.0 - lanes(&exp_u[e], &exp_u[b], |x, y| x * y);
                    assert_eq!(ee[j].to_bits(), x.to_bits());
                }
            }
        }
    }
}
