//! The lines `roboaudit status`, `roboaudit merge` and every sharded collection print about
//! shard folders (the CLI prints them; nothing is printed here).

use std::fmt::Write as _;
use std::path::Path;

use crate::merge::{Check, MergeOutcome, ShardStatus};
use crate::spec::Shard;

impl ShardStatus {
    /// One line (no newline): the shard, its folder, jobs and units done of those it owns (a
    /// damaged job file not counted), `(complete)` when all are, damaged job files and job
    /// files of other shards found there, then the collection
    /// and the first 19 characters of its configuration hash in brackets.
    #[must_use]
    pub fn line(&self) -> String {
        let m = &self.manifest;
        let mut line = format!(
            "shard {:>7}  {}: {} of {} jobs, {} of {} {}{}",
            m.shard.to_string(),
            self.dir.display(),
            self.done_jobs.len() - self.damaged_jobs.len(),
            self.owned_jobs,
            self.done_units,
            self.owned_units,
            m.unit,
            if self.complete() { " (complete)" } else { "" }
        );
        if !self.damaged_jobs.is_empty() {
            let _ = write!(
                line,
                "; {} damaged job file(s) (empty or cut short)",
                self.damaged_jobs.len()
            );
        }
        if !self.stray_jobs.is_empty() {
            let _ = write!(
                line,
                "; {} job file(s) of other shards",
                self.stray_jobs.len()
            );
        }
        let hash = &m.config_hash;
        let _ = write!(
            line,
            "  [{} {}]",
            m.collection,
            hash.get(..19).unwrap_or(hash)
        );
        line
    }
}

/// [`ShardStatus::line`] of each folder, each ending in a newline.
#[must_use]
pub fn status_lines(statuses: &[ShardStatus]) -> String {
    statuses.iter().map(|s| s.line() + "\n").collect()
}

impl Check {
    /// What `roboaudit status` prints: the status lines, the folders complete and units done,
    /// then whether `roboaudit merge` would accept the folders and, if not, its refusal; each
    /// line ends in a newline.
    #[must_use]
    pub fn summary(&self) -> String {
        let statuses = &self.shards;
        let done: usize = statuses.iter().map(|s| s.done_units).sum();
        let total: usize = statuses.iter().map(|s| s.owned_units).sum();
        let complete = statuses.iter().filter(|s| s.complete()).count();
        let mut out = status_lines(statuses);
        let _ = writeln!(
            out,
            "{complete} of {} shard folders complete; {done} of {total} units done in the folders given",
            statuses.len()
        );
        if self.mergeable() {
            out.push_str("ready to merge: roboaudit merge would accept these folders\n");
        } else {
            let _ = writeln!(
                out,
                "not mergeable: roboaudit merge would refuse these folders:{}",
                self.refusal()
            );
        }
        out
    }
}

impl MergeOutcome {
    /// What `roboaudit merge` prints: the status lines, the file the collection assembled
    /// (`assembled`, relative to the merged folder, when it has one), then the counts of files
    /// merged; each line ends in a newline.
    #[must_use]
    pub fn summary(&self, assembled: Option<&str>) -> String {
        let mut out = status_lines(&self.shards);
        if let Some(file) = assembled {
            let _ = writeln!(out, "assembled {}", self.out.join(file).display());
        }
        let _ = writeln!(
            out,
            "merged {} shards ({} job files, {} shared files) into {}",
            self.shards.len(),
            self.jobs,
            self.shared,
            self.out.display()
        );
        out
    }
}

/// What a shard run did, in the words every sharded collection prints (no newline): `owned` of
/// `total` `unit` kept in `out`, `resumed` of them from an earlier run, the run's `seconds`,
/// and the merge to run next (`merge_note`, e.g. what the merge does besides, appended in
/// parentheses).
#[must_use]
pub fn shard_done_line(
    shard: Shard,
    (owned, total, unit): (usize, usize, &str),
    out: &Path,
    resumed: usize,
    seconds: f64,
    merge_note: Option<&str>,
) -> String {
    format!(
        "shard {shard}: {owned} of {total} {unit} in {} ({resumed} resumed) in {seconds:.1} s; when every shard is done: roboaudit merge SHARD_DIR… --out DIR{}",
        out.display(),
        merge_note.map_or_else(String::new, |n| format!(" ({n})"))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_done_line_names_the_merge_and_its_note() {
        let shard: Shard = "2/4".parse().unwrap();
        assert_eq!(
            shard_done_line(
                shard,
                (5, 20, "pairs"),
                Path::new("s2"),
                1,
                3.04,
                Some("assembles records.parquet")
            ),
            "shard 2/4: 5 of 20 pairs in s2 (1 resumed) in 3.0 s; when every shard is done: roboaudit merge SHARD_DIR… --out DIR (assembles records.parquet)"
        );
    }
}
