//! Natural-occurrence analysis (docs/methods.md §2.10; SPEC.md §2 natural-rollout tests; seed
//! 002 §IV-D3): untreated native episodes of a policy, the fraction that contain the audited
//! decision type (an outcome-blind rule decided at the present), and, over those episodes, the
//! remaining-step contrast and the final-success association between a first direction toward
//! the warranted branch and one toward another tray, each with an episode bootstrap interval
//! within layout strata. Observational: never pooled with the constructed pairs (§2.1) or the
//! intervention continuations (§2.6).
//!
//! These are the types `roboaudit memory natural` writes as `natural.json` and any reader
//! parses, and the analysis of the episode records; the episodes themselves run in
//! `roboaudit-memory-harness` (`natural`), which needs the simulator.

use std::collections::BTreeMap;

use roboaudit_stats::{BootstrapConfig, IntervalMethod, ResampleDesign, bootstrap};
use serde::{Deserialize, Serialize};

use crate::MemoryError;
pub use crate::interventions::{BootstrapSettings, CohortSettings};

/// Schema tag of `natural.json`.
pub const NATURAL_SCHEMA: &str = "roboaudit.memory.natural.v1";

/// The registered decision-type rule, written into every study (docs/methods.md §2.10).
pub const DECISION_RULE: &str = "an episode contains the audited decision type iff the expert's natural history reaches the audited present (the lift event) within the task's step limit and, at that present, before any policy action and from the scene state only, the warranted tray is empty and at least one other tray is empty too (a tray is empty when no block rests in it: planar offset within the tray's half width and height below 5 cm), so the present shows at least two candidate trays and only memory tells the warranted one apart";

/// What the cohort is, written into every study and its summary.
pub const COHORT_NOTE: &str = "natural cohort: untreated native episodes; observational, never pooled with the constructed crossed-history pairs or the intervention continuations";

/// Settings of a natural-occurrence study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaturalConfig {
    /// The natural episodes and how they run.
    #[serde(flatten)]
    pub cohort: CohortSettings,
    /// Episode bootstrap of the contrasts' intervals.
    pub bootstrap: BootstrapSettings,
}

impl Default for NaturalConfig {
    /// put_back, 96 episodes (seed 002 §IV-D3), layout levels 0 and 1, observations every 4
    /// steps, 10,000 resamples at 95 %.
    fn default() -> Self {
        NaturalConfig {
            cohort: CohortSettings::with_episodes(96),
            bootstrap: BootstrapSettings::default(),
        }
    }
}

/// One natural episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaturalEpisode {
    /// Episode id (`n000`, …; its scene id).
    pub id: String,
    /// Layout stratum (`level0`, …).
    pub stratum: String,
    /// Whether the expert's history reached the audited present; when not, the policy never
    /// acted and the outcome fields are `None`.
    pub reached_present: bool,
    /// The tray the episode's own history warrants (tray index).
    pub warranted: usize,
    /// Trays empty at the present (ascending; empty when the present was not reached).
    pub candidates: Vec<usize>,
    /// The registered rule ([`DECISION_RULE`]), decided before any policy action.
    pub contains_decision: bool,
    /// Step index of the present (actions the expert took), when reached.
    pub present_step: Option<usize>,
    /// Tray the policy's first chunk brought the block closest to (largest planar distance
    /// reduction), when reached.
    pub first_direction: Option<usize>,
    /// Tray nearest the block at the end, when within 5 cm of it.
    pub committed: Option<usize>,
    /// Official task success at the end, when reached.
    pub success: Option<bool>,
    /// Steps from the present to the end of the episode (success or the step limit), when
    /// reached.
    pub remaining_steps: Option<usize>,
}

/// A count out of a total, e.g. 86/96 episodes containing the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fraction {
    /// Episodes counted.
    pub count: usize,
    /// Episodes in all.
    pub n: usize,
}

/// One group of decision episodes: its size and the sum of the outcome (remaining steps, or
/// successes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// Decision episodes in the group.
    pub n: usize,
    /// Sum of the outcome over them (steps, or successes).
    pub total: u64,
}

/// Where a contrast's interval lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The interval contains 0.
    Unresolved,
    /// The whole interval lies above 0.
    AboveZero,
    /// The whole interval lies below 0.
    BelowZero,
}

