//! The fixed execution order: every (experience, query scene, seed) with the experience outermost,
//! then every experience on its own base scene once per seed. Row `j` of the log is job `j`, so a
//! resumed run continues exactly where the last complete part ended.

use crate::config::CollectConfig;
use crate::seeding::mix;

/// Where a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Query scene index.
    Query(usize),
    /// The experience's own base scene.
    OwnBase,
}

/// One execution to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Experience index in library order.
    pub experience: usize,
    /// Scene.
    pub place: Place,
    /// Seed index, `0..seeds` (the log's `seed` column).
    pub seed: usize,
}

impl Job {
    /// Job `j` of `config` (`j < config.total_executions()`).
    pub fn at(config: &CollectConfig, j: usize) -> Job {
        let (n, k) = (config.scenes, config.seeds);
        let cross = config.library * n * k;
        if j < cross {
            Job {
                experience: j / (n * k),
                place: Place::Query((j / k) % n),
                seed: j % k,
            }
        } else {
            let r = j - cross;
            Job {
                experience: r / k,
                place: Place::OwnBase,
                seed: r % k,
            }
        }
    }

    /// Episode seed. In a query scene it depends on (scene, seed) only, so every experience meets the
    /// same friction and actuation noise there (common random numbers across the library).
    pub fn episode_seed(&self, master: u64) -> u64 {
        match self.place {
            Place::Query(s) => mix(master, "query", (s as u64) << 20 | self.seed as u64),
            Place::OwnBase => mix(
                master,
                "own_base",
                (self.experience as u64) << 20 | self.seed as u64,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_order_covers_every_cell_once() {
        let c = CollectConfig {
            library: 3,
            scenes: 4,
            seeds: 2,
            ..CollectConfig::default()
        };
        let jobs: Vec<Job> = (0..c.total_executions()).map(|j| Job::at(&c, j)).collect();
        assert_eq!(jobs.len(), 3 * 5 * 2);
        assert_eq!(
            jobs[0],
            Job {
                experience: 0,
                place: Place::Query(0),
                seed: 0
            }
        );
        assert_eq!(
            jobs[3],
            Job {
                experience: 0,
                place: Place::Query(1),
                seed: 1
            }
        );
        assert_eq!(
            jobs[24],
            Job {
                experience: 0,
                place: Place::OwnBase,
                seed: 0
            }
        );
        let mut keys: Vec<_> = jobs
            .iter()
            .map(|j| (j.experience, format!("{:?}", j.place), j.seed))
            .collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 30);
    }
}
