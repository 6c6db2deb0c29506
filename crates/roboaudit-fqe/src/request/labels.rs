//! Where a fit's success labels come from, and how `fqe.json` describes them.

use std::path::PathBuf;

use roboaudit_data::lerobot::{LabelSources, LeRobotDataset, SuccessSource, read_label_sources};

use super::RequestError;
use crate::number::compact;

/// Where the labels come from, for `fqe.json`'s inputs, and a note when a labels file holds
/// labels predicted by the success detector (its `source` column, as `data detect` writes it,
/// read by [`read_label_sources`]): the estimates then rest on the detector's accuracy, which
/// only its report gives. A file that cannot be read here is only named: the labels are read
/// (and their errors reported) when the dataset is loaded.
pub(crate) fn describe_labels(labels: &SuccessSource) -> (String, Option<String>) {
    match labels {
        SuccessSource::Column(c) => (format!("column {c:?}, true on any frame"), None),
        SuccessSource::LastReward { column, threshold } => (
            format!("last {column:?} of each episode >= {}", compact(*threshold)),
            None,
        ),
        SuccessSource::MaxReward { column, threshold } => (
            format!(
                "largest {column:?} of each episode >= {}",
                compact(*threshold)
            ),
            None,
        ),
        SuccessSource::File(path) => {
            let described = format!("labels file {}", path.display());
            let Ok(Some(LabelSources { rows, predicted })) = read_label_sources(path) else {
                return (described, None);
            };
            let note = (predicted > 0).then(|| {
                format!(
                    "labels: {predicted} of {rows} episode labels in {} were predicted by the success detector (`data detect`), not observed: the estimates carry the detector's errors (its held-out accuracy is in its report)",
                    path.display()
                )
            });
            (
                format!("{described} ({predicted} of {rows} predicted by the success detector)"),
                note,
            )
        }
    }
}

/// The success labels: `file`, else `next.success`, else the last `next.reward` ≥ 0.5. A
/// default source that labels no episode a success is refused: FQE would silently estimate 0
/// for every policy (pusht's `next.success` is never true: its episodes stop short of the 0.95
/// coverage the flag needs).
pub(crate) fn labels_source(
    file: Option<&PathBuf>,
    ds: &LeRobotDataset,
) -> Result<SuccessSource, RequestError> {
    if let Some(f) = file {
        return Ok(SuccessSource::File(f.clone()));
    }
    let hint = format!(
        "pass --labels FILE (episode_index, success), e.g. derived from a dense reward with \
         `roboaudit data labels {} --rule max --threshold T --out FILE`",
        ds.root().display()
    );
    let source = if ds.feature("next.success").is_some() {
        SuccessSource::Column("next.success".into())
    } else if ds.feature("next.reward").is_some() {
        SuccessSource::LastReward {
            column: "next.reward".into(),
            threshold: 0.5,
        }
    } else {
        return Err(RequestError::Input(format!(
            "{} has no success label (neither \"next.success\" nor \"next.reward\"); {hint}",
            ds.root().display()
        )));
    };
    let labels = ds.success_labels(&source).map_err(RequestError::Data)?;
    if !labels.iter().any(|l| l.success) {
        let what = match &source {
            SuccessSource::Column(c) => format!("\"{c}\" is never true"),
            _ => "the last \"next.reward\" is below 0.5".to_owned(),
        };
        return Err(RequestError::Input(format!(
            "{what} in all {} episodes of {}: no usable success label; {hint}",
            labels.len(),
            ds.root().display()
        )));
    }
    Ok(source)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `data detect` labels file is recognised by its `source` column and its predicted
    /// labels are counted into a note; any other labels file is only named.
    #[test]
    fn detector_labels_are_counted_into_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let detected = dir.path().join("labels.csv");
        std::fs::write(
            &detected,
            "episode_index,success,source,probability\n0,1,label,1.000000\n1,0,detector,0.210000\n2,1,detector,0.900000\n",
        )
        .unwrap();
        let (described, note) = describe_labels(&SuccessSource::File(detected.clone()));
        assert!(
            described.ends_with("(2 of 3 predicted by the success detector)"),
            "{described}"
        );
        let note = note.unwrap();
        assert!(
            note.starts_with("labels: 2 of 3 episode labels in "),
            "{note}"
        );
        let plain = dir.path().join("plain.csv");
        std::fs::write(&plain, "episode_index,success\n0,1\n").unwrap();
        assert_eq!(describe_labels(&SuccessSource::File(plain)).1, None);
        let all_given = dir.path().join("given.csv");
        std::fs::write(
            &all_given,
            "episode_index,success,source,probability\n0,1,label,1.000000\n",
        )
        .unwrap();
        assert_eq!(describe_labels(&SuccessSource::File(all_given)).1, None);
    }
}
