//! `I/N`: which jobs of a collection one process runs.

use crate::error::{Result, ShardError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count`: the jobs `j` with `j mod count = index`. Round-robin rather than
/// contiguous blocks, so that jobs whose cost drifts along the job order (experience outermost,
/// own-base executions last) spread evenly over the shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// 0-based shard index, `< count` (a Slurm array `0-(N-1)` gives it as `SLURM_ARRAY_TASK_ID`).
    pub index: usize,
    /// Number of shards, ≥ 1.
    pub count: usize,
}

impl Shard {
    /// The single shard of an unsharded run (`0/1`).
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Shard `index` of `count`.
    ///
    /// # Errors
    /// [`ShardError::InvalidSpec`] when `count` is 0 or `index ≥ count`.
    pub fn new(index: usize, count: usize) -> Result<Shard> {
        let bad = |reason: &str| ShardError::InvalidSpec {
            given: format!("{index}/{count}"),
            reason: reason.into(),
        };
        if count == 0 {
            return Err(bad("the shard count N must be at least 1"));
        }
        if index >= count {
            return Err(bad("the index I must be below N (indices are 0-based)"));
        }
        Ok(Shard { index, count })
    }

    /// Whether job `job` belongs to this shard (`job mod count = index`).
    pub fn owns(&self, job: usize) -> bool {
        job % self.count == self.index
    }

    /// The jobs of `0..total` this shard runs, in job order.
    pub fn jobs(&self, total: usize) -> impl Iterator<Item = usize> + use<> {
        (self.index..total).step_by(self.count)
    }

    /// How many of `0..total` this shard runs.
    pub fn job_count(&self, total: usize) -> usize {
        total.saturating_sub(self.index).div_ceil(self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    /// Parses `I/N` (0-based `I`, e.g. `0/3`, `2/3`).
    fn from_str(s: &str) -> Result<Shard> {
        let bad = |reason: &str| ShardError::InvalidSpec {
            given: s.into(),
            reason: reason.into(),
        };
        let (i, n) = s.split_once('/').ok_or_else(|| bad("no '/'"))?;
        let i = i
            .trim()
            .parse::<usize>()
            .map_err(|_| bad("I is not a non-negative integer"))?;
        let n = n
            .trim()
            .parse::<usize>()
            .map_err(|_| bad("N is not a positive integer"))?;
        Shard::new(i, n).map_err(|_| {
            if n == 0 {
                bad("the shard count N must be at least 1")
            } else {
                bad("the index I must be below N (indices are 0-based)")
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_jobs_whatever_n() {
        for n in 1..=9 {
            let mut seen = vec![0u8; 23];
            for i in 0..n {
                let s = Shard::new(i, n).unwrap();
                let jobs: Vec<usize> = s.jobs(23).collect();
                assert_eq!(jobs.len(), s.job_count(23));
                assert!(jobs.iter().all(|&j| s.owns(j)));
                for j in jobs {
                    seen[j] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "n = {n}: {seen:?}");
        }
        assert_eq!(
            Shard::new(2, 3).unwrap().jobs(8).collect::<Vec<_>>(),
            [2, 5]
        );
        assert_eq!(Shard::new(6, 7).unwrap().job_count(5), 0);
    }

    #[test]
    fn parses_i_over_n_and_refuses_the_rest() {
        assert_eq!(
            "2/3".parse::<Shard>().unwrap(),
            Shard { index: 2, count: 3 }
        );
        assert_eq!("0/1".parse::<Shard>().unwrap(), Shard::WHOLE);
        for bad in ["3/3", "1/0", "3", "-1/3", "a/3", "1/b", ""] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains(&format!("\"{bad}\"")), "{e}");
        }
        assert!(
            "3/3"
                .parse::<Shard>()
                .unwrap_err()
                .to_string()
                .contains("0-based")
        );
    }
}