/// A difference of group means (warranted − other) with its episode bootstrap interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contrast {
    /// `primary` (remaining steps) or `secondary` (final success).
    pub role: String,
    /// How to read it: always observational; the success association is non-causal.
    pub interpretation: String,
    /// Decision episodes whose first direction was the warranted tray.
    pub warranted: Group,
    /// Decision episodes whose first direction was another tray.
    pub other: Group,
    /// `warranted.total / warranted.n − other.total / other.n`, computed as one exact fraction
    /// rounded once; `None` when a group is empty.
    pub estimate: Option<f64>,
    /// Percentile interval `[lo, hi]`; `None` with the estimate, or when fewer than two
    /// resamples had both groups.
    pub ci: Option<[f64; 2]>,
    /// Confidence level of `ci`.
    pub level: f64,
    /// Resamples in which a group was empty (left out of the interval).
    pub undefined_resamples: usize,
    /// Where `ci` lies; `None` when it is undefined.
    pub verdict: Option<Verdict>,
    /// Why the estimate or interval is undefined.
    pub undefined_reason: Option<String>,
}

/// The analysis of a natural cohort.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaturalAnalysis {
    /// Episodes containing the decision type, out of all episodes.
    pub decision: Fraction,
    /// Episodes whose history reached the present, out of all episodes.
    pub reached_present: Fraction,
    /// Decision episodes without a first direction (no finite tray distance), left out of
    /// both contrasts.
    pub no_direction: usize,
    /// Primary: mean remaining steps, first direction warranted − another tray.
    pub remaining_steps: Contrast,
    /// Secondary: success rate, first direction warranted − another tray (observational,
    /// non-causal).
    pub success_association: Contrast,
    /// Cluster of the bootstrap (`episode`) and its strata (`layout level`).
    pub cluster: String,
}

/// A natural-occurrence study: what `natural.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NaturalStudy {
    /// Always [`NATURAL_SCHEMA`].
    pub schema: String,
    /// The policy's name.
    pub policy: String,
    /// [`COHORT_NOTE`].
    pub cohort: String,
    /// [`DECISION_RULE`].
    pub decision_rule: String,
    /// The configuration.
    pub config: NaturalConfig,
    /// The analysis.
    pub analysis: NaturalAnalysis,
    /// Every episode, in index order.
    pub episodes: Vec<NaturalEpisode>,
}

/// Per decision episode: (stratum index, first direction warranted, remaining steps, success).
struct Row {
    stratum: usize,
    warranted_first: bool,
    steps: u64,
    success: bool,
}

/// Sums over the rows `idx` (with repetitions): `[n, total]` for the warranted and other groups
/// of `outcome`.
fn sums(rows: &[Row], idx: &[usize], outcome: fn(&Row) -> u64) -> [[u64; 2]; 2] {
    let mut s = [[0u64; 2]; 2];
    for &i in idx {
        if let Some(r) = rows.get(i) {
            let g = usize::from(!r.warranted_first);
            s[g][0] += 1;
            s[g][1] += outcome(r);
        }
    }
    s
}

/// `tw/nw − to/no` as one exact fraction rounded once; `None` when a group is empty.
fn difference(s: [[u64; 2]; 2]) -> Option<f64> {
    let [[nw, tw], [no, to]] = s;
    if nw == 0 || no == 0 {
        return None;
    }
    let num = i128::from(tw) * i128::from(no) - i128::from(to) * i128::from(nw);
    let den = i128::from(nw) * i128::from(no);
    Some(num as f64 / den as f64)
}

fn contrast(
    rows: &[Row],
    design: &ResampleDesign,
    config: &BootstrapConfig,
    (role, interpretation): (&str, &str),
    outcome: fn(&Row) -> u64,
) -> Result<Contrast, MemoryError> {
    let all: Vec<usize> = (0..rows.len()).collect();
    let s = sums(rows, &all, outcome);
    let group = |g: [u64; 2]| Group {
        n: g[0] as usize,
        total: g[1],
    };
    let mut c = Contrast {
        role: role.to_owned(),
        interpretation: interpretation.to_owned(),
        warranted: group(s[0]),
        other: group(s[1]),
        estimate: difference(s),
        ci: None,
        level: config.level,
        undefined_resamples: 0,
        verdict: None,
        undefined_reason: None,
    };
    if rows.is_empty() {
        c.undefined_reason = Some("no episode contains the audited decision type".into());
        return Ok(c);
    }
    if c.estimate.is_none() {
        let which = if s[0][0] == 0 {
            "the warranted tray"
        } else {
            "another tray"
        };
        c.undefined_reason = Some(format!(
            "no decision episode's first direction was {which}, so there is nothing to compare"
        ));
        return Ok(c);
    }
    let r = bootstrap(design, config, |idx: &[usize]| {
        difference(sums(rows, idx, outcome))
    })?;
    c.undefined_resamples = r.undefined_resamples;
    c.ci = r.interval.map(|i| [i.lo, i.hi]);
    c.verdict = c.ci.map(|[lo, hi]| {
        if lo > 0.0 {
            Verdict::AboveZero
        } else if hi < 0.0 {
            Verdict::BelowZero
        } else {
            Verdict::Unresolved
        }
    });
    if c.ci.is_none() {
        c.undefined_reason =
            Some("fewer than two bootstrap resamples held both groups: no interval".into());
    }
    Ok(c)
}

