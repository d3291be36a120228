//! Per run: tokens per turn, a marker at every turn a guard fired, and the tokens the
//! earliest terminal firing would have saved shaded.

use super::common::{
    anchored, compact, de, draw_mesh, fit, integer_tick, integer_ticks, note, relative, text,
    text_size, text_style, title_style, truncate, Drawn, Legend, Occupied, Swatch, BLUE_, INK,
    LABEL_SIZE, MUTED, RED_,
};
use super::data::{Mark, RunChart};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use std::collections::BTreeMap;

/// Marker labels shown per turn before `+N more`.
const LINES_PER_TURN: usize = 3;
/// A marker label (`guard/action`) is cut to this many characters.
const LABEL_CHARS: usize = 36;
/// Height of one marker-label line, pixels.
const LANE_H: i32 = 16;
/// Space between a marker label's text and its block's edge, pixels.
const PAD: i32 = 4;
/// Non-terminal firings (a dark amber, readable on white).
const OTHER: RGBColor = RGBColor(176, 104, 0);
/// The saved area.
const SAVED_ALPHA: f64 = 0.16;
/// Above this many turns the per-turn dots are left out (the line alone reads better).
const MAX_DOTS: usize = 150;

pub fn title(run: &RunChart) -> String {
    format!("Tokens per turn: {}", run.name)
}

