//! The pairwise tables of one representation (experience × scene cosine and L2, experience ×
//! experience cosine distance), with the accumulators in registers and 256-bit registers where
//! the CPU has them ([`roboaudit_stats::run_wide`]).
//!
//! Every entry is the sum of [`lanes`]: eight interleaved lanes over the whole 8-wide chunks
//! of the dimensions, in dimension order, combined as `((l0 + l4) + (l1 + l5)) + ((l2 + l6) +
//! (l3 + l7))`, plus the leftover dimensions summed in order. The items are stored
//! dimension-major (`t[j * stride + i]`), so lane `l` of an experience against a run of items
//! is a loop over the dimensions `j ≡ l (mod 8)` adding `term(a[j], t[j][i])` to accumulators
//! that stay in registers; the dimensions come in blocks that a group of experiences reads from
//! cache in turn, each lane's partial sums kept in memory between blocks. Each lane adds in
//! dimension order, so the tables are bit-identical to one [`lanes`] call per entry.

use rayon::prelude::*;
use roboaudit_stats::WideKernel;

/// One experience's row: (cosine to every scene, L2 to every scene, `1 − cos` to every later
/// experience).
pub(crate) type Row = (Vec<f64>, Vec<f64>, Vec<f64>);

/// One embedding as stored (`f32`) and the `f64` values the tables are computed from, made where
/// they are read instead of in an `f64` copy of every vector: `f64::from(x)` for a raw vector,
/// `f64::from(x) / norm` for a unit one (exactly the entries of a unit copy), 0 for the unit
/// vector of a zero vector.
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

    /// Entries `j0..j0 + 8` (`j0 + 8 <= len`).
    #[inline(always)]
    fn chunk(&self, j0: usize) -> [f64; 8] {
        let mut out = [0.0; 8];
        if let Some(values) = self.values.get(j0..j0 + 8) {
            match self.scale {
                Scale::Raw => out
                    .iter_mut()
                    .zip(values)
                    .for_each(|(o, &x)| *o = f64::from(x)),
                Scale::Unit(norm) => out
                    .iter_mut()
                    .zip(values)
                    .for_each(|(o, &x)| *o = f64::from(x) / norm),
                Scale::Zero => {}
            }
        }
        out
    }

    /// Entry `j` (`j < len`).
    #[inline(always)]
    fn at(&self, j: usize) -> f64 {
        let x = f64::from(self.values[j]);
        match self.scale {
            Scale::Raw => x,
            Scale::Unit(norm) => x / norm,
            Scale::Zero => 0.0,
        }
    }
}

/// The entries of a vector as the kernel reads them: a [`Vector`], or an `f64` copy of one (the
/// experiences' unit vectors, read once per lane of every run of items, are divided once).
trait Entries: Copy {
    /// Entry `j` (`j < len`).
    fn at(&self, j: usize) -> f64;
    /// Dimension.
    fn len(&self) -> usize;
}

impl Entries for Vector<'_> {
    #[inline(always)]
    fn at(&self, j: usize) -> f64 {
        Vector::at(self, j)
    }
    fn len(&self) -> usize {
        Vector::len(self)
    }
}

impl Entries for &[f64] {
    #[inline(always)]
    fn at(&self, j: usize) -> f64 {
        self[j]
    }
    fn len(&self) -> usize {
        <[f64]>::len(self)
    }
}

/// Widest run of items accumulated at once: 12 AVX registers.
const RUN: usize = 48;

/// Dimension-major copy of the whole 8-chunks of some vectors, items padded to a multiple of 4
/// (zeros): `t[j * stride + i]`.
struct Transposed {
    items: usize,
    stride: usize,
    t: Vec<f64>,
}

