//! The part files of a study sharded by unit (an intervention study's recipients, a natural
//! study's episodes): unit `i` is job `i` and is kept as `{dir}/{prefix}{i:06}.json`, written
//! atomically, beside `{dir}/study.json`, the description every shard shares. The running side
//! ([`PartSet::run`]) and the merge side ([`PartSet::finish`]) of both sharded studies.

use std::path::Path;

use roboaudit_shard::{JobFiles, Shard, ShardManifest, config_hash, write_atomic};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::HarnessError;
use crate::policy::MemoryPolicy;

/// Name of the shared description inside a part folder.
pub(crate) const SPEC_FILE: &str = "study.json";

/// A unit's part as a shard keeps it: it names the unit it holds.
pub(crate) trait UnitPart: Serialize + DeserializeOwned {
    /// The unit (recipient, episode) this part holds.
    fn unit(&self) -> usize;
}

/// Where a study's parts live and how each is named.
pub(crate) struct PartSet {
    /// The part folder inside a shard's output folder.
    pub dir: &'static str,
    /// File-name prefix of one unit's part.
    pub prefix: &'static str,
    /// What one unit is, in messages (`recipient`, `episode`).
    pub unit: &'static str,
    /// The collection's name in configuration hashes and shard manifests.
    pub collection: &'static str,
    /// The units in the shard manifest, plural (`recipients`, `episodes`).
    pub units: &'static str,
}

/// What one shard of a study holds after [`PartSet::run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardRun {
    /// Units (recipients, episodes) the shard owns.
    pub owned: usize,
    /// Of them, units kept by an earlier, interrupted run of this shard.
    pub resumed: usize,
}

/// Refuses an unsharded study's output folder that holds a shard of a sharded one (its result
/// would land among the shard's parts).
///
/// # Errors
/// [`HarnessError::Shard`] naming the shard the folder holds.
pub fn refuse_shard_folder(out: &Path) -> Result<(), HarnessError> {
    Ok(ShardManifest::claim(out, None)?)
}

fn json_bytes<T: Serialize>(path: &Path, value: &T) -> Result<Vec<u8>, HarnessError> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| HarnessError::partial(path, "serialize", e))?;
    bytes.push(b'\n');
    Ok(bytes)
}

impl PartSet {
    /// The job files of the shard manifest: one part per unit.
    pub(crate) fn files(&self) -> JobFiles {
        JobFiles {
            dir: self.dir.into(),
            prefix: self.prefix.into(),
            width: 6,
            suffix: ".json".into(),
            companions: Vec::new(),
        }
    }

