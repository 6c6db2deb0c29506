//! `ground_truth.json` (`roboaudit.fqe.ground_truth.v1`): rollout values of target policies per
//! task, one type for the harness that writes the file and the scoring that reads it.
//!
//! The documented fields, which any harness may write and [`read_ground_truth`] reads, are
//! [`GroundTruth`], [`TruthPolicy`] and [`TruthTask`]. A writer that records more (`fqe collect`
//! adds its seed, keys, behaviour mixture, policy descriptions, controller parameters, served
//! settings and standard errors: `roboaudit_fqe_collect::ground_truth::Collected`) names its
//! additions with a [`TruthExtras`] type; each extra is a struct flattened into its place among
//! the documented fields, so the writer decides the field order of the file it writes. The reader
//! uses [`NoExtras`], which reads the documented fields and ignores any others.

use std::fmt::Debug;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::FqeError;

/// Schema tag of the ground-truth file.
pub const GROUND_TRUTH_SCHEMA: &str = "roboaudit.fqe.ground_truth.v1";

/// What one slot of [`TruthExtras`] must be: a struct (serialized flattened into the enclosing
/// object) that can be compared, cloned and printed.
pub trait Extra: Serialize + DeserializeOwned + Debug + Clone + PartialEq {}

impl<T: Serialize + DeserializeOwned + Debug + Clone + PartialEq> Extra for T {}

/// The fields a writer adds to the documented ones, by where they go in the file. Each is a
/// struct with named fields, flattened in place; [`NoExtra`] adds none.
pub trait TruthExtras: Debug + Clone + PartialEq {
    /// Top level, after `gamma`.
    type Run: Extra;
    /// Top level, after `n_dataset_episodes`.
    type Dataset: Extra;
    /// Per policy, after `policy`.
    type About: Extra;
    /// Per policy, after `actions_file`.
    type Values: Extra;
    /// Per task, after `task_index`.
    type Name: Extra;
    /// Per task, after `success_rate`.
    type Spread: Extra;
}

/// No fields: an empty slot of [`TruthExtras`] (nothing written, anything else ignored on read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NoExtra {}

/// The documented fields only: what [`read_ground_truth`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NoExtras;

impl TruthExtras for NoExtras {
    type Run = NoExtra;
    type Dataset = NoExtra;
    type About = NoExtra;
    type Values = NoExtra;
    type Name = NoExtra;
    type Spread = NoExtra;
}

/// Rollout ground truth of one task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct TruthTask<X: TruthExtras = NoExtras> {
    /// Task text.
    pub task: String,
    /// Task index in the dataset's metadata.
    pub task_index: Option<usize>,
    /// The writer's fields after `task_index`.
    #[serde(flatten)]
    pub name: X::Name,
    /// `V^π = mean γ^(T−1)·success` over rollouts, in `[0, 1]`.
    pub v_pi: f64,
    /// Success rate over rollouts, in `[0, 1]`.
    pub success_rate: f64,
    /// The writer's fields after `success_rate`.
    #[serde(flatten)]
    pub spread: X::Spread,
    /// Rollout episodes (`≥ 1` when present).
    pub n_episodes: Option<u64>,
}

/// Ground truth of one policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct TruthPolicy<X: TruthExtras = NoExtras> {
    /// Policy name.
    pub policy: String,
    /// The writer's fields after `policy`.
    #[serde(flatten)]
    pub about: X::About,
    /// Policy-actions file, relative to the ground-truth file's folder.
    pub actions_file: Option<String>,
    /// The writer's fields after `actions_file`.
    #[serde(flatten)]
    pub values: X::Values,
    /// Per task.
    pub tasks: Vec<TruthTask<X>>,
}

impl<X: TruthExtras> TruthPolicy<X> {
    /// The policy-actions file its values were measured with, relative to the ground truth's
    /// folder: `actions_file`, else `policies/<policy>.parquet`.
    #[must_use]
    pub fn actions_path(&self) -> String {
        self.actions_file
            .clone()
            .unwrap_or_else(|| format!("policies/{}.parquet", self.policy))
    }
}