impl Transposed {
    fn new(vs: &[Vector<'_>], full: usize) -> Self {
        let stride = vs.len().div_ceil(4) * 4;
        // Eight dimensions at a time: one whole cache line of each vector is read and spread
        // over eight rows of the result, which stay in L1 while every vector passes. Element by
        // element (one dimension of every vector per row), the vectors, allocated a multiple of
        // 4 KiB apart, compete for the same few L1 sets and every read misses.
        let mut t = vec![0.0; full * stride];
        for j0 in (0..full).step_by(8) {
            let rows = &mut t[j0 * stride..(j0 + 8) * stride];
            for (i, v) in vs.iter().enumerate() {
                // The eight values first (converted and divided eight at a time), then spread.
                let chunk = v.chunk(j0);
                for (d, x) in chunk.into_iter().enumerate() {
                    rows[d * stride + i] = x;
                }
            }
        }
        Self {
            items: vs.len(),
            stride,
            t,
        }
    }
}

/// Experiences per task: each block of dimensions of the transposed tables is read once per
/// group from memory and then reused from cache by the group's experiences (a library of 50
/// in two tasks; the representations run in parallel besides).
const GROUP: usize = 25;
/// Dimensions per block (a multiple of 8): a block of the three tables stays in cache.
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
    let dim = exps.first().map_or(0, Vector::len);
    let full = dim - dim % 8;
    // The four copies in parallel: one representation can hold most of the dimensions.
    let ((unit_rows, scene_u_t), (scenes_t, exp_u_t)) = rayon::join(
        || {
            rayon::join(
                || -> Vec<Vec<f64>> {
                    exp_u
                        .iter()
                        .map(|v| {
                            let mut row: Vec<f64> =
                                (0..full).step_by(8).flat_map(|j0| v.chunk(j0)).collect();
                            row.extend((full..dim).map(|j| v.at(j)));
                            row
                        })
                        .collect()
                },
                || Transposed::new(scene_u, full),
            )
        },
        || {
            rayon::join(
                || Transposed::new(scenes, full),
                || Transposed::new(exp_u, full),
            )
        },
    );
    let unit_rows: Vec<&[f64]> = unit_rows.iter().map(Vec::as_slice).collect();
    let tables = Tables {
        full,
        scene_u: scene_u_t,
        scenes: scenes_t,
        exp_u: exp_u_t,
    };
    let starts: Vec<usize> = (0..exps.len()).step_by(GROUP).collect();
    let groups: Vec<Vec<Row>> = starts
        .par_iter()
        .map(|&first| {
            roboaudit_stats::run_wide(Group {
                first,
                last: (first + GROUP).min(exps.len()),
                exps,
                exp_u: &unit_rows,
                scenes,
                scene_u,
                t: &tables,
            })
        })
        .collect();
    groups.into_iter().flatten().collect()
}

struct Tables {
    full: usize,
    scene_u: Transposed,
    scenes: Transposed,
    exp_u: Transposed,
}

/// The [`Row`]s of experiences `first..last`.
struct Group<'a> {
    first: usize,
    last: usize,
    exps: &'a [Vector<'a>],
    /// The experiences' unit vectors as `f64` rows.
    exp_u: &'a [&'a [f64]],
    scenes: &'a [Vector<'a>],
    scene_u: &'a [Vector<'a>],
    t: &'a Tables,
}

impl WideKernel for Group<'_> {
    type Output = Vec<Row>;

    #[inline(always)]
    fn run(self) -> Vec<Row> {
        let product = |x: f64, y: f64| x * y;
        let square = |x: f64, y: f64| (x - y) * (x - y);
        let full = self.t.full;
        let members = self.first..self.last;
        let mut cos: Vec<Lanes> = members
            .clone()
            .map(|_| Lanes::new(&self.t.scene_u, 0))
            .collect();
        let mut l2: Vec<Lanes> = members
            .clone()
            .map(|_| Lanes::new(&self.t.scenes, 0))
            .collect();
        let mut ee: Vec<Lanes> = members
            .clone()
            .map(|e| Lanes::new(&self.t.exp_u, e + 1))
            .collect();
        let (units, raws) = (&self.exp_u[members.clone()], &self.exps[members.clone()]);
        let mut d0 = 0;
        while d0 < full {
            let dims = d0..(d0 + DIMS).min(full);
            add_block(&mut cos, units, &self.t.scene_u, dims.clone(), product);
            add_block(&mut l2, raws, &self.t.scenes, dims.clone(), square);
            add_block(&mut ee, units, &self.t.exp_u, dims.clone(), product);
            d0 = dims.end;
        }
        members
            .enumerate()
            .map(|(g, e)| {
                let c = cos[g].finish(self.exp_u[e], self.scene_u, full, product);
                let mut d = l2[g].finish(self.exps[e], self.scenes, full, square);
                d.iter_mut().for_each(|v| *v = v.sqrt());
                let mut x = ee[g].finish(self.exp_u[e], self.exp_u, full, product);
                x.iter_mut().for_each(|v| *v = 1.0 - *v);
                (c, d, x)
            })
            .collect()
    }
}

