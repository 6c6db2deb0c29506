//! Fitted Q evaluation plots (SPEC.md §3).

use super::style::{self, MeshExt, err, font, series};
use crate::model::{FqeSection, PlotKind, PlotSpec};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Values outside this range never widen the estimate axes.
const SANE: (f64, f64) = (-0.5, 1.5);

/// The FQE plots, in page order.
pub(super) const KINDS: [PlotKind; 3] = [
    PlotKind::FqeFrames,
    PlotKind::FqeEstimates,
    PlotKind::FqeCurves,
];

/// Why a plot of `s` cannot be drawn, `None` when it can.
pub(super) fn missing(s: &FqeSection, kind: PlotKind) -> Option<String> {
    let r = &s.report;
    match kind {
        PlotKind::FqeEstimates => (!r
            .policies
            .iter()
            .flat_map(|p| &p.tasks)
            .any(|c| c.truth.is_some()))
        .then(|| "no ground truth given (fit with a collected run or --ground-truth)".to_owned()),
        PlotKind::FqeCurves => (!r
            .policies
            .iter()
            .flat_map(|p| &p.curves)
            .any(|c| c.iter().any(|p| p.loss > 0.0)))
        .then(|| "neural FQE did not run (no learning curves)".to_owned()),
        PlotKind::FqeFrames => s.frames.is_none().then(|| {
            s.frames_note
                .clone()
                .unwrap_or_else(|| "no frames were read".to_owned())
        }),
        _ => Some("not an FQE plot".to_owned()),
    }
}

pub(super) fn render(s: &FqeSection, plot: &PlotSpec) -> Result<Option<String>, String> {
    let labels = (plot.x_label.as_str(), plot.y_label.as_str());
    Ok(Some(match plot.kind {
        PlotKind::FqeEstimates => estimates(s, &plot.title, labels)?,
        PlotKind::FqeCurves => curves(s, &plot.title, labels)?,
        PlotKind::FqeFrames => match &s.frames {
            Some(strip) => super::frames::render(strip),
            None => return Ok(None),
        },
        _ => return Ok(None),
    }))
}

/// One (policy, task) cell with ground truth.
struct Point {
    truth: f64,
    neural: Option<(f64, f64, f64)>,
    linear: Option<f64>,
    naive: Option<f64>,
}

fn points(s: &FqeSection) -> Vec<Point> {
    s.report
        .policies
        .iter()
        .flat_map(|p| &p.tasks)
        .filter_map(|c| {
            Some(Point {
                truth: c.truth.as_ref()?.v_pi,
                // The episode-bootstrap interval when the fit made refits, else the seeds' range.
                neural: c.neural.as_ref().map(|n| match &n.interval {
                    Some(i) => (n.mean, i.lo, i.hi),
                    None => (n.mean, n.min, n.max),
                }),
                linear: c.linear,
                naive: c.naive,
            })
        })
        .collect()
}

