//! Corpus: when each guard first fires in a run, one strip per guard that fired: a point
//! per run, the interquartile range as a box and the median as a bar.

use super::common::{
    anchored, de, draw_mesh, fit, integer_tick, integer_ticks, note_in_plot, quartiles, relative,
    text, text_size, text_style, title_style, Drawn, Legend, Swatch, BLUE_, GRID_LIGHT, MUTED,
};
use super::data::CorpusChart;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// Widest the row labels may get, as a share of the chart's width.
const MAX_LABEL_SHARE: f64 = 0.35;
/// Points at the same turn are spread vertically by this much (rows are 1 apart).
const STACK: f64 = 0.13;
const MEDIAN: RGBColor = RGBColor(20, 20, 20);
/// Right of the plot, where each row's `n = ...` goes, pixels.
const COUNT_AREA: i32 = 64;

pub fn title(corpus: &CorpusChart) -> String {
    format!("First-fire turn per guard ({} runs)", corpus.runs)
}

/// Lower quartile, median, upper quartile.
type Quartiles = (f64, f64, f64);

/// Rows: guards that fired, by median first-fire turn, then by name.
fn rows(corpus: &CorpusChart) -> Vec<(&str, Vec<u32>, Quartiles)> {
    let mut rows: Vec<_> = corpus
        .first_fire
        .iter()
        .filter_map(|(guard, turns)| {
            let mut sorted = turns.clone();
            sorted.sort_unstable();
            quartiles(&sorted).map(|q| (guard.as_str(), sorted, q))
        })
        .collect();
    rows.sort_by(|a, b| a.2 .1.total_cmp(&b.2 .1).then_with(|| a.0.cmp(b.0)));
    rows
}

/// The vertical offset of the `k`-th point at the same turn: 0, +s, -s, +2s, -2s, ...
fn stack_offset(k: usize) -> f64 {
    let step = k.div_ceil(2) as f64 * STACK;
    let offset = if k % 2 == 1 { step } else { -step };
    offset.clamp(-0.42, 0.42)
}

/// Draws the chart of `corpus` onto `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, corpus: &CorpusChart) -> Drawn {
    root.fill(&WHITE).map_err(de)?;
    let rows = rows(corpus);
    let n = rows.len();
    let max_turn = rows
        .iter()
        .filter_map(|r| r.1.last().copied())
        .max()
        .unwrap_or(10)
        .max(1);

    let mut legend = Legend::default();
    legend.push(
        Swatch::Dot(BLUE_.mix(0.75).filled(), 5),
        "first firing in one run",
    );
    legend.push(Swatch::Line(MEDIAN.stroke_width(3)), "median");
    legend.push(Swatch::Box(BLUE_.mix(0.18).filled()), "interquartile range");
    let (area, strip) = legend.split(root)?;

    let (width, height) = area.dim_in_pixel();
    let row_px = (f64::from(height) - 110.0) / n.max(1) as f64;
    let label_size = (row_px * 0.55).clamp(9.0, 13.0);
    let label_style = text(label_size);
    let max_label = (f64::from(width) * MAX_LABEL_SHARE) as i32;
    let mut labels = Vec::with_capacity(n);
    let mut widest = 0;
    for (guard, _, _) in &rows {
        let s = fit(&area, guard, &label_style, max_label)?;
        widest = widest.max(text_size(&area, &s, &label_style)?.0);
        labels.push(s);
    }

    let x_hi = f64::from(max_turn) + 1.0;
    let caption = fit(&area, &title(corpus), &title_style(), width as i32 - 40)?;
    let mut chart = ChartBuilder::on(&area)
        .caption(caption, title_style())
        .margin(14)
        .margin_right(COUNT_AREA)
        .x_label_area_size(46)
        .y_label_area_size(widest + 44)
        .build_cartesian_2d(0f64..x_hi, -0.6..(n.max(1) as f64 - 0.4))
        .map_err(de)?;
    draw_mesh(
        chart
            .configure_mesh()
            .x_desc("first-fire turn")
            .y_desc("guard")
            .x_labels(integer_ticks(0.0, x_hi))
            .x_label_formatter(&integer_tick)
            .y_labels(0)
            .disable_y_mesh(),
    )?;

    let plot = chart.plotting_area();
    let (x_pixels, y_pixels) = plot.get_pixel_range();
    for (i, ((_, turns, (q1, median, q3)), label)) in rows.iter().zip(labels).enumerate() {
        let y = (n - 1 - i) as f64;
        // Row guide, box, median, points.
        plot.draw(&PathElement::new(
            vec![(0.0, y), (x_hi, y)],
            GRID_LIGHT.stroke_width(1),
        ))
        .map_err(de)?;
        if q3 > q1 {
            plot.draw(&Rectangle::new(
                [(*q1, y - 0.3), (*q3, y + 0.3)],
                BLUE_.mix(0.18).filled(),
            ))
            .map_err(de)?;
        }
        plot.draw(&PathElement::new(
            vec![(*median, y - 0.4), (*median, y + 0.4)],
            MEDIAN.stroke_width(3),
        ))
        .map_err(de)?;
        let mut previous = None;
        let mut k = 0;
        for &t in turns {
            k = if previous == Some(t) { k + 1 } else { 0 };
            previous = Some(t);
            plot.draw(&Circle::new(
                (f64::from(t), y + stack_offset(k)),
                5,
                BLUE_.mix(0.75).filled(),
            ))
            .map_err(de)?;
        }

        let (_, py) = chart.backend_coord(&(0.0, y));
        let style = anchored(text(label_size), HPos::Right, VPos::Center);
        area.draw(&Text::new(
            label,
            relative(&area, (x_pixels.start - 8, py)),
            style,
        ))
        .map_err(de)?;
        let count = anchored(text_style(label_size, MUTED), HPos::Left, VPos::Center);
        area.draw(&Text::new(
            format!("n = {}", turns.len()),
            relative(&area, (x_pixels.end + 8, py)),
            count,
        ))
        .map_err(de)?;
    }
    if n == 0 {
        note_in_plot(
            &area,
            (x_pixels.clone(), y_pixels.clone()),
            "no guard fired",
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

    #[test]
    fn points_at_one_turn_spread_both_ways() {
        let offsets: Vec<f64> = (0..4).map(stack_offset).collect();
        assert_eq!(offsets, [0.0, STACK, -STACK, 2.0 * STACK]);
    }
}