/// Draws the chart of `run` onto `root`.
pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, run: &RunChart) -> Drawn {
    root.fill(&WHITE).map_err(de)?;
    let mut points: Vec<(f64, f64)> = run
        .tokens
        .iter()
        .map(|&(t, v)| (f64::from(t), v as f64))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let turns = points
        .iter()
        .map(|p| p.0)
        .chain(run.marks.iter().map(|m| f64::from(m.turn)))
        .chain(run.cut_at.map(f64::from));
    let (lo, hi) = turns
        .fold(None, |acc: Option<(f64, f64)>, t| {
            Some(acc.map_or((t, t), |(a, b)| (a.min(t), b.max(t))))
        })
        .unwrap_or((1.0, 10.0));
    let max_tok = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let max_tok = if max_tok > 0.0 { max_tok } else { 1000.0 };
    // Headroom for the marker labels, growing with the turns marked.
    let marked = run
        .marks
        .iter()
        .map(|m| m.turn)
        .collect::<std::collections::BTreeSet<_>>();
    let y_hi = max_tok
        * match marked.len() {
            0 => 1.1,
            n => (1.45 + 0.05 * n as f64).min(2.1),
        };

    let mut by_turn: BTreeMap<u32, Vec<&Mark>> = BTreeMap::new();
    for m in &run.marks {
        by_turn.entry(m.turn).or_default().push(m);
    }

    let mut legend = Legend::default();
    if !points.is_empty() {
        legend.push(Swatch::Line(BLUE_.stroke_width(2)), "tokens per request");
    }
    if run.marks.iter().any(|m| m.terminal) {
        legend.push(Swatch::Line(RED_.stroke_width(2)), "terminal firing");
    }
    if run.marks.iter().any(|m| !m.terminal) {
        legend.push(Swatch::Dashed(OTHER.stroke_width(2)), "other firing");
    }
    if let Some(t) = run.cut_at {
        legend.push(
            Swatch::Box(RED_.mix(SAVED_ALPHA * 1.6).filled()),
            format!("saved by the earliest terminal firing (turn {t})"),
        );
    }
    let (area, strip) = legend.split(root)?;

    let width = area.dim_in_pixel().0 as i32;
    let caption = fit(&area, &title(run), &title_style(), width - 40)?;
    let mut chart = ChartBuilder::on(&area)
        .caption(caption, title_style())
        .margin(14)
        .margin_right(28)
        .x_label_area_size(46)
        .y_label_area_size(80)
        .build_cartesian_2d((lo - 0.5)..(hi + 0.5), 0f64..y_hi)
        .map_err(de)?;
    let y_desc = if run.measured {
        "tokens per request"
    } else {
        "tokens per request (estimated)"
    };
    draw_mesh(
        chart
            .configure_mesh()
            .x_desc("turn")
            .y_desc(y_desc)
            .x_labels(integer_ticks(lo, hi))
            .x_label_formatter(&integer_tick)
            .y_label_formatter(&|v| compact(*v)),
    )?;

    let plot = chart.plotting_area();
    // The saved area: under the curve from the cut to the end of the run.
    if let Some(t) = run.cut_at {
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
    // One marker line per turn; a terminal firing wins the colour.
    for (turn, marks) in &by_turn {
        let x = f64::from(*turn);
        let line = vec![(x, 0.0), (x, y_hi)];
        if marks.iter().any(|m| m.terminal) {
            plot.draw(&PathElement::new(line, RED_.stroke_width(2)))
        } else {
            plot.draw(&plotters::element::DashedPathElement::new(
                line,
                6,
                4,
                OTHER.stroke_width(2),
            ))
        }
        .map_err(de)?;
    }
    if points.is_empty() {
        let (w, h) = plot.dim_in_pixel();
        let center = relative(&area, plot.get_base_pixel());
        note(
            &area,
            (center.0 + w as i32 / 2, center.1 + h as i32 / 2),
            "no turns recorded",
        )?;
    } else {
        plot.draw(&PathElement::new(points.clone(), BLUE_.stroke_width(2)))
            .map_err(de)?;
        if points.len() <= MAX_DOTS {
            for &p in &points {
                plot.draw(&Circle::new(p, 3, BLUE_.filled())).map_err(de)?;
            }
        }
    }

    // Marker labels, stacked in lanes in the headroom above the curve, each block hanging
    // off its marker line like a flag; terminal turns are placed first.
    let top = chart.backend_coord(&(lo, y_hi)).1 + 4;
    let bottom = chart.backend_coord(&(lo, max_tok)).1 - 4;
    let (x_pixels, y_pixels) = plot.get_pixel_range();
    let lanes = ((bottom - top) / LANE_H).max(0) as usize;
    let style = text(LABEL_SIZE);
    let mut taken = Occupied::default();
    let mut omitted = 0;
    let mut order: Vec<(&u32, &Vec<&Mark>)> = by_turn.iter().collect();
    order.sort_by_key(|(turn, marks)| (!marks.iter().any(|m| m.terminal), **turn));
    for (turn, marks) in order {
        let x = chart.backend_coord(&(f64::from(*turn), 0.0)).0;
        let mut placed = false;
        for candidate in label_candidates(marks) {
            let widths = candidate
                .iter()
                .map(|(s, _)| text_size(&area, s, &style).map(|(w, _)| w))
                .collect::<Drawn<Vec<i32>>>()?;
            let w = widths.iter().copied().max().unwrap_or(0) + 2 * PAD;
            let right = x + 2 + w <= x_pixels.end;
            let x0 = if right { x + 2 } else { x - 2 - w };
            let n = candidate.len();
            let height = n as i32 * LANE_H;
            let Some(lane) = (0..=lanes.saturating_sub(n))
                .filter(|_| n <= lanes)
                .find(|l| {
                    let y0 = top + *l as i32 * LANE_H;
                    !taken.collides((x0, y0, x0 + w, y0 + height), 2)
                })
            else {
                continue;
            };
            let y0 = top + lane as i32 * LANE_H;
            taken.take((x0, y0, x0 + w, y0 + height));
            let bg = Rectangle::new(
                [
                    relative(&area, (x0, y0)),
                    relative(&area, (x0 + w, y0 + height)),
                ],
                WHITE.mix(0.88).filled(),
            );
            area.draw(&bg).map_err(de)?;
            for (i, (s, color)) in candidate.into_iter().enumerate() {
                let y = y0 + i as i32 * LANE_H + LANE_H / 2;
                // Text runs away from the line: left-aligned on the right, right-aligned on
                // the left, so each block ends at its own marker.
                let (tx, h) = if right {
                    (x0 + PAD, HPos::Left)
                } else {
                    (x0 + w - PAD, HPos::Right)
                };
                let style = anchored(text_style(LABEL_SIZE, color), h, VPos::Center);
                area.draw(&Text::new(s, relative(&area, (tx, y)), style))
                    .map_err(de)?;
            }
            placed = true;
            break;
        }
        if !placed {
            omitted += 1;
        }
    }
    if omitted > 0 {
        let message = format!("labels of {omitted} marked turns left out for space");
        let at = relative(&area, (x_pixels.end - 6, y_pixels.end - 6));
        let style = anchored(text_style(LABEL_SIZE, MUTED), HPos::Right, VPos::Bottom);
        area.draw(&Text::new(message, at, style)).map_err(de)?;
    }

    if let Some(strip) = strip {
        legend.draw(&strip)?;
    }
    Ok(())
}

/// A turn's label blocks, from the fullest to the most compact: every firing (capped),
/// the first and a count, the count alone.
fn label_candidates(marks: &[&Mark]) -> Vec<Vec<(String, RGBColor)>> {
    let full = label_lines(marks);
    let color = if marks.iter().any(|m| m.terminal) {
        RED_
    } else {
        OTHER
    };
    let first_count = full.first().map_or(0, |l| l.2);
    let full: Vec<(String, RGBColor)> = full.into_iter().map(|(s, c, _)| (s, c)).collect();
    let mut out = Vec::new();
    if full.len() > 2 {
        out.push(full.clone());
        let mut short = vec![full[0].clone()];
        short.push((format!("+{} more", marks.len() - first_count), INK));
        out.push(short);
    } else {
        out.push(full);
    }
    out.push(vec![(format!("{} firings", marks.len()), color)]);
    out
}

/// The label lines of one turn's firings: terminal first, repeats counted, at most
/// [`LINES_PER_TURN`] then `+N more`; each line with the firings it stands for.
fn label_lines(marks: &[&Mark]) -> Vec<(String, RGBColor, usize)> {
    let mut entries: Vec<(bool, String)> = marks
        .iter()
        .map(|m| (!m.terminal, format!("{}/{}", m.guard, m.action)))
        .collect();
    entries.sort();
    let mut counted: Vec<(bool, String, usize)> = Vec::new();
    for (other, label) in entries {
        match counted.last_mut() {
            Some(last) if last.0 == other && last.1 == label => last.2 += 1,
            _ => counted.push((other, label, 1)),
        }
    }
    let mut lines: Vec<(String, RGBColor, usize)> = counted
        .iter()
        .take(LINES_PER_TURN)
        .map(|(other, label, n)| {
            let mut s = truncate(label, LABEL_CHARS);
            if *n > 1 {
                s.push_str(&format!(" ×{n}"));
            }
            (s, if *other { OTHER } else { RED_ }, *n)
        })
        .collect();
    let rest: usize = counted.iter().skip(LINES_PER_TURN).map(|c| c.2).sum();
    if rest > 0 {
        lines.push((format!("+{rest} more"), INK, rest));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(turn: u32, guard: &str, action: &str, terminal: bool) -> Mark {
        Mark {
            turn,
            guard: guard.into(),
            action: action.into(),
            terminal,
        }
    }

    #[test]
    fn labels_put_terminal_first_count_repeats_and_cap() {
        let marks = [
            mark(3, "b", "warn", false),
            mark(3, "a", "abandon", true),
            mark(3, "b", "warn", false),
            mark(3, "c", "x", false),
            mark(3, "d", "y", false),
            mark(3, "e", "z", false),
        ];
        let refs: Vec<&Mark> = marks.iter().collect();
        let lines: Vec<String> = label_lines(&refs).into_iter().map(|l| l.0).collect();
        assert_eq!(lines, ["a/abandon", "b/warn ×2", "c/x", "+2 more"]);
        let blocks: Vec<Vec<String>> = label_candidates(&refs[1..])
            .into_iter()
            .map(|b| b.into_iter().map(|l| l.0).collect())
            .collect();
        assert_eq!(
            blocks,
            [
                vec!["a/abandon", "b/warn", "c/x", "+2 more"],
                vec!["a/abandon", "+4 more"],
                vec!["5 firings"],
            ]
        );
    }
}
