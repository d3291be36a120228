//! Threshold sweep: tokens saved on failed runs against false terminal firings on healthy
//! runs, one labelled point per setting, the default thresholds highlighted.

use super::common::{
    anchored, compact, de, draw_mesh, fit, integer_tick, integer_ticks, note_in_plot, relative,
    text_size, text_style, title_style, truncate, Drawn, Legend, Occupied, Swatch, BLUE_, INK,
    LABEL_SIZE, MUTED, RED_,
};
use super::data::SweepPoint;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use std::collections::BTreeMap;

const RADIUS: i32 = 6;
const DEFAULT_RADIUS: i32 = 9;
/// A point's label is cut to this many characters.
const LABEL_CHARS: usize = 44;

pub fn title(points: &[SweepPoint]) -> String {
    format!(
        "Threshold sweep: tokens saved vs false terminal firings ({} settings)",
        points.len()
    )
}

/// Settings at the same spot, keyed by (false firings, tokens saved); the default first.
fn groups(points: &[SweepPoint]) -> BTreeMap<(u64, u64), Vec<&SweepPoint>> {
    let mut groups: BTreeMap<(u64, u64), Vec<&SweepPoint>> = BTreeMap::new();
    for p in points {
        groups
            .entry((p.false_terminal_on_healthy, p.tokens_saved_on_failed))
            .or_default()
            .push(p);
    }
    for members in groups.values_mut() {
        members.sort_by_key(|p| !p.is_default);
    }
    groups
}

