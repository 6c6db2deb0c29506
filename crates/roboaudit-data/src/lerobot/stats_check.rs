//! `meta/stats.json` checked by `inspect`: roboaudit never reads the statistics, but LeRobot's
//! loader normalizes with them and fails on a file it cannot parse, so a damaged file is worth a
//! problem before a user trains or evaluates on the dataset.

use std::path::Path;

use serde_json::Value;

use super::LeRobotDataset;
use super::info::{Feature, FeatureKind, ImageLayout};
use super::inspect::Problems;

/// The per-value statistics whose length follows the feature's shape (`count` is one number).
const PER_VALUE: [&str; 4] = ["min", "max", "mean", "std"];

/// Values in a (nested) JSON array, or `None` when anything in it is not a number or a boolean
/// (LeRobot writes a `bool` feature's `min` and `max` as `true`/`false`).
fn flat_len(v: &Value) -> Option<usize> {
    match v {
        Value::Number(_) | Value::Bool(_) => Some(1),
        Value::Array(items) => items.iter().map(flat_len).sum(),
        _ => None,
    }
}

/// How many values LeRobot stores per statistic: one per element for numeric features, one per
/// channel (shape `(c, 1, 1)`) for image and video features.
fn expected_len(f: &Feature) -> Option<usize> {
    match (f.kind, f.layout) {
        (FeatureKind::Numeric, _) => Some(f.width()),
        (FeatureKind::Image | FeatureKind::Video, Some(ImageLayout::Hwc)) => {
            f.shape.last().copied()
        }
        (FeatureKind::Image | FeatureKind::Video, Some(ImageLayout::Chw)) => {
            f.shape.first().copied()
        }
        _ => None,
    }
}

impl LeRobotDataset {
    /// Parses `meta/stats.json` when it exists and checks, for every declared feature it
    /// describes, that `min`, `max`, `mean` and `std` hold numbers (or booleans) only, as many
    /// as the feature has values (numeric) or channels (image, video). Problems are never
    /// blocking: roboaudit does not read the file.
    pub(crate) fn check_stats(&self, problems: &mut Problems) {
        let file = Path::new("meta/stats.json");
        // Every problem of the file names it alone: its position, if any, is in the message.
        let mut push = |message: String| problems.push("stats", file, None, None, message);
        let Ok(bytes) = std::fs::read(self.root.join(file)) else {
            return;
        };
        let stats: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                push(format!(
                    "not valid JSON ({e}); LeRobot's loader cannot read it"
                ));
                return;
            }
        };
        let Some(entries) = stats.as_object() else {
            push("the top level is not an object of per-feature statistics".into());
            return;
        };
        for f in &self.info.features {
            let Some(entry) = entries.get(&f.name) else {
                continue;
            };
            let Some(entry) = entry.as_object() else {
                push(format!("\"{}\" is not an object of statistics", f.name));
                continue;
            };
            for stat in PER_VALUE {
                let Some(value) = entry.get(stat) else {
                    continue;
                };
                let found = flat_len(value);
                let expected = expected_len(f);
                let wrong = match (found, expected) {
                    (None, _) => Some("values that are not numbers".to_owned()),
                    (Some(n), Some(e)) if n != e => Some(format!(
                        "{n} values where feature shape {:?} needs {e}",
                        f.shape
                    )),
                    _ => None,
                };
                if let Some(wrong) = wrong {
                    push(format!("\"{}\".{stat} holds {wrong}", f.name));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::flat_len;

    #[test]
    fn nested_arrays_are_counted_and_non_numbers_refused() {
        assert_eq!(flat_len(&json!([[[0.1]], [[0.2]], [[0.3]]])), Some(3));
        assert_eq!(flat_len(&json!([1, 2.5, -3])), Some(3));
        assert_eq!(flat_len(&json!([false])), Some(1));
        assert_eq!(flat_len(&json!([])), Some(0));
        assert_eq!(flat_len(&json!([1, null])), None);
        assert_eq!(flat_len(&json!("0.5")), None);
    }
}
