//! Counterfactual memory audit plots (SPEC.md §2).

use super::style::{self, MeshExt, NAME_AREA, err, font, row_names};
use crate::model::{MemorySection, PlotKind, PlotSpec};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use roboaudit_memory::Choice;

/// The memory plots, in page order.
pub(super) const KINDS: [PlotKind; 2] = [PlotKind::MemoryReliability, PlotKind::MatchedWorld];

/// Pairs drawn in the reliability grid at most (the rest are summarized in the tables).
pub(crate) const MAX_PAIRS: usize = 60;

/// Why a plot of `s` cannot be drawn, `None` when it can.
pub(super) fn missing(s: &MemorySection, kind: PlotKind) -> Option<String> {
    let a = &s.audit;
    match kind {
        PlotKind::MemoryReliability => a
            .pairs
            .iter()
            .all(|p| p.choices.is_empty())
            .then(|| "no eligible pair".to_owned()),
        PlotKind::MatchedWorld => {
            let v = &a.matched_world_value;
            [v.AA, v.AB, v.BA, v.BB]
                .iter()
                .all(Option::is_none)
                .then(|| "matched-world values are undefined (no eligible pair)".to_owned())
        }
        _ => Some("not a memory plot".to_owned()),
    }
}

pub(super) fn render(s: &MemorySection, plot: &PlotSpec) -> Result<Option<String>, String> {
    let labels = (plot.x_label.as_str(), plot.y_label.as_str());
    Ok(Some(match plot.kind {
        PlotKind::MemoryReliability => reliability(s, &plot.title, labels)?,
        PlotKind::MatchedWorld => matched(s, &plot.title, labels)?,
        _ => return Ok(None),
    }))
}

fn colour(choice: Choice, memory: usize) -> RGBColor {
    let correct = matches!((choice, memory), (Choice::A, 0) | (Choice::B, 1));
    match choice {
        Choice::None => RGBColor(190, 190, 190),
        _ if correct => RGBColor(89, 161, 79),
        _ => RGBColor(225, 87, 89),
    }
}

fn reliability(s: &MemorySection, title: &str, labels: (&str, &str)) -> Result<String, String> {
    let a = &s.audit;
    let pairs: Vec<_> = a.pairs.iter().take(MAX_PAIRS).collect();
    let names: Vec<String> = pairs
        .iter()
        .map(|p| format!("{}{}", p.pair_id, if p.reliable { " ✓" } else { "" }))
        .collect();
    let seeds = pairs.iter().map(|p| p.choices.len()).max().unwrap_or(0);
    let cols = seeds * 2;
    let (nr, nc) = (names.len() as f64, cols.max(1) as f64);
    let row_px = 20;
    let height = (u32::try_from(names.len()).unwrap_or(60) * row_px + 110).clamp(180, 1100);
    style::svg(title, height, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin_top(36)
            .margin_right(20)
            .x_label_area_size(50)
            .y_label_area_size(NAME_AREA)
            .build_cartesian_2d(0f64..nc, 0f64..nr)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .axes(labels)
            .draw()
            .map_err(err)?;
        let cells = pairs.iter().enumerate().flat_map(|(i, p)| {
            p.choices.iter().enumerate().flat_map(move |(k, pair)| {
                (0..2).map(move |m| {
                    let x = (2 * k + m) as f64;
                    let y = nr - 1.0 - i as f64;
                    Rectangle::new(
                        [(x + 0.04, y + 0.06), (x + 0.96, y + 0.94)],
                        colour(pair[m], m).filled(),
                    )
                })
            })
        });
        chart.draw_series(cells).map_err(err)?;
        row_names(root, &chart, &names, 0.0, |i| nr - 0.5 - i as f64)?;
        let style = font(11).pos(Pos::new(HPos::Center, VPos::Top));
        for k in 0..seeds {
            let seed = a.seeds.get(k).map_or_else(|| k.to_string(), i64::to_string);
            for m in 0..2 {
                let (px, py) = chart.backend_coord(&((2 * k + m) as f64 + 0.5, 0.0));
                let label = if m == 0 {
                    format!("{seed}:A")
                } else {
                    "B".to_owned()
                };
                root.draw(&Text::new(label, (px, py + 4), style.clone()))
                    .map_err(err)?;
            }
        }
        let key = [
            ("chose its memory's branch", colour(Choice::A, 0)),
            ("chose the other branch", colour(Choice::B, 0)),
            ("neither (ambiguous)", colour(Choice::None, 0)),
        ];
        let legend_style = font(11).pos(Pos::new(HPos::Left, VPos::Center));
        let base_y = 16;
        for (j, (label, c)) in key.iter().enumerate() {
            let x = 200 + 175 * i32::try_from(j).unwrap_or(0);
            root.draw(&Rectangle::new(
                [(x, base_y - 5), (x + 10, base_y + 5)],
                c.filled(),
            ))
            .map_err(err)?;
            root.draw(&Text::new(
                (*label).to_owned(),
                (x + 14, base_y),
                legend_style.clone(),
            ))
            .map_err(err)?;
        }
        Ok(())
    })
}

fn matched(s: &MemorySection, title: &str, labels: (&str, &str)) -> Result<String, String> {
    let v = &s.audit.matched_world_value;
    let groups = [("memory A", [v.AA, v.AB]), ("memory B", [v.BA, v.BB])];
    style::svg(title, 320, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(10)
            .margin_left(20)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..2.0, 0f64..1.05)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_grid()
            .x_labels(0)
            .axes(labels)
            .label_style(font(11))
            .draw()
            .map_err(err)?;
        for w in 0..2 {
            let colour = style::series(w);
            let bars = groups.iter().enumerate().filter_map(|(g, (_, vals))| {
                let value = vals[w]?;
                let x = g as f64 + 0.15 + 0.35 * w as f64;
                Some(Rectangle::new(
                    [(x, 0.0), (x + 0.33, value)],
                    colour.filled(),
                ))
            });
            chart
                .draw_series(bars)
                .map_err(err)?
                .label(if w == 0 {
                    "executed in world A"
                } else {
                    "executed in world B"
                })
                .legend(move |(x, y)| {
                    Rectangle::new([(x + 4, y - 4), (x + 12, y + 4)], colour.filled())
                });
        }
        let style = font(12).pos(Pos::new(HPos::Center, VPos::Top));
        for (g, (name, _)) in groups.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(g as f64 + 0.5, 0.0));
            root.draw(&Text::new((*name).to_owned(), (px, py + 6), style.clone()))
                .map_err(err)?;
        }
        style::legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}
