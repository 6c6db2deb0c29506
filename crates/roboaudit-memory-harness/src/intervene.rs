//! Native-rollout memory interventions (SPEC.md §2; seed 002 §III-D, §IV-C).
//!
//! Every episode plays a natural history with the expert up to the outcome-blind lift event (the
//! audited present of the task), then hands control to the policy, which runs closed loop —
//! observing every packet into its memory, one chunk per query — until success or the step limit.
//!
//! - History replacement at the event ([`Replacement`]): the memory is replaced by one rebuilt
//!   from the recipient's own history, by a donor history with the same target, by a donor with
//!   the opposite target, or cleared (it then refills from post-clear observations, a fresh
//!   anchor included). Read out: official success (the recipient's own target) and the committed
//!   target (the tray nearest the block at the end, when within 5 cm), with the first direction
//!   (the tray the first chunk brought the block closest to, by reduction) reported separately.
//! - Restoration after a fault ([`Restoration`]): the bank is cleared at the event, the policy
//!   runs `fault_chunks` chunks with it, then at the next query nothing is restored, only the
//!   protected anchor is restored from the pre-fault memory, or the whole bank is rebuilt from
//!   the full observed history. Read out: official success. A policy whose memory declares no
//!   `anchor` component runs `none` and `full` only ([`restoration_conditions`]); for a
//!   recurrent policy `full` is hidden-state restoration.
//!
//! Every rate carries a layout-stratified bootstrap interval ([`crate::intervals`]).

use roboaudit_testbed::{CompiledScene, Episode, EpisodeConfig};
use roboaudit_types::seed::splitmix64;

use crate::bank::ANCHOR;
use crate::error::HarnessError;
use crate::execute::tray_distance;
use crate::intervals::study_intervals;
use crate::observe::observe;
use crate::pairs::{HistoryPlan, enter_world, run_history};
use crate::policy::{ACTION_DIM, MemoryPolicy, MemoryState, Observation, check_chunk};
use crate::tasks::MemoryTask;
pub use roboaudit_memory::interventions::{
    CohortSettings, ConditionSummary, Continuation, InterventionConfig, InterventionStudy,
    Replacement, Restoration,
};

/// One prepared recipient: its scene, own history and donors.
struct Recipient {
    id: String,
    stratum: String,
    compiled: CompiledScene,
    own: usize,
    own_origins: Vec<usize>,
    opposite: usize,
    histories: [crate::pairs::History; 3],
}

/// Builds recipient `i`: own history, a same-target donor (another episode seed) and an
/// opposite-target donor. `None` when a history does not reach the event (counted by callers).
fn recipient(
    cfg: &InterventionConfig,
    task: &MemoryTask,
    i: usize,
) -> Result<Option<Recipient>, HarnessError> {
    let id = format!("e{i:03}");
    let level = cfg.cohort.layout_levels[i % cfg.cohort.layout_levels.len().max(1)];
    let scene = task.scene(
        &id,
        level,
        splitmix64(cfg.cohort.seed ^ splitmix64(i as u64 + 7)),
    )?;
    let compiled = CompiledScene::new(&scene, 64)?;
    let origins = task.origins(i);
    let own = task.branch(&origins[0]);
    let opposite = task.branch(&origins[1]);
    let how = HistoryPlan {
        obs_every: cfg.cohort.obs_every,
        expert: roboaudit_testbed::ExpertParams::default(),
        route: None,
    };
    let seed = splitmix64(cfg.cohort.seed ^ splitmix64(i as u64 + 0xd0));
    let runs = [
        (seed, &origins[0]),
        (splitmix64(seed), &origins[0]),
        (seed, &origins[1]),
    ];
    let mut hs = Vec::with_capacity(3);
    for (s, o) in runs {
        match run_history(&compiled, task, s, o, &how, None)? {
            Some(h) => hs.push(h),
            None => return Ok(None),
        }
    }
    let histories: [crate::pairs::History; 3] = hs
        .try_into()
        .map_err(|_| HarnessError::InvalidConfig("history count".into()))?;
    Ok(Some(Recipient {
        id,
        stratum: format!("level{level}"),
        compiled,
        own,
        own_origins: origins[0].clone(),
        opposite,
        histories,
    }))
}

fn memory_of(
    policy: &mut dyn MemoryPolicy,
    obs: &[Observation],
) -> Result<MemoryState, HarnessError> {
    policy.reset();
    for o in obs {
        policy.observe(o)?;
    }
    policy.memory()
}