/// `ground_truth.json` (`roboaudit.fqe.ground_truth.v1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct GroundTruth<X: TruthExtras = NoExtras> {
    /// Schema tag.
    pub schema: String,
    /// Discount of `V^π`, in `(0, 1]`.
    pub gamma: f64,
    /// The writer's fields after `gamma`.
    #[serde(flatten)]
    pub run: X::Run,
    /// Episodes of the dataset the collection wrote beside it (`fqe collect` records it);
    /// `None` when not recorded. Lets a fit be checked against a ground truth whose dataset
    /// is not at hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_dataset_episodes: Option<usize>,
    /// The writer's fields after `n_dataset_episodes`.
    #[serde(flatten)]
    pub dataset: X::Dataset,
    /// Per policy.
    pub policies: Vec<TruthPolicy<X>>,
}

/// Reads and checks a ground-truth file.
///
/// # Errors
/// [`FqeError::Io`]; [`FqeError::BadFile`] for malformed JSON, a wrong schema, `γ ∉ (0, 1]`, no
/// policies, a policy listed twice or with an empty name, an empty task text, a task listed twice
/// in one policy (same text or `task_index`), a `v_pi` or `success_rate` outside [0, 1] (NaN included), `v_pi` above
/// `success_rate`, or `n_episodes` 0.
pub fn read_ground_truth(path: &Path) -> Result<GroundTruth, FqeError> {
    read_ground_truth_fingerprinted(path).map(|(gt, _)| gt)
}

/// [`read_ground_truth`] and the file's [`crate::fingerprint`] (what
/// [`crate::FqeReport::ground_truth`] records), from one read of the file.
///
/// # Errors
/// As [`read_ground_truth`].
pub fn read_ground_truth_fingerprinted(path: &Path) -> Result<(GroundTruth, String), FqeError> {
    let bytes = std::fs::read(path).map_err(|e| FqeError::io("read", path, e))?;
    let print = crate::fingerprint(&bytes);
    let gt: GroundTruth = serde_json::from_slice(&bytes)
        .map_err(|e| FqeError::bad_file(path, format!("invalid ground truth: {e}")))?;
    if gt.schema != GROUND_TRUTH_SCHEMA {
        return Err(FqeError::bad_file(
            path,
            format!(
                "schema \"{}\", expected \"{GROUND_TRUTH_SCHEMA}\"",
                gt.schema
            ),
        ));
    }
    if !crate::bounds_settings::is_discount(gt.gamma) {
        return Err(FqeError::bad_file(
            path,
            format!("gamma {} not in (0, 1]", gt.gamma),
        ));
    }
    if gt.policies.is_empty() {
        return Err(FqeError::bad_file(
            path,
            "\"policies\" is empty: no policy to score the estimates against",
        ));
    }
    // A policy listed twice would be scored twice and weigh double in every suite metric.
    for (i, p) in gt.policies.iter().enumerate() {
        if let Some(first) = gt.policies[..i].iter().position(|q| q.policy == p.policy) {
            return Err(FqeError::bad_file(
                path,
                format!(
                    "policies[{i}]: policy {} is listed twice (first at policies[{first}])",
                    p.policy
                ),
            ));
        }
    }
    for (i, p) in gt.policies.iter().enumerate() {
        if p.policy.trim().is_empty() {
            return Err(FqeError::bad_file(
                path,
                format!("policies[{i}]: the policy name is empty"),
            ));
        }
        // Scoring takes a cell's first match (task text, else task_index): a repeat would be
        // ignored without a word.
        for (j, t) in p.tasks.iter().enumerate() {
            if t.task.trim().is_empty() {
                return Err(FqeError::bad_file(
                    path,
                    format!(
                        "policies[{i}] ({}): tasks[{j}] has an empty task text",
                        p.policy
                    ),
                ));
            }
            let repeat = p.tasks[..j].iter().position(|u| {
                u.task == t.task || (t.task_index.is_some() && u.task_index == t.task_index)
            });
            if let Some(first) = repeat {
                return Err(FqeError::bad_file(
                    path,
                    format!(
                        "policies[{i}] ({}): tasks[{j}] repeats tasks[{first}] (task \"{}\"{})",
                        p.policy,
                        t.task,
                        t.task_index
                            .map_or_else(String::new, |k| format!(", task_index {k}"))
                    ),
                ));
            }
        }
        for t in &p.tasks {
            // V^π = mean γ^(T−1)·success and the success rate are both means of values in [0, 1].
            for (field, v) in [("v_pi", t.v_pi), ("success_rate", t.success_rate)] {
                if !(0.0..=1.0).contains(&v) {
                    return Err(FqeError::bad_file(
                        path,
                        format!(
                            "policy {} task \"{}\": {field} {v} is not in [0, 1] (a mean of discounted successes)",
                            p.policy, t.task
                        ),
                    ));
                }
            }
            // γ^(T−1) ≤ 1 makes each rollout's discounted success at most its success; the
            // tolerance is for rounding by the writer.
            if t.v_pi > t.success_rate + 1e-9 {
                return Err(FqeError::bad_file(
                    path,
                    format!(
                        "policy {} task \"{}\": v_pi {} is above success_rate {} (a discounted \
                         success is at most the success)",
                        p.policy, t.task, t.v_pi, t.success_rate
                    ),
                ));
            }
            if t.n_episodes == Some(0) {
                return Err(FqeError::bad_file(
                    path,
                    format!("policy {} task \"{}\": n_episodes is 0", p.policy, t.task),
                ));
            }
        }
    }
    Ok((gt, print))
}