    /// The shard manifest of shard `shard` of `total` units, its configuration hash over `spec`
    /// (the study's description), the policy's memory layout and chunk length, and
    /// `policy_identity` (what else identifies the policy).
    ///
    /// # Errors
    /// [`HarnessError::Shard`] when the identity cannot be hashed.
    fn manifest<S: Serialize, I: Serialize>(
        &self,
        spec: &S,
        policy: &dyn MemoryPolicy,
        policy_identity: &I,
        shard: Shard,
        total: usize,
    ) -> Result<ShardManifest, HarnessError> {
        #[derive(Serialize)]
        struct Identity<'a, S: Serialize, I: Serialize> {
            spec: &'a S,
            memory_spec: crate::policy::MemorySpec,
            chunk_len: usize,
            policy_identity: &'a I,
        }
        let identity = Identity {
            spec,
            memory_spec: policy.memory_spec(),
            chunk_len: policy.chunk_len(),
            policy_identity,
        };
        Ok(ShardManifest {
            schema: roboaudit_shard::SHARD_SCHEMA.into(),
            collection: self.collection.into(),
            config_hash: config_hash(self.collection, &identity)?,
            shard,
            total_jobs: total,
            job_files: self.files(),
            shared_files: vec![format!("{}/{SPEC_FILE}", self.dir)],
            unit: self.units.into(),
            total_units: total,
            units_per_job: 1,
        })
    }

    /// Claims `out` for shard `shard` of `total` units (its manifest: [`Self::manifest`] of
    /// `spec`, `policy` and `policy_identity`), writes `spec` once, then runs the units of the
    /// shard not kept yet with `job(i, policy)`, keeping each part as it finishes;
    /// `on_unit(done, owned)` counts kept units too. A kept part that is not unit `i`'s `P` (cut
    /// short, damaged, another unit's) is run again and replaced.
    ///
    /// # Errors
    /// [`HarnessError::Shard`] when the identity cannot be hashed, or `out` holds another shard
    /// or configuration, or (for a new shard) files no shard writes, such as a finished study;
    /// `job`'s errors; [`HarnessError::Partial`] when a file cannot be written.
    pub(crate) fn run<S: Serialize, I: Serialize, P: UnitPart>(
        &self,
        (out, shard): (&Path, Shard),
        (spec, policy_identity): (&S, &I),
        policy: &mut dyn MemoryPolicy,
        total: usize,
        job: &mut dyn FnMut(usize, &mut dyn MemoryPolicy) -> Result<P, HarnessError>,
        on_unit: &mut dyn FnMut(usize, usize),
    ) -> Result<ShardRun, HarnessError> {
        let manifest = self.manifest(spec, policy, policy_identity, shard, total)?;
        if ShardManifest::read(out)?.is_none() {
            self.refuse_other_files(out)?;
        }
        std::fs::create_dir_all(out)
            .map_err(|e| HarnessError::partial(out, "create the folder", e))?;
        ShardManifest::claim(out, Some(&manifest))?;
        let dir = out.join(self.dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| HarnessError::partial(&dir, "create the folder", e))?;
        let spec_path = dir.join(SPEC_FILE);
        if !spec_path.is_file() {
            let bytes = json_bytes(&spec_path, spec)?;
            write_atomic(&spec_path, &bytes)
                .map_err(|(what, e)| HarnessError::partial(&spec_path, what, e))?;
        }
        let done = self.files().present(out)?;
        let owned = shard.job_count(total);
        let (mut finished, mut resumed) = (0, 0);
        for i in shard.jobs(total) {
            if done.binary_search(&i).is_ok() && self.kept::<P>(out, i) {
                resumed += 1;
            } else {
                let part = job(i, policy)?;
                let path = out.join(self.files().relative(i));
                let bytes = json_bytes(&path, &part)?;
                write_atomic(&path, &bytes)
                    .map_err(|(what, e)| HarnessError::partial(&path, what, e))?;
            }
            finished += 1;
            on_unit(finished, owned);
        }
        Ok(ShardRun { owned, resumed })
    }

    /// Whether unit `i`'s kept part in `out` reads as unit `i`'s `P`.
    fn kept<P: UnitPart>(&self, out: &Path, i: usize) -> bool {
        std::fs::read(out.join(self.files().relative(i)))
            .ok()
            .is_some_and(|b| self.judge::<P>(i, &b).is_ok())
    }

    /// Refuses a folder for a new shard that holds anything but this study's part folder (a
    /// finished study, another command's output): the merge would not see it, and the shard's
    /// files would sit beside results they do not belong to.
    fn refuse_other_files(&self, out: &Path) -> Result<(), HarnessError> {
        let Ok(entries) = std::fs::read_dir(out) else {
            return Ok(());
        };
        let mut others: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name != self.dir)
            .collect();
        others.sort();
        match others.first() {
            None => Ok(()),
            Some(first) => Err(roboaudit_shard::ShardError::Conflict {
                path: out.display().to_string(),
                reason: format!(
                    "it holds {first}{}, which no shard of this study writes; give each shard an empty folder of its own",
                    if others.len() > 1 {
                        format!(" and {} more", others.len() - 1)
                    } else {
                        String::new()
                    }
                ),
            }
            .into()),
        }
    }

    /// The merge's finishing step of a study (`roboaudit merge`): reads the description and
    /// every unit's part from the merged folder `merged` ([`Self::read`]), has `write(spec,
    /// parts)` write the study's result into it, then removes the part folder.
    ///
    /// # Errors
    /// As [`Self::read`]; `write`'s errors; [`HarnessError::Partial`] when the part folder
    /// cannot be removed.
    pub(crate) fn finish<S: DeserializeOwned, P: UnitPart, T>(
        &self,
        merged: &Path,
        study: &str,
        units: impl Fn(&S) -> usize,
        write: impl FnOnce(S, Vec<P>) -> Result<T, HarnessError>,
    ) -> Result<(), HarnessError> {
        let (spec, parts) = self.read(merged, study, units)?;
        write(spec, parts)?;
        let dir = merged.join(self.dir);
        std::fs::remove_dir_all(&dir)
            .map_err(|e| HarnessError::partial(&dir, "remove the folder", e))
    }

    /// Reads the description and every unit's part from a merged folder, in unit order.
    /// `units(spec)` is the study's unit count; `study` names the study in messages (`an
    /// intervention study`).
    ///
    /// # Errors
    /// [`HarnessError::ForeignPartial`] naming a description or part that does not read, a
    /// missing unit, or a part holding another unit; [`HarnessError::Partial`] when a file cannot
    /// be read.
    fn read<S: DeserializeOwned, P: UnitPart>(
        &self,
        merged: &Path,
        study: &str,
        units: impl Fn(&S) -> usize,
    ) -> Result<(S, Vec<P>), HarnessError> {
        let spec_path = merged.join(self.dir).join(SPEC_FILE);
        let read =
            |path: &Path| std::fs::read(path).map_err(|e| HarnessError::partial(path, "read", e));
        let spec: S = serde_json::from_slice(&read(&spec_path)?).map_err(|e| {
            HarnessError::foreign(&spec_path, format!("it is not {study}'s description ({e})"))
        })?;
        let total = units(&spec);
        let done = self.files().present(merged)?;
        if let Some(i) = (0..total).find(|i| done.binary_search(i).is_err()) {
            return Err(HarnessError::foreign(
                &merged.join(self.files().relative(i)),
                format!(
                    "the {}'s part is missing; rerun the shard that owns it",
                    self.unit
                ),
            ));
        }
        let mut parts = Vec::with_capacity(total);
        for i in 0..total {
            let path = merged.join(self.files().relative(i));
            let part = self.judge::<P>(i, &read(&path)?).map_err(|why| {
                HarnessError::foreign(&path, format!("it {why}; delete it and rerun its shard"))
            })?;
            parts.push(part);
        }
        Ok((spec, parts))
    }

    /// Unit `i`'s part from its file's bytes, or why they are not it (a phrase after "it": `is
    /// not a recipient's part (…)`, `holds recipient 3, not 5`).
    fn judge<P: UnitPart>(&self, i: usize, bytes: &[u8]) -> Result<P, String> {
        let part: P = serde_json::from_slice(bytes)
            .map_err(|e| format!("is not {} {}'s part ({e})", article(self.unit), self.unit))?;
        let got = part.unit();
        if got == i {
            Ok(part)
        } else {
            Err(format!("holds {} {got}, not {i}", self.unit))
        }
    }

    /// The [`roboaudit_shard::PartCheck`] of this part set: why the file at `path` is not unit
    /// `job`'s part `P` (see [`Self::read`]), judged in the shard's own folder before a merge.
    pub(crate) fn problem<P: UnitPart>(&self, job: usize, path: &Path) -> Option<String> {
        match std::fs::read(path) {
            Err(e) => Some(format!("cannot be read ({e})")),
            Ok(bytes) => self.judge::<P>(job, &bytes).err(),
        }
    }
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}
