//! `hindsight replay`: replay the guards over recorded runs.

use super::input::Input;
use super::{output, EXIT_OK};
use crate::output::Entry;
use crate::report::frames::{write_tables, TableKind};
use crate::report::{render_table, Format, Report};
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
    hindsight replay sessions/ --prices model_prices.json\n  \
    hindsight replay corpora/ --format csv --table firings\n  \
    hindsight replay corpora/ --shard 2/3 --format json --out shard-2.json --tables-dir tables-2/\n\n\
    csv and parquet write one corpus table (--table): guards (the default), one row per \
    (run, guard): project, run_id, session, guard, work_order, fired, first_fire_turn, \
    first_action, firings, terminal, tokens_saved, cost_saved_usd, run_cost_usd; runs, one \
    row per run; firings, one row per firing: project, run_id, session, guard, work_order, \
    turn, agent, action, effect, family, tokens_saved, detail. parquet is binary and needs \
    --out. --tables-dir DIR writes all three as CSV and Parquet besides the report \
    (runs.csv, guards.csv, firings.csv, and .parquet).\n\n\
    --shard K/N replays the projects of shard K only; `hindsight merge` puts the shards' \
    JSON reports back together (docs/SCALE.md)."
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
        guard.check(out, Entry::Replaced)?;
    }
    if let Some(dir) = &args.tables_dir {
        guard.check_tree(dir, Entry::Replaced)?;
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
    render_table(
        &report,
        args.format,
        args.table.unwrap_or_default(),
        &mut out,
    )?;
    out.flush()?;
    if let Some(dir) = &args.tables_dir {
        write_tables(&report, dir)?;
    }
    Ok(EXIT_OK)
}
