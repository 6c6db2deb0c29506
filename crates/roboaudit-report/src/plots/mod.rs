//! The plots: which ones a report has ([`catalogue`]) and drawing them as inline SVG
//! ([`render`]) with plotters' SVG backend (no fonts needed: text stays `<text>`).

mod fqe;
mod frames;
mod memory;
mod retrieval;
mod style;

pub(crate) use memory::MAX_PAIRS;

use crate::ReportError;
use crate::model::{PlotKind, PlotSpec, Report};

struct Text {
    title: &'static str,
    caption: &'static str,
    x: &'static str,
    y: &'static str,
}

fn text(kind: PlotKind) -> Text {
    match kind {
        PlotKind::TransferHeatmap => Text {
            title: "Transfer matrix",
            caption: "Each cell is the success rate of one library experience (row) executed in one query scene (column); rows run from the best experience on top to the worst, columns from the easiest scene to the hardest, so dark rows show strong experiences and dark columns easy scenes.",
            x: "query scene, by mean success (easiest → hardest, rank)",
            y: "library experience, by quality q(e) (best on top)",
        },
        PlotKind::Selection => Text {
            title: "Selection distribution against the oracle",
            caption: "Each row shows the share of query scenes in which a rule selected each experience (columns ordered by quality, best on the left); compare every row with the oracle's top row: a column much darker than the oracle's means the rule concentrates on that experience.",
            x: "library experience, by quality q(e) (best → worst, rank)",
            y: "selection rule",
        },
        PlotKind::ShuffleEnvelope => Text {
            title: "Frequency-matched shuffle",
            caption: "Grey bars span the central 95 % of success when a rule's selections keep their counts but are paired with scenes at random, the tick marks the expected value Σ f(e) q(e), and the dot is the rule's success: a dot right of its bar means the rule matches experiences to scenes better than chance, left of it worse.",
            x: "success rate (fraction of query scenes)",
            y: "selection rule",
        },
        PlotKind::Auroc => Text {
            title: "Pooled vs within-query AUROC",
            caption: "Squares show how well a rule's distance predicts whether any (experience, scene) pair succeeds (pooled), dots with bars how well it ranks the candidates inside one scene (within-query, 95 % scene-bootstrap interval); a high square with a dot near the 0.5 line means distance tracks easy scenes or strong experiences but does not choose within a scene.",
            x: "AUROC (probability a success outranks a failure; 0.5 = chance)",
            y: "selection rule",
        },
        PlotKind::SubsetConcentration => Text {
            title: "Concentration across random sub-libraries",
            caption: "Each marker is the share of random K′-experience sub-libraries in which the rule's top pick takes a larger share of scenes than the oracle's top pick (C > 1), one marker per sub-library size; markers near 1 mean the rule over-concentrates whatever the library.",
            x: "sub-libraries with concentration C > 1 (fraction)",
            y: "selection rule",
        },
        PlotKind::MemoryReliability => Text {
            title: "Pair × seed reliability",
            caption: "Each cell is one queried action: green when the chunk chose the branch its memory warrants, red when it chose the other branch, grey when neither by more than δ; a fully green row is a reliable pair, and a red or grey column points at one seed or one memory.",
            x: "action seed × memory (seed, then A | B)",
            y: "pair",
        },
        PlotKind::MatchedWorld => Text {
            title: "Matched-world values",
            caption: "Bars show the mean value of actions queried under memory m and executed in world w; a policy that uses its memory has tall matched bars (A in A, B in B) and short crossed ones, and U1 is half the difference.",
            x: "memory the policy was queried with",
            y: "mean value V(m, w) (normalized progress, 0–1)",
        },
        PlotKind::FqeEstimates => Text {
            title: "Estimates against ground truth",
            caption: "Each marker is one (policy, task) estimate plotted against its rollout value, neural FQE with a bar (its 95 % episode-bootstrap interval when the fit made refits, else the range of its training seeds: the legend says which); markers on the dashed diagonal are exact, and an estimator whose markers keep the order of the ground truth ranks policies correctly even when off the diagonal.",
            x: "ground truth V^π (discounted success, 0–1)",
            y: "estimate V̂ (discounted success, 0–1)",
        },
        PlotKind::FqeCurves => Text {
            title: "Neural FQE learning curves",
            caption: "Each line is the Bellman loss of one policy's network over training, one line per training seed; lines that flatten have converged, and lines of one policy that end far apart mean the estimate depends on the seed.",
            x: "gradient step (count)",
            y: "Bellman mean squared error (log scale)",
        },
        PlotKind::FqeFrames => Text {
            title: "What was evaluated",
            caption: "Each row is one task: the first and the last camera frame of its first episode in the dataset the estimates were fitted on, scaled down; a task whose scene or outcome does not look like its name is the first thing to check when its estimates look wrong.",
            x: "frame of the episode (first, last)",
            y: "task",
        },
    }
}

fn kind_slug(kind: PlotKind) -> &'static str {
    match kind {
        PlotKind::TransferHeatmap => "transfer",
        PlotKind::Selection => "selection",
        PlotKind::ShuffleEnvelope => "shuffle",
        PlotKind::Auroc => "auroc",
        PlotKind::SubsetConcentration => "subsets",
        PlotKind::MemoryReliability => "reliability",
        PlotKind::MatchedWorld => "matched-world",
        PlotKind::FqeEstimates => "estimates",
        PlotKind::FqeCurves => "curves",
        PlotKind::FqeFrames => "frames",
    }
}

fn spec(section: &str, kind: PlotKind, missing: Option<String>) -> PlotSpec {
    let t = text(kind);
    PlotSpec {
        // `fig-` keeps figure ids apart from section headings (`{section}--{part}`).
        id: format!("fig-{section}-{}", kind_slug(kind)),
        kind,
        section: section.to_owned(),
        title: t.title.to_owned(),
        caption: t.caption.to_owned(),
        x_label: t.x.to_owned(),
        y_label: t.y.to_owned(),
        available: missing.is_none(),
        note: missing,
    }
}

/// Every plot of `report`, section by section, with its availability.
pub(crate) fn catalogue(report: &Report) -> Vec<PlotSpec> {
    let mut out = Vec::new();
    for s in &report.retrieval {
        for kind in retrieval::KINDS {
            out.push(spec(&s.id, kind, retrieval::missing(s, kind)));
        }
    }
    for s in &report.memory {
        for kind in memory::KINDS {
            out.push(spec(&s.id, kind, memory::missing(s, kind)));
        }
    }
    for s in &report.fqe {
        for kind in fqe::KINDS {
            out.push(spec(&s.id, kind, fqe::missing(s, kind)));
        }
    }
    out
}

/// Draws `plot` as one `<svg>` element; `None` when the plot is not available.
///
/// # Errors
/// [`ReportError::Plot`] when the SVG backend fails (an internal error).
pub(crate) fn render(report: &Report, plot: &PlotSpec) -> Result<Option<String>, ReportError> {
    if !plot.available {
        return Ok(None);
    }
    let fail = |message: String| ReportError::Plot {
        id: plot.id.clone(),
        message,
    };
    if let Some(s) = report.retrieval.iter().find(|s| s.id == plot.section) {
        return retrieval::render(s, plot).map_err(fail);
    }
    if let Some(s) = report.memory.iter().find(|s| s.id == plot.section) {
        return memory::render(s, plot).map_err(fail);
    }
    if let Some(s) = report.fqe.iter().find(|s| s.id == plot.section) {
        return fqe::render(s, plot).map_err(fail);
    }
    Ok(None)
}
