//! Retrieval-audit plots (SPEC.md §1).

use super::style::{self, Area, MeshExt, NAME_AREA, ROW, err, font, heat_grid, row_names, series};
use crate::model::{PlotKind, PlotSpec, RetrievalSection};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use roboaudit_retrieval::{RuleFamily, RuleReport};

/// The retrieval plots, in page order.
pub(super) const KINDS: [PlotKind; 5] = [
    PlotKind::TransferHeatmap,
    PlotKind::Selection,
    PlotKind::ShuffleEnvelope,
    PlotKind::Auroc,
    PlotKind::SubsetConcentration,
];

fn has_auroc(r: &RuleReport) -> bool {
    r.pooled_auroc.is_some() || r.within_query_auroc.is_some()
}

/// Why no AUROC can be plotted: the rules that score by similarity may have run with every AUROC
/// undefined (an all-zero or all-one matrix has no positives or no negatives), which is not the
/// same as their not running.
fn auroc_missing(a: &roboaudit_retrieval::AuditReport) -> String {
    let scored: Vec<&RuleReport> = a.rules.iter().filter(|r| r.auroc_score.is_some()).collect();
    if scored.is_empty() {
        return "no rule has a defined AUROC (no distance-based rule ran)".to_owned();
    }
    let reason = scored
        .iter()
        .find_map(|r| r.pooled_auroc_reason.as_deref())
        .map_or_else(String::new, |r| format!(": {r}"));
    format!("the distance-based rules ran, but no AUROC is defined{reason}")
}

/// Why a plot of `s` cannot be drawn, `None` when it can.
pub(super) fn missing(s: &RetrievalSection, kind: PlotKind) -> Option<String> {
    let a = &s.audit;
    match kind {
        PlotKind::TransferHeatmap => s.transfer.is_none().then(|| {
            s.transfer_note
                .clone()
                .unwrap_or_else(|| "no run folder, so no transfer matrix".to_owned())
        }),
        PlotKind::Selection | PlotKind::ShuffleEnvelope => {
            a.rules.is_empty().then(|| "no rule ran".to_owned())
        }
        PlotKind::Auroc => (!a.rules.iter().any(has_auroc)).then(|| auroc_missing(a)),
        PlotKind::SubsetConcentration => {
            if a.library_interventions.is_empty() {
                // The audit runs interventions only for the sizes asked for.
                Some("no --library-size was given, so no library interventions ran".to_owned())
            } else {
                (!a.library_interventions
                    .iter()
                    .any(|i| !i.random_subset_rules.is_empty()))
                .then(|| "no random sub-libraries were drawn (no library size below K)".to_owned())
            }
        }
        _ => Some("not a retrieval plot".to_owned()),
    }
}

pub(super) fn render(s: &RetrievalSection, plot: &PlotSpec) -> Result<Option<String>, String> {
    let labels = (plot.x_label.as_str(), plot.y_label.as_str());
    let svg = match plot.kind {
        PlotKind::TransferHeatmap => match &s.transfer {
            Some(m) => transfer(m, &plot.title, labels)?,
            None => return Ok(None),
        },
        PlotKind::Selection => selection(s, &plot.title, labels)?,
        PlotKind::ShuffleEnvelope => shuffle(s, &plot.title, labels)?,
        PlotKind::Auroc => auroc(s, &plot.title, labels)?,
        PlotKind::SubsetConcentration => subsets(s, &plot.title, labels)?,
        _ => return Ok(None),
    };
    Ok(Some(svg))
}

/// Indices of `values` sorted descending (stable: ties keep their order).
fn order_desc(values: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    idx
}

fn height_for_rows(rows: usize) -> u32 {
    let rows = u32::try_from(rows).unwrap_or(u32::MAX / ROW);
    (rows.saturating_mul(ROW) + 80).clamp(260, 1200)
}

fn transfer(
    m: &crate::TransferMatrix,
    title: &str,
    labels: (&str, &str),
) -> Result<String, String> {
    let (rows, cols) = (&m.row_order, &m.column_order);
    let values: Vec<Vec<f64>> = rows
        .iter()
        .map(|&e| cols.iter().map(|&j| m.success[e][j]).collect())
        .collect();
    let names: Vec<String> = rows.iter().map(|&e| m.experiences[e].clone()).collect();
    let row_px = if names.len() > 40 { 10 } else { ROW };
    let height = (u32::try_from(names.len()).unwrap_or(200) * row_px + 80).clamp(300, 900);
    style::svg(title, height, |root| {
        heat_grid(root, &names, &values, &style::blues, labels, ("0.0", "1.0"))
    })
}

