//! The firing lanes under the tokens curve (issue #16): one row per guard that fired, a
//! tick per firing, a band where a guard fires turn after turn, and a label only where
//! the run changed course (a terminal firing, a breaker tier).
//!
//! The lane model here is plain data, so what is drawn (and what is left unlabelled) is
//! tested without a backend; [`draw`] puts it on the chart.

use super::super::common::{
    anchored, de, fit, relative, text, text_size, text_style, Drawn, Occupied, GRID_LIGHT, INK,
    LABEL_SIZE, RED_,
};
use super::super::data::Mark;
use super::OTHER;
use crate::guards::convergence::Tier;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use std::collections::BTreeSet;

/// Consecutive firing turns of one guard, at least this many, are drawn as a band.
pub const BAND_MIN: usize = 3;
/// Ticks closer than this many pixels are merged into a band (a long run at chart width).
pub const MERGE_PX: f64 = 3.0;
/// Space between a label's text and its box's edge, pixels.
const PAD: i32 = 3;

/// One guard's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lane {
    pub guard: String,
    /// Firings drawn one by one: (turn, terminal).
    pub ticks: Vec<(u32, bool)>,
    /// Runs of firing turns drawn as one band: (first turn, last turn).
    pub bands: Vec<(u32, u32)>,
    /// Where the run changed course: (turn, action, terminal).
    pub labels: Vec<(u32, String, bool)>,
}

/// The guards that fired in `marks`, a lane each, in `catalogue` order (guards not in it
/// last, by name).
pub fn guards<'m>(marks: &'m [Mark], catalogue: &[&str]) -> Vec<&'m str> {
    let rank = |g: &str| catalogue.iter().position(|c| *c == g).unwrap_or(usize::MAX);
    let mut guards: Vec<&str> = marks.iter().map(|m| m.guard.as_str()).collect();
    guards.sort_by_key(|g| (rank(g), *g));
    guards.dedup();
    guards
}

/// The lanes of `marks` ([`guards`]), at `px_per_turn` pixels per turn.
pub fn lanes(marks: &[Mark], catalogue: &[&str], px_per_turn: f64) -> Vec<Lane> {
    guards(marks, catalogue)
        .into_iter()
        .map(|guard| {
            lane(
                guard,
                marks.iter().filter(|m| m.guard == guard),
                px_per_turn,
            )
        })
        .collect()
}

fn lane<'a>(guard: &str, marks: impl Iterator<Item = &'a Mark>, px_per_turn: f64) -> Lane {
    let marks: Vec<&Mark> = marks.collect();
    let terminal: BTreeSet<u32> = marks
        .iter()
        .filter(|m| m.terminal)
        .map(|m| m.turn)
        .collect();
    let others: BTreeSet<u32> = marks
        .iter()
        .filter(|m| !m.terminal)
        .map(|m| m.turn)
        .collect();
    let mut ticks: Vec<(u32, bool)> = terminal.iter().map(|&t| (t, true)).collect();
    let mut bands = Vec::new();
    for run in runs_of(&others, px_per_turn) {
        match run.as_slice() {
            [first, .., last] if run.len() >= BAND_MIN => bands.push((*first, *last)),
            _ => ticks.extend(run.iter().map(|&t| (t, false))),
        }
    }
    ticks.sort_by_key(|&(t, terminal)| (terminal, t));
    let mut labels: Vec<(u32, String, bool)> = marks
        .iter()
        .filter(|m| m.terminal || is_tier(&m.action))
        .map(|m| (m.turn, m.action.clone(), m.terminal))
        .collect();
    labels.sort();
    labels.dedup();
    Lane {
        guard: guard.to_string(),
        ticks,
        bands,
        labels,
    }
}

/// A breaker's tier (`stalled`, `abandon`): the firings that say the run changed course.
fn is_tier(action: &str) -> bool {
    [Tier::ConvergingWarn, Tier::Stalled, Tier::Abandon]
        .iter()
        .any(|t| t.as_str() == action)
}

/// `turns` split where two neighbours are neither consecutive nor closer than
/// [`MERGE_PX`] on the chart.
fn runs_of(turns: &BTreeSet<u32>, px_per_turn: f64) -> Vec<Vec<u32>> {
    let mut runs: Vec<Vec<u32>> = Vec::new();
    for &t in turns {
        match runs.last_mut() {
            Some(run) if joins(*run.last().unwrap_or(&t), t, px_per_turn) => run.push(t),
            _ => runs.push(vec![t]),
        }
    }
    runs
}

fn joins(prev: u32, next: u32, px_per_turn: f64) -> bool {
    let gap = next.saturating_sub(prev);
    gap <= 1 || f64::from(gap) * px_per_turn < MERGE_PX
}

/// Where the lanes go on the chart: the plot's pixel columns (`x` maps a turn) and the top
/// of the first lane, `lane_h` pixels a lane.
pub struct Geometry<'f> {
    pub x: &'f dyn Fn(f64) -> i32,
    pub left: i32,
    pub right: i32,
    pub top: i32,
    pub lane_h: i32,
    /// Pixels a turn takes.
    pub px_per_turn: f64,
}

