//! `hindsight replay`: replay the guards over recorded runs.

use super::input::Input;
use super::input::Inputs;
use super::{output, EXIT_OK};
use crate::config::Config;
use crate::cost::Prices;
use crate::output::{Entry, Staged};
use crate::replay::RunReplay;
use crate::report::json::JsonStream;
use crate::report::{render, Format, Report, RunReport, SummaryBuilder, UnreadReport};
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight replay\n  hindsight replay corpora/ --format markdown\n  \
    hindsight replay ~/work/.omnius --strict --format json --out report.json\n  \
    hindsight replay corpora/ --set convergence_breaker.abandon=4\n  \
    hindsight replay corpora/ --format csv --out guards.csv\n  \
    hindsight replay corpora/ --format parquet --out guards.parquet\n  \
    hindsight replay sessions/ --prices model_prices.json\n\n\
    csv and parquet write one row per (run, guard): project, run_id, session, guard, \
    work_order, fired, first_fire_turn, first_action, firings, terminal, tokens_saved, \
    cost_saved_usd, run_cost_usd. parquet is binary and needs --out."
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the report here instead of stdout (required for parquet).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<u8> {
    if args.format.is_binary() && args.out.is_none() {
        bail!("--format parquet writes a binary file: give it one with --out FILE");
    }
    let config = args.input.config()?;
    let prices = args.input.prices()?;
    let projects = args.input.projects()?;
    let guard = args.input.guard(&projects, &[]);
    if let Some(out) = &args.out {
        guard.check(out, Entry::Replaced)?;
    }
    // A replay stopped by a bad record (--strict) leaves no half-written report behind.
    let mut staged = args
        .out
        .as_deref()
        .map(|p| guard.stage_file(p))
        .transpose()?;
    let mut out = output(staged.as_mut().and_then(Staged::take_file));
    if args.input.strict && args.out.is_none() {
        // Nothing on stdout unless the whole replay succeeds: the report is held, as
        // bytes, until then.
        let mut held = Vec::new();
        write_report(&args, &projects, &config, &prices, &mut held)?;
        out.write_all(&held)?;
    } else {
        write_report(&args, &projects, &config, &prices, &mut out)?;
    }
    out.flush()?;
    drop(out);
    if let (Some(staged), Some(path)) = (staged, &args.out) {
        staged
            .commit()
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(EXIT_OK)
}

/// Replays and writes the report. JSON is written as the replay goes, each run's entry
/// once every run before it is done, so memory holds the summary, not the runs (issue
/// #13); the other formats lay out tables over every run and are written at the end.
fn write_report(
    args: &Args,
    projects: &Inputs,
    config: &Config,
    prices: &Prices,
    out: &mut dyn Write,
) -> Result<()> {
    if args.format != Format::Json {
        let runs = args.input.replay_reports(projects, config, prices)?;
        let report = Report::of_runs(runs).with_unread(&projects.unread, &projects.skipped_files);
        return Ok(render(&report, args.format, out)?);
    }
    let mut stream = JsonStream::begin_current(out)?;
    let mut summary = SummaryBuilder::default();
    let mut failed = None;
    let costed = |r: RunReplay| RunReport::of(&r, prices);
    args.input.replay_each(projects, config, &costed, |run| {
        if failed.is_none() {
            failed = stream.run(&run).err();
        }
        summary.add(&run);
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let input = UnreadReport::of(&projects.unread, &projects.skipped_files);
    let mut summary = summary.finish();
    summary.count_unread(&input);
    Ok(stream.finish(&summary, &input)?)
}
