//! The pairwise tables of one representation (experience × scene cosine and L2, experience ×
//! experience cosine distance), with the accumulators in registers and 512- or 256-bit registers
//! where the CPU has them ([`roboaudit_stats::run_wide`]).
//!
//! Every entry is the sum of [`lanes`]: eight interleaved lanes over the whole 8-wide chunks
//! of the dimensions, in dimension order, combined as `((l0 + l4) + (l1 + l5)) + ((l2 + l6) +
//! (l3 + l7))`, plus the leftover dimensions summed in order. The eight lanes of one entry are
//! one vector of accumulators, so the rows are read as they are stored (row-major, eight
//! dimensions at a time) and a register tile of a few experiences × a few items adds every
//! chunk of each of its rows to all its entries at once: each chunk loaded serves a whole row of
//! the tile. The dimensions come in blocks whose rows stay in cache while every tile passes; the
//! lanes of each entry are kept in memory between blocks. Each lane adds in dimension order, so
//! the tables are bit-identical to one [`lanes`] call per entry.

use rayon::prelude::*;
use roboaudit_stats::WideKernel;

/// One experience's row: (cosine to every scene, L2 to every scene, `1 − cos` to every later
/// experience).
pub(crate) type Row = (Vec<f64>, Vec<f64>, Vec<f64>);

/// One embedding as stored (`f32`) and how the `f64` values the tables are computed from are
/// made from it: `f64::from(x)` for a raw vector, `f64::from(x) / norm` for a unit one, 0 for
/// the unit vector of a zero vector.
#[derive(Clone, Copy)]
pub(crate) struct Vector<'a> {
    values: &'a [f32],
    scale: Scale,
}

#[derive(Clone, Copy)]
enum Scale {
    Raw,
    Unit(f64),
    Zero,
}

impl<'a> Vector<'a> {
    /// The vector itself.
    pub fn raw(values: &'a [f32]) -> Self {
        Self {
            values,
            scale: Scale::Raw,
        }
    }

    /// The vector divided by `norm` (its Euclidean norm); `None` for a zero vector, whose unit
    /// vector is taken as zeros.
    pub fn unit(values: &'a [f32], norm: Option<f64>) -> Self {
        Self {
            values,
            scale: norm.map_or(Scale::Zero, Scale::Unit),
        }
    }

    fn len(&self) -> usize {
        self.values.len()
    }
}

/// Vectors as `f64` rows, `values[i * dim + j]`: converted (and divided, for unit vectors) once
/// here rather than at every read, so that the kernel's reads are plain loads.
struct F64Rows {
    dim: usize,
    values: Vec<f64>,
}