/// An intervention at a query boundary: (query index, policy, observations so far).
pub(crate) type Hook<'a> =
    dyn FnMut(usize, &mut dyn MemoryPolicy, &[Observation]) -> Result<(), HarnessError> + 'a;

/// Closed-loop continuation from the event, until `task` is accomplished
/// ([`MemoryTask::accomplished`]) or the step limit; `hook(c, policy, observed)` runs before query
/// `c` (interventions at query boundaries) and sees every observation made so far. Returns
/// official success, the committed target and the first direction (see the module docs); the
/// natural episodes ([`crate::natural`]) continue the same way, without a hook.
pub(crate) fn continue_closed_loop(
    ep: &mut Episode,
    task: &MemoryTask,
    policy: &mut dyn MemoryPolicy,
    action_seed: u64,
    hook: &mut Hook<'_>,
) -> Result<(bool, Option<usize>, Option<usize>), HarnessError> {
    // The branch candidates of every packet: the trays empty at the event, fixed for the whole
    // continuation (all three on put_back and rearrange; on swap blue already rests in red's
    // origin, which is no destination for red).
    let candidates = crate::natural::empty_trays(ep);
    let n_trays = ep.scene().layout.trays.len();
    let block = |ep: &Episode| {
        ep.world()
            .block_pose(0)
            .map_or([f64::NAN; 2], |p| [p.pos[0], p.pos[1]])
    };
    let start = block(ep);
    let mut first = None;
    let mut observed = Vec::new();
    let mut c = 0usize;
    let mut success = task.accomplished(ep);
    while !(success || ep.done()) {
        let obs = observe(ep, None, candidates.clone())?;
        hook(c, policy, &observed)?;
        policy.observe(&obs)?;
        observed.push(obs.clone());
        let chunk = policy.act(&obs, action_seed.wrapping_add(c as u64))?;
        check_chunk(policy, &chunk)?;
        for a in chunk.values.chunks(ACTION_DIM) {
            let v: Vec<f64> = a.iter().map(|&x| f64::from(x)).collect();
            ep.step(&roboaudit_testbed::Action::from_slice(&v)?)?;
            success = task.accomplished(ep);
            if success || ep.done() {
                break;
            }
        }
        if c == 0 {
            let now = block(ep);
            first = (0..n_trays)
                .map(|t| (t, tray_distance(ep, start, t) - tray_distance(ep, now, t)))
                .filter(|(_, d)| d.is_finite())
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(t, _)| t);
        }
        c += 1;
    }
    let end = block(ep);
    let committed = (0..n_trays)
        .map(|t| (t, tray_distance(ep, end, t)))
        .filter(|(_, d)| *d <= 0.05)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(t, _)| t);
    Ok((success, committed, first))
}

/// [`continue_closed_loop`] without an intervention: the continuation of a replaced history
/// and of a natural episode.
pub(crate) fn continue_unhooked(
    ep: &mut Episode,
    task: &MemoryTask,
    policy: &mut dyn MemoryPolicy,
    action_seed: u64,
) -> Result<(bool, Option<usize>, Option<usize>), HarnessError> {
    continue_closed_loop(ep, task, policy, action_seed, &mut |_, _, _| Ok(()))
}

fn fresh_episode(r: &Recipient, task: &MemoryTask) -> Result<Episode, HarnessError> {
    let cfg = EpisodeConfig {
        memory_targets: Some(r.own_origins.clone()),
        ..EpisodeConfig::default()
    };
    let mut ep = Episode::new(&r.compiled, task.task(), &cfg)?;
    enter_world(&mut ep, &r.histories[0].present, &r.own_origins)?;
    Ok(ep)
}

fn summarize(names: &[&str], cs: &[Continuation]) -> Vec<ConditionSummary> {
    names
        .iter()
        .map(|&name| {
            let of: Vec<&Continuation> = cs.iter().filter(|c| c.condition == name).collect();
            let count = |f: &dyn Fn(&Continuation) -> bool| of.iter().filter(|c| f(c)).count();
            ConditionSummary {
                condition: name.to_owned(),
                n: of.len(),
                successes: count(&|c| c.success),
                committed_own: count(&|c| c.committed == Some(c.own_target)),
                committed_donor: count(&|c| {
                    c.donor_target.is_some_and(|d| d != c.own_target)
                        && c.committed == c.donor_target
                }),
                committed_none: count(&|c| c.committed.is_none()),
            }
        })
        .collect()
}

