//! What to collect: task, reuse mechanism, library pool, query scenes, seeds.

use crate::error::{CollectError, Result};
use roboaudit_testbed::{Retarget, TaskKind};
use serde::{Deserialize, Serialize};

/// Tasks of the retrieval audit (seed 000 §II: Stack and Door).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditTask {
    /// Put the red block on the blue block.
    Stack,
    /// Press the latch lever and push the spring-loaded door open.
    Door,
}

impl AuditTask {
    /// Parses `stack` or `door`.
    ///
    /// # Errors
    /// [`CollectError::InvalidConfig`] listing the valid names.
    pub fn parse(s: &str) -> Result<AuditTask> {
        match s {
            "stack" => Ok(AuditTask::Stack),
            "door" => Ok(AuditTask::Door),
            other => Err(CollectError::InvalidConfig(format!(
                "unknown task \"{other}\" (valid: stack, door)"
            ))),
        }
    }

    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            AuditTask::Stack => "stack",
            AuditTask::Door => "door",
        }
    }

    /// The testbed task.
    pub fn kind(self) -> TaskKind {
        match self {
            AuditTask::Stack => TaskKind::Stack,
            AuditTask::Door => TaskKind::Door,
        }
    }
}

/// How a stored experience is reused in a query scene (seed 000 §II). Replay runs in this crate;
/// Policy and Policy+DR need trained image policies, built by `roboaudit-retrieval-learned` and
/// run through [`crate::collect::collect_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// Open-loop replay of the stored path moved with the first manipulated object
    /// ([`Retarget::FirstAnchor`]): camera-independent, layout-sensitive.
    Replay,
    /// A behaviour-cloned closed-loop image policy per experience, trained on its own
    /// demonstration (`roboaudit-retrieval-learned`): camera-dependent.
    Policy,
    /// Policy trained on its demonstration and its re-runs under domain randomization of
    /// appearance (and, per task, layout): `policy-dr` in files and on the command line.
    #[serde(rename = "policy-dr")]
    PolicyDr,
}

impl Mechanism {
    /// Parses `replay`, `policy` or `policy-dr`.
    ///
    /// # Errors
    /// [`CollectError::InvalidConfig`] listing the valid names.
    pub fn parse(s: &str) -> Result<Mechanism> {
        match s {
            "replay" => Ok(Mechanism::Replay),
            "policy" => Ok(Mechanism::Policy),
            "policy-dr" => Ok(Mechanism::PolicyDr),
            other => Err(CollectError::InvalidConfig(format!(
                "unknown mechanism \"{other}\" (valid: replay, policy, policy-dr)"
            ))),
        }
    }

    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Replay => "replay",
            Mechanism::Policy => "policy",
            Mechanism::PolicyDr => "policy-dr",
        }
    }

    /// The retargeting of Replay ([`Retarget::FirstAnchor`]; also what the library's recordings
    /// would replay with under the learned mechanisms).
    pub fn retarget(self) -> Retarget {
        Retarget::FirstAnchor
    }
}

/// Settings of one collection. Same config gives the same run folder, byte for byte, whatever the
/// thread count and however often the run was interrupted and resumed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectConfig {
    /// Task.
    pub task: AuditTask,
    /// Reuse mechanism.
    pub mechanism: Mechanism,
    /// Pool size: accepted experiences in library order (nested libraries are its prefixes), 1..=500.
    pub library: usize,
    /// Query scenes, 3..=400: 40 % appearance-perturbed, 40 % layout-perturbed, the rest fresh
    /// (40 gives the paper's 16/16/8).
    pub scenes: usize,
    /// Execution seeds per (experience, scene) cell, 1..=100.
    pub seeds: usize,
    /// Master seed of scenes, demonstrator styles and execution noise.
    pub seed: u64,
    /// Executions per written part file (≥ 1). Part boundaries are fixed multiples of it, so a
    /// resumed run writes the same parts as an uninterrupted one.
    pub chunk: usize,
}

impl Default for CollectConfig {
    /// The paper-scale Stack Replay configuration: 50 experiences, 40 scenes, 5 seeds.
    fn default() -> Self {
        CollectConfig {
            task: AuditTask::Stack,
            mechanism: Mechanism::Replay,
            library: 50,
            scenes: 40,
            seeds: 5,
            seed: 0,
            chunk: 500,
        }
    }
}

/// Numbers of appearance, layout and fresh query scenes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SceneSplit {
    /// Appearance-perturbed queries.
    pub appearance: usize,
    /// Layout-perturbed queries.
    pub layout: usize,
    /// Fresh queries.
    pub fresh: usize,
}

impl CollectConfig {
    /// Checks every field.
    ///
    /// # Errors
    /// [`CollectError::InvalidConfig`] naming the first field out of range.
    pub fn check(&self) -> Result<()> {
        let bad = |m: String| Err(CollectError::InvalidConfig(m));
        if !(1..=500).contains(&self.library) {
            return bad(format!("library must be in 1..=500, got {}", self.library));
        }
        if !(3..=400).contains(&self.scenes) {
            return bad(format!("scenes must be in 3..=400, got {}", self.scenes));
        }
        if !(1..=100).contains(&self.seeds) {
            return bad(format!("seeds must be in 1..=100, got {}", self.seeds));
        }
        if self.chunk == 0 {
            return bad("chunk must be >= 1".into());
        }
        Ok(())
    }

    /// The query split: `round(0.4 n)` appearance, `round(0.4 n)` layout, the rest fresh.
    pub fn split(&self) -> SceneSplit {
        let appearance = (self.scenes * 2).div_ceil(5).min(self.scenes);
        let layout = ((self.scenes * 2).div_ceil(5)).min(self.scenes - appearance);
        SceneSplit {
            appearance,
            layout,
            fresh: self.scenes - appearance - layout,
        }
    }

    /// Total executions: every (experience, query scene, seed) plus every experience on its own base
    /// scene once per seed.
    pub fn total_executions(&self) -> usize {
        self.library * (self.scenes + 1) * self.seeds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_split_and_totals() {
        let c = CollectConfig::default();
        assert_eq!(
            c.split(),
            SceneSplit {
                appearance: 16,
                layout: 16,
                fresh: 8
            }
        );
        assert_eq!(c.total_executions(), 10_250);
        let small = CollectConfig {
            scenes: 3,
            ..c.clone()
        };
        let s = small.split();
        assert_eq!(s.appearance + s.layout + s.fresh, 3);
        assert!(s.appearance >= 1 && s.layout >= 1);
        assert!(CollectConfig { seeds: 0, ..c }.check().is_err());
        assert!(AuditTask::parse("push").is_err());
    }
}
