//! `hindsight gate`: judge a replay against labels and/or a saved baseline, for CI.

use super::input::{Input, Reward, REPLAY_ONLY};
use super::{load_report, output, write_staged, EXIT_OK};
use crate::gate::failure::Findings;
use crate::gate::scores::DEFAULT_RESAMPLES;
use crate::gate::{
    compare, github, judge, junit, score, score_by_harness, score_by_model, GuardScore,
    HarnessScores, LabelSpec, Labels, ModelScores, Regression, RunLogs, Verdict,
};
use crate::output::Guard;
use crate::report::table::Grid;
use crate::report::tables::{rate_cell, saving_cell, share_cell, SAVINGS_ARE_ESTIMATES};
use crate::report::Report;
use anyhow::{bail, Result};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// Exit code when the gate finds a regression.
pub const EXIT_REGRESSION: u8 = 1;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight gate corpora/ --expect corpora/expectations.json\n  \
    hindsight replay corpora/ --format json --out baseline.json\n  \
    hindsight gate corpora/ --baseline baseline.json --tolerance 0.02 --junit gate.xml\n  \
    hindsight merge shard-*.json --out report.json\n  \
    hindsight gate --from report.json --expect corpora/expectations.json\n  \
    hindsight gate corpora/ --expect corpora/expectations.json --format github\n\n\
    --from REPORT.json judges a saved JSON report (a merged one, any `replay --format json`) \
    instead of replaying: the same verdicts, regressions and scores. It takes none of the \
    replay's options (paths, --config, --set, --prices, --shard, ...): the report holds \
    their outcome. Labels name runs by project path relative to the labels file, so run it \
    from the folder the report was replayed in.\n\n\
    --format github prints a GitHub Actions annotation (::error) per failed expectation and \
    per regression, on the run's log file, then the summary line.\n\n\
    Exit codes: 0 clean, 1 regressions or failed expectations, 2 usage or input error."
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// Judge this saved JSON report (`replay --format json`, `merge`) instead of replaying.
    #[arg(long, value_name = "REPORT.json", conflicts_with_all = REPLAY_ONLY)]
    pub from: Option<PathBuf>,
    /// Labels and per-guard expectations (docs/GATE.md): a labels file, an evaluation
    /// summary (SWE-bench, Terminal-Bench `results.json`), a Harbor job or trial folder, or
    /// `DIR=FILE` (repeatable), a summary that labels only the runs under DIR.
    #[arg(long, visible_alias = "labels", value_name = "PATH|DIR=FILE")]
    pub expect: Vec<LabelSpec>,
    #[command(flatten)]
    pub reward: Reward,
    /// A saved `hindsight replay --format json` to compare with.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Allowed drop of total tokens saved against the baseline, as a fraction.
    #[arg(long, default_value_t = 0.05)]
    pub tolerance: f64,
    #[arg(long, value_enum, default_value_t = GateFormat::Table)]
    pub format: GateFormat,
    /// Also write JUnit XML here (one test case per run and expectation, with the run's log
    /// as `file` and what failed as the failure's body).
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Bootstrap resamples behind each score's 95% interval (whole projects are drawn;
    /// seeded, so the same input gives the same intervals).
    #[arg(long, default_value_t = DEFAULT_RESAMPLES, value_name = "N")]
    pub resamples: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GateFormat {
    Table,
    Json,
    /// GitHub Actions workflow commands: an `::error` annotation per failure.
    Github,
}

#[derive(Debug, Serialize)]
struct Outcome {
    pass: bool,
    verdicts: Vec<Verdict>,
    regressions: Vec<Regression>,
    scores: Vec<GuardScore>,
    /// The same scores over each harness's labeled runs apart.
    scores_by_harness: Vec<HarnessScores>,
    /// And over each model's (the models the runs' requests name).
    scores_by_model: Vec<ModelScores>,
}

