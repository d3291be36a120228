//! What the charts draw, gathered from a replay: plain numbers, no plotting.
//!
//! Built once from the replayed runs, their report and the guard settings; each chart in
//! this module reads only these types, so the charts can be tested on hand-made data.

use crate::config::Config;
use crate::cost::request_tokens;
use crate::replay::RunReplay;
use crate::report::Report;
use std::collections::BTreeMap;

/// One firing as the per-run charts mark it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub turn: u32,
    pub guard: String,
    pub action: String,
    pub terminal: bool,
}

impl Mark {
    pub fn new(turn: u32, guard: &str, action: &str, terminal: bool) -> Self {
        Self {
            turn,
            guard: guard.to_string(),
            action: action.to_string(),
            terminal,
        }
    }
}

/// One run: its token curve, where guards would have cut in, and its convergence rounds.
#[derive(Debug, Clone, PartialEq)]
pub struct RunChart {
    /// `project/runId`, the chart's title and file stem source.
    pub name: String,
    /// (turn, tokens) for every turn of the run.
    pub tokens: Vec<(u32, u64)>,
    /// Whether the tokens are recorded usage (`true`) or estimates.
    pub measured: bool,
    pub marks: Vec<Mark>,
    /// The earliest terminal firing: every token after it would have been saved.
    pub cut_at: Option<u32>,
    /// Convergence rounds per canonical family, (turn, rounds), from `diagnostic_delta`
    /// (the breaker as the harness runs it after the root refinement).
    pub rounds: BTreeMap<String, Vec<(u32, u64)>>,
    pub thresholds: Thresholds,
}

/// The breaker's tier boundaries, drawn as horizontal lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    pub converging_warn: u64,
    pub stalled: u64,
    pub abandon: u64,
}

/// The whole corpus: savings by work order and when each guard first fires.
#[derive(Debug, Clone, PartialEq)]
pub struct CorpusChart {
    /// (label, tokens saved), each guard alone, plus `all guards (combined)`.
    pub savings: Vec<(String, u64)>,
    /// guard -> first-fire turn of every run it fired on.
    pub first_fire: BTreeMap<String, Vec<u32>>,
    pub runs: usize,
}

/// Everything the report's charts need.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartData {
    pub runs: Vec<RunChart>,
    pub corpus: CorpusChart,
    /// A threshold sweep over labeled runs, when the report was given labels.
    pub sweep: Option<Vec<SweepPoint>>,
}

/// One setting of a threshold sweep (the gate's sweep, handed over by the command layer so
/// reports never depend on the gate).
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    /// e.g. `stalled=3 abandon=5`.
    pub label: String,
    pub tokens_saved_on_failed: u64,
    pub false_terminal_on_healthy: u64,
    pub is_default: bool,
    /// 95% intervals (issue #29): of the tokens saved, and of the healthy runs cut, in
    /// runs (the share's interval times the healthy runs).
    pub saved_interval: Option<[u64; 2]>,
    pub false_terminal_interval: Option<[f64; 2]>,
}

/// The chart of the guard whose rounds the convergence chart draws.
pub const ROUNDS_GUARD: &str = "diagnostic_delta";

impl ChartData {
    /// Corpus charts over every run of `report`; per-run charts for the runs at the
    /// indexes `per_run` (into `runs` and `report.runs`, which are parallel).
    pub fn build(
        runs: &[RunReplay],
        report: &Report,
        config: &Config,
        per_run: &[usize],
        sweep: Option<Vec<SweepPoint>>,
    ) -> Self {
        let thresholds = thresholds(config);
        Self {
            runs: per_run
                .iter()
                .filter_map(|&i| Some((runs.get(i)?, report.runs.get(i)?)))
                .map(|(replay, rep)| run_chart(replay, rep.savings.cut_at_turn, thresholds))
                .collect(),
            corpus: corpus_chart(report),
            sweep,
        }
    }
}

impl RunChart {
    /// The per-run chart data of one replayed run, `cut_at` its earliest terminal firing.
    pub fn of(replay: &RunReplay, cut_at: Option<u32>, config: &Config) -> Self {
        run_chart(replay, cut_at, thresholds(config))
    }
}

