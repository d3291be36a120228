//! The report's summary, added up run by run: a replay that writes each run's entry as it
//! completes keeps only this (issue #13), and a report built whole adds its runs up the
//! same way, so both give the same figures to the last bit.

use super::{dollars, GuardSummary, RunReport, Summary};
use crate::guards::registry;
use crate::model::sum_tokens;
use std::collections::BTreeSet;

/// The summary of the runs added so far, in the order they were added.
/// What the summary needs of one run: a few figures, instead of its whole entry, so a
/// replay can hold many runs waiting for their turn in little memory (issue #13).
#[derive(Debug, Clone, PartialEq)]
pub struct RunTally {
    project: String,
    turns: usize,
    tokens_total: u64,
    tokens_estimated: u64,
    tokens_saved: u64,
    cost_usd: Option<f64>,
    cost_saved_usd: Option<f64>,
    cost_unpriced_tokens: u64,
    skipped_records: u64,
    /// Per guard, in registry order.
    guards: Vec<GuardTally>,
}

#[derive(Debug, Clone, PartialEq)]
struct GuardTally {
    firings: usize,
    tokens_saved: Option<u64>,
    cost_saved_usd: Option<f64>,
}

impl RunTally {
    /// The tally of `run` over the catalogue's guards ([`registry`]).
    pub fn of(run: &RunReport) -> Self {
        let ids: Vec<&str> = registry().iter().map(|e| e.info.id).collect();
        Self::over(run, &ids)
    }

    /// The tally of `run` over the guards `ids`, in that order.
    fn over(run: &RunReport, ids: &[&str]) -> Self {
        Self {
            project: run.project.clone(),
            turns: run.turns,
            tokens_total: run.tokens_total,
            tokens_estimated: run.tokens_estimated,
            tokens_saved: run.savings.combined,
            cost_usd: run.cost_usd,
            cost_saved_usd: run.savings.cost_saved_usd.as_ref().map(|c| c.combined),
            cost_unpriced_tokens: run.cost_unpriced_tokens,
            skipped_records: run.input.skipped,
            guards: ids
                .iter()
                .map(|&id| GuardTally {
                    firings: run.firings.iter().filter(|f| f.guard == id).count(),
                    tokens_saved: run.savings.by_guard.get(id).copied(),
                    cost_saved_usd: run.cost_saved_by(id),
                })
                .collect(),
        }
    }
}

pub struct SummaryBuilder {
    projects: BTreeSet<String>,
    runs: usize,
    turns: usize,
    tokens_total: u64,
    tokens_estimated: u64,
    tokens_saved_combined: u64,
    cost_usd: Option<f64>,
    cost_saved_usd_combined: Option<f64>,
    cost_unpriced_tokens: u64,
    skipped_records: u64,
    /// Per registered guard, in registry order.
    guards: Vec<GuardSummary>,
}

impl Default for SummaryBuilder {
    /// A summary over the catalogue's guards ([`registry`]).
    fn default() -> Self {
        let guards = registry()
            .iter()
            .map(|e| (e.info.id.to_string(), e.info.work_order.to_string()))
            .collect();
        Self::over(guards)
    }
}

impl SummaryBuilder {
    /// A summary over the guards given as (id, work order), in that order: a merge sums
    /// its shards over the guards they were replayed with, external ones included, which
    /// this process's catalogue may not hold.
    pub fn over(guards: Vec<(String, String)>) -> Self {
        Self {
            projects: BTreeSet::new(),
            runs: 0,
            turns: 0,
            tokens_total: 0,
            tokens_estimated: 0,
            tokens_saved_combined: 0,
            cost_usd: None,
            cost_saved_usd_combined: None,
            cost_unpriced_tokens: 0,
            skipped_records: 0,
            guards: guards
                .into_iter()
                .map(|(guard, work_order)| GuardSummary {
                    guard,
                    work_order,
                    runs_fired: 0,
                    firings: 0,
                    tokens_saved: 0,
                    cost_saved_usd: None,
                })
                .collect(),
        }
    }

    pub fn add(&mut self, run: &RunReport) {
        let ids: Vec<&str> = self.guards.iter().map(|g| g.guard.as_str()).collect();
        let tally = RunTally::over(run, &ids);
        self.add_tally(&tally);
    }

    /// Adds a run by what the summary needs of it.
    pub fn add_tally(&mut self, run: &RunTally) {
        if !self.projects.contains(&run.project) {
            self.projects.insert(run.project.clone());
        }
        self.runs += 1;
        self.turns += run.turns;
        self.tokens_total = sum_tokens([self.tokens_total, run.tokens_total]);
        self.tokens_estimated = sum_tokens([self.tokens_estimated, run.tokens_estimated]);
        self.tokens_saved_combined = sum_tokens([self.tokens_saved_combined, run.tokens_saved]);
        add_dollars(&mut self.cost_usd, run.cost_usd);
        add_dollars(&mut self.cost_saved_usd_combined, run.cost_saved_usd);
        self.cost_unpriced_tokens =
            sum_tokens([self.cost_unpriced_tokens, run.cost_unpriced_tokens]);
        self.skipped_records += run.skipped_records;
        for (guard, tally) in self.guards.iter_mut().zip(&run.guards) {
            guard.runs_fired += usize::from(tally.firings > 0);
            guard.firings += tally.firings;
            if let Some(tokens) = tally.tokens_saved {
                guard.tokens_saved = sum_tokens([guard.tokens_saved, tokens]);
            }
            add_dollars(&mut guard.cost_saved_usd, tally.cost_saved_usd);
        }
    }

    pub fn finish(self) -> Summary {
        let round = |usd: Option<f64>| usd.map(dollars);
        Summary {
            projects: self.projects.len(),
            runs: self.runs,
            turns: self.turns,
            tokens_total: self.tokens_total,
            tokens_estimated: self.tokens_estimated,
            tokens_saved_combined: self.tokens_saved_combined,
            cost_usd: round(self.cost_usd),
            cost_saved_usd_combined: round(self.cost_saved_usd_combined),
            cost_unpriced_tokens: self.cost_unpriced_tokens,
            skipped_records: self.skipped_records,
            guards: self
                .guards
                .into_iter()
                .map(|g| GuardSummary {
                    cost_saved_usd: round(g.cost_saved_usd),
                    ..g
                })
                .collect(),
        }
    }
}

/// Adds a figure that may be absent: the sum stays absent until one is present (nothing
/// priced is `null`, not $0). Rounded once, at the end, like [`super::dollar_sum`].
fn add_dollars(sum: &mut Option<f64>, figure: Option<f64>) {
    if let Some(x) = figure {
        *sum = Some(sum.unwrap_or(0.0) + x);
    }
}

/// The summary of `runs` over the catalogue's guards, added up in order.
pub fn summarize(runs: &[RunReport]) -> Summary {
    summarize_with(SummaryBuilder::default(), runs)
}

/// The summary of `runs` added up in order by `builder`.
pub fn summarize_with(mut builder: SummaryBuilder, runs: &[RunReport]) -> Summary {
    for run in runs {
        builder.add(run);
    }
    builder.finish()
}