pub fn run(args: Args) -> Result<u8> {
    if !(0.0..=1.0).contains(&args.tolerance) {
        bail!(
            "--tolerance {}: expected a fraction between 0 and 1",
            args.tolerance
        );
    }
    // External guards first: a label may name one.
    args.input.install_guards()?;
    // A replayed Harbor job folder labels itself; a saved report (`--from`) does not.
    let labels = match &args.from {
        None => args
            .reward
            .labels_or_trials(&args.expect, &args.input.paths)?,
        Some(_) => args.reward.labels(&args.expect)?,
    };
    if labels.is_none() && args.baseline.is_none() {
        bail!(
            "nothing to judge: give --expect FILE, --baseline REPORT.json, or both (or replay \
             a Harbor job folder, whose trials' rewards are labels)"
        );
    }
    let baseline = args.baseline.as_deref().map(load_report).transpose()?;
    let (report, guard, logs) = match &args.from {
        Some(from) => from_report(from, &args)?,
        None => replayed(&args)?,
    };
    if let Some(labels) = &labels {
        labels.check_report(&report)?;
    }
    let outcome = Outcome {
        verdicts: labels
            .as_ref()
            .map(|l| judge(&report, l))
            .unwrap_or_default(),
        regressions: baseline
            .as_ref()
            .map(|b| compare(b, &report, args.tolerance, labels.as_ref()))
            .unwrap_or_default(),
        scores: labels
            .as_ref()
            .map(|l| score(&report, l, args.resamples))
            .unwrap_or_default(),
        scores_by_harness: labels
            .as_ref()
            .map(|l| score_by_harness(&report, l, args.resamples))
            .unwrap_or_default(),
        scores_by_model: labels
            .as_ref()
            .map(|l| score_by_model(&report, l, args.resamples))
            .unwrap_or_default(),
        pass: false,
    };
    let outcome = Outcome {
        pass: outcome.verdicts.iter().all(|v| v.pass) && outcome.regressions.is_empty(),
        ..outcome
    };
    let found = Findings {
        verdicts: &outcome.verdicts,
        regressions: &outcome.regressions,
        logs: &logs,
    };
    if let Some(path) = &args.junit {
        // Staged: a full disk leaves whatever was at the path, not a part of the cases.
        write_staged(&guard, Some(path), false, |out| {
            Ok(junit::write(&found, out)?)
        })?;
    }
    let mut out = output(None);
    match args.format {
        GateFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &outcome)?;
            writeln!(out)?;
        }
        GateFormat::Table => render_table(&outcome, &mut out)?,
        GateFormat::Github => {
            github::write(&found, &mut out)?;
            writeln!(out, "{}", summary_line(&outcome))?;
        }
    }
    out.flush()?;
    Ok(if outcome.pass {
        EXIT_OK
    } else {
        EXIT_REGRESSION
    })
}

/// The files gate reads besides the recorded runs.
fn read_files(args: &Args) -> Vec<Option<&std::path::Path>> {
    Labels::files(&args.expect)
        .chain([args.baseline.as_deref()])
        .collect()
}

/// The report of a saved JSON report (`--from`), and the guard over what gate reads; a
/// report records no run's log, so there are none.
fn from_report(from: &std::path::Path, args: &Args) -> Result<(Report, Guard, RunLogs)> {
    let guard = Guard::new(read_files(args).into_iter().flatten().chain([from]));
    if let Some(path) = &args.junit {
        guard.check(path)?;
    }
    Ok((load_report(from)?, guard, RunLogs::default()))
}

/// The report of replaying the paths given, the guard over what gate reads, and where
/// each run was read from.
fn replayed(args: &Args) -> Result<(Report, Guard, RunLogs)> {
    let config = args.input.config()?;
    let prices = args.input.prices()?;
    let projects = args.input.projects()?;
    let guard = args.input.guard(&projects, &read_files(args));
    if let Some(path) = &args.junit {
        guard.check(path)?;
    }
    let report = Report::of_runs(args.input.replay_reports(&projects, &config, &prices)?)
        .with_unread(projects.unread_report());
    Ok((report, guard, RunLogs::of(&projects)))
}

fn table(headers: Vec<&str>) -> Grid {
    Grid::new(headers)
}

/// The gate's verdict in one line, first in the table and last in the annotations.
fn summary_line(o: &Outcome) -> String {
    let failed = o.verdicts.iter().filter(|v| !v.pass).count();
    format!(
        "Gate: {} of {} expectations hold; {} baseline regressions: {}",
        o.verdicts.len() - failed,
        o.verdicts.len(),
        o.regressions.len(),
        if o.pass { "PASS" } else { "FAIL" }
    )
}

