//! Corpus: tokens saved per work order (each guard alone) and by all guards together,
//! as horizontal bars sorted by savings.

use super::common::{
    anchored, compact, de, draw_mesh, fit, note, relative, text, text_size, text_style, thousands,
    title_style, Drawn, Legend, Swatch, BLUE_, INK, ORANGE_,
};
use super::data::CorpusChart;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

/// The label `ChartData` gives the combined bar.
pub const COMBINED: &str = "all guards (combined)";
/// Widest the row labels may get, as a share of the chart's width.
const MAX_LABEL_SHARE: f64 = 0.42;
/// The combined row's label: the bar's orange, darkened to read on white.
const COMBINED_TEXT: RGBColor = RGBColor(191, 87, 0);

pub fn title(corpus: &CorpusChart) -> String {
    format!(
        "Tokens saved per work order ({} runs, counterfactual)",
        corpus.runs
    )
}

/// Draws the chart of `corpus` onto `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, corpus: &CorpusChart) -> Drawn {
    root.fill(&WHITE).map_err(de)?;
    let mut rows: Vec<(&str, u64)> = corpus
        .savings
        .iter()
        .map(|(label, v)| (label.as_str(), *v))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let n = rows.len();
    let max = rows.iter().map(|r| r.1).max().unwrap_or(0);

    let mut legend = Legend::default();
    legend.push(Swatch::Box(BLUE_.filled()), "each guard alone");
    legend.push(Swatch::Box(ORANGE_.filled()), COMBINED);
    let (area, strip) = legend.split(root)?;

    let (width, height) = area.dim_in_pixel();
    // Row labels: as wide as the widest, within a share of the chart.
    let row_px = (f64::from(height) - 110.0) / n.max(1) as f64;
    let label_size = (row_px * 0.62).clamp(9.0, 13.0);
    let label_style = text(label_size);
    let max_label = (f64::from(width) * MAX_LABEL_SHARE) as i32;
    let mut labels = Vec::with_capacity(n);
    let mut widest = 0;
    for (label, _) in &rows {
        let s = fit(&area, label, &label_style, max_label)?;
        widest = widest.max(text_size(&area, &s, &label_style)?.0);
        labels.push(s);
    }

    let x_hi = if max == 0 { 1000.0 } else { max as f64 * 1.16 };
    let y_range = -0.6..(n.max(1) as f64 - 0.4);
    let caption = fit(&area, &title(corpus), &title_style(), width as i32 - 40)?;
    let mut chart = ChartBuilder::on(&area)
        .caption(caption, title_style())
        .margin(14)
        .margin_right(28)
        .x_label_area_size(46)
        .y_label_area_size(widest + 44)
        .build_cartesian_2d(0f64..x_hi, y_range)
        .map_err(de)?;
    draw_mesh(
        chart
            .configure_mesh()
            .x_desc("tokens saved (counterfactual)")
            .y_desc("work order (guard)")
            .x_label_formatter(&|v| compact(*v))
            .y_labels(0)
            .disable_y_mesh(),
    )?;

    let plot = chart.plotting_area();
    let (x_pixels, y_pixels) = plot.get_pixel_range();
    let value_size = label_size.min(12.0);
    for (i, ((label, v), text_label)) in rows.iter().zip(labels).enumerate() {
        let y = (n - 1 - i) as f64;
        let color = if *label == COMBINED { ORANGE_ } else { BLUE_ };
        if *v > 0 {
            plot.draw(&Rectangle::new(
                [(0.0, y - 0.34), (*v as f64, y + 0.34)],
                color.filled(),
            ))
            .map_err(de)?;
        }
        let (px, py) = chart.backend_coord(&(*v as f64, y));
        let value = anchored(text_style(value_size, INK), HPos::Left, VPos::Center);
        area.draw(&Text::new(
            thousands(*v),
            relative(&area, (px + 5, py)),
            value,
        ))
        .map_err(de)?;
        let style = anchored(
            text_style(
                label_size,
                if *label == COMBINED {
                    COMBINED_TEXT
                } else {
                    INK
                },
            ),
            HPos::Right,
            VPos::Center,
        );
        area.draw(&Text::new(
            text_label,
            relative(&area, (x_pixels.start - 8, py)),
            style,
        ))
        .map_err(de)?;
    }
    let center = relative(
        &area,
        (
            (x_pixels.start + x_pixels.end) / 2,
            (y_pixels.start + y_pixels.end) / 2,
        ),
    );
    if n == 0 {
        note(&area, center, "no savings recorded")?;
    } else if max == 0 {
        note(&area, center, "no guard would have saved tokens")?;
    }

    if let Some(strip) = strip {
        legend.draw(&strip)?;
    }
    Ok(())
}
