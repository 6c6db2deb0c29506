//! Frame features from a numeric vector column (e.g. `observation.state`) when a dataset has no
//! decodable image: each column is standardized with the dataset's mean and deviation, then
//! reduced by the same principal-component step as image features, so the estimators see the
//! same kind of input part whichever source it came from.

use crate::FqeError;
use crate::inputs::InputPart;
use crate::pca::CovarianceAccumulator;

/// A column whose deviation is at most this times `1 + |mean|` is constant: it is centred but
/// not scaled (dividing by a round-off deviation would turn noise into unit-variance signal),
/// and the component step then drops it.
const CONSTANT_RELATIVE_STD: f64 = 1e-9;

/// Per-column mean and deviation of `n × width` row-major values (population deviation; a
/// constant column gets deviation 1).
pub(crate) fn standardization(values: &[f32], width: usize) -> (Vec<f64>, Vec<f64>) {
    let n = values.len() / width.max(1);
    let mut mean = vec![0.0; width];
    let mut var = vec![0.0; width];
    if n == 0 {
        return (mean, vec![1.0; width]);
    }
    let nf = n as f64;
    for row in values.chunks_exact(width) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += f64::from(*v);
        }
    }
    for m in &mut mean {
        *m /= nf;
    }
    for row in values.chunks_exact(width) {
        for ((s, v), m) in var.iter_mut().zip(row).zip(&mean) {
            *s += (f64::from(*v) - m).powi(2);
        }
    }
    let std = var
        .iter()
        .zip(&mean)
        .map(|(s, m)| {
            let sd = (s / nf).sqrt();
            if sd <= CONSTANT_RELATIVE_STD * (1.0 + m.abs()) {
                1.0
            } else {
                sd
            }
        })
        .collect();
    (mean, std)
}

/// The feature part of `column`: `values` (`n × width`, row-major) standardized per column,
/// then projected on at most `components` principal components fitted on every
/// `⌈n / component_frames⌉`-th row. Returns the part and the number of rows the components were
/// fitted on.
///
/// # Errors
/// [`FqeError::InvalidInputs`] for an empty column or a zero width; [`FqeError::Candle`] from
/// the component fit.
pub(crate) fn vector_part(
    column: &str,
    values: &[f32],
    width: usize,
    components: usize,
    component_frames: usize,
    seed: u64,
) -> Result<(InputPart, usize), FqeError> {
    if width == 0 || values.is_empty() || !values.len().is_multiple_of(width) {
        return Err(FqeError::InvalidInputs(format!(
            "feature column \"{column}\": {} values for rows of width {width}",
            values.len()
        )));
    }
    let (mean, std) = standardization(values, width);
    // Cast: standardized values are O(1): f32 is exact enough
    let z = |row: &[f32]| -> Vec<f32> {
        row.iter()
            .zip(mean.iter().zip(&std))
            .map(|(v, (m, s))| ((f64::from(*v) - m) / s) as f32)
            .collect()
    };
    let n = values.len() / width;
    let stride = crate::load::component_stride(n, component_frames);
    let mut acc = CovarianceAccumulator::new(width);
    let mut fitted = 0;
    for row in values.chunks_exact(width).step_by(stride) {
        acc.add(&z(row))?;
        fitted += 1;
    }
    let pca = acc.fit(components, crate::load::PCA_ITERATIONS, seed)?;
    let mut out = Vec::with_capacity(n * pca.k);
    for row in values.chunks_exact(width) {
        out.extend(pca.project(&z(row)));
    }
    Ok((
        InputPart {
            name: format!("{column}:std-pca{}", pca.k),
            width: pca.k,
            values: out,
        },
        fitted,
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn standardization_centres_scales_and_leaves_constant_columns_unscaled() {
        // Columns: 1, 3 (mean 2, sd 1); constant 5.
        let (mean, std) = standardization(&[1.0, 5.0, 3.0, 5.0], 2);
        assert_eq!(mean, vec![2.0, 5.0]);
        assert_eq!(std, vec![1.0, 1.0]);
        let (_, std) = standardization(&[0.0, 10.0, 4.0, 30.0], 2);
        assert_eq!(std, vec![2.0, 10.0]);
    }

    #[test]
    fn a_constant_column_is_dropped_and_scale_does_not_matter() {
        // Column 0 varies, column 1 is constant, column 2 is column 0 scaled by 1000.
        let rows: Vec<f32> = (0..50)
            .flat_map(|t| {
                let s = f32::from(u8::try_from(t % 7).unwrap());
                [s, 3.0, 1000.0 * s]
            })
            .collect();
        let (part, fitted) = vector_part("s", &rows, 3, 8, 20_000, 0).unwrap();
        assert_eq!(fitted, 50);
        // One direction of variance once standardized: the constant column adds none.
        assert_eq!(part.width, 1, "{}", part.name);
        assert_eq!(part.name, "s:std-pca1");
        // z(s) on (1, 1)/√2: |projection| = √2 · |z(s)|.
        let (m, sd) = standardization(&rows, 3);
        let z0 = (f64::from(rows[0]) - m[0]) / sd[0];
        let got = f64::from(part.values[0]);
        assert!(
            (got.abs() - 2f64.sqrt() * z0.abs()).abs() < 1e-4,
            "{got} vs {z0}"
        );
    }

    #[test]
    fn rejects_an_empty_column() {
        assert!(matches!(
            vector_part("s", &[], 3, 8, 10, 0),
            Err(FqeError::InvalidInputs(_))
        ));
    }
}
