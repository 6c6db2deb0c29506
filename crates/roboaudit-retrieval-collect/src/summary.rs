//! What a `retrieval collect` run did, in the lines the CLI prints after it.

use std::fmt::Write as _;

use crate::collect::CollectOutcome;
use roboaudit_shard::Shard;

impl CollectOutcome {
    /// The lines saying what this run did (each ending in a newline): executions resumed from
    /// an earlier run (when any), the library's acceptance counts, then either the command that
    /// comes next (`roboaudit merge` for a finished shard `shard`, `retrieval audit` for a
    /// complete run) or how far an unfinished run got. A finished shard that owned no part
    /// (fewer parts than shards) says so: it idled, and a smaller `--chunk` would have spread
    /// the run over every shard.
    #[must_use]
    pub fn summary(&self, shard: Option<Shard>) -> String {
        let dir = self.dir.display();
        let mut out = String::new();
        if self.resumed_from > 0 {
            let _ = writeln!(
                out,
                "resumed after {} of {} executions already in {dir}",
                self.resumed_from, self.total
            );
        }
        let l = &self.library;
        let _ = if l.reuse_rejected > 0 {
            // The two causes apart, so that this line and the policy own-base check's agree.
            writeln!(
                out,
                "library: {} experiences accepted of {} recorded ({} rejected in their own base scene: {} failed there, {} did)",
                l.pool,
                l.attempts,
                l.rejected,
                counted(
                    l.rejected - l.reuse_rejected.min(l.rejected),
                    "recording",
                    "recordings"
                ),
                counted(l.reuse_rejected, "trained policy", "trained policies")
            )
        } else {
            writeln!(
                out,
                "library: {} experiences accepted of {} recorded ({} rejected in their own base scene)",
                l.pool, l.attempts, l.rejected
            )
        };
        if let (Some(shard), true, 0) = (shard, self.complete, self.total) {
            let _ = writeln!(
                out,
                "note: shard {shard} owns no part: the run has fewer parts (of --chunk executions) \
                 than shards; a smaller --chunk spreads it over every shard"
            );
        }
        let _ = match (shard, self.complete) {
            (Some(shard), true) => writeln!(
                out,
                "shard {shard}: wrote its {} executions to {dir}; when every shard is done: roboaudit merge SHARD_DIR… --out DIR",
                self.total
            ),
            (None, true) => writeln!(
                out,
                "wrote {} executions to {dir}; audit with: roboaudit retrieval audit --run {dir} --structural structural --out {}",
                self.total,
                self.dir.join("audit").display()
            ),
            (_, false) => writeln!(
                out,
                "stopped after {} of {} executions in {dir}; rerun the same command to resume",
                self.done, self.total
            ),
        };
        out
    }
}

/// `n` and the noun in its number: "1 recording", "2 recordings".
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::LibraryStats;

    fn outcome(complete: bool, resumed_from: usize) -> CollectOutcome {
        CollectOutcome {
            dir: "runs/stack".into(),
            total: 120,
            done: if complete { 120 } else { 40 },
            resumed_from,
            complete,
            library: LibraryStats {
                pool: 4,
                attempts: 6,
                rejected: 2,
                rejection_rate: Some(2.0 / 6.0),
                reuse_rejected: 0,
            },
        }
    }

    #[test]
    fn rejections_by_the_policy_are_told_apart_from_failed_recordings() {
        let mut o = outcome(true, 0);
        o.library.rejected = 3;
        o.library.reuse_rejected = 2;
        assert!(o.summary(None).starts_with(
            "library: 4 experiences accepted of 6 recorded (3 rejected in their own base scene: 1 recording failed there, 2 trained policies did)\n"
        ));
    }

    #[test]
    fn each_ending_names_what_comes_next() {
        let library =
            "library: 4 experiences accepted of 6 recorded (2 rejected in their own base scene)\n";
        assert_eq!(
            outcome(true, 0).summary(None),
            format!(
                "{library}wrote 120 executions to runs/stack; audit with: roboaudit retrieval audit --run runs/stack --structural structural --out runs/stack/audit\n"
            )
        );
        let shard: Shard = "1/3".parse().unwrap();
        assert_eq!(
            outcome(true, 0).summary(Some(shard)),
            format!(
                "{library}shard 1/3: wrote its 120 executions to runs/stack; when every shard is done: roboaudit merge SHARD_DIR… --out DIR\n"
            )
        );
        assert_eq!(
            outcome(false, 30).summary(Some(shard)),
            format!(
                "resumed after 30 of 120 executions already in runs/stack\n{library}stopped after 40 of 120 executions in runs/stack; rerun the same command to resume\n"
            )
        );
        let idle = CollectOutcome {
            total: 0,
            done: 0,
            ..outcome(true, 0)
        };
        assert_eq!(
            idle.summary(Some(shard)),
            format!(
                "{library}note: shard 1/3 owns no part: the run has fewer parts (of --chunk executions) than shards; a smaller --chunk spreads it over every shard\nshard 1/3: wrote its 0 executions to runs/stack; when every shard is done: roboaudit merge SHARD_DIR… --out DIR\n"
            )
        );
        assert!(!idle.summary(None).contains("owns no part"));
    }
}
