//! Per-guard scores over a labeled corpus: recall on failed runs, how early it fires, false
//! terminal firings on healthy runs, and tokens and dollars saved on failed runs.

use super::labels::{Label, Labels};
use crate::model::sum_tokens;
use crate::report::{dollar_sum, Report, RunReport};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuardScore {
    pub guard: String,
    pub work_order: String,
    pub failed_runs: usize,
    /// Failed runs on which the guard fired at all.
    pub fired_on_failed: usize,
    /// `fired_on_failed / failed_runs`, in thousandths (integers keep output stable).
    pub recall_permille: u32,
    /// Median first-fire turn over the failed runs it fired on.
    pub median_turn_to_fire: Option<u32>,
    pub healthy_runs: usize,
    /// Healthy runs this guard would have cut short.
    pub false_terminal_on_healthy: usize,
    pub tokens_saved_on_failed: u64,
    /// Its dollars alone over the failed runs that were priced; `None` when none was.
    pub cost_saved_usd_on_failed: Option<f64>,
}

/// Scores every guard `report` covers (its summary's, the catalogue it was replayed with)
/// over its labeled runs.
pub fn score(report: &Report, labels: &Labels) -> Vec<GuardScore> {
    let labeled: Vec<(&RunReport, Label)> = report
        .runs
        .iter()
        .filter_map(|r| labels.get(r).map(|l| (r, l.label)))
        .collect();
    let failed: Vec<&RunReport> = labeled
        .iter()
        .filter(|(_, l)| *l == Label::Failed)
        .map(|(r, _)| *r)
        .collect();
    let healthy: Vec<&RunReport> = labeled
        .iter()
        .filter(|(_, l)| *l == Label::Healthy)
        .map(|(r, _)| *r)
        .collect();
    report
        .summary
        .guards
        .iter()
        .map(|entry| {
            let id = entry.guard.as_str();
            let mut turns: Vec<u32> = failed
                .iter()
                .filter_map(|r| {
                    r.firings
                        .iter()
                        .filter(|f| f.guard == id)
                        .map(|f| f.turn)
                        .min()
                })
                .collect();
            turns.sort_unstable();
            let fired = turns.len();
            GuardScore {
                guard: id.to_string(),
                work_order: entry.work_order.clone(),
                failed_runs: failed.len(),
                fired_on_failed: fired,
                recall_permille: permille(fired, failed.len()),
                median_turn_to_fire: median(&turns),
                healthy_runs: healthy.len(),
                false_terminal_on_healthy: healthy
                    .iter()
                    .filter(|r| {
                        r.firings
                            .iter()
                            .any(|f| f.guard == id && f.effect == "terminal")
                    })
                    .count(),
                tokens_saved_on_failed: sum_tokens(
                    failed
                        .iter()
                        .filter_map(|r| r.savings.by_guard.get(id).copied()),
                ),
                cost_saved_usd_on_failed: dollar_sum(failed.iter().map(|r| r.cost_saved_by(id))),
            }
        })
        .collect()
}

pub fn permille(part: usize, whole: usize) -> u32 {
    (part * 1000).checked_div(whole).map_or(0, |p| p as u32)
}

/// The lower median, so the result is always a turn that occurred.
fn median(sorted: &[u32]) -> Option<u32> {
    (!sorted.is_empty()).then(|| sorted[(sorted.len() - 1) / 2])
}