/// Analyzes a natural cohort (docs/methods.md §2.10): the decision fraction over all
/// `episodes`, and over the decision episodes with a first direction the primary
/// remaining-step contrast and the secondary success association, first direction warranted −
/// another tray, each with a percentile episode bootstrap within layout strata (`stratum`).
///
/// # Errors
/// [`MemoryError::InvalidRecords`] naming the episode when an id repeats, or a decision episode
/// lacks its outcome (remaining steps, success) or did not reach the present;
/// [`MemoryError::InvalidPlan`] for bootstrap settings out of range (resamples in
/// 1..=[`crate::MAX_RESAMPLES`], level in (0, 1)); [`MemoryError::Stats`] if the bootstrap fails.
pub fn analyze_natural(
    episodes: &[NaturalEpisode],
    settings: &BootstrapSettings,
) -> Result<NaturalAnalysis, MemoryError> {
    let resamples_ok = (1..=crate::MAX_RESAMPLES).contains(&settings.resamples);
    if !(resamples_ok && settings.level > 0.0 && settings.level < 1.0) {
        return Err(MemoryError::InvalidPlan {
            message: format!(
                "bootstrap resamples must be in 1..={} and the level in (0, 1), got {} and {}",
                crate::MAX_RESAMPLES,
                settings.resamples,
                settings.level
            ),
            path: None,
        });
    }
    let mut seen = std::collections::BTreeSet::new();
    for e in episodes {
        if !seen.insert(e.id.as_str()) {
            return Err(MemoryError::InvalidRecords(format!(
                "natural episode `{}` appears twice",
                e.id
            )));
        }
    }
    let decision: Vec<&NaturalEpisode> = episodes.iter().filter(|e| e.contains_decision).collect();
    let levels: BTreeMap<&str, usize> = {
        let mut s: Vec<&str> = decision.iter().map(|e| e.stratum.as_str()).collect();
        s.sort_unstable();
        s.dedup();
        s.into_iter().enumerate().map(|(i, s)| (s, i)).collect()
    };
    let mut rows = Vec::with_capacity(decision.len());
    let mut no_direction = 0;
    for e in &decision {
        let (Some(steps), Some(success), true) = (e.remaining_steps, e.success, e.reached_present)
        else {
            return Err(MemoryError::InvalidRecords(format!(
                "natural episode `{}` contains the decision but lacks its outcome (reached_present, remaining_steps and success are required)",
                e.id
            )));
        };
        let Some(first) = e.first_direction else {
            no_direction += 1;
            continue;
        };
        rows.push(Row {
            stratum: levels.get(e.stratum.as_str()).copied().unwrap_or(0),
            warranted_first: first == e.warranted,
            steps: steps as u64,
            success,
        });
    }
    // Only used when both groups are non-empty, so never with zero clusters.
    let design = ResampleDesign {
        n_clusters: rows.len(),
        strata: Some(rows.iter().map(|r| r.stratum).collect()),
    };
    let config = BootstrapConfig {
        resamples: settings.resamples,
        level: settings.level,
        method: IntervalMethod::Percentile,
        seed: settings.seed,
    };
    let remaining_steps = contrast(
        &rows,
        &design,
        &config,
        (
            "primary",
            "observational: episodes were not assigned a first direction",
        ),
        |r| r.steps,
    )?;
    let success_association = contrast(
        &rows,
        &design,
        &config,
        (
            "secondary",
            "observational association, non-causal: the first direction was not assigned",
        ),
        |r| u64::from(r.success),
    )?;
    Ok(NaturalAnalysis {
        decision: Fraction {
            count: decision.len(),
            n: episodes.len(),
        },
        reached_present: Fraction {
            count: episodes.iter().filter(|e| e.reached_present).count(),
            n: episodes.len(),
        },
        no_direction,
        remaining_steps,
        success_association,
        cluster: "episode within layout-level strata".into(),
    })
}

/// `mean (n = k)` of a remaining-steps group, `–` when empty.
fn mean_of(g: &Group) -> String {
    if g.n == 0 {
        "– (n = 0)".to_owned()
    } else {
        format!("{:.1} (n = {})", g.total as f64 / g.n as f64, g.n)
    }
}