#[cfg(test)]
mod tests {
    use super::read_ground_truth;

    fn refused(json: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ground_truth.json");
        std::fs::write(&path, json).unwrap();
        read_ground_truth(&path).unwrap_err().to_string()
    }

    const POLICY: &str = r#"{"policy":"p","tasks":[{"task":"t","v_pi":0.5,"success_rate":0.5}]}"#;

    #[test]
    fn a_policy_listed_twice_is_refused_with_its_position() {
        let other = POLICY.replace("\"p\"", "\"q\"");
        let json = format!(
            r#"{{"schema":"roboaudit.fqe.ground_truth.v1","gamma":0.9,"policies":[{POLICY},{other},{POLICY}]}}"#
        );
        let e = refused(&json);
        assert!(
            e.contains("ground_truth.json")
                && e.contains("policies[2]: policy p is listed twice (first at policies[0])"),
            "{e}"
        );
    }

    fn one_policy(policy: &str) -> String {
        format!(r#"{{"schema":"roboaudit.fqe.ground_truth.v1","gamma":0.9,"policies":[{policy}]}}"#)
    }

    #[test]
    fn a_task_listed_twice_in_a_policy_is_refused() {
        let t = |task: &str, k: usize| {
            format!(r#"{{"task":"{task}","task_index":{k},"v_pi":0.5,"success_rate":0.5}}"#)
        };
        let by_text = one_policy(&format!(
            r#"{{"policy":"p","tasks":[{},{},{}]}}"#,
            t("a", 0),
            t("b", 1),
            t("a", 2)
        ));
        let e = refused(&by_text);
        assert!(
            e.contains(r#"policies[0] (p): tasks[2] repeats tasks[0] (task "a", task_index 2)"#),
            "{e}"
        );
        let by_index = one_policy(&format!(
            r#"{{"policy":"p","tasks":[{},{}]}}"#,
            t("a", 0),
            t("b", 0)
        ));
        assert!(refused(&by_index).contains("tasks[1] repeats tasks[0]"));
    }

    #[test]
    fn a_discounted_value_above_the_success_rate_is_refused() {
        let e = refused(&one_policy(
            r#"{"policy":"p","tasks":[{"task":"t","v_pi":0.9,"success_rate":0.0}]}"#,
        ));
        assert!(
            e.contains(r#"policy p task "t": v_pi 0.9 is above success_rate 0"#),
            "{e}"
        );
        // Equal at γ^(T−1) = 1, and rounding of the writer within 1e-9, are accepted.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ground_truth.json");
        let json = one_policy(
            r#"{"policy":"p","tasks":[{"task":"t","v_pi":0.5000000000001,"success_rate":0.5}]}"#,
        );
        std::fs::write(&path, json).unwrap();
        assert!(read_ground_truth(&path).is_ok());
    }

    #[test]
    fn an_empty_policy_name_or_task_text_is_refused() {
        let e = refused(&one_policy(r#"{"policy":" ","tasks":[]}"#));
        assert!(e.contains("policies[0]: the policy name is empty"), "{e}");
        let e = refused(&one_policy(
            r#"{"policy":"p","tasks":[{"task":"","v_pi":0.5,"success_rate":0.5}]}"#,
        ));
        assert!(
            e.contains("policies[0] (p): tasks[0] has an empty task text"),
            "{e}"
        );
    }

    #[test]
    fn an_empty_policy_list_is_refused() {
        let e = refused(r#"{"schema":"roboaudit.fqe.ground_truth.v1","gamma":0.9,"policies":[]}"#);
        assert!(e.contains("\"policies\" is empty"), "{e}");
    }
}
