//! `hindsight replay`: replay the guards over recorded runs.

use super::input::Input;
use super::{output, EXIT_OK};
use crate::output::Entry;
use crate::report::{render, Format, Report};
use anyhow::{bail, Result};
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
    let runs = args.input.replay(&projects, &config)?;
    let report = Report::build(&runs, &prices)
        .with_unread(&projects.unread, &projects.skipped_files)
        .with_shard(args.input.shard);
    let file = args
        .out
        .as_deref()
        .map(|p| guard.create_file(p))
        .transpose()?;
    let mut out = output(file);
    render(&report, args.format, &mut out)?;
    out.flush()?;
    Ok(EXIT_OK)
}
