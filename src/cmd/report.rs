//! `hindsight report`: the material for a work-order review, written to a folder.
//!
//! `report.md` and a self-contained `report.html`, the charts as SVG and PNG, the corpus
//! tables as CSV and Parquet, and the JSON report; with `--expect`, a threshold sweep
//! chart as well.

use super::explain::explain_one;
use super::input::{Input, Reward, REPLAY_ONLY};
use super::sweep::{parse_params, sweep, sweep_points};
use super::{load_report, write_staged, EXIT_OK};
use crate::gate::decide::{self, decide, Decision};
use crate::gate::scores::DEFAULT_RESAMPLES;
use crate::gate::select::Selection;
use crate::gate::sweep::{points, Acting, Param, Point, SweptRun};
use crate::gate::Label;
use crate::gate::{LabelSpec, Labels};
use crate::ingest::ProjectSource;
use crate::output::Guard;
use crate::replay::RunReplay;
use crate::report::charts::{self, ChartData, ChartFile, ChartKind, SweepPoint};
use crate::report::explain::{self, corpus::failed_by_terminal_guard, Explain};
use crate::report::frames::{self, TableLabels};
use crate::report::review::{
    self, DataFile, DecisionTable, ExplainPage, Figure, PostMortem, Section,
};
use crate::report::tables::TableModel;
use crate::report::Report;
use anyhow::{Context, Result};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight report corpora/ --out-dir reports/corpora --expect corpora/expectations.json\n  \
    hindsight report runs/ --out-dir /tmp/review --per-run 5\n  \
    hindsight report --from merged.json --out-dir review/\n\n\
    Writes report.md, report.html, report.json, charts/*.svg|png, tables/*.csv|parquet \
    (runs, guards, firings) and explain/*.md|html: the post-mortem page (hindsight explain) \
    of each run given per-run charts. The document groups the failed runs (labelled failed \
    with --expect, else those whose ledger does not finalize completed) by their earliest \
    terminal guard and its family, with the tokens and dollars spent after each run's first \
    `stalled`.\n\n\
    --from REPORT.json builds the review from a saved JSON report (a merged one, any \
    `replay --format json`) instead of replaying: the corpus charts (savings, first fire), \
    the tables, report.md/html/json. The per-run charts (tokens by turn, convergence) need \
    the replay's turn-by-turn figures, which no report holds: they are left out, with a \
    note. --expect (the sweep chart replays the corpus at every setting), --param, \
    --per-run and the replay's options (paths, --config, --set, --prices, --shard, ...) are \
    refused next to --from."
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// Build the review from this saved JSON report (`replay --format json`, `merge`)
    /// instead of replaying; no per-run charts, no sweep chart.
    #[arg(long, value_name = "REPORT.json", conflicts_with_all = REPLAY_ONLY,
          conflicts_with_all = ["expect", "params", "per_run"])]
    pub from: Option<PathBuf>,
    /// The folder to write (created if missing; files in it are replaced).
    #[arg(long)]
    pub out_dir: PathBuf,
    /// Labels (docs/GATE.md), which add the threshold-sweep chart: a labels file, an
    /// evaluation summary (SWE-bench, Terminal-Bench `results.json`), a Harbor job or trial
    /// folder, or `DIR=FILE` (repeatable), a summary that labels only the runs under DIR.
    #[arg(long, visible_alias = "labels", value_name = "PATH|DIR=FILE")]
    pub expect: Vec<LabelSpec>,
    #[command(flatten)]
    pub reward: Reward,
    /// Sweep parameters for the sweep chart (with --expect), and the settings the decision
    /// table chooses among for the guards they name (the others are judged at their
    /// settings as replayed). The default grid holds no setting the guard refuses (its
    /// `stalled` never exceeds its `abandon`).
    #[arg(long = "param", default_values_t = ["breaker.stalled=2..4".to_string(), "breaker.abandon=4..8".to_string()])]
    pub params: Vec<String>,
    /// The decision table's constraints and objective (docs/GATE.md, *Choosing a setting*
    /// and *Deciding*), with --expect.
    #[arg(long, default_value = "false_cut_rate<=0.01", value_name = "EXPR")]
    pub select: Selection,
    /// The fraction of projects the decision table holds out (by a hash of each name).
    #[arg(long, default_value_t = 0.3, value_name = "FRACTION")]
    pub holdout: f64,
    /// Per-run charts and explain pages for at most this many runs: the failed ones first
    /// (labelled failed with --expect, else ledger not finalized completed), then by
    /// tokens saved; the review says which it picked.
    #[arg(long, default_value_t = 12)]
    pub per_run: usize,
}

pub fn run(args: Args) -> Result<u8> {
    if let Some(from) = &args.from {
        return from_report(from, &args.out_dir);
    }
    let config = args.input.config()?;
    let prices = args.input.prices()?;
    let projects = args.input.projects()?;
    let files: Vec<_> = Labels::files(&args.expect).collect();
    let guard = args.input.guard(&projects, &files);
    guard.check(&args.out_dir)?;
    let runs = args.input.replay(&projects, &config)?;
    let report = Report::build(&runs, &prices)
        .with_unread(projects.unread_report())
        .with_replayed(args.input.replayed(&config, &prices))
        .with_shard(args.input.shard);
    let labels = args
        .reward
        .labels_or_trials(&args.expect, &args.input.paths)?;
    if let Some(labels) = &labels {
        labels.check_report(&report)?;
    }
    if !(0.0..1.0).contains(&args.holdout) {
        anyhow::bail!(
            "--holdout {}: expected a fraction from 0 up to (not including) 1",
            args.holdout
        );
    }
    let (sweep, decisions) = match &labels {
        Some(labels) => {
            let params = parse_params(&args.params)?;
            let points = sweep_points(&args.input, &projects, labels, &params, DEFAULT_RESAMPLES)?;
            let judged = Judged {
                input: &args.input,
                projects: &projects,
                report: &report,
                labels,
            };
            let decisions = judged.decide_all(&params, &args.select, args.holdout)?;
            (Some(points), Some(decisions))
        }
        None => (None, None),
    };
    let decision = decisions.as_ref().map(|d| DecisionTable {
        table: decide::table(d),
        rules: decide::rules(&args.select, args.holdout),
    });
    let (picked, why) = pick_runs(&report, labels.as_ref(), args.per_run);
    eprintln!("note: {why}");
    let data = ChartData::build(
        &runs,
        &report,
        &config,
        &picked,
        sweep.map(|p| sweep_chart(&p)),
    );
    // The post-mortem of each run the review looks at, and the failed runs by the guard
    // that would have ended them (issue #14).
    let mut explained = Vec::new();
    for &i in &picked {
        let (replay, run) = (&runs[i], &report.runs[i]);
        let e = explain_one(
            &projects,
            replay,
            run,
            labels.as_ref(),
            &args.input,
            &config,
            &prices,
        )?;
        explained.push(e);
    }
    let (failed, means) = match &labels {
        Some(l) => (
            failed_by_terminal_guard(&runs, &report, &prices, &|r| {
                l.get(r).is_some_and(|x| x.label == Label::Failed)
            }),
            "labelled failed",
        ),
        None => (
            failed_by_terminal_guard(&runs, &report, &prices, &|r| {
                r.ledger.finalized != "completed"
            }),
            "ledger not finalized completed",
        ),
    };
    let failed = Some(explain::corpus::table(&failed, means));
    let picked = Some(why);
    let post = Post {
        explained: &explained,
        failed,
        picked,
        decision,
        decisions: decisions.as_deref(),
        labels: (labels.as_ref()).map_or_else(TableLabels::none, |l| l.table_labels(&report)),
    };
    write_folder(&guard, &args.out_dir, &report, &data, post)?;
    eprintln!("wrote {}", args.out_dir.join("report.html").display());
    Ok(EXIT_OK)
}

/// The review of a saved report (`--from`): the corpus charts and the tables; the per-run
/// charts need a replay's turn-by-turn figures, so there are none.
fn from_report(from: &Path, out_dir: &Path) -> Result<u8> {
    let guard = Guard::new([from]);
    guard.check(out_dir)?;
    let report = load_report(from)?;
    eprintln!(
        "note: --from {}: no per-run charts or explain pages (they need a replay's turn-by-turn figures)",
        from.display()
    );
    let no_runs: &[RunReplay] = &[];
    let data = ChartData::build(no_runs, &report, &Default::default(), &[], None);
    let post = Post {
        explained: &[],
        failed: None,
        picked: None,
        decision: None,
        decisions: None,
        labels: TableLabels::none(),
    };
    write_folder(&guard, out_dir, &report, &data, post)?;
    eprintln!("wrote {}", out_dir.join("report.html").display());
    Ok(EXIT_OK)
}

/// The indexes of the runs a review looks at first, at most `n`, in report order.
/// The runs a review charts and explains, at most `n`: the failed ones first (labelled
/// failed when there are labels, else those whose ledger does not finalize as completed),
/// among them first those no guard saves anything on (by tokens spent), then each group by tokens
/// saved, then firings; and the sentence that says which were picked.
fn pick_runs(report: &Report, labels: Option<&Labels>, n: usize) -> (Vec<usize>, String) {
    // Once per run: a label is found by the run's canonical path.
    let failed: Vec<bool> = (report.runs.iter())
        .map(|r| match labels {
            Some(l) => l.get(r).is_some_and(|x| x.label == Label::Failed),
            None => r.ledger.finalized != "completed",
        })
        .collect();
    let mut order: Vec<usize> = (0..report.runs.len()).collect();
    // A failed run the guards would have saved nothing on (no saving, no cut) is a gap in
    // the guards, what their author most needs to see: those come first among the failed,
    // the costliest first (issue #31).
    let untouched =
        |r: &crate::report::RunReport| r.savings.combined == 0 && r.savings.cut_at_turn.is_none();
    order.sort_by_key(|&i| {
        let r = &report.runs[i];
        let untouched = failed[i] && untouched(r);
        (
            !failed[i],
            !untouched,
            std::cmp::Reverse(if untouched {
                r.tokens_total
            } else {
                r.savings.combined
            }),
            std::cmp::Reverse(r.firings.len()),
            i,
        )
    });
    order.truncate(n);
    let from_failed = order.iter().filter(|&&i| failed[i]).count();
    let untouched = (order.iter())
        .filter(|&&i| failed[i] && untouched(&report.runs[i]))
        .count();
    let others = order.len() - from_failed;
    let failed_runs = if labels.is_some() {
        "labelled failed runs"
    } else {
        "failed runs (ledger not finalized completed)"
    };
    let mut said = format!(
        "{} of {} runs picked for review (--per-run {n}): ",
        order.len(),
        report.runs.len()
    );
    let gaps = match untouched {
        0 => String::new(),
        1 => " (first the 1 no guard saves anything on)".to_string(),
        n => format!(" (first the {n} no guard saves anything on)"),
    };
    said += &match (from_failed, others) {
        (0, _) => format!("no {failed_runs}; the {others} with the most tokens saved"),
        (f, 0) => format!("the {f} {failed_runs}{gaps}, then by tokens saved"),
        (f, o) => format!("the {f} {failed_runs}{gaps}, then {o} more by tokens saved"),
    };
    said.push('.');
    order.sort_unstable();
    (order, said)
}

fn sweep_chart(points: &[Point]) -> Vec<SweepPoint> {
    points
        .iter()
        .map(|p| SweepPoint {
            label: p
                .setting
                .iter()
                .map(|(name, v)| format!("{}={v}", name.rsplit('.').next().unwrap_or(name)))
                .collect::<Vec<_>>()
                .join(" "),
            tokens_saved_on_failed: p.tokens_saved_on_failed,
            false_terminal_on_healthy: p.false_terminal_on_healthy as u64,
            is_default: p.is_default,
            saved_interval: p.intervals.tokens_saved_on_failed,
            false_terminal_interval: p.intervals.cut_on_healthy_permille.map(|[lo, hi]| {
                let runs = p.healthy_runs as f64 / 1000.0;
                [f64::from(lo) * runs, f64::from(hi) * runs]
            }),
        })
        .collect()
}

/// What a labelled replay adds to the review's document.
struct Post<'a> {
    explained: &'a [Explain],
    failed: Option<TableModel>,
    picked: Option<String>,
    decision: Option<DecisionTable>,
    /// The decision table's rows, written as `decision.json`.
    decisions: Option<&'a [Decision]>,
    /// The runs' labels, for the tables' label columns.
    labels: TableLabels,
}

/// A labelled replay, for the decision table.
struct Judged<'a> {
    input: &'a crate::cmd::input::Input,
    projects: &'a [ProjectSource],
    report: &'a Report,
    labels: &'a Labels,
}

impl Judged<'_> {
    /// Every guard of the report judged alone (issue #29, item 6): over the grid of the
    /// `params` that name it (one more replay, each run read once), else at the setting
    /// the report was replayed with.
    fn decide_all(
        &self,
        params: &[Param],
        selection: &Selection,
        holdout: f64,
    ) -> Result<Vec<Decision>> {
        self.report
            .summary
            .guards
            .iter()
            .map(|g| {
                let own: Vec<Param> = params
                    .iter()
                    .filter(|p| p.guard == g.guard)
                    .cloned()
                    .collect();
                let scored = if own.is_empty() {
                    let runs: Vec<SweptRun> = (self.report.runs.iter())
                        .filter_map(|r| {
                            let label = self.labels.get(r)?.label;
                            Some(SweptRun::of_guard(r, &g.guard, label))
                        })
                        .collect();
                    points(vec![Vec::new()], &runs, DEFAULT_RESAMPLES)
                } else {
                    let (settings, runs) =
                        sweep(self.input, self.projects, self.labels, &own, Acting::Alone)?;
                    points(settings, &runs, DEFAULT_RESAMPLES)
                };
                let resamples = DEFAULT_RESAMPLES;
                Ok(decide(
                    &g.guard,
                    &g.work_order,
                    &scored,
                    selection,
                    holdout,
                    resamples,
                ))
            })
            .collect()
    }
}

/// Writes the review into `dir`: the folder itself is the user's (followed if a link), its
/// `charts/` and `tables/` and every file in them are hindsight's own (links replaced).
fn write_folder(
    guard: &Guard,
    dir: &Path,
    report: &Report,
    data: &ChartData,
    post: Post<'_>,
) -> Result<()> {
    let chart_dir = dir.join("charts");
    let table_dir = dir.join("tables");
    guard.create_out_dir(dir)?;
    guard.create_dir(&chart_dir)?;
    guard.create_dir(&table_dir)?;
    // Each file is staged: a failed write (a full disk) leaves no part of one.
    let write = |name: &str, w: &mut dyn FnMut(&mut dyn Write) -> Result<()>| {
        write_staged(guard, Some(&dir.join(name)), false, w)
    };
    let Post {
        explained,
        failed,
        picked,
        decision,
        decisions,
        labels,
    } = post;
    let post = PostMortem {
        decision,
        pages: write_explained(guard, dir, explained)?,
        failed,
        picked,
    };
    let charts = charts::write_all(data, &chart_dir).context("drawing charts")?;
    let tables = frames::write_tables(report, &labels, &table_dir).context("writing tables")?;
    let figures = figures(&charts)?;
    let decision_json = decisions.map(|_| dir.join("decision.json"));
    let files: Vec<DataFile> = tables
        .iter()
        .chain(std::iter::once(&dir.join("report.json")))
        .chain(decision_json.as_ref())
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let link = p
                .strip_prefix(dir)
                .ok()
                .map(crate::ingest::display)
                .unwrap_or(name.clone());
            Some(DataFile { label: name, link })
        })
        .collect();
    write("report.json", &mut |out| {
        Ok(crate::report::json::render(report, out)?)
    })?;
    if let Some(decisions) = decisions {
        write("decision.json", &mut |out| {
            serde_json::to_writer_pretty(&mut *out, decisions)?;
            Ok(writeln!(out)?)
        })?;
    }
    write("report.md", &mut |out| {
        Ok(review::markdown(report, &figures, &files, &post, out)?)
    })?;
    write("report.html", &mut |out| {
        Ok(review::html(report, &figures, &files, &post, out)?)
    })
}

/// Writes each run's explain page, as Markdown and HTML, into `explain/` (hindsight's own
/// folder, like `charts/`), named like the run's charts.
fn write_explained(guard: &Guard, dir: &Path, explained: &[Explain]) -> Result<Vec<ExplainPage>> {
    if explained.is_empty() {
        return Ok(Vec::new());
    }
    let explain_dir = dir.join("explain");
    guard.create_dir(&explain_dir)?;
    let mut stems = BTreeSet::new();
    let mut pages = Vec::new();
    for e in explained {
        let base = charts::slug(&e.chart.name);
        let (mut stem, mut n) = (base.clone(), 1);
        while !stems.insert(stem.clone()) {
            n += 1;
            stem = format!("{base}-{n}");
        }
        for (ext, format) in [
            ("md", explain::Format::Markdown),
            ("html", explain::Format::Html),
        ] {
            let path = explain_dir.join(format!("{stem}.{ext}"));
            write_staged(guard, Some(&path), false, |out| {
                Ok(explain::render(std::slice::from_ref(e), format, out)?)
            })?;
        }
        pages.push(ExplainPage {
            label: crate::report::run_name(&e.header.project, &e.header.run_id),
            markdown_link: format!("explain/{stem}.md"),
            html_link: format!("explain/{stem}.html"),
        });
    }
    Ok(pages)
}

fn figures(charts: &[ChartFile]) -> Result<Vec<Figure>> {
    charts
        .iter()
        .map(|c| {
            Ok(Figure {
                title: c.title.clone(),
                svg_link: format!("charts/{}.svg", c.stem),
                svg: c.svg_text()?,
                section: match c.kind {
                    ChartKind::Tokens | ChartKind::Convergence => Section::Run,
                    ChartKind::Savings | ChartKind::FirstFire | ChartKind::Sweep => Section::Corpus,
                },
            })
        })
        .collect()
}