/// Draws `lanes` on `area`: stripes, guard names in the label column left of the plot,
/// bands, ticks (terminal ones last, on top), then the labels that fit. Returns the
/// labels left out for space.
pub fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lanes: &[Lane],
    g: &Geometry<'_>,
    name_width: i32,
) -> Drawn<usize> {
    let half = (g.px_per_turn / 2.0).max(1.0) as i32;
    let rect = |x0: i32, y0: i32, x1: i32, y1: i32, style: ShapeStyle| {
        area.draw(&Rectangle::new(
            [relative(area, (x0, y0)), relative(area, (x1, y1))],
            style,
        ))
        .map_err(de)
    };
    let name_style = anchored(text_style(LABEL_SIZE, INK), HPos::Right, VPos::Center);
    for (i, lane) in lanes.iter().enumerate() {
        let y0 = g.top + i as i32 * g.lane_h;
        let y1 = y0 + g.lane_h;
        if i % 2 == 0 {
            rect(g.left, y0, g.right, y1, GRID_LIGHT.filled())?;
        }
        let name = fit(area, &lane.guard, &text(LABEL_SIZE), name_width)?;
        let at = relative(area, (g.left - 6, (y0 + y1) / 2));
        area.draw(&Text::new(name, at, name_style.clone()))
            .map_err(de)?;
        let (t0, t1) = (y0 + 2, y1 - 2);
        for &(first, last) in &lane.bands {
            let (a, b) = (
                (g.x)(f64::from(first)) - half,
                (g.x)(f64::from(last)) + half,
            );
            rect(a, t0, b.max(a + 2), t1, OTHER.mix(0.45).filled())?;
        }
        for &(turn, terminal) in &lane.ticks {
            let x = (g.x)(f64::from(turn));
            let (color, w) = if terminal { (RED_, 2) } else { (OTHER, 1) };
            rect(x - w, t0, x + w, t1, color.filled())?;
        }
    }
    draw_labels(area, lanes, g)
}

/// The lanes' labels, each beside its tick, inside its lane, on whichever side has room;
/// one that would overlap another is left out (and counted).
fn draw_labels<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lanes: &[Lane],
    g: &Geometry<'_>,
) -> Drawn<usize> {
    let mut taken = Occupied::default();
    let mut omitted = 0;
    for (i, lane) in lanes.iter().enumerate() {
        let (y0, y1) = (
            g.top + i as i32 * g.lane_h,
            g.top + (i as i32 + 1) * g.lane_h,
        );
        // Terminal labels are placed first: they matter most.
        let mut order: Vec<&(u32, String, bool)> = lane.labels.iter().collect();
        order.sort_by_key(|(turn, _, terminal)| (!terminal, *turn));
        for (turn, action, terminal) in order {
            let color = if *terminal { RED_ } else { INK };
            let style = text(LABEL_SIZE);
            let w = text_size(area, action, &style)?.0 + 2 * PAD;
            let x = (g.x)(f64::from(*turn));
            let right = (x + 4, y0 + 1, x + 4 + w, y1 - 1);
            let left = (x - 4 - w, y0 + 1, x - 4, y1 - 1);
            let spot = [right, left]
                .into_iter()
                .find(|r| r.0 >= g.left && r.2 <= g.right && !taken.collides(*r, 1));
            let Some(r) = spot else {
                omitted += 1;
                continue;
            };
            taken.take(r);
            let bg = Rectangle::new(
                [relative(area, (r.0, r.1)), relative(area, (r.2, r.3))],
                WHITE.mix(0.9).filled(),
            );
            area.draw(&bg).map_err(de)?;
            let style = anchored(text_style(LABEL_SIZE, color), HPos::Left, VPos::Center);
            let at = relative(area, (r.0 + PAD, (y0 + y1) / 2));
            area.draw(&Text::new(action.clone(), at, style))
                .map_err(de)?;
        }
    }
    Ok(omitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_turn_is_a_band_and_only_course_changes_are_labelled() {
        let mut marks: Vec<Mark> = (1..=500)
            .map(|t| Mark::new(t, "fold", "fold", false))
            .collect();
        marks.push(Mark::new(40, "breaker", "stalled", false));
        marks.push(Mark::new(90, "breaker", "abandon", true));
        marks.push(Mark::new(7, "dedup", "block", false));
        marks.push(Mark::new(9, "dedup", "block", false));
        let lanes = lanes(&marks, &["breaker", "fold"], 10.0);
        let names: Vec<&str> = lanes.iter().map(|l| l.guard.as_str()).collect();
        assert_eq!(
            names,
            ["breaker", "fold", "dedup"],
            "catalogue order, then by name"
        );
        assert_eq!(lanes[1].bands, [(1, 500)]);
        assert!(lanes[1].ticks.is_empty() && lanes[1].labels.is_empty());
        assert_eq!(lanes[0].ticks, [(40, false), (90, true)]);
        assert_eq!(
            lanes[0].labels,
            [(40, "stalled".into(), false), (90, "abandon".into(), true)]
        );
        assert_eq!(lanes[2].ticks, [(7, false), (9, false)], "two apart: ticks");
        // At a pixel a turn, turns two apart merge: the chart could not tell them apart.
        let tight = super::lanes(&marks, &[], 1.0);
        let dedup = tight.iter().find(|l| l.guard == "dedup").expect("lane");
        assert!(
            dedup.bands.is_empty() && dedup.ticks.len() == 2,
            "two firings stay ticks"
        );
    }
}