fn thresholds(config: &Config) -> Thresholds {
    let settings = config.guards.get(ROUNDS_GUARD);
    let get = |key: &str, default: u64| {
        settings
            .and_then(|s| s.get(key))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(default)
    };
    let d = crate::guards::convergence::Thresholds::default();
    Thresholds {
        converging_warn: get("converging_warn", u64::from(d.converging_warn)),
        stalled: get("stalled", u64::from(d.stalled)),
        abandon: get("abandon", u64::from(d.abandon)),
    }
}

fn run_chart(replay: &RunReplay, cut_at: Option<u32>, thresholds: Thresholds) -> RunChart {
    let mut rounds: BTreeMap<String, Vec<(u32, u64)>> = BTreeMap::new();
    for p in replay.series.get(ROUNDS_GUARD).into_iter().flatten() {
        rounds
            .entry(p.series.clone())
            .or_default()
            .push((p.turn, p.value));
    }
    RunChart {
        name: run_name(&replay.project, &replay.run_id),
        tokens: tokens_by_turn(replay),
        measured: replay.turns.iter().any(|t| t.recorded.usage.is_some()),
        marks: replay
            .firings
            .iter()
            .map(|f| Mark {
                turn: f.turn,
                guard: f.guard.to_string(),
                action: f.action.clone(),
                terminal: f.effect == crate::guards::Effect::Terminal,
            })
            .collect(),
        cut_at,
        rounds,
        thresholds,
    }
}

/// Tokens of each turn's requests (every thread's), in turn order.
fn tokens_by_turn(replay: &RunReplay) -> Vec<(u32, u64)> {
    let mut by_turn: BTreeMap<u32, u64> = BTreeMap::new();
    for t in replay.turns.iter().filter(|t| t.request) {
        let tokens = by_turn.entry(t.turn).or_default();
        *tokens = tokens.saturating_add(request_tokens(t).0);
    }
    by_turn.into_iter().collect()
}

/// A run as chart titles and file names give it: `project/run`, the project by its own
/// directory name (a path given on the command line, absolute or this machine's, never
/// reaches a title or a file name), and the run alone when the two are the same (a
/// one-run-per-file format names both after the task).
pub fn run_name(project: &str, run_id: &str) -> String {
    match last_component(project) {
        last if last == run_id => run_id.to_string(),
        last => format!("{last}/{run_id}"),
    }
}

fn last_component(project: &str) -> &str {
    project
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(project)
}

fn corpus_chart(report: &Report) -> CorpusChart {
    // Guards that saved nothing would only be empty bars; advisory guards are priced at 0.
    let mut savings: Vec<(String, u64)> = report
        .summary
        .guards
        .iter()
        .filter(|g| g.tokens_saved > 0)
        .map(|g| (format!("{} ({})", g.work_order, g.guard), g.tokens_saved))
        .collect();
    savings.push((
        super::savings::COMBINED.into(),
        report.summary.tokens_saved_combined,
    ));
    let mut first_fire: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for run in &report.runs {
        let mut firsts: BTreeMap<&str, u32> = BTreeMap::new();
        for f in &run.firings {
            let t = firsts.entry(f.guard.as_str()).or_insert(f.turn);
            *t = (*t).min(f.turn);
        }
        for (guard, turn) in firsts {
            first_fire.entry(guard.to_string()).or_default().push(turn);
        }
    }
    CorpusChart {
        savings,
        first_fire,
        runs: report.runs.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::run_name;

    #[test]
    fn run_names_drop_a_project_that_repeats_the_run() {
        assert_eq!(
            run_name("corpora/myactuator", "1783-p7x"),
            "myactuator/1783-p7x"
        );
        assert_eq!(
            run_name(
                "corpora/real/swe/django__django-12284",
                "django__django-12284"
            ),
            "django__django-12284"
        );
        assert_eq!(run_name("/abs/path/p/", "r"), "p/r");
    }
}