fn names_of_replacement(r: Replacement) -> &'static str {
    match r {
        Replacement::Own => "own",
        Replacement::DonorSame => "donor_same",
        Replacement::DonorOpposite => "donor_opposite",
        Replacement::Clear => "clear",
    }
}

fn names_of_restoration(r: Restoration) -> &'static str {
    match r {
        Restoration::None => "none",
        Restoration::Anchor => "anchor",
        Restoration::Full => "full",
    }
}

/// The checks every study of native rollouts (interventions, natural episodes) shares: a task
/// with a memory decision, non-zero episodes and observation stride, layout levels in `0..=3`.
///
/// # Errors
/// [`HarnessError::UnsupportedTask`] for tasks without a memory decision;
/// [`HarnessError::InvalidConfig`] naming the setting.
pub(crate) fn native_rollout_task(
    task: roboaudit_testbed::TaskKind,
    episodes: usize,
    obs_every: usize,
    layout_levels: &[u8],
) -> Result<MemoryTask, HarnessError> {
    let memory_task = MemoryTask::new(task)?;
    if episodes == 0 || obs_every == 0 || layout_levels.is_empty() {
        return Err(HarnessError::InvalidConfig(
            "episodes, obs_every and layout_levels must be non-zero / non-empty".into(),
        ));
    }
    if layout_levels.iter().any(|&l| l > 3) {
        return Err(HarnessError::InvalidConfig(
            "layout levels must be in 0..=3".into(),
        ));
    }
    Ok(memory_task)
}

/// Which intervention study a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StudyKind {
    /// History replacement at the lift event ([`replacement_study`]).
    Replacement,
    /// Restoration after an injected fault ([`restoration_study`]).
    Restoration,
}

impl StudyKind {
    /// `replacement` or `restoration`, as in [`InterventionStudy::study`].
    pub fn name(self) -> &'static str {
        match self {
            StudyKind::Replacement => "replacement",
            StudyKind::Restoration => "restoration",
        }
    }

    fn conditions(self) -> Vec<&'static str> {
        match self {
            StudyKind::Replacement => [
                Replacement::Own,
                Replacement::DonorSame,
                Replacement::DonorOpposite,
                Replacement::Clear,
            ]
            .into_iter()
            .map(names_of_replacement)
            .collect(),
            StudyKind::Restoration => [Restoration::None, Restoration::Anchor, Restoration::Full]
                .into_iter()
                .map(names_of_restoration)
                .collect(),
        }
    }
}

/// What recipient episode `index` contributes to a study: its continuations (one per condition),
/// or none when a history does not reach the event. Depends on the configuration and `index`
/// only (the policy is reset before every memory it builds), so a study's recipients can run in
/// any process ([`crate::intervene_shard`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RecipientPart {
    /// Recipient index in `0..episodes`.
    pub index: usize,
    /// Whether the recipient was skipped before any query.
    pub skipped: bool,
    /// Replacement: whether its own-history reconstruction reproduced the native memory
    /// bitwise; `None` for restoration and for a skipped recipient.
    pub own_reproduces_native: Option<bool>,
    /// Its continuations, in condition order.
    pub continuations: Vec<Continuation>,
}

impl crate::shard_parts::UnitPart for RecipientPart {
    fn unit(&self) -> usize {
        self.index
    }
}

/// Checks `cfg` and returns the task, before any recipient runs: a task with a memory decision,
/// non-zero episodes and observation stride, layout levels in `0..=3`, `fault_chunks` ≥ 1 (the
/// restoration happens at query `fault_chunks`; with 0 it would coincide with the fault). The
/// restoration conditions follow the policy's memory ([`restoration_conditions`]).
///
/// # Errors
/// [`HarnessError::InvalidConfig`] or [`HarnessError::UnsupportedTask`].
pub fn prepare(cfg: &InterventionConfig) -> Result<MemoryTask, HarnessError> {
    let task = native_rollout_task(
        cfg.cohort.task,
        cfg.cohort.episodes,
        cfg.cohort.obs_every,
        &cfg.cohort.layout_levels,
    )?;
    if cfg.fault_chunks == 0 {
        return Err(HarnessError::InvalidConfig(
            "fault_chunks must be ≥ 1 (the restoration happens at query fault_chunks)".into(),
        ));
    }
    Ok(task)
}