fn verdict_word(c: &Contrast) -> &'static str {
    match c.verdict {
        Some(Verdict::Unresolved) => "unresolved",
        Some(Verdict::AboveZero) => "above zero",
        Some(Verdict::BelowZero) => "below zero",
        None => "undefined",
    }
}

fn estimate_and_ci(c: &Contrast, digits: usize) -> (String, String) {
    let est = c
        .estimate
        .map_or_else(|| "–".to_owned(), |e| format!("{e:.digits$}"));
    let ci = c.ci.map_or_else(
        || "–".to_owned(),
        |[lo, hi]| format!("[{lo:.digits$}, {hi:.digits$}]"),
    );
    (est, ci)
}

/// The contrasts' rows: (name, role, warranted first, another tray first, difference, CI,
/// verdict).
fn contrast_rows(a: &NaturalAnalysis) -> [[String; 7]; 2] {
    let r = &a.remaining_steps;
    let s = &a.success_association;
    let (re, rc) = estimate_and_ci(r, 1);
    let (se, sc) = estimate_and_ci(s, 3);
    [
        [
            "remaining steps (mean)".into(),
            "primary, observational".into(),
            mean_of(&r.warranted),
            mean_of(&r.other),
            re,
            rc,
            verdict_word(r).into(),
        ],
        [
            "final success (rate)".into(),
            "secondary, observational, non-causal".into(),
            format!("{}/{}", s.warranted.total, s.warranted.n),
            format!("{}/{}", s.other.total, s.other.n),
            se,
            sc,
            verdict_word(s).into(),
        ],
    ]
}

/// A few lines for the terminal: the decision fraction and both contrasts.
pub fn text_summary(study: &NaturalStudy) -> String {
    let a = &study.analysis;
    let mut out = format!(
        "natural episodes containing the audited decision type: {}/{} (histories reaching the present: {}/{})\n",
        a.decision.count, a.decision.n, a.reached_present.count, a.reached_present.n
    );
    for row in contrast_rows(a) {
        out.push_str(&format!(
            "{} [{}]: warranted first {}, another tray first {}, difference {} {} {}\n",
            row[0], row[1], row[2], row[3], row[4], row[5], row[6]
        ));
    }
    out.push_str(&format!("{COHORT_NOTE}\n"));
    out
}

/// The study as the Markdown of `natural.md`.
pub fn markdown(study: &NaturalStudy) -> String {
    let a = &study.analysis;
    let c = &study.config.cohort;
    let levels: Vec<String> = c.layout_levels.iter().map(u8::to_string).collect();
    let mut md = format!(
        "# Natural-occurrence analysis\n\nPolicy `{}` on `{}`: {} untreated native episodes (seed {}, layout levels {}).\n\n**Observational.** {}.\n\n",
        study.policy,
        c.task.name(),
        c.episodes,
        c.seed,
        levels.join(", "),
        COHORT_NOTE
    );
    md.push_str(&format!(
        "Registered decision rule (outcome-blind): {}.\n\n",
        study.decision_rule
    ));
    md.push_str(&format!(
        "- Episodes containing the audited decision type: **{}/{}**\n- Histories reaching the present: {}/{}\n- Decision episodes by first direction: warranted tray {}, another tray {}, none {}\n\n",
        a.decision.count,
        a.decision.n,
        a.reached_present.count,
        a.reached_present.n,
        a.remaining_steps.warranted.n,
        a.remaining_steps.other.n,
        a.no_direction
    ));
    let level = a.remaining_steps.level * 100.0;
    md.push_str(&format!(
        "| contrast | role | first direction warranted | first direction another tray | difference (warranted − other) | {level:.0}% CI | verdict |\n|---|---|---|---|---:|---|---|\n"
    ));
    for row in contrast_rows(a) {
        md.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    let b = &study.config.bootstrap;
    md.push_str(&format!(
        "\nIntervals: {level:.0}% percentile episode bootstrap within layout-level strata over the decision episodes, {} resamples, seed {}; resamples missing a group are left out ({} and {}). A verdict is `unresolved` when the interval contains 0.\n",
        b.resamples,
        b.seed,
        a.remaining_steps.undefined_resamples,
        a.success_association.undefined_resamples
    ));
    for (name, ct) in [
        ("remaining steps", &a.remaining_steps),
        ("final success", &a.success_association),
    ] {
        if let Some(r) = &ct.undefined_reason {
            md.push_str(&format!("\n{name}: {r}.\n"));
        }
    }
    md
}