fn selection(s: &RetrievalSection, title: &str, labels: (&str, &str)) -> Result<String, String> {
    let a = &s.audit;
    let quality: Vec<f64> = a.experiences.iter().map(|e| e.quality).collect();
    let cols = order_desc(&quality);
    let is_oracle = |r: &&RuleReport| r.family == RuleFamily::Oracle;
    let mut rules: Vec<&RuleReport> = a.rules.iter().filter(is_oracle).collect();
    rules.extend(a.rules.iter().filter(|r| !is_oracle(r)));
    let values: Vec<Vec<f64>> = rules
        .iter()
        .map(|r| {
            cols.iter()
                .map(|&e| {
                    r.selection
                        .get(&a.experiences[e].id)
                        .copied()
                        .unwrap_or(0.0)
                })
                .collect()
        })
        .collect();
    let names: Vec<String> = rules.iter().map(|r| r.name.clone()).collect();
    style::svg(title, height_for_rows(names.len()), |root| {
        heat_grid(
            root,
            &names,
            &values,
            &style::oranges,
            labels,
            ("0 %", "100 %"),
        )
    })
}

/// A horizontal row chart over `x` with one row per name (first on top); returns the chart.
fn row_chart<'a, 'b>(
    root: &'a Area<'b>,
    names: &[String],
    x: std::ops::Range<f64>,
    labels: (&str, &str),
    legend_rows: usize,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String> {
    let (n, legend_rows) = (names.len() as f64, legend_rows as f64);
    let mut chart = ChartBuilder::on(root)
        .margin_top(10)
        .margin_right(20)
        .x_label_area_size(50)
        .y_label_area_size(NAME_AREA)
        .build_cartesian_2d(x.clone(), -0.5 - legend_rows..n - 0.5)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_grid()
        .y_labels(0)
        .x_labels(11)
        .axes(labels)
        .label_style(font(12))
        .draw()
        .map_err(err)?;
    row_names(root, &chart, names, x.start, |i| n - 1.0 - i as f64)?;
    Ok(chart)
}

fn row_y(n: usize, i: usize) -> f64 {
    (n - 1 - i) as f64
}

fn vline(
    chart: &mut ChartContext<SVGBackend, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    x: f64,
    n: usize,
    colour: RGBColor,
    label: &str,
) -> Result<(), String> {
    let top = n as f64 - 0.5;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x, -0.5), (x, top)],
            colour.stroke_width(1),
        )))
        .map_err(err)?
        .label(label.to_owned())
        .legend(move |(px, py)| PathElement::new(vec![(px, py), (px + 16, py)], colour));
    Ok(())
}

fn success_range(s: &RetrievalSection) -> std::ops::Range<f64> {
    let a = &s.audit;
    let lo = a
        .rules
        .iter()
        .flat_map(|r| [r.success, r.shuffle.envelope[0]])
        .chain([a.reference.random])
        .fold(1.0f64, f64::min);
    let hi = a
        .rules
        .iter()
        .flat_map(|r| [r.success, r.shuffle.envelope[1]])
        .chain([a.reference.oracle])
        .fold(0.0f64, f64::max);
    let pad = ((hi - lo) * 0.05).max(0.02);
    (lo - pad).max(0.0)..(hi + pad).min(1.0).max((lo - pad).max(0.0) + 0.05)
}