fn render_table(o: &Outcome, out: &mut dyn Write) -> std::io::Result<()> {
    let failed: Vec<&Verdict> = o.verdicts.iter().filter(|v| !v.pass).collect();
    writeln!(out, "{}", summary_line(o))?;
    if !failed.is_empty() || !o.regressions.is_empty() {
        let mut t = table(vec!["run", "label", "case", "what happened"]);
        for v in &failed {
            t.add_row(vec![
                v.run.clone(),
                v.label.as_str().into(),
                v.case.clone(),
                v.message.clone(),
            ]);
        }
        for r in &o.regressions {
            t.add_row(vec![
                r.run.clone(),
                "baseline".into(),
                r.case.clone(),
                r.message.clone(),
            ]);
        }
        writeln!(out, "\nFailures\n{t}")?;
    }
    if !o.scores.is_empty() {
        let mut t = table([&["guard", "work order"][..], &SCORE_COLUMNS].concat());
        for s in &o.scores {
            t.add_row([vec![s.guard.clone(), s.work_order.clone()], score_cells(s)].concat());
        }
        let resamples = o.scores.first().map_or(0, |s| s.intervals.resamples);
        writeln!(
            out,
            "\nScores ([low-high]: 95% bootstrap interval over projects, {resamples} resamples)\n{t}\n{}",
            crate::report::width::fitted(SAVINGS_ARE_ESTIMATES)
        )?;
    }
    let harnesses: Vec<(&str, &[GuardScore])> = (o.scores_by_harness.iter())
        .map(|h| (h.harness.as_str(), h.scores.as_slice()))
        .collect();
    let models: Vec<(&str, &[GuardScore])> = (o.scores_by_model.iter())
        .map(|m| (m.model.as_str(), m.scores.as_slice()))
        .collect();
    for (groups, what, heading) in [
        (
            harnesses,
            "harness",
            "harness (the format each run was read from)",
        ),
        (models, "model", "model (as the runs' requests name it)"),
    ] {
        if let Some(t) = grouped(&o.scores, &groups, what) {
            writeln!(out, "\nScores by {heading}\n{t}")?;
        }
    }
    Ok(())
}

/// Each guard's scores per group, under the pooled scores' order; only when the labeled
/// runs fall in more than one group, and without guards that fired on none of them.
fn grouped(pooled: &[GuardScore], groups: &[(&str, &[GuardScore])], what: &str) -> Option<Grid> {
    if groups.len() < 2 {
        return None;
    }
    let mut t = table([&["guard", what][..], &SCORE_COLUMNS].concat());
    for guard in pooled.iter().filter(|s| fired_at_all(s)) {
        for (name, scores) in groups {
            if let Some(s) = scores.iter().find(|s| s.guard == guard.guard) {
                t.add_row([vec![s.guard.clone(), name.to_string()], score_cells(s)].concat());
            }
        }
    }
    Some(t)
}

/// The columns of a score, after the row's names.
const SCORE_COLUMNS: [&str; 8] = [
    "cut (failed)",
    "cut (healthy)",
    "advised only (failed)",
    "advised only (healthy)",
    "saved (failed)",
    "lost (healthy cut)",
    "P(failed | fired / not)",
    "discriminates",
];

/// The cells of [`SCORE_COLUMNS`] for one score.
fn score_cells(s: &GuardScore) -> Vec<String> {
    let i = &s.intervals;
    vec![
        rate_cell(s.cut_on_failed, s.failed_runs, i.cut_on_failed_permille),
        rate_cell(
            s.false_terminal_on_healthy,
            s.healthy_runs,
            i.cut_on_healthy_permille,
        ),
        rate_cell(
            s.advisory_on_failed,
            s.failed_runs,
            i.advisory_on_failed_permille,
        ),
        rate_cell(
            s.advisory_on_healthy,
            s.healthy_runs,
            i.advisory_on_healthy_permille,
        ),
        saving_cell(
            s.tokens_saved_on_failed,
            s.cost_saved_usd_on_failed,
            i.tokens_saved_on_failed,
        ),
        saving_cell(
            s.tokens_lost_on_healthy,
            s.cost_lost_usd_on_healthy,
            i.tokens_lost_on_healthy,
        ),
        format!(
            "{} / {}",
            share_cell(s.failed_if_fired_permille, i.failed_if_fired_permille),
            share_cell(
                s.failed_if_not_fired_permille,
                i.failed_if_not_fired_permille
            )
        ),
        s.discriminates
            .map_or_else(|| "-".into(), |d| d.as_str().to_string()),
    ]
}

fn fired_at_all(s: &GuardScore) -> bool {
    s.fired_on_failed + s.fired_on_healthy > 0
}
