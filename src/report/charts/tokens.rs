//! Per run: tokens per turn with the tokens the earliest terminal firing would have saved
//! shaded, and under the curve one lane per guard that fired (issue #16: readable at 500
//! turns and 20 guards; the lanes are [`lanes`]).

mod lanes;

use super::common::{
    anchored, compact, de, draw_mesh, fit, integer_tick, integer_ticks, note, relative, text_style,
    title_style, Drawn, Legend, Swatch, BLUE_, LABEL_SIZE, MUTED, RED_,
};
use super::data::{Mark, RunChart};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// Non-terminal firings (a dark amber, readable on white).
pub(super) const OTHER: RGBColor = RGBColor(176, 104, 0);
/// The saved area.
const SAVED_ALPHA: f64 = 0.16;
/// Above this many turns the per-turn dots are left out (the line alone reads better).
const MAX_DOTS: usize = 150;
/// Width of the column left of the plots: the token axis, and the lanes' guard names.
const LEFT_W: u32 = 150;
/// A lane's height, pixels, at most and at least.
const LANE_MAX: i32 = 22;
const LANE_MIN: i32 = 12;
/// At most this share of the plot's height goes to the lanes.
const LANES_SHARE: f64 = 0.45;
/// Under the lanes: the turn axis.
const X_AXIS_H: u32 = 46;
const MARGIN: u32 = 14;
const MARGIN_RIGHT: u32 = 28;

pub fn title(run: &RunChart) -> String {
    format!("Tokens per turn: {}", run.name)
}

/// Draws the chart of `run` onto `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, run: &RunChart) -> Drawn {
    root.fill(&WHITE).map_err(de)?;
    let points = curve(run);
    let (lo, hi) = turn_range(run, &points);
    let legend = legend(run, &points);
    let (area, strip) = legend.split(root)?;
    let width = area.dim_in_pixel().0 as i32;
    let caption = fit(&area, &title(run), &title_style(), width - 40)?;
    let catalogue: Vec<&str> = crate::guards::registry()
        .iter()
        .map(|e| e.info.id)
        .collect();
    let lane_count = lanes::guards(&run.marks, &catalogue).len() as i32;
    // The lanes take what they need up to their share; the curve keeps the rest.
    let height = area.dim_in_pixel().1 as i32;
    let (lane_h, bottom_h) = match lane_count {
        0 => (0, 0),
        n => {
            let lane_h = ((f64::from(height) * LANES_SHARE) as i32 / n).clamp(LANE_MIN, LANE_MAX);
            (lane_h, lane_h * n + (X_AXIS_H + MARGIN) as i32)
        }
    };
    let (top, bottom) = area.split_vertically(height - bottom_h);
    let x_axis = lane_count == 0;
    let mut chart = ChartBuilder::on(&top)
        .caption(caption, title_style())
        .margin(MARGIN)
        .margin_right(MARGIN_RIGHT)
        .margin_bottom(if x_axis { MARGIN } else { 4 })
        .x_label_area_size(if x_axis { X_AXIS_H } else { 0 })
        .y_label_area_size(LEFT_W)
        .build_cartesian_2d((lo - 0.5)..(hi + 0.5), 0f64..y_top(&points))
        .map_err(de)?;
    let y_desc = if run.measured {
        "tokens per request"
    } else {
        "tokens per request (estimated)"
    };
    let mut mesh = chart.configure_mesh();
    mesh.y_desc(y_desc)
        .y_label_formatter(&|v| compact(*v))
        .x_labels(integer_ticks(lo, hi))
        .x_label_formatter(&integer_tick);
    if x_axis {
        mesh.x_desc("turn");
    }
    draw_mesh(&mut mesh)?;
    draw_curve(&chart, &area, &points, run.cut_at)?;
    if lane_count > 0 {
        let omitted = draw_lanes(&bottom, &run.marks, &catalogue, (lo, hi), lane_h)?;
        if omitted > 0 {
            let plot = chart.plotting_area();
            let (x_pixels, y_pixels) = plot.get_pixel_range();
            let message = format!("{omitted} labels left out for space");
            let at = relative(&area, (x_pixels.end - 6, y_pixels.start + 6));
            let style = anchored(text_style(LABEL_SIZE, MUTED), HPos::Right, VPos::Top);
            area.draw(&Text::new(message, at, style)).map_err(de)?;
        }
    }
    if let Some(strip) = strip {
        legend.draw(&strip)?;
    }
    Ok(())
}

/// (turn, tokens) of every request, by turn.
fn curve(run: &RunChart) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = run
        .tokens
        .iter()
        .map(|&(t, v)| (f64::from(t), v as f64))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// The first and last turn anything is drawn at.