fn shuffle(s: &RetrievalSection, title: &str, labels: (&str, &str)) -> Result<String, String> {
    let a = &s.audit;
    let rules: Vec<&RuleReport> = a.rules.iter().collect();
    let names: Vec<String> = rules.iter().map(|r| r.name.clone()).collect();
    let n = names.len();
    style::svg(title, height_for_rows(n + 4), |root| {
        let mut chart = row_chart(root, &names, success_range(s), labels, 4)?;
        let bars = rules.iter().enumerate().map(|(i, r)| {
            let y = row_y(n, i);
            let [lo, hi] = r.shuffle.envelope;
            Rectangle::new(
                [(lo, y - 0.3), (hi, y + 0.3)],
                RGBColor(200, 200, 200).filled(),
            )
        });
        chart.draw_series(bars).map_err(err)?;
        let ticks = rules.iter().enumerate().map(|(i, r)| {
            let y = row_y(n, i);
            PathElement::new(
                vec![
                    (r.shuffle.expected, y - 0.35),
                    (r.shuffle.expected, y + 0.35),
                ],
                BLACK.stroke_width(1),
            )
        });
        chart.draw_series(ticks).map_err(err)?;
        let dots = rules.iter().enumerate().map(|(i, r)| {
            let [lo, hi] = r.shuffle.envelope;
            let colour = if r.success < lo {
                style::PALETTE[3]
            } else if r.success > hi {
                style::PALETTE[2]
            } else {
                style::PALETTE[0]
            };
            Circle::new((r.success, row_y(n, i)), 4, colour.filled())
        });
        chart.draw_series(dots).map_err(err)?;
        vline(&mut chart, a.reference.random, n, series(7), "random R")?;
        vline(
            &mut chart,
            a.reference.best_fixed,
            n,
            series(1),
            "best-fixed BF",
        )?;
        vline(&mut chart, a.reference.oracle, n, series(4), "oracle O")?;
        style::legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}

fn auroc(s: &RetrievalSection, title: &str, labels: (&str, &str)) -> Result<String, String> {
    let rules: Vec<&RuleReport> = s.audit.rules.iter().filter(|r| has_auroc(r)).collect();
    let names: Vec<String> = rules.iter().map(|r| r.name.clone()).collect();
    let n = names.len();
    style::svg(title, height_for_rows(n + 4), |root| {
        let mut chart = row_chart(root, &names, 0.0..1.0, labels, 4)?;
        vline(&mut chart, 0.5, n, RGBColor(150, 150, 150), "chance (0.5)")?;
        let ci = rules.iter().enumerate().filter_map(|(i, r)| {
            let [lo, hi] = r.within_query_ci?;
            let y = row_y(n, i) - 0.15;
            Some(PathElement::new(
                vec![(lo, y), (hi, y)],
                series(1).stroke_width(2),
            ))
        });
        chart.draw_series(ci).map_err(err)?;
        let colour0 = series(0);
        chart
            .draw_series(rules.iter().enumerate().filter_map(|(i, r)| {
                let v = r.pooled_auroc?;
                let y = row_y(n, i) + 0.15;
                Some(Rectangle::new(
                    [(v - 0.006, y - 0.18), (v + 0.006, y + 0.18)],
                    colour0.filled(),
                ))
            }))
            .map_err(err)?
            .label("pooled (all executions)")
            .legend(move |(x, y)| {
                Rectangle::new([(x + 4, y - 4), (x + 12, y + 4)], colour0.filled())
            });
        let colour1 = series(1);
        chart
            .draw_series(rules.iter().enumerate().filter_map(|(i, r)| {
                let v = r.within_query_auroc?;
                Some(Circle::new((v, row_y(n, i) - 0.15), 4, colour1.filled()))
            }))
            .map_err(err)?
            .label("within-query (mean over scenes, 95 % CI)")
            .legend(move |(x, y)| Circle::new((x + 8, y), 4, colour1.filled()));
        style::legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}

fn subsets(s: &RetrievalSection, title: &str, labels: (&str, &str)) -> Result<String, String> {
    let sizes: Vec<&roboaudit_retrieval::SizeIntervention> = s
        .audit
        .library_interventions
        .iter()
        .filter(|i| !i.random_subset_rules.is_empty())
        .collect();
    let mut names: Vec<String> = Vec::new();
    for i in &sizes {
        for r in &i.random_subset_rules {
            if !names.contains(&r.name) {
                names.push(r.name.clone());
            }
        }
    }
    let n = names.len();
    style::svg(title, height_for_rows(n + sizes.len() + 1), |root| {
        let mut chart = row_chart(root, &names, 0.0..1.0, labels, sizes.len() + 1)?;
        for (k, size) in sizes.iter().enumerate() {
            let colour = series(k);
            let offset = (k as f64 - (sizes.len() as f64 - 1.0) / 2.0) * 0.2;
            let points = size.random_subset_rules.iter().filter_map(|r| {
                let i = names.iter().position(|x| *x == r.name)?;
                Some(Circle::new(
                    (r.fraction_concentration_above_1, row_y(n, i) + offset),
                    4,
                    colour.filled(),
                ))
            });
            chart
                .draw_series(points)
                .map_err(err)?
                .label(format!(
                    "K′ = {} ({} sub-libraries)",
                    size.size, size.random_subsets
                ))
                .legend(move |(x, y)| Circle::new((x + 8, y), 4, colour.filled()));
        }
        style::legend(&mut chart, SeriesLabelPosition::LowerRight)
    })
}
