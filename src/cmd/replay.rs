//! `hindsight replay`: replay the guards over recorded runs.

use super::{output, EXIT_INPUT, EXIT_OK};
use crate::config::Config;
use crate::ingest::{discover, Policy};
use crate::replay::{replay_all, RunReplay};
use crate::report::{render, Format, Report};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight replay\n  hindsight replay corpora/ --format markdown\n  \
    hindsight replay ~/work/.omnius --strict --format json --out report.json\n  \
    hindsight replay corpora/ --set convergence_breaker.abandon=4"
)]
pub struct Args {
    /// Directories holding `.omnius/` dumps (searched recursively), or `.omnius` directories.
    #[arg(default_value = "corpora/")]
    pub paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the report here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Guard settings as JSON: {"<guard>": {"<key>": value}}.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override one setting, e.g. `convergence_breaker.abandon=4` (repeatable).
    #[arg(long = "set", value_name = "GUARD.KEY=VALUE")]
    pub set: Vec<String>,
    /// Worker threads (default: one per core). Output is identical for any value.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Fail (exit 2) on the first bad record instead of skipping and counting it.
    #[arg(long)]
    pub strict: bool,
}

pub fn run(args: Args) -> Result<u8> {
    let runs = match replay_paths(&args)? {
        Ok(runs) => runs,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(EXIT_INPUT);
        }
    };
    warn_skipped(&runs);
    let report = Report::build(&runs);
    let mut out = output(args.out.as_deref())?;
    render(&report, args.format, &mut out)?;
    out.flush()?;
    Ok(EXIT_OK)
}

/// Loads settings, discovers and replays; an input error comes back as its message.
pub fn replay_paths(args: &Args) -> Result<std::result::Result<Vec<RunReplay>, String>> {
    let mut config = match &args.config {
        Some(path) => Config::from_file(path)?,
        None => Config::default(),
    };
    for assignment in &args.set {
        config.set(assignment)?;
    }
    let projects = discover(&args.paths)?;
    if let Some(out) = &args.out {
        refuse_inside_inputs(out, projects.iter().map(|p| &p.omnius))?;
    }
    let total: usize = projects.iter().map(|p| p.runs.len()).sum();
    let bar = progress_bar(total as u64);
    let policy = if args.strict {
        Policy::Strict
    } else {
        Policy::Lenient
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let result = pool.install(|| replay_all(&projects, &config, policy, &|| bar.inc(1)));
    bar.finish_and_clear();
    Ok(result.map_err(|e| e.to_string()))
}

fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} replaying {pos}/{len} runs [{elapsed}] {wide_bar}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// The recorded directories are read-only to hindsight, whatever `--out` says.
fn refuse_inside_inputs<'a>(
    out: &std::path::Path,
    inputs: impl Iterator<Item = &'a PathBuf>,
) -> Result<()> {
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let Ok(out_dir) = parent.canonicalize() else {
        return Ok(());
    };
    for input in inputs {
        if input.canonicalize().is_ok_and(|i| out_dir.starts_with(i)) {
            bail!(
                "{}: refusing to write inside the recorded directory {}",
                out.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// One warning per file with skipped records (lenient mode).
fn warn_skipped(runs: &[RunReplay]) {
    let mut by_file: BTreeMap<&str, (u64, String)> = BTreeMap::new();
    for run in runs {
        for (path, count) in &run.problems.by_file {
            let first = run.problems.listed.iter().find(|p| &p.path == path);
            let first = first.map_or_else(|| "(not listed)".to_string(), ToString::to_string);
            by_file.entry(path.as_str()).or_insert((0, first)).0 += count;
        }
    }
    for (path, (count, first)) in by_file {
        eprintln!("warning: {path}: {count} bad record(s) skipped; first: {first}");
    }
}