/// Draws the chart of `points` onto `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, points: &[SweepPoint]) -> Drawn {
    root.fill(&WHITE).map_err(de)?;
    let groups = groups(points);
    // The axes reach the intervals' ends, not only the points.
    let max_x = points
        .iter()
        .map(|p| {
            let hi = p.false_terminal_interval.map_or(0.0, |[_, hi]| hi);
            (p.false_terminal_on_healthy as f64).max(hi)
        })
        .fold(0.0, f64::max);
    let max_y = points
        .iter()
        .map(|p| {
            let hi = p.saved_interval.map_or(0, |[_, hi]| hi);
            p.tokens_saved_on_failed.max(hi)
        })
        .max()
        .unwrap_or(0);
    let any_default = points.iter().any(|p| p.is_default);
    let any_interval = points
        .iter()
        .any(|p| p.saved_interval.is_some() || p.false_terminal_interval.is_some());

    let mut legend = Legend::default();
    legend.push(
        Swatch::Dot(BLUE_.mix(0.85).filled(), RADIUS),
        "threshold setting",
    );
    if any_default {
        legend.push(
            Swatch::Dot(RED_.filled(), DEFAULT_RADIUS),
            "default thresholds",
        );
    }
    if any_interval {
        legend.push(
            Swatch::Line(MUTED.mix(0.45).stroke_width(1)),
            "95% interval (bootstrap over projects)",
        );
    }
    let (area, strip) = legend.split(root)?;

    let x_hi = (max_x + 0.6).max(1.6);
    let y_hi = if max_y == 0 {
        1000.0
    } else {
        max_y as f64 * 1.15
    };
    let width = area.dim_in_pixel().0 as i32;
    let caption = fit(&area, &title(points), &title_style(), width - 40)?;
    let mut chart = ChartBuilder::on(&area)
        .caption(caption, title_style())
        .margin(14)
        .margin_right(28)
        .x_label_area_size(46)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.6..x_hi, 0f64..y_hi)
        .map_err(de)?;
    draw_mesh(
        chart
            .configure_mesh()
            .x_desc("false terminal firings on healthy runs (count)")
            .y_desc("tokens saved on failed runs")
            .x_labels(integer_ticks(0.0, x_hi))
            .x_label_formatter(&integer_tick)
            .y_label_formatter(&|v| compact(*v)),
    )?;

    let plot = chart.plotting_area();
    let (x_pixels, y_pixels) = plot.get_pixel_range();
    let mut taken = Occupied::default();
    // Each point's intervals under the points: savings up and down, healthy runs cut
    // left and right.
    for p in points {
        let (x, y) = (
            p.false_terminal_on_healthy as f64,
            p.tokens_saved_on_failed as f64,
        );
        let style = MUTED.mix(0.45).stroke_width(1);
        if let Some([lo, hi]) = p.saved_interval {
            let bar = vec![(x, lo as f64), (x, hi as f64)];
            plot.draw(&PathElement::new(bar, style)).map_err(de)?;
        }
        if let Some([lo, hi]) = p.false_terminal_interval {
            plot.draw(&PathElement::new(vec![(lo, y), (hi, y)], style))
                .map_err(de)?;
        }
    }
    // Points first (non-default under default), each reserving its disc.
    for default_pass in [false, true] {
        for (&(x, y), members) in &groups {
            let is_default = members[0].is_default;
            if is_default != default_pass {
                continue;
            }
            let at = (x as f64, y as f64);
            let (px, py) = chart.backend_coord(&at);
            let r = if is_default { DEFAULT_RADIUS } else { RADIUS };
            taken.take((px - r, py - r, px + r, py + r));
            if is_default {
                plot.draw(&Circle::new(at, r, RED_.filled())).map_err(de)?;
                plot.draw(&Circle::new(at, r, INK.stroke_width(1)))
                    .map_err(de)?;
            } else {
                plot.draw(&Circle::new(at, r, BLUE_.mix(0.85).filled()))
                    .map_err(de)?;
            }
        }
    }

    // Labels: the default first, then by savings (highest first), then by false firings.
    let mut order: Vec<(&(u64, u64), &Vec<&SweepPoint>)> = groups.iter().collect();
    order.sort_by(|a, b| {
        b.1[0]
            .is_default
            .cmp(&a.1[0].is_default)
            .then_with(|| b.0 .1.cmp(&a.0 .1))
            .then_with(|| a.0 .0.cmp(&b.0 .0))
    });
    let mut omitted = 0;
    for (&(x, y), members) in order {
        let mut label = truncate(&members[0].label, LABEL_CHARS);
        if members.len() > 1 {
            label.push_str(&format!(" (+{} more here)", members.len() - 1));
        }
        let is_default = members[0].is_default;
        let color = if is_default { RED_ } else { INK };
        let style = text_style(LABEL_SIZE, color);
        let (w, h) = text_size(&area, &label, &style)?;
        let (px, py) = chart.backend_coord(&(x as f64, y as f64));
        let r = if is_default { DEFAULT_RADIUS } else { RADIUS } + 4;
        let candidates = [
            (px + r, py - h / 2),
            (px - r - w, py - h / 2),
            (px - w / 2, py - r - h),
            (px - w / 2, py + r),
            (px + r - 2, py - r - h + 2),
            (px + r - 2, py + r - 2),
            (px - r - w + 2, py - r - h + 2),
            (px - r - w + 2, py + r - 2),
        ];
        let spot = candidates.into_iter().find(|&(x0, y0)| {
            let rect = (x0, y0, x0 + w, y0 + h);
            x0 >= x_pixels.start + 2
                && x0 + w <= x_pixels.end - 2
                && y0 >= y_pixels.start + 2
                && y0 + h <= y_pixels.end - 2
                && !taken.collides(rect, 2)
        });
        let Some((x0, y0)) = spot else {
            omitted += 1;
            continue;
        };
        taken.take((x0, y0, x0 + w, y0 + h));
        let style = anchored(style, HPos::Left, VPos::Top);
        area.draw(&Text::new(label, relative(&area, (x0, y0)), style))
            .map_err(de)?;
    }
    if omitted > 0 {
        let message = format!("labels of {omitted} settings left out for space");
        let at = relative(&area, (x_pixels.end - 6, y_pixels.start + 6));
        let style = anchored(text_style(LABEL_SIZE, MUTED), HPos::Right, VPos::Top);
        area.draw(&Text::new(message, at, style)).map_err(de)?;
    }
    if points.is_empty() {
        note_in_plot(
            &area,
            (x_pixels.clone(), y_pixels.clone()),
            "no sweep settings",
        )?;
    }

    if let Some(strip) = strip {
        legend.draw(&strip)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(label: &str, saved: u64, false_fires: u64, is_default: bool) -> SweepPoint {
        SweepPoint {
            label: label.into(),
            tokens_saved_on_failed: saved,
            false_terminal_on_healthy: false_fires,
            is_default,
            saved_interval: None,
            false_terminal_interval: None,
        }
    }

    #[test]
    fn equal_points_group_with_the_default_first() {
        let points = [
            point("a", 10, 0, false),
            point("b", 10, 0, true),
            point("c", 5, 1, false),
        ];
        let g = groups(&points);
        let labels: Vec<Vec<&str>> = g
            .values()
            .map(|m| m.iter().map(|p| p.label.as_str()).collect())
            .collect();
        assert_eq!(labels, [vec!["b", "a"], vec!["c"]]);
    }
}
