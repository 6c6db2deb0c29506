//! `memory intervene --shard I/N`: the recipients of an intervention study as a sharded job
//! list. Recipient `i` is job `i`; shard `I/N` runs the recipients with `i mod N = I` and keeps
//! each as `interventions.partial/recipient-{i:06}.json` ([`RecipientPart`], written atomically:
//! a rerun of the shard skips the recipients already there). `interventions.partial/study.json`
//! (the study kind, configuration and policy name) is the same in every shard. `roboaudit merge`
//! copies the parts into one folder and [`finish_merged`] assembles them into the
//! `interventions.json` and `interventions.md` an unsharded run writes, byte for byte: a
//! recipient's continuations depend on the configuration and its index only, and the rates and
//! intervals are computed from all of them at assembly, as the unsharded run does.

use std::path::Path;

use roboaudit_shard::Shard;
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;
use crate::intervene::{
    InterventionConfig, RecipientPart, StudyKind, assemble_study, prepare, run_recipient,
};
use crate::policy::MemoryPolicy;
use crate::shard_parts::PartSet;

pub use crate::intervene_output::{REPORT_FILE, STUDY_FILE};
pub use crate::shard_parts::{ShardRun, refuse_shard_folder};

/// The collection's name in configuration hashes and shard manifests.
pub const COLLECTION: &str = "memory-intervene";
/// Folder of a shard's recipient parts inside its output folder.
pub const PARTIAL_DIR: &str = "interventions.partial";

const PARTS: PartSet = PartSet {
    dir: PARTIAL_DIR,
    prefix: "recipient-",
    unit: "recipient",
    collection: COLLECTION,
    units: "recipients",
};

/// What assembling the parts needs besides them (`interventions.partial/study.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StudySpec {
    study: StudyKind,
    config: InterventionConfig,
    policy: String,
}

/// Shard `shard` of the `kind` study of `cfg` with `policy`: runs the recipients it owns that
/// are not kept in `out` yet, keeping each as it finishes (see the module docs).
/// `policy_identity` is what else identifies the policy (a built-in's parameters), hashed with
/// the configuration. `on_recipient(done, owned)` counts kept recipients too.
///
/// # Errors
/// As [`crate::intervene::replacement_study`] / [`crate::intervene::restoration_study`];
/// [`HarnessError::Shard`] when `out` holds another shard, another configuration's shard or an
/// unsharded study; [`HarnessError::Partial`] when a file cannot be written.
pub fn run_shard(
    kind: StudyKind,
    cfg: &InterventionConfig,
    policy: &mut dyn MemoryPolicy,
    policy_identity: &impl Serialize,
    out: &Path,
    shard: Shard,
    on_recipient: &mut dyn FnMut(usize, usize),
) -> Result<ShardRun, HarnessError> {
    let task = prepare(cfg)?;
    let spec = StudySpec {
        study: kind,
        config: cfg.clone(),
        policy: policy.name(),
    };
    PARTS.run(
        (out, shard),
        (&spec, policy_identity),
        policy,
        cfg.cohort.episodes,
        &mut |i, policy| run_recipient(kind, cfg, &task, i, policy),
        on_recipient,
    )
}

/// Why the file at `path` is not recipient `job`'s part, or `None` when it is: the
/// [`roboaudit_shard::PartCheck`] that `roboaudit status` and `roboaudit merge` apply in each
/// shard folder, so a part [`finish_merged`] could not read is refused before the merge, naming
/// the shard's own file.
#[must_use]
pub fn part_problem(job: usize, path: &Path) -> Option<String> {
    PARTS.problem::<RecipientPart>(job, path)
}

/// The merge's finishing step for an intervention study (`roboaudit merge`, through
/// [`roboaudit_shard::merge_with`]): assembles the recipient parts merged into `merged` into
/// [`STUDY_FILE`] and [`REPORT_FILE`], the bytes an unsharded `memory intervene` writes, and
/// removes the parts.
///
/// # Errors
/// [`HarnessError::ForeignPartial`] naming a part or `study.json` that does not read, or a
/// missing recipient; [`HarnessError::Partial`] when a file cannot be written or removed.
pub fn finish_merged(merged: &Path) -> Result<(), HarnessError> {
    PARTS.finish(
        merged,
        "an intervention study",
        |s: &StudySpec| s.config.cohort.episodes,
        |spec, parts: Vec<RecipientPart>| {
            let study = assemble_study(spec.study, &spec.config, parts)?;
            crate::intervene_output::write_study(merged, &study, &spec.policy)
        },
    )
}
