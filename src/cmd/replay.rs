//! `hindsight replay`: replay the guards over recorded runs.

use super::input::Input;
use super::input::Inputs;
use super::{write_staged, EXIT_OK};
use crate::config::Config;
use crate::cost::Prices;
use crate::output::Entry;
use crate::replay::RunReplay;
use crate::report::frames::{write_tables, TableKind, TableLabels};
use crate::report::json::{run_entry, JsonStream};
use crate::report::{render_table, Format, Report, RunReport, RunTally, SummaryBuilder};
use anyhow::{bail, Result};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight replay\n  hindsight replay corpora/ --format markdown\n  \
    hindsight replay ~/work/.omnius --strict --format json --out report.json\n  \
    hindsight replay corpora/ --set convergence_breaker.abandon=4\n  \
    hindsight replay corpora/ --firings --wide\n  \
    hindsight replay corpora/ --format csv --out guards.csv\n  \
    hindsight replay corpora/ --format parquet --out guards.parquet\n  \
    hindsight replay sessions/ --prices model_prices.json\n  \
    hindsight replay corpora/ --format csv --table firings\n  \
    hindsight replay corpora/ --shard 2/3 --format json --out shard-2.json --tables-dir tables-2/\n  \
    hindsight replay corpora/ --guard wo3=\"python3 examples/guards/breaker.py\"\n\n\
    csv and parquet write one corpus table (--table): guards (the default), one row per \
    (run, guard): project, run_id, session, guard, work_order, fired, first_fire_turn, \
    first_action, firings, terminal, tokens_saved, cost_saved_usd, run_cost_usd; runs, one \
    row per run; firings, one row per firing: project, run_id, session, guard, work_order, \
    turn, agent, action, effect, family, tokens_saved, detail. parquet is binary and needs \
    --out. --tables-dir DIR writes all three as CSV and Parquet besides the report \
    (runs.csv, guards.csv, firings.csv, and .parquet).\n\n\
    --shard K/N replays the projects of shard K only; `hindsight merge` puts the shards' \
    JSON reports back together (docs/SCALE.md).\n\n\
    --guard ID=COMMAND replays your own guard code beside the built-in guards: COMMAND is \
    started once per worker thread and fed each run as the JSON Lines of `hindsight events`; \
    it answers with firings (docs/EVENTS.md, Protocol). A guard that crashes, hangs past \
    --guard-timeout or answers nonsense fails the replay (exit 2) unless --lenient-guards.\n\n\
    Exit codes: 0 success, 2 usage or input error (a bad path or setting, any bad record \
    under --strict, an external guard that failed)."
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the report here instead of stdout (required for parquet).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The corpus table `--format csv` and `parquet` write (default: guards).
    #[arg(long, value_enum)]
    pub table: Option<TableKind>,
    /// Also write the runs, guards and firings tables, as CSV and Parquet, into this folder.
    #[arg(long, value_name = "DIR")]
    pub tables_dir: Option<PathBuf>,
    /// The terminal table also lists every firing (by default it shows runs and guards).
    #[arg(long)]
    pub firings: bool,
}

pub fn run(args: Args) -> Result<u8> {
    if args.format.is_binary() && args.out.is_none() {
        bail!("--format parquet writes a binary file: give it one with --out FILE");
    }
    if args.table.is_some() && !matches!(args.format, Format::Csv | Format::Parquet) {
        bail!(
            "--table picks the table of --format csv or parquet; --tables-dir DIR writes them all"
        );
    }
    let config = args.input.config()?;
    let prices = args.input.prices()?;
    let projects = args.input.projects()?;
    let guard = args.input.guard(&projects, &[]);
    if let Some(out) = &args.out {
        guard.check(out)?;
    }
    if let Some(dir) = &args.tables_dir {
        guard.check_tree(dir, Entry::Replaced)?;
    }
    // A replay stopped by a bad record (--strict) or a failed external guard leaves no
    // half-written report behind, on disk or on stdout.
    write_staged(
        &guard,
        args.out.as_deref(),
        args.input.all_or_nothing(),
        |out| write_report(&args, &projects, &config, &prices, out),
    )?;
    Ok(EXIT_OK)
}

/// Replays and writes the report. JSON is written as the replay goes, each run's entry
/// once every run before it is done, so memory holds the summary, not the runs (issue
/// #13); the other formats, and `--tables-dir`, lay out tables over every run and are
/// written at the end.
fn write_report(
    args: &Args,
    projects: &Inputs,
    config: &Config,
    prices: &Prices,
    out: &mut dyn Write,
) -> Result<()> {
    if args.format != Format::Json || args.tables_dir.is_some() {
        let runs = args.input.replay_reports(projects, config, prices)?;
        let report = Report::of_runs(runs)
            .with_unread(projects.unread_report())
            .with_replayed(args.input.replayed(config, prices))
            .with_shard(args.input.shard);
        let table = args.table.unwrap_or_default();
        if args.format == Format::Table {
            crate::report::table::render(&report, args.firings, out)?;
        } else {
            render_table(&report, args.format, table, out)?;
        }
        if let Some(dir) = &args.tables_dir {
            write_tables(&report, &TableLabels::none(), dir)?;
        }
        return Ok(());
    }
    let mut stream = JsonStream::begin_current(out)?;
    let mut summary = SummaryBuilder::default();
    let mut failed = None;
    // Each run becomes its entry's bytes and its tally on a worker thread: that is all
    // a run waiting for its turn holds.
    let written = |r: RunReplay| {
        let run = RunReport::of(&r, prices);
        (run_entry(&run), RunTally::of(&run))
    };
    args.input
        .replay_each(projects, config, &written, |(entry, tally)| {
            if failed.is_none() {
                failed = entry.and_then(|entry| stream.run_entry(&entry)).err();
            }
            summary.add_tally(&tally);
        })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let input = projects.unread_report();
    let mut summary = summary.finish();
    summary.count_unread(&input);
    let replayed = args.input.replayed(config, prices);
    Ok(stream.finish(&summary, &input, Some(&replayed), args.input.shard.as_ref())?)
}