fn estimates(s: &FqeSection, title: &str, labels: (&str, &str)) -> Result<String, String> {
    let bootstrapped = s
        .report
        .policies
        .iter()
        .flat_map(|p| &p.tasks)
        .any(|c| c.neural.as_ref().is_some_and(|n| n.interval.is_some()));
    let neural_label = if bootstrapped {
        "neural FQE (95% episode-bootstrap interval)"
    } else if s.report.seeds.len() > 1 {
        "neural FQE (seed mean, min–max)"
    } else {
        "neural FQE (one seed)"
    };
    let pts = points(s);
    let values = pts.iter().flat_map(|p| {
        let n = p
            .neural
            .map_or([None, None], |(_, lo, hi)| [Some(lo), Some(hi)]);
        [Some(p.truth), p.linear, p.naive, n[0], n[1]]
            .into_iter()
            .flatten()
    });
    // A diverged estimate (e.g. linear FQE at −250) would squash every other marker: the axes
    // cover [0, 1] and the values within [−0.5, 1.5]; markers beyond are clamped to the edge and
    // counted in a note on the plot.
    let (lo, hi) = values
        .clone()
        .filter(|v| (SANE.0..=SANE.1).contains(v))
        .fold((0.0f64, 1.0f64), |(a, b), v| (a.min(v), b.max(v)));
    let outside = values.filter(|v| *v < lo || *v > hi).count();
    let pad = (hi - lo) * 0.03;
    let range = (lo - pad)..(hi + pad);
    let clamp = |v: f64| v.clamp(range.start, range.end);
    style::svg(title, 480, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .margin_right(260)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(range.clone(), range.clone())
            .map_err(err)?;
        chart
            .configure_mesh()
            .light_grid()
            .axes(labels)
            .label_style(font(11))
            .draw()
            .map_err(err)?;
        let grey = RGBColor(130, 130, 130);
        chart
            .draw_series(DashedLineSeries::new(
                vec![(range.start, range.start), (range.end, range.end)],
                6,
                4,
                grey.stroke_width(1),
            ))
            .map_err(err)?
            .label("exact (V̂ = V)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], grey));
        let c0 = series(0);
        chart
            .draw_series(pts.iter().filter_map(|p| {
                let (_, lo, hi) = p.neural?;
                Some(PathElement::new(
                    vec![(p.truth, lo), (p.truth, hi)],
                    c0.stroke_width(2),
                ))
            }))
            .map_err(err)?;
        chart
            .draw_series(
                pts.iter().filter_map(|p| {
                    Some(Circle::new((p.truth, clamp(p.neural?.0)), 4, c0.filled()))
                }),
            )
            .map_err(err)?
            .label(neural_label)
            .legend(move |(x, y)| Circle::new((x + 8, y), 4, c0.filled()));
        let c1 = series(1);
        chart
            .draw_series(pts.iter().filter_map(|p| {
                Some(TriangleMarker::new(
                    (p.truth, clamp(p.linear?)),
                    5,
                    c1.filled(),
                ))
            }))
            .map_err(err)?
            .label("linear FQE")
            .legend(move |(x, y)| TriangleMarker::new((x + 8, y), 5, c1.filled()));
        let c2 = series(7);
        chart
            .draw_series(pts.iter().filter_map(|p| {
                Some(Cross::new(
                    (p.truth, clamp(p.naive?)),
                    4,
                    c2.stroke_width(2),
                ))
            }))
            .map_err(err)?
            .label("naive dataset average")
            .legend(move |(x, y)| Cross::new((x + 8, y), 4, c2.stroke_width(2)));
        // The legend stands in the right margin: markers may fill the whole plot area.
        let x0 = i32::try_from(style::WIDTH).unwrap_or(720) - 240;
        let text_style = font(11).pos(Pos::new(HPos::Left, VPos::Center));
        let entries = [
            "exact (V̂ = V)",
            neural_label,
            "linear FQE",
            "naive dataset average",
        ];
        for (k, label) in entries.iter().enumerate() {
            let y = 44 + 22 * i32::try_from(k).unwrap_or(0);
            let at = (x0 + 8, y);
            match k {
                0 => root.draw(&PathElement::new(vec![(x0, y), (x0 + 16, y)], grey)),
                1 => root.draw(&Circle::new(at, 4, c0.filled())),
                2 => root.draw(&TriangleMarker::new(at, 5, c1.filled())),
                _ => root.draw(&Cross::new(at, 4, c2.stroke_width(2))),
            }
            .map_err(err)?;
            root.draw(&Text::new(
                (*label).to_owned(),
                (x0 + 24, y),
                text_style.clone(),
            ))
            .map_err(err)?;
        }
        if outside > 0 {
            let style = font(11)
                .color(&RGBColor(160, 60, 60))
                .pos(Pos::new(HPos::Left, VPos::Center));
            for (k, line) in [
                format!("{outside} value(s) outside the axes"),
                "are drawn at their edge".to_owned(),
            ]
            .into_iter()
            .enumerate()
            {
                let y = 150 + 16 * i32::try_from(k).unwrap_or(0);
                root.draw(&Text::new(line, (x0, y), style.clone()))
                    .map_err(err)?;
            }
        }
        Ok(())
    })
}

fn curves(s: &FqeSection, title: &str, labels: (&str, &str)) -> Result<String, String> {
    let r = &s.report;
    let all = r.policies.iter().flat_map(|p| p.curves.iter().flatten());
    let (mut lo, mut hi, mut steps) = (f64::INFINITY, 0.0f64, 1usize);
    for p in all.filter(|p| p.loss > 0.0) {
        lo = lo.min(p.loss);
        hi = hi.max(p.loss);
        steps = steps.max(p.step);
    }
    if !lo.is_finite() {
        lo = 1e-6;
    }
    let hi = if hi > lo { hi * 1.2 } else { lo * 10.0 };
    let max_step = steps as f64;
    style::svg(title, 420, |root| {
        let mut chart = ChartBuilder::on(root)
            .margin(12)
            .margin_right(20)
            .x_label_area_size(44)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..max_step, (lo / 1.2..hi).log_scale())
            .map_err(err)?;
        chart
            .configure_mesh()
            .light_grid()
            .axes(labels)
            .y_label_formatter(&|v| {
                if *v >= 0.01 {
                    format!("{v:.2}")
                } else {
                    format!("{v:.0e}")
                }
            })
            .x_label_formatter(&|v| format!("{v:.0}"))
            .label_style(font(11))
            .draw()
            .map_err(err)?;
        for (i, p) in r.policies.iter().enumerate() {
            let colour = series(i);
            let mut labelled = false;
            for curve in &p.curves {
                let line: Vec<(f64, f64)> = curve
                    .iter()
                    .filter(|c| c.loss > 0.0)
                    .map(|c| (c.step as f64, c.loss))
                    .collect();
                if line.is_empty() {
                    continue;
                }
                let drawn = chart
                    .draw_series(LineSeries::new(line, colour.stroke_width(2)))
                    .map_err(err)?;
                if !labelled {
                    drawn.label(p.policy.clone()).legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
                    });
                    labelled = true;
                }
            }
        }
        style::legend(&mut chart, SeriesLabelPosition::UpperRight)
    })
}