/// The restoration conditions a policy's memory admits: `none`, `anchor` and `full` when it
/// declares the protected component `anchor` (the bank, an anchor-window policy); `none` and
/// `full` otherwise (a recurrent policy's `hidden`: there `full`, the state rebuilt from the whole
/// observed history, is hidden-state restoration). Source: seed 002 §IV-C2; docs/methods.md §2.6.
pub fn restoration_conditions(policy: &dyn MemoryPolicy) -> Vec<Restoration> {
    let has_anchor = policy
        .memory_spec()
        .components
        .iter()
        .any(|c| c.name == ANCHOR);
    [Restoration::None, Restoration::Anchor, Restoration::Full]
        .into_iter()
        .filter(|c| has_anchor || *c != Restoration::Anchor)
        .collect()
}

/// Runs recipient `index` of a study whose configuration [`prepare`] accepted.
///
/// # Errors
/// Policy-contract and simulator errors; for restoration, [`HarnessError::InvalidConfig`] when
/// the episode ends before the restoration query.
pub fn run_recipient(
    kind: StudyKind,
    cfg: &InterventionConfig,
    task: &MemoryTask,
    index: usize,
    policy: &mut dyn MemoryPolicy,
) -> Result<RecipientPart, HarnessError> {
    let Some(r) = recipient(cfg, task, index)? else {
        return Ok(RecipientPart {
            index,
            skipped: true,
            own_reproduces_native: None,
            continuations: Vec::new(),
        });
    };
    let (continuations, own_reproduces_native) = match kind {
        StudyKind::Replacement => {
            let (c, ok) = replace(cfg, task, &r, policy)?;
            (c, Some(ok))
        }
        StudyKind::Restoration => (restore(cfg, task, &r, policy)?, None),
    };
    Ok(RecipientPart {
        index,
        skipped: false,
        own_reproduces_native,
        continuations,
    })
}

/// The study of `cfg` from its recipients' parts (in any order; one per recipient).
///
/// # Errors
/// [`HarnessError::InvalidConfig`] when a recipient is missing or given twice; bootstrap errors.
pub fn assemble_study(
    kind: StudyKind,
    cfg: &InterventionConfig,
    mut parts: Vec<RecipientPart>,
) -> Result<InterventionStudy, HarnessError> {
    parts.sort_by_key(|p| p.index);
    if parts.len() != cfg.cohort.episodes || parts.iter().enumerate().any(|(i, p)| p.index != i) {
        return Err(HarnessError::InvalidConfig(format!(
            "a {} study of {} recipients needs one part per recipient, got {} parts",
            kind.name(),
            cfg.cohort.episodes,
            parts.len()
        )));
    }
    let skipped = parts.iter().filter(|p| p.skipped).count();
    let own_reproduces_native = (kind == StudyKind::Replacement)
        .then(|| parts.iter().all(|p| p.own_reproduces_native != Some(false)));
    let out: Vec<Continuation> = parts.into_iter().flat_map(|p| p.continuations).collect();
    // A restoration of a policy without an anchor runs no `anchor` continuation: the study lists
    // the conditions its continuations ran (all of them when every recipient was skipped).
    let names: Vec<&str> = kind
        .conditions()
        .into_iter()
        .filter(|n| out.is_empty() || out.iter().any(|c| c.condition == *n))
        .collect();
    Ok(InterventionStudy {
        schema: roboaudit_memory::interventions::INTERVENTIONS_SCHEMA.into(),
        study: kind.name().into(),
        config: cfg.clone(),
        skipped,
        own_reproduces_native,
        summary: summarize(&names, &out),
        intervals: study_intervals(&out, &names, kind == StudyKind::Replacement, &cfg.bootstrap)?,
        continuations: out,
    })
}

fn study(
    kind: StudyKind,
    cfg: &InterventionConfig,
    policy: &mut dyn MemoryPolicy,
) -> Result<InterventionStudy, HarnessError> {
    let task = prepare(cfg)?;
    let parts = (0..cfg.cohort.episodes)
        .map(|i| run_recipient(kind, cfg, &task, i, policy))
        .collect::<Result<Vec<_>, _>>()?;
    assemble_study(kind, cfg, parts)
}

