//! The corpus view of failed runs (issue #14): grouped by the earliest terminal guard that
//! would have ended each and the family that drove it, with what each group spent after
//! its first `stalled` firing, the point where the harness would first have said "stop
//! patching" (seed 000, `000_053cae7e53b598d3.txt`, WO-3 and "The failure signature").

use super::{firing_ref, FiringRef};
use crate::cost::{spent_after, Prices};
use crate::guards::convergence::Tier;
use crate::replay::RunReplay;
use crate::report::tables::{cost_cell, tokens_cell, TableModel};
use crate::report::{dollar_sum, Report, RunReport};
use std::collections::BTreeMap;

/// Failed runs that share their earliest terminal guards and the family behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct TerminalGroup {
    /// The guards firing terminal at each run's cut turn, in registry order; empty for
    /// runs no guard would have ended.
    pub guards: Vec<String>,
    /// The family of the first of those firings that names one.
    pub family: Option<String>,
    /// `project/run` of each run, in report order.
    pub runs: Vec<String>,
    /// Runs with a `stalled` firing.
    pub stalled_runs: usize,
    /// Tokens of every request after each run's first `stalled` firing, summed.
    pub tokens_after_stalled: u64,
    /// The same in dollars, over the priced requests; `None` when none is priced.
    pub cost_after_stalled_usd: Option<f64>,
    /// Some of the group's runs have unpriced tokens: the dollars are a lower bound.
    pub partly_priced: bool,
    /// Some of the group's runs have estimated tokens (shown `~`).
    pub estimated: bool,
}

/// Groups the runs of `report` for which `failed` holds (`runs` is parallel to
/// `report.runs`), the most runs first.
pub fn failed_by_terminal_guard(
    runs: &[RunReplay],
    report: &Report,
    prices: &Prices,
    failed: &dyn Fn(&RunReport) -> bool,
) -> Vec<TerminalGroup> {
    let order: Vec<&str> = crate::guards::registry()
        .iter()
        .map(|e| e.info.id)
        .collect();
    let mut groups: BTreeMap<(Vec<String>, Option<String>), TerminalGroup> = BTreeMap::new();
    for (replay, run) in runs.iter().zip(&report.runs).filter(|(_, r)| failed(r)) {
        let cut: Vec<FiringRef> = run
            .firings
            .iter()
            .filter(|f| Some(f.turn) == run.savings.cut_at_turn && f.effect == "terminal")
            .map(firing_ref)
            .collect();
        let mut guards: Vec<String> = cut.iter().map(|f| f.guard.clone()).collect();
        guards.sort_by_key(|g| order.iter().position(|o| o == g));
        guards.dedup();
        let family = cut.iter().find_map(|f| f.family.clone());
        let g = groups
            .entry((guards.clone(), family.clone()))
            .or_insert_with(|| TerminalGroup {
                guards,
                family,
                runs: Vec::new(),
                stalled_runs: 0,
                tokens_after_stalled: 0,
                cost_after_stalled_usd: None,
                partly_priced: false,
                estimated: false,
            });
        g.runs.push(format!("{}/{}", run.project, run.run_id));
        g.partly_priced |= run.cost_unpriced_tokens > 0;
        g.estimated |= run.tokens_estimated > 0;
        let stalled = run
            .firings
            .iter()
            .filter(|f| f.action == Tier::Stalled.as_str() && f.agent == super::MAIN)
            .map(|f| f.turn)
            .min();
        if let Some(turn) = stalled {
            let spent = spent_after(replay, prices, turn);
            g.stalled_runs += 1;
            g.tokens_after_stalled = g.tokens_after_stalled.saturating_add(spent.tokens);
            let usd = run.cost_usd.map(|_| spent.usd);
            g.cost_after_stalled_usd = dollar_sum([g.cost_after_stalled_usd, usd]);
        }
    }
    let mut out: Vec<TerminalGroup> = groups.into_values().collect();
    out.sort_by(|a, b| {
        (b.runs.len(), b.tokens_after_stalled)
            .cmp(&(a.runs.len(), a.tokens_after_stalled))
            .then_with(|| (&a.guards, &a.family).cmp(&(&b.guards, &b.family)))
    });
    out
}

/// The groups as the review document's table.
pub fn table(groups: &[TerminalGroup], failed_means: &str) -> TableModel {
    TableModel {
        title: format!("Failed runs by earliest terminal guard ({failed_means})"),
        headers: vec![
            "earliest terminal guard",
            "family",
            "runs",
            "stalled",
            "tokens after first stalled",
            "$ after first stalled",
            "which runs",
        ],
        rows: groups
            .iter()
            .map(|g| {
                let guards = if g.guards.is_empty() {
                    "(none: no guard ends the run)".to_string()
                } else {
                    g.guards.join(", ")
                };
                vec![
                    guards,
                    g.family.clone().unwrap_or_else(|| "-".into()),
                    g.runs.len().to_string(),
                    g.stalled_runs.to_string(),
                    tokens_cell(g.tokens_after_stalled, u64::from(g.estimated)),
                    cost_cell(g.cost_after_stalled_usd, u64::from(g.partly_priced)),
                    g.runs.join(", "),
                ]
            })
            .collect(),
        numeric: vec![2, 3, 4, 5],
    }
}
