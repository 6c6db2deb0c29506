//! The checks and the summary of `memory collect` around [`super::collect_request`]: counts,
//! action seeds from a plan, routes, an output folder that holds no records, and the lines a
//! finished collection reports.

use super::policy::{PolicySpec, served_field};
use super::{CollectRequest, RequestError, refuse_existing_records, refuse_occupied};
use crate::collect::{CollectConfig, Collection};
use crate::output::{RECORDS_FILE, write_collection};
use crate::pairs::Route;
use crate::resume::PARTIAL_DIR;
use crate::served::ServedPolicy;
use roboaudit_memory::Plan;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Largest `--pairs` and `--episodes`: far beyond any run that finishes (each pair or episode
/// is several simulated episodes), small enough that the products of the counts cannot overflow.
pub const MAX_UNITS: usize = 100_000;

/// Largest number of action seeds (`--seeds`): every seed multiplies the simulated episodes.
pub const MAX_SEEDS: usize = 1_000;

/// Default number of action seeds of `memory collect` without a plan's own.
pub const DEFAULT_SEEDS: usize = 3;

/// Refuses a count outside `1..=max`, naming the option `flag`, before any work.
///
/// # Errors
/// [`RequestError::Usage`]: `{flag} must be in 1..={max}, got {value}`.
pub fn check_count(flag: &str, value: usize, max: usize) -> Result<(), RequestError> {
    if !(1..=max).contains(&value) {
        return Err(RequestError::Usage(format!(
            "{flag} must be in 1..={max}, got {value}"
        )));
    }
    Ok(())
}

/// Checks the harness settings a collection and a calibration share before the configuration
/// is built: `pairs` in 1..=[`MAX_UNITS`] and the expert's `skill` in [0, 1].
///
/// # Errors
/// [`RequestError::Usage`] naming `--pairs` or `--expert-skill`.
pub fn check_harness(pairs: usize, skill: f64) -> Result<(), RequestError> {
    check_count("--pairs", pairs, MAX_UNITS)?;
    if !(0.0..=1.0).contains(&skill) {
        return Err(RequestError::Usage(
            "--expert-skill must be in [0, 1]".into(),
        ));
    }
    Ok(())
}

/// The action seeds of a collection: the plan's registered seeds when it has any (then `given`
/// must be absent or equal their number), else `0..given` (default [`DEFAULT_SEEDS`], at most
/// [`MAX_SEEDS`]).
///
/// # Errors
/// [`RequestError::Usage`] for a count out of range, a count that disagrees with the plan, or
/// a negative plan seed.
pub fn action_seeds(given: Option<usize>, plan: Option<&Plan>) -> Result<Vec<u64>, RequestError> {
    let registered: &[i64] = plan.map_or(&[], |p| &p.seeds);
    if registered.is_empty() {
        let n = given.unwrap_or(DEFAULT_SEEDS);
        check_count("--seeds", n, MAX_SEEDS)?;
        return Ok((0..n as u64).collect());
    }
    if let Some(n) = given.filter(|&n| n != registered.len()) {
        return Err(RequestError::Usage(format!(
            "--seeds {n} disagrees with the plan's {} registered seeds; drop --seeds",
            registered.len()
        )));
    }
    registered
        .iter()
        .map(|&s| {
            u64::try_from(s).map_err(|_| RequestError::Usage(format!("plan seed {s} is negative")))
        })
        .collect()
}

impl CollectRequest {
    /// A checked collection of `config` under `plan` (its hash goes into every record) over
    /// `routes` (names, `left,right` for the irrelevant-history control) into `out`, with the
    /// policy `spec`: the configuration is validated, `out` must hold no records file nor only
    /// other files, and a served policy cannot be sharded.
    ///
    /// # Errors
    /// [`RequestError::Harness`] for a bad route or configuration
    /// ([`CollectConfig::validate`]); [`RequestError::Usage`] for existing records, a folder of
    /// other files ([`refuse_occupied`]) or a sharded served policy (its manifest records its
    /// server's latency, which differs per shard).
    pub fn new(
        mut config: CollectConfig,
        plan: Option<&Plan>,
        routes: &[String],
        out: PathBuf,
        shard: Option<roboaudit_shard::Shard>,
        spec: &PolicySpec,
    ) -> Result<CollectRequest, RequestError> {
        config.plan_hash = plan.map(Plan::hash);
        config.routes = routes
            .iter()
            .map(|r| Route::parse(r))
            .collect::<Result<_, _>>()?;
        config.validate()?;
        refuse_existing_records(&out)?;
        refuse_occupied(&out)?;
        if spec.is_served() && shard.is_some() {
            return Err(RequestError::Usage(
                "--shard takes built-in policies only: a served policy's manifest records its server's latency, which differs per shard, so the merge could not equal an unsharded run; collect it unsharded (it resumes)".into(),
            ));
        }
        Ok(CollectRequest { config, out, shard })
    }

    /// Routed pairs the whole collection runs (saturating: only a display).
    pub fn total_pairs(&self) -> usize {
        self.config
            .pairs
            .saturating_mul(self.config.routes.len().max(1))
    }

    /// `resumed R of P pairs kept in OUT/records.partial` when an interrupted run had kept pairs.
    pub fn resumed_line(&self, resumed: usize) -> Option<String> {
        (resumed > 0).then(|| {
            format!(
                "resumed {resumed} of {} pairs kept in {}",
                self.config.pairs,
                self.out.join(PARTIAL_DIR).display()
            )
        })
    }

    /// Writes the whole collection `run` ([`write_collection`], with a served policy's
    /// manifest field) and returns its summary: policy, task, pairs × seeds, exclusions (each
    /// with its reason), the served policy's latency, the files written; `seconds` is the run's
    /// wall time.
    ///
    /// # Errors
    /// [`RequestError::Harness`] when a file cannot be written.
    pub fn write_whole(
        &self,
        run: &Collection,
        served: Option<&ServedPolicy>,
        seconds: f64,
    ) -> Result<String, RequestError> {
        let manifest_path = write_collection(&self.out, run, served_field(served))?;
        Ok(collect_summary(
            run,
            &self.config,
            seconds,
            served,
            (&self.out.join(RECORDS_FILE), &manifest_path),
        ))
    }
}

/// The lines [`CollectRequest::write_whole`] returns, each ending in a newline.
fn collect_summary(
    run: &Collection,
    cfg: &CollectConfig,
    seconds: f64,
    served: Option<&ServedPolicy>,
    (records, manifest): (&Path, &Path),
) -> String {
    let m = &run.manifest;
    let mut s = format!(
        "{} on {}: {} pairs × {} seeds, {} excluded (never replaced), in {seconds:.1} s\n",
        m.policy,
        cfg.task.name(),
        m.n_pairs,
        cfg.action_seeds.len(),
        m.n_excluded
    );
    for e in &m.excluded {
        let _ = writeln!(s, "  excluded {}: {}", e.pair_id, e.reason);
    }
    if let Some(p) = served {
        let _ = writeln!(s, "{}", super::policy::latency_line(p));
    }
    let _ = writeln!(s, "wrote {} and {}", records.display(), manifest.display());
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::{MANIFEST_SCHEMA, Manifest, PairExclusion};
    use crate::policy::MemorySpec;

    #[test]
    fn the_summary_names_policy_counts_exclusions_and_files() {
        let config = CollectConfig {
            action_seeds: vec![0, 1, 2],
            ..CollectConfig::default()
        };
        let run = Collection {
            records: Vec::new(),
            manifest: Manifest {
                schema: MANIFEST_SCHEMA.into(),
                policy: "bank".into(),
                memory_spec: MemorySpec {
                    components: Vec::new(),
                },
                chunk_len: 12,
                config: config.clone(),
                n_pairs: 2,
                n_excluded: 1,
                excluded: vec![PairExclusion {
                    pair_id: "p0001".into(),
                    reason: "present check failed".into(),
                }],
                max_hidden_delta: [0.0, 0.0],
                world_physics_mismatches: 0,
            },
        };
        let files = (
            Path::new("out/records.parquet"),
            Path::new("out/manifest.json"),
        );
        assert_eq!(
            collect_summary(&run, &config, 1.5, None, files),
            "bank on put_back: 2 pairs × 3 seeds, 1 excluded (never replaced), in 1.5 s\n\
             \x20 excluded p0001: present check failed\n\
             wrote out/records.parquet and out/manifest.json\n"
        );
    }

    #[test]
    fn counts_are_checked_inclusively() {
        assert!(check_count("--pairs", 1, 3).is_ok());
        assert!(check_count("--pairs", 3, 3).is_ok());
        let err = check_count("--pairs", 0, 3).unwrap_err();
        assert_eq!(err.to_string(), "--pairs must be in 1..=3, got 0");
        assert!(check_count("--pairs", 4, 3).is_err());
        assert!(check_harness(1, 1.0).is_ok());
        assert!(check_harness(1, 1.01).is_err());
    }

    #[test]
    fn a_plans_seeds_take_precedence() {
        assert_eq!(action_seeds(None, None).unwrap(), vec![0, 1, 2]);
        assert_eq!(action_seeds(Some(1), None).unwrap(), vec![0]);
        assert!(action_seeds(Some(MAX_SEEDS + 1), None).is_err());
        let plan = Plan {
            seeds: vec![5, 9],
            ..Plan::default()
        };
        assert_eq!(action_seeds(None, Some(&plan)).unwrap(), vec![5, 9]);
        assert_eq!(action_seeds(Some(2), Some(&plan)).unwrap(), vec![5, 9]);
        let err = action_seeds(Some(3), Some(&plan)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--seeds 3 disagrees with the plan's 2 registered seeds; drop --seeds"
        );
        let negative = Plan {
            seeds: vec![-1],
            ..Plan::default()
        };
        assert_eq!(
            action_seeds(None, Some(&negative)).unwrap_err().to_string(),
            "plan seed -1 is negative"
        );
    }
}
