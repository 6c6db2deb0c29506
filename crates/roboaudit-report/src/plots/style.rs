//! Shared drawing helpers: the SVG canvas, fonts, colours, row labels, heat grids, colour bars.

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of every plot in pixels (the page column is 720 px wide).
pub(super) const WIDTH: u32 = 720;
/// Height of one categorical row in pixels.
pub(super) const ROW: u32 = 20;
/// Space left of the plot for row names, in pixels.
pub(super) const NAME_AREA: u32 = 190;

/// The drawing area of one SVG plot.
pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Any backend error as a message.
pub(super) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Draws one `width × height` SVG with `draw` and returns its text, labelled with `title` for
/// screen readers.
pub(super) fn svg(
    title: &str,
    height: u32,
    draw: impl FnOnce(&Area) -> Result<(), String>,
) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        draw(&root)?;
        root.present().map_err(err)?;
    }
    let label = title.replace('&', "&amp;").replace('"', "&quot;");
    Ok(out.replacen(
        "<svg ",
        &format!("<svg role=\"img\" aria-label=\"{label}\" "),
        1,
    ))
}

/// The settings every plot's mesh shares, called on [`ChartContext::configure_mesh`]'s style.
pub(super) trait MeshExt {
    /// The axis descriptions `(x, y)` in the 13 px font.
    fn axes(&mut self, labels: (&str, &str)) -> &mut Self;
    /// Faint major grid lines only (no minor ones).
    fn light_grid(&mut self) -> &mut Self;
}

impl<X: Ranged, Y: Ranged, DB: DrawingBackend> MeshExt for MeshStyle<'_, '_, X, Y, DB> {
    fn axes(&mut self, (x, y): (&str, &str)) -> &mut Self {
        self.x_desc(x).y_desc(y).axis_desc_style(font(13))
    }

    fn light_grid(&mut self) -> &mut Self {
        self.light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.08))
    }
}

/// Draws the series legend of `chart` at `position`, on a light box with a thin border.
pub(super) fn legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK.mix(0.3))
        .label_font(font(11))
        .draw()
        .map_err(err)
}

/// The label font at `size` px.
pub(super) fn font(size: u32) -> TextStyle<'static> {
    // plotters draws SVG text at ~0.97 of the requested size; labels must stay readable when
    // the 720 px plot is scaled into a page column.
    ("sans-serif", size + 2).into_font().color(&BLACK)
}

/// Tableau-10 colours for series.
pub(super) const PALETTE: [RGBColor; 8] = [
    RGBColor(78, 121, 167),
    RGBColor(242, 142, 43),
    RGBColor(89, 161, 79),
    RGBColor(225, 87, 89),
    RGBColor(176, 122, 161),
    RGBColor(118, 183, 178),
    RGBColor(237, 201, 72),
    RGBColor(156, 117, 95),
];

/// Colour of series `i`.
pub(super) fn series(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

fn lerp(a: RGBColor, b: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let mix = |x: u8, y: u8| {
        let v = f64::from(x) + (f64::from(y) - f64::from(x)) * t;
        // In [0, 255] by construction.
        v.round() as u8
    };
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Sequential blue for a value in [0, 1] (white → dark blue).
pub(super) fn blues(t: f64) -> RGBColor {
    lerp(RGBColor(247, 251, 255), RGBColor(8, 48, 107), t)
}

/// Sequential orange for a value in [0, 1] (white → dark orange).
pub(super) fn oranges(t: f64) -> RGBColor {
    lerp(RGBColor(255, 245, 235), RGBColor(127, 39, 4), t)
}

/// Writes `names` right-aligned left of the chart, row `i` centred at `y(i)` in chart coordinates.
pub(super) fn row_names<X, Y>(
    root: &Area,
    chart: &ChartContext<SVGBackend, Cartesian2d<X, Y>>,
    names: &[String],
    x0: X::ValueType,
    y: impl Fn(usize) -> Y::ValueType,
) -> Result<(), String>
where
    X: plotters::coord::ranged1d::Ranged,
    Y: plotters::coord::ranged1d::Ranged,
    X::ValueType: Clone,
{
    let style = font(12).pos(Pos::new(HPos::Right, VPos::Center));
    for (i, name) in names.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(x0.clone(), y(i)));
        let shown: String = if name.chars().count() > 26 {
            name.chars().take(25).chain(std::iter::once('…')).collect()
        } else {
            name.clone()
        };
        root.draw(&Text::new(shown, (px - 6, py), style.clone()))
            .map_err(err)?;
    }
    Ok(())
}

/// A vertical colour bar at pixel `(x, top)`, `height` px tall, from `lo` (bottom) to `hi`.
pub(super) fn colour_bar(
    root: &Area,
    (x, top): (i32, i32),
    height: i32,
    colour: impl Fn(f64) -> RGBColor,
    (lo, hi): (&str, &str),
) -> Result<(), String> {
    let steps = 20;
    let step = (height / steps).max(1);
    for k in 0..steps {
        let t = f64::from(k) / f64::from(steps - 1);
        let y1 = top + height - (k + 1) * step;
        root.draw(&Rectangle::new(
            [(x, y1), (x + 14, y1 + step)],
            colour(t).filled(),
        ))
        .map_err(err)?;
    }
    let style = font(11).pos(Pos::new(HPos::Left, VPos::Center));
    root.draw(&Text::new(
        hi.to_owned(),
        (x + 18, top + height - steps * step),
        style.clone(),
    ))
    .map_err(err)?;
    root.draw(&Text::new(lo.to_owned(), (x + 18, top + height), style))
        .map_err(err)?;
    Ok(())
}

/// Formats an axis value that should be an integer rank or count; other values print empty.
pub(super) fn integer_label(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 && *v >= 0.0 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

/// A heat grid: `values[row][col]` in [0, 1], rows top to bottom named `rows`, columns ranked
/// 1..=n from the left; a colour bar at the right.
pub(super) fn heat_grid(
    root: &Area,
    rows: &[String],
    values: &[Vec<f64>],
    colour: &dyn Fn(f64) -> RGBColor,
    labels: (&str, &str),
    bar: (&str, &str),
) -> Result<(), String> {
    let n_rows = rows.len();
    let n_cols = values.first().map_or(0, Vec::len).max(1);
    let (nr, nc) = (n_rows as f64, n_cols as f64);
    let mut chart = ChartBuilder::on(root)
        .margin_top(10)
        .margin_right(90)
        .x_label_area_size(50)
        .y_label_area_size(NAME_AREA)
        .build_cartesian_2d(0.5f64..nc + 0.5, 0f64..nr)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(n_cols.min(12))
        .x_label_formatter(&integer_label)
        .y_labels(0)
        .axes(labels)
        .label_style(font(12))
        .draw()
        .map_err(err)?;
    let cells = values.iter().enumerate().flat_map(|(i, row)| {
        row.iter().enumerate().map(move |(j, &v)| {
            let (x, y) = (j as f64 + 0.5, nr - 1.0 - i as f64);
            Rectangle::new([(x, y), (x + 1.0, y + 1.0)], colour(v).filled())
        })
    });
    chart.draw_series(cells).map_err(err)?;
    row_names(root, &chart, rows, 0.5, |i| nr - 0.5 - i as f64)?;
    let (_, top) = chart.backend_coord(&(0.5, nr));
    let (right, bottom) = chart.backend_coord(&(nc + 0.5, 0.0));
    colour_bar(
        root,
        (right + 12, top),
        (bottom - top).min(160),
        colour,
        bar,
    )
}