impl F64Rows {
    fn new(vs: &[Vector<'_>], dim: usize) -> Self {
        let mut values = Vec::with_capacity(vs.len() * dim);
        for v in vs {
            // Entry by entry in one vectorizable pass per row.
            match v.scale {
                Scale::Raw => values.extend(v.values.iter().map(|&x| f64::from(x))),
                Scale::Unit(norm) => values.extend(v.values.iter().map(|&x| f64::from(x) / norm)),
                Scale::Zero => values.resize(values.len() + v.values.len(), 0.0),
            }
        }
        Self { dim, values }
    }

    /// Entry `j` of row `i`.
    fn at(&self, i: usize, j: usize) -> f64 {
        self.values[i * self.dim + j]
    }

    /// Number of rows.
    fn rows(&self) -> usize {
        self.values.len() / self.dim.max(1)
    }
}

/// Experiences per task: a library of 50 in two tasks (the representations run in parallel
/// besides).
const GROUP: usize = 25;
/// Dimensions per block (a multiple of 8): the block of every row of a table stays in cache.
const DIMS: usize = 256;

/// One row per experience `e`: (cosine to every scene, L2 to every scene, cosine distance
/// `1 − cos` to every experience after `e`). `exp_u`, `scene_u` are unit vectors, `exps`,
/// `scenes` the raw ones; all of one non-zero dimension.
pub(crate) fn rows(
    exps: &[Vector<'_>],
    exp_u: &[Vector<'_>],
    scenes: &[Vector<'_>],
    scene_u: &[Vector<'_>],
) -> Vec<Row> {
    // Tiles whose accumulators and chunks fit the registers: 3 × 2 vectors of eight lanes
    // (measured fastest of 1 × 8 to 4 × 4; 6 × 2 spilled) in 32 AVX-512 registers, 2 × 1 of two
    // or four registers each in 16 AVX2 or SSE2 ones. The tables do not depend on the tile.
    if roboaudit_stats::wide_lanes() >= 8 {
        rows_tiled::<3, 2>(exps, exp_u, scenes, scene_u)
    } else {
        rows_tiled::<2, 1>(exps, exp_u, scenes, scene_u)
    }
}

/// [`rows`] in register tiles of `A` experiences × `B` items.
fn rows_tiled<const A: usize, const B: usize>(
    exps: &[Vector<'_>],
    exp_u: &[Vector<'_>],
    scenes: &[Vector<'_>],
    scene_u: &[Vector<'_>],
) -> Vec<Row> {
    let dim = exps.first().map_or(0, Vector::len);
    let k = exps.len();
    // The four copies in parallel: one representation can hold most of the dimensions.
    let ((exp_u, scene_u), (exps, scenes)) = rayon::join(
        || rayon::join(|| F64Rows::new(exp_u, dim), || F64Rows::new(scene_u, dim)),
        || rayon::join(|| F64Rows::new(exps, dim), || F64Rows::new(scenes, dim)),
    );
    let starts: Vec<usize> = (0..k).step_by(GROUP).collect();
    let groups: Vec<Vec<Row>> = starts
        .par_iter()
        .map(|&first| {
            let group = Group {
                first,
                last: (first + GROUP).min(k),
                dim,
                exps: &exps,
                exp_u: &exp_u,
                scenes: &scenes,
                scene_u: &scene_u,
            };
            roboaudit_stats::run_wide(Tiled::<A, B>(group))
        })
        .collect();
    groups.into_iter().flatten().collect()
}

/// The [`Row`]s of experiences `first..last`.
struct Group<'a> {
    first: usize,
    last: usize,
    dim: usize,
    exps: &'a F64Rows,
    exp_u: &'a F64Rows,
    scenes: &'a F64Rows,
    scene_u: &'a F64Rows,
}

/// A [`Group`] computed in register tiles of `A` experiences × `B` items.
struct Tiled<'a, const A: usize, const B: usize>(Group<'a>);

impl<const A: usize, const B: usize> WideKernel for Tiled<'_, A, B> {
    type Output = Vec<Row>;

    #[inline(always)]
    fn run(self) -> Vec<Row> {
        let g = self.0;
        let product = |x: f64, y: f64| x * y;
        let square = |x: f64, y: f64| (x - y) * (x - y);
        let full = g.dim - g.dim % 8;
        let members = g.first..g.last;
        let (k, n) = (g.exps.rows(), g.scenes.rows());
        let mut cos = Table::new(members.clone(), 0..n);
        let mut l2 = Table::new(members.clone(), 0..n);
        // Items `first + 1..`: every member's later experiences (and a few earlier ones of the
        // first tiles, computed and dropped).
        let mut ee = Table::new(members.clone(), (g.first + 1).min(k)..k);
        let mut d0 = 0;
        while d0 < full {
            let dims = d0..(d0 + DIMS).min(full);
            cos.add_block::<A, B>(g.exp_u, g.scene_u, dims.clone(), product);
            l2.add_block::<A, B>(g.exps, g.scenes, dims.clone(), square);
            ee.add_block::<A, B>(g.exp_u, g.exp_u, dims.clone(), product);
            d0 = dims.end;
        }
        members
            .map(|e| {
                let c = cos.finish(e, 0, g.exp_u, g.scene_u, g.dim, product);
                let mut d = l2.finish(e, 0, g.exps, g.scenes, g.dim, square);
                d.iter_mut().for_each(|v| *v = v.sqrt());
                let mut x = ee.finish(e, e + 1, g.exp_u, g.exp_u, g.dim, product);
                x.iter_mut().for_each(|v| *v = 1.0 - *v);
                (c, d, x)
            })
            .collect()
    }
}

/// The eight lane sums of the entries `rows × items` of one table: `acc[(a − rows.start) ·
/// width + (i − items.start)]`.
struct Table {
    rows: std::ops::Range<usize>,
    items: std::ops::Range<usize>,
    acc: Vec<[f64; 8]>,
}

impl Table {
    fn new(rows: std::ops::Range<usize>, items: std::ops::Range<usize>) -> Self {
        let acc = vec![[0.0; 8]; rows.len() * items.len()];
        Self { rows, items, acc }
    }

    /// Adds the dimensions `dims` (whole 8-chunks) of every entry, `A × B` entries at a time
    /// ([`tile`]); a tile at the edge repeats its last row or item and keeps only its own
    /// entries.
    #[inline(always)]
    fn add_block<const A: usize, const B: usize>(
        &mut self,
        left: &F64Rows,
        right: &F64Rows,
        dims: std::ops::Range<usize>,
        term: impl Fn(f64, f64) -> f64 + Copy,
    ) {
        let width = self.items.len();
        let (rows, items) = (self.rows.clone(), self.items.clone());
        for a0 in rows.clone().step_by(A) {
            let a: [usize; A] = std::array::from_fn(|t| (a0 + t).min(rows.end - 1));
            for b0 in items.clone().step_by(B) {
                let b: [usize; B] = std::array::from_fn(|t| (b0 + t).min(items.end - 1));
                let slot =
                    |ta: usize, tb: usize| (a[ta] - rows.start) * width + (b[tb] - items.start);
                let mut sums: [[[f64; 8]; B]; A] =
                    std::array::from_fn(|ta| std::array::from_fn(|tb| self.acc[slot(ta, tb)]));
                tile(&mut sums, left, &a, right, &b, dims.clone(), term);
                for (ta, row) in sums.iter().enumerate() {
                    // Repeated rows and items hold copies: only each entry's own tile position
                    // writes it back.
                    if ta > 0 && a[ta] == a[ta - 1] {
                        continue;
                    }
                    for (tb, lanes) in row.iter().enumerate() {
                        if tb > 0 && b[tb] == b[tb - 1] {
                            continue;
                        }
                        self.acc[slot(ta, tb)] = *lanes;
                    }
                }
            }
        }
    }

    /// The entries of row `a` for items `from..` (at least the table's first item): the lanes
    /// combined, plus the dimensions past the last whole 8-chunk summed in order.
    fn finish(
        &self,
        a: usize,
        from: usize,
        left: &F64Rows,
        right: &F64Rows,
        dim: usize,
        term: impl Fn(f64, f64) -> f64,
    ) -> Vec<f64> {
        let width = self.items.len();
        let full = dim - dim % 8;
        (from.max(self.items.start)..self.items.end)
            .map(|i| {
                let lanes = &self.acc[(a - self.rows.start) * width + (i - self.items.start)];
                let tail: f64 = (full..dim)
                    .map(|j| term(left.at(a, j), right.at(i, j)))
                    .sum();
                combine(lanes, tail)
            })
            .collect()
    }
}

/// The `chunks` 8-chunks of row `i` from dimension `start` on (fewer past the row's end).
#[inline(always)]
fn block(rows: &F64Rows, i: usize, start: usize, chunks: usize) -> &[[f64; 8]] {
    let at = i * rows.dim + start;
    rows.values
        .get(at..at + 8 * chunks)
        .map_or(&[][..], |v| v.as_chunks::<8>().0)
}

/// Adds `term(left[a][j], right[b][j])` to lane `j mod 8` of `sums[ta][tb]` for every chunk of
/// `dims`, in dimension order, with the `A × B` vectors of lanes in registers: each chunk of a
/// row is loaded once for the whole tile.
#[inline(always)]
fn tile<const A: usize, const B: usize>(
    sums: &mut [[[f64; 8]; B]; A],
    left: &F64Rows,
    a: &[usize; A],
    right: &F64Rows,
    b: &[usize; B],
    dims: std::ops::Range<usize>,
    term: impl Fn(f64, f64) -> f64,
) {
    let chunks = dims.len() / 8;
    let xs: [&[[f64; 8]]; A] = std::array::from_fn(|t| block(left, a[t], dims.start, chunks));
    let ys: [&[[f64; 8]]; B] = std::array::from_fn(|t| block(right, b[t], dims.start, chunks));
    if xs.iter().chain(&ys).any(|r| r.len() != chunks) {
        return;
    }
    let mut acc = *sums;
    for c in 0..chunks {
        let x: [[f64; 8]; A] = std::array::from_fn(|t| xs[t][c]);
        let y: [[f64; 8]; B] = std::array::from_fn(|t| ys[t][c]);
        for ta in 0..A {
            for tb in 0..B {
                for l in 0..8 {
                    acc[ta][tb][l] += term(x[ta][l], y[tb][l]);
                }
            }
        }
    }
    *sums = acc;
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
        // (26, 9, 300): two tasks, edge tiles on both sides, two blocks of dimensions.
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
            let scene32: Vec<Vec<f32>> = (0..n).map(|i| vec(2, i)).collect();
            // Unit views of the same vectors; scene 1 (when there is one) stands for a zero
            // vector, whose unit vector is zeros.
            let norm = |v: &[f32]| {
                v.iter()
                    .map(|&x| f64::from(x) * f64::from(x))
                    .sum::<f64>()
                    .sqrt()
            };
            let exps: Vec<Vector<'_>> = exp32.iter().map(|v| Vector::raw(v)).collect();
            let scenes: Vec<Vector<'_>> = scene32.iter().map(|v| Vector::raw(v)).collect();
            let exp_u: Vec<Vector<'_>> = exp32
                .iter()
                .map(|v| Vector::unit(v, Some(norm(v))))
                .collect();
            let scene_u: Vec<Vector<'_>> = scene32
                .iter()
                .enumerate()
                .map(|(i, v)| Vector::unit(v, (i != 1).then(|| norm(v))))
                .collect();
            let got = rows(&exps, &exp_u, &scenes, &scene_u);
            // Every tile shape gives the same tables.
            assert!(got == rows_tiled::<3, 2>(&exps, &exp_u, &scenes, &scene_u));
            assert!(got == rows_tiled::<2, 1>(&exps, &exp_u, &scenes, &scene_u));
            assert!(got == rows_tiled::<1, 3>(&exps, &exp_u, &scenes, &scene_u));
            // The f64 copies the tables must equal, written out independently.
            let raw64 = |vs: &[Vec<f32>]| -> Vec<Vec<f64>> {
                vs.iter()
                    .map(|v| v.iter().map(|&x| f64::from(x)).collect())
                    .collect()
            };
            let (exps, scenes) = (raw64(&exp32), raw64(&scene32));
            let exp_u: Vec<Vec<f64>> = exp32
                .iter()
                .map(|v| v.iter().map(|&x| f64::from(x) / norm(v)).collect())
                .collect();
            let scene_u: Vec<Vec<f64>> = scene32
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.iter()
                        .map(|&x| if i == 1 { 0.0 } else { f64::from(x) / norm(v) })
                        .collect()
                })
                .collect();
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