/// History replacement at the lift event (see the module docs).
///
/// # Errors
/// Configuration, policy-contract and simulator errors.
pub fn replacement_study(
    cfg: &InterventionConfig,
    policy: &mut dyn MemoryPolicy,
) -> Result<InterventionStudy, HarnessError> {
    study(StudyKind::Replacement, cfg, policy)
}

/// Restoration after an injected fault (see the module docs).
///
/// # Errors
/// Configuration, policy-contract and simulator errors.
pub fn restoration_study(
    cfg: &InterventionConfig,
    policy: &mut dyn MemoryPolicy,
) -> Result<InterventionStudy, HarnessError> {
    study(StudyKind::Restoration, cfg, policy)
}

/// The replacement conditions of one recipient, and whether its own-history memory equals the
/// native one bitwise.
fn replace(
    cfg: &InterventionConfig,
    task: &MemoryTask,
    r: &Recipient,
    policy: &mut dyn MemoryPolicy,
) -> Result<(Vec<Continuation>, bool), HarnessError> {
    let conditions = [
        Replacement::Own,
        Replacement::DonorSame,
        Replacement::DonorOpposite,
        Replacement::Clear,
    ];
    let (mut out, mut reproduces) = (Vec::new(), true);
    let native = memory_of(policy, &r.histories[0].observations)?;
    for cond in conditions {
        let memory = match cond {
            Replacement::Own => {
                let m = memory_of(policy, &r.histories[0].observations)?;
                reproduces &= m.bits_equal(&native);
                m
            }
            Replacement::DonorSame => memory_of(policy, &r.histories[1].observations)?,
            Replacement::DonorOpposite => memory_of(policy, &r.histories[2].observations)?,
            Replacement::Clear => {
                policy.reset();
                policy.memory()?
            }
        };
        let mut ep = fresh_episode(r, task)?;
        policy.set_memory(&memory)?;
        let (success, committed, first) =
            continue_unhooked(&mut ep, task, policy, cfg.cohort.action_seed)?;
        out.push(Continuation {
            episode_id: r.id.clone(),
            condition: names_of_replacement(cond).into(),
            stratum: r.stratum.clone(),
            own_target: r.own,
            donor_target: match cond {
                Replacement::DonorSame => Some(r.own),
                Replacement::DonorOpposite => Some(r.opposite),
                _ => None,
            },
            success,
            committed,
            first_direction: first,
        });
    }
    Ok((out, reproduces))
}

/// The restoration conditions of one recipient.
fn restore(
    cfg: &InterventionConfig,
    task: &MemoryTask,
    r: &Recipient,
    policy: &mut dyn MemoryPolicy,
) -> Result<Vec<Continuation>, HarnessError> {
    let conditions = restoration_conditions(policy);
    let mut out = Vec::new();
    let history = &r.histories[0].observations;
    let pre = memory_of(policy, history)?;
    for cond in conditions {
        let mut ep = fresh_episode(r, task)?;
        policy.set_memory(&pre)?;
        let fault = cfg.fault_chunks;
        let mut restored = false;
        let mut queries = 0usize;
        let mut hook = |c: usize,
                        p: &mut dyn MemoryPolicy,
                        seen: &[Observation]|
         -> Result<(), HarnessError> {
            queries = c + 1;
            if c == 0 {
                p.reset();
            }
            if c == fault {
                restored = true;
                match cond {
                    Restoration::None => {}
                    Restoration::Anchor => {
                        let mut m = p.memory()?;
                        m.splice(ANCHOR, &pre)?;
                        p.set_memory(&m)?;
                    }
                    Restoration::Full => {
                        p.reset();
                        for o in history.iter().chain(seen) {
                            p.observe(o)?;
                        }
                    }
                }
            }
            Ok(())
        };
        let (success, committed, first) =
            continue_closed_loop(&mut ep, task, policy, cfg.cohort.action_seed, &mut hook)?;
        if !restored {
            return Err(HarnessError::InvalidConfig(format!(
                "fault_chunks {fault}: episode {} ended after {queries} queries, before the restoration query, so condition `{}` would not restore anything; use fewer fault chunks",
                r.id,
                names_of_restoration(cond)
            )));
        }
        out.push(Continuation {
            episode_id: r.id.clone(),
            condition: names_of_restoration(cond).into(),
            stratum: r.stratum.clone(),
            own_target: r.own,
            donor_target: None,
            success,
            committed,
            first_direction: first,
        });
    }
    Ok(out)
}
