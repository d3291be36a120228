//! Per-guard scores over a labeled corpus (docs/GATE.md, *Scores*): on failed and on healthy
//! runs apart, how many it cut short and how many it only advised on; how early it fires;
//! tokens and dollars saved on failed runs and lost on the healthy runs it cut; and whether
//! its firing tells failed runs from healthy ones (P(failed | fired) against P(failed | not
//! fired)). Issue #29: a guard that fires on every run scored a perfect recall.

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
    /// Healthy runs on which it fired at all.
    pub fired_on_healthy: usize,
    /// Failed runs it cut short (a terminal firing).
    pub cut_on_failed: usize,
    /// Runs on which it fired without cutting (advisory, suppress, shrink firings only).
    pub advisory_on_failed: usize,
    pub advisory_on_healthy: usize,
    /// Its savings on the healthy runs it cut short: the work a false cut throws away.
    pub tokens_lost_on_healthy: u64,
    pub cost_lost_usd_on_healthy: Option<f64>,
    /// P(failed | it fired) and P(failed | it did not), in thousandths; `None` when no
    /// labeled run is on that side.
    pub failed_if_fired_permille: Option<u32>,
    pub failed_if_not_fired_permille: Option<u32>,
    /// Its firing tells failed runs from healthy ones: it fires on a larger share of the
    /// failed runs than of the healthy ones. `None` when it fired on no labeled run.
    pub discriminating: Option<bool>,
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
            let on_healthy = Firings::of(&healthy, id);
            let on_failed = Firings::of(&failed, id);
            let cut_healthy: Vec<&RunReport> =
                healthy.iter().copied().filter(|r| cuts(r, id)).collect();
            let not_fired_failed = failed.len() - fired;
            let not_fired = not_fired_failed + healthy.len() - on_healthy.any;
            GuardScore {
                guard: id.to_string(),
                work_order: entry.work_order.clone(),
                failed_runs: failed.len(),
                fired_on_failed: fired,
                recall_permille: permille(fired, failed.len()),
                median_turn_to_fire: median(&turns),
                healthy_runs: healthy.len(),
                false_terminal_on_healthy: on_healthy.cut,
                tokens_saved_on_failed: sum_tokens(
                    failed
                        .iter()
                        .filter_map(|r| r.savings.by_guard.get(id).copied()),
                ),
                cost_saved_usd_on_failed: dollar_sum(failed.iter().map(|r| r.cost_saved_by(id))),
                fired_on_healthy: on_healthy.any,
                cut_on_failed: on_failed.cut,
                advisory_on_failed: on_failed.advisory,
                advisory_on_healthy: on_healthy.advisory,
                tokens_lost_on_healthy: sum_tokens(
                    cut_healthy
                        .iter()
                        .filter_map(|r| r.savings.by_guard.get(id).copied()),
                ),
                cost_lost_usd_on_healthy: dollar_sum(
                    cut_healthy.iter().map(|r| r.cost_saved_by(id)),
                ),
                failed_if_fired_permille: share(fired, fired + on_healthy.any),
                failed_if_not_fired_permille: share(not_fired_failed, not_fired),
                discriminating: (fired + on_healthy.any > 0).then(|| {
                    // fired / failed > on_healthy / healthy, without division.
                    fired * healthy.len() > on_healthy.any * failed.len()
                }),
            }
        })
        .collect()
}

/// How a guard fired over a set of runs: on how many at all, how many it cut short, and
/// how many it only advised on (no terminal firing).
struct Firings {
    any: usize,
    cut: usize,
    advisory: usize,
}

impl Firings {
    fn of(runs: &[&RunReport], guard: &str) -> Self {
        let fired = runs
            .iter()
            .filter(|r| r.firings.iter().any(|f| f.guard == guard))
            .count();
        let cut = runs.iter().filter(|r| cuts(r, guard)).count();
        Self {
            any: fired,
            cut,
            advisory: fired - cut,
        }
    }
}

/// Whether `guard` cut `run` short.
fn cuts(run: &RunReport, guard: &str) -> bool {
    run.firings
        .iter()
        .any(|f| f.guard == guard && f.effect == "terminal")
}

/// `part / whole` in thousandths, `None` when `whole` is 0.
fn share(part: usize, whole: usize) -> Option<u32> {
    (whole > 0).then(|| permille(part, whole))
}

pub fn permille(part: usize, whole: usize) -> u32 {
    (part * 1000).checked_div(whole).map_or(0, |p| p as u32)
}

/// The lower median, so the result is always a turn that occurred.
fn median(sorted: &[u32]) -> Option<u32> {
    (!sorted.is_empty()).then(|| sorted[(sorted.len() - 1) / 2])
}