/// The eight lane sums of one vector against the items `from..` of a [`Transposed`] table:
/// `acc[lane * width + (i − start)]` for the padded items from `start` (`from` rounded down to
/// a multiple of 4) on.
struct Lanes {
    from: usize,
    start: usize,
    width: usize,
    acc: Vec<f64>,
}

impl Lanes {
    fn new(t: &Transposed, from: usize) -> Self {
        let start = from.min(t.items) - from.min(t.items) % 4;
        let width = t.stride - start;
        Self {
            from,
            start,
            width,
            acc: vec![0.0; 8 * width],
        }
    }

    /// The entries of items `from..`: the lanes combined, plus the leftover dimensions `full..`
    /// summed in order.
    fn finish(
        &self,
        a: impl Entries,
        others: &[impl Entries],
        full: usize,
        term: impl Fn(f64, f64) -> f64,
    ) -> Vec<f64> {
        (self.from..others.len())
            .map(|i| {
                let lanes: [f64; 8] =
                    std::array::from_fn(|l| self.acc[l * self.width + i - self.start]);
                let tail: f64 = (full..a.len())
                    .map(|j| term(a.at(j), others[i].at(j)))
                    .sum();
                combine(&lanes, tail)
            })
            .collect()
    }
}

/// Adds the dimensions `dims` (a run of whole 8-chunks) of every vector of `rows` against the
/// table `t` to its [`Lanes`], each lane and run of items in registers ([`lane_run`]). The
/// experiences are the innermost loop: one lane of one run of items is a few KiB of the table,
/// read from memory once and then from L1 by every experience (experience by experience, each
/// re-read the whole block from L2, which bounded the loop). Each entry still adds its
/// dimensions in order.
#[inline(always)]
fn add_block(
    lanes: &mut [Lanes],
    rows: &[impl Entries],
    t: &Transposed,
    dims: std::ops::Range<usize>,
    term: impl Fn(f64, f64) -> f64 + Copy,
) {
    let mut from = 0;
    while from < t.stride {
        let to = (from + RUN).min(t.stride);
        for lane in 0..8 {
            for (l, &a) in lanes.iter_mut().zip(rows) {
                // This experience's items of the run (from its own start on, a multiple of 4).
                let first = from.max(l.start);
                if first >= to {
                    continue;
                }
                let width = to - first;
                let acc = &mut l.acc[lane * l.width + first - l.start..][..width];
                macro_rules! widths {
                    ($($w:literal)*) => {
                        match width {
                            $($w => lane_run::<$w>(a, t, first, dims.start + lane, dims.end, term, acc),)*
                            _ => lane_run::<RUN>(a, t, first, dims.start + lane, dims.end, term, acc),
                        }
                    };
                }
                widths!(4 8 12 16 20 24 28 32 36 40 44);
            }
        }
        from = to;
    }
}

/// Adds `term(a[j], t[j][first + i])` to `acc[i]` (`i < W = acc.len()`) for the dimensions
/// `j = j0, j0 + 8, … < end`, in order, with the accumulators in registers.
#[inline(always)]
fn lane_run<const W: usize>(
    a: impl Entries,
    t: &Transposed,
    first: usize,
    j0: usize,
    end: usize,
    term: impl Fn(f64, f64) -> f64,
    acc: &mut [f64],
) {
    let Ok(acc) = <&mut [f64; W]>::try_from(acc) else {
        return;
    };
    let mut sum: [f64; W] = *acc;
    let mut j = j0;
    while j < end {
        let x = a.at(j);
        let at = j * t.stride + first;
        let Some(row) =
            t.t.get(at..at + W)
                .and_then(|r| <&[f64; W]>::try_from(r).ok())
        else {
            break;
        };
        for i in 0..W {
            sum[i] += term(x, row[i]);
        }
        j += 8;
    }
    *acc = sum;
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
