//! The labels part of `inspect`: which success label `fqe fit` would read from the facts the
//! data pass gathered, and what to pass instead where that fails.

use std::path::PathBuf;

use super::LeRobotDataset;
use super::inspect::{EpisodeScan, LabelSummary, Problems, RewardSummary};
use super::scan::Scanned;

/// The labels verdict: what `fqe fit` would use by default (`next.success` when declared, else
/// the last `next.reward` ≥ 0.5) and, where that fails, what to pass instead.
fn verdict(
    ds: &LeRobotDataset,
    scanned: &Scanned,
    success_columns: &[(String, usize)],
    reward: Option<&RewardSummary>,
    reasons: &[String],
) -> String {
    let n = scanned.episodes.len();
    if n == 0 && scanned.unreadable_files > 0 {
        return format!(
            "labels not checked: the data could not be read ({} of {} data file(s) missing or unreadable, see the problems)",
            scanned.unreadable_files, scanned.files
        );
    }
    let partly = if scanned.unreadable_files > 0 {
        format!(
            " (from the readable data files only: {} of {} could not be read)",
            scanned.unreadable_files, scanned.files
        )
    } else {
        String::new()
    };
    let derive = |column: &str, rule: &str, threshold: &str| {
        format!(
            "`roboaudit data labels {} --reward {column} --rule {rule} --threshold {threshold} --out FILE`",
            ds.root().display()
        )
    };
    // `fqe fit` reads `next.success` whenever it is declared, present in the data or not.
    if ds.feature("next.success").is_some() && !scanned.columns_seen.contains("next.success") {
        let alternative = match reward {
            Some(r) => format!(
                ", e.g. derived from the reward with {}",
                derive(&r.column, "last", "T")
            ),
            None => String::new(),
        };
        return format!(
            "\"next.success\" is declared in meta/info.json but has no column in the data files: `fqe fit` reads it by default and would fail; pass --labels FILE (episode_index, success){alternative}{partly}"
        );
    }
    let usable = |name: &str| {
        success_columns
            .iter()
            .find(|(c, hits)| c == name && *hits > 0)
    };
    if let Some((column, hits)) = usable("next.success") {
        return format!("use column \"{column}\" (true in {hits} of {n} episodes){partly}");
    }
    let declared_success = ds.feature("next.success").is_some();
    if let Some(r) = reward.filter(|r| r.binary) {
        // Without `next.success`, fit falls back to the last `next.reward`; with it (never
        // true), fit refuses, so the reward has to come in as a labels file.
        return if !declared_success && r.column == "next.reward" {
            format!(
                "use the last \"{}\" of each episode (binary reward; what `fqe fit` reads by default){partly}",
                r.column
            )
        } else {
            format!(
                "use the last \"{}\" of each episode (binary reward) as a labels file: {}, then `fqe fit --labels FILE`{partly}",
                r.column,
                derive(&r.column, "last", "1")
            )
        };
    }
    if let Some((column, hits)) = success_columns.iter().find(|(_, hits)| *hits > 0) {
        return format!(
            "use column \"{column}\" (true in {hits} of {n} episodes) as a labels file: {}, then `fqe fit --labels FILE` (fit reads only next.success or next.reward by default){partly}",
            derive(column, "max", "1")
        );
    }
    if reasons.is_empty() {
        format!(
            "no success label in the data: supply a labels file (episode_index, success){partly}"
        )
    } else {
        format!(
            "no usable success label in the data ({}): supply a labels file (episode_index, success) or a reward threshold{partly}",
            reasons.join("; ")
        )
    }
}

/// Label availability, from the per-episode facts of [`super::scan::scan_data`].
pub(crate) fn label_summary(
    ds: &LeRobotDataset,
    scanned: &Scanned,
    problems: &mut Problems,
) -> LabelSummary {
    let n = scanned.episodes.len();
    let info_file = PathBuf::from("meta/info.json");
    let mut success_columns = Vec::new();
    let mut reasons = Vec::new();
    for column in &scanned.success_columns {
        let hits = scanned
            .episodes
            .values()
            .filter(|e| e.success.get(column).copied().unwrap_or(false))
            .count();
        // A column absent from the data is already a "missing column" problem, not a label
        // that is never true.
        if hits == 0 && n > 0 && scanned.columns_seen.contains(column) {
            let file = ds
                .episodes()
                .first()
                .map_or_else(|| info_file.clone(), |e| e.data_file.clone());
            problems.push("labels", &file, None, None, format!(
                "\"{column}\" is never true in any of the {n} episodes: it cannot serve as a success label"));
            reasons.push(format!("{column} is never true"));
        }
        success_columns.push((column.clone(), hits));
    }
    let reward = scanned.reward.as_ref().map(|r| RewardSummary {
        column: r.column.clone(),
        min: r.min,
        max: r.max,
        mean: if r.count > 0 {
            r.sum / r.count as f64
        } else {
            0.0
        },
        nonzero_frames: r.nonzero,
        max_last: scanned
            .episodes
            .values()
            .filter_map(|e| e.last_reward.map(|(_, v)| v))
            .fold(f64::NEG_INFINITY, f64::max),
        binary: r.binary,
    });
    if let Some(r) = &reward
        && !r.binary
    {
        reasons.push(format!(
            "{} is a dense reward (last-frame values up to {:.4}), not a 0/1 label",
            r.column, r.max_last
        ));
    }
    let done_frames = scanned.done_column.as_ref().map(|column| {
        let odd: Vec<(&i64, &EpisodeScan)> = scanned
            .episodes
            .iter()
            .filter(|(_, e)| e.done_frames.iter().any(|f| Some(*f) != e.max_frame))
            .collect();
        if let Some((ep, e)) = odd.first() {
            let file = ds.episode(**ep).map_or_else(|| info_file.clone(), |m| m.data_file.clone());
            problems.push("done", &file, Some(**ep), None, format!(
                "\"{column}\" is true on frames other than the last in {} of {n} episodes (e.g. episode {ep}: frames {:?} of 0..={})",
                odd.len(), e.done_frames, e.max_frame.unwrap_or(0)));
        }
        let open_ended: Vec<&i64> = scanned
            .episodes
            .iter()
            .filter(|(_, e)| !e.done_frames.iter().any(|f| Some(*f) == e.max_frame))
            .map(|(ep, _)| ep)
            .collect();
        if let Some(ep) = open_ended.first() {
            let file = ds.episode(**ep).map_or_else(|| info_file.clone(), |m| m.data_file.clone());
            problems.push("done", &file, Some(**ep), None, format!(
                "\"{column}\" is false on the last frame of {} of {n} episodes (e.g. episode {ep})",
                open_ended.len()));
        }
        scanned.episodes.values().map(|e| e.done_frames.len()).sum()
    });
    let verdict = verdict(ds, scanned, &success_columns, reward.as_ref(), &reasons);
    LabelSummary {
        success_columns,
        reward,
        done_frames,
        verdict,
    }
}