fn turn_range(run: &RunChart, points: &[(f64, f64)]) -> (f64, f64) {
    let turns = points
        .iter()
        .map(|p| p.0)
        .chain(run.marks.iter().map(|m| f64::from(m.turn)))
        .chain(run.cut_at.map(f64::from));
    turns
        .fold(None, |acc: Option<(f64, f64)>, t| {
            Some(acc.map_or((t, t), |(a, b)| (a.min(t), b.max(t))))
        })
        .unwrap_or((1.0, 10.0))
}

/// The top of the token axis: the largest request, with a little headroom.
fn y_top(points: &[(f64, f64)]) -> f64 {
    let max = points.iter().map(|p| p.1).fold(0.0, f64::max);
    if max > 0.0 {
        max * 1.1
    } else {
        1000.0
    }
}

fn legend(run: &RunChart, points: &[(f64, f64)]) -> Legend {
    let mut legend = Legend::default();
    if !points.is_empty() {
        legend.push(Swatch::Line(BLUE_.stroke_width(2)), "tokens per request");
    }
    if run.marks.iter().any(|m| m.terminal) {
        legend.push(Swatch::Box(RED_.filled()), "terminal firing");
    }
    if run.marks.iter().any(|m| !m.terminal) {
        legend.push(
            Swatch::Box(OTHER.filled()),
            "firing (a band: turn after turn)",
        );
    }
    if let Some(t) = run.cut_at {
        legend.push(
            Swatch::Box(RED_.mix(SAVED_ALPHA * 1.6).filled()),
            format!("saved by the earliest terminal firing (turn {t})"),
        );
    }
    legend
}

type CurveChart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The saved area (under the curve from the cut on), then the curve on top of it.
fn draw_curve<DB: DrawingBackend>(
    chart: &CurveChart<'_, DB>,
    area: &DrawingArea<DB, Shift>,
    points: &[(f64, f64)],
    cut_at: Option<u32>,
) -> Drawn {
    let plot = chart.plotting_area();
    if let Some(t) = cut_at {
        let after: Vec<(f64, f64)> = points
            .iter()
            .copied()
            .filter(|p| p.0 >= f64::from(t))
            .collect();
        if let (Some(first), Some(last)) = (after.first(), after.last()) {
            if last.0 > first.0 {
                let mut poly = vec![(first.0, 0.0)];
                poly.extend(after.iter().copied());
                poly.push((last.0, 0.0));
                plot.draw(&Polygon::new(poly, RED_.mix(SAVED_ALPHA).filled()))
                    .map_err(de)?;
            }
        }
    }
    if points.is_empty() {
        let (w, h) = plot.dim_in_pixel();
        let center = relative(area, plot.get_base_pixel());
        return note(
            area,
            (center.0 + w as i32 / 2, center.1 + h as i32 / 2),
            "no turns recorded",
        );
    }
    plot.draw(&PathElement::new(points.to_vec(), BLUE_.stroke_width(2)))
        .map_err(de)?;
    if points.len() <= MAX_DOTS {
        for &p in points {
            plot.draw(&Circle::new(p, 3, BLUE_.filled())).map_err(de)?;
        }
    }
    Ok(())
}

/// The lanes of `marks`, under the curve on the same turn axis, with the turn axis below
/// them; which firings merge into a band is decided at the plot's own pixels per turn.
/// Returns the labels left out for space.
fn draw_lanes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    marks: &[Mark],
    catalogue: &[&str],
    (lo, hi): (f64, f64),
    lane_h: i32,
) -> Drawn<usize> {
    let n = lanes::guards(marks, catalogue).len() as f64;
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .margin_top(0)
        .margin_right(MARGIN_RIGHT)
        .x_label_area_size(X_AXIS_H)
        .y_label_area_size(LEFT_W)
        .build_cartesian_2d((lo - 0.5)..(hi + 0.5), 0f64..n)
        .map_err(de)?;
    draw_mesh(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("turn")
            .x_labels(integer_ticks(lo, hi))
            .x_label_formatter(&integer_tick),
    )?;
    let (x_pixels, y_pixels) = chart.plotting_area().get_pixel_range();
    let x = |turn: f64| chart.backend_coord(&(turn, 0.0)).0;
    let geometry = lanes::Geometry {
        x: &x,
        left: x_pixels.start,
        right: x_pixels.end,
        top: y_pixels.start,
        lane_h,
        px_per_turn: f64::from(x_pixels.end - x_pixels.start) / (hi - lo + 1.0),
    };
    let lanes = lanes::lanes(marks, catalogue, geometry.px_per_turn);
    lanes::draw(area, &lanes, &geometry, LEFT_W as i32 - 12)
}
