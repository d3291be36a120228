//! `hindsight sweep`: replay a labeled corpus over a grid of guard settings.

use super::input::{warn_skipped, Input};
use super::{output, EXIT_OK};
use crate::gate::sweep::{configure, grid, point, Param, Point};
use crate::gate::Labels;
use crate::ingest::ProjectSource;
use crate::replay::{replay_all, RunReplay};
use crate::report::tables::thousands;
use crate::report::Report;
use anyhow::{Context, Result};
use comfy_table::{presets, CellAlignment, ContentArrangement, Table};
use rayon::prelude::*;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight sweep corpora/ --expect corpora/expectations.json \\\n    \
    --param breaker.stalled=2..5 --param breaker.abandon=3..8\n  \
    hindsight sweep corpora/ --expect corpora/expectations.json --param delta.worsening_step=1,2,3 --format json"
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// Labels saying which runs failed and which were healthy (docs/GATE.md).
    #[arg(long, visible_alias = "labels")]
    pub expect: PathBuf,
    /// `guard.key=FROM..TO` (inclusive) or `guard.key=A,B,C`; repeat for a grid.
    #[arg(long = "param", required = true)]
    pub params: Vec<String>,
    #[arg(long, value_enum, default_value_t = SweepFormat::Table)]
    pub format: SweepFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SweepFormat {
    Table,
    Json,
}

pub fn run(args: Args) -> Result<u8> {
    let labels = Labels::load(&args.expect)?;
    let params = parse_params(&args.params)?;
    let projects = args.input.projects()?;
    let (points, runs) = sweep(&args.input, &projects, &labels, &params)?;
    warn_skipped(&runs);
    let mut out = output(None)?;
    match args.format {
        SweepFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &points).context("writing JSON")?;
            writeln!(out)?;
        }
        SweepFormat::Table => writeln!(out, "{}", render(&params, &points))?,
    }
    out.flush()?;
    Ok(EXIT_OK)
}

pub fn parse_params(texts: &[String]) -> Result<Vec<Param>> {
    Ok(texts
        .iter()
        .map(|p| Param::parse(p))
        .collect::<Result<Vec<_>, _>>()?)
}

/// Replays `projects` once per grid point (in parallel) and scores each over `labels`.
pub fn sweep_points(
    input: &Input,
    projects: &[ProjectSource],
    labels: &Labels,
    params: &[Param],
) -> Result<Vec<Point>> {
    Ok(sweep(input, projects, labels, params)?.0)
}

/// The points, and the runs of the first one: every point reads the same input, so its
/// skipped records are every point's.
fn sweep(
    input: &Input,
    projects: &[ProjectSource],
    labels: &Labels,
    params: &[Param],
) -> Result<(Vec<Point>, Vec<RunReplay>)> {
    let settings = grid(params)?;
    let base = input.config()?;
    let configs = settings
        .iter()
        .map(|s| configure(&base, s))
        .collect::<Result<Vec<_>, _>>()?;
    let policy = input.policy();
    let scored = input.pool()?.install(|| {
        settings
            .into_par_iter()
            .zip(configs.par_iter())
            .enumerate()
            .map(|(i, (setting, config))| {
                let runs = replay_all(projects, config, policy, &|| {})?;
                let scored = point(setting, &Report::build(&runs), labels);
                Ok((scored, if i == 0 { runs } else { Vec::new() }))
            })
            .collect::<Result<Vec<_>, crate::replay::ReplayError>>()
    })?;
    let (points, runs): (Vec<Point>, Vec<Vec<RunReplay>>) = scored.into_iter().unzip();
    Ok((points, runs.into_iter().next().unwrap_or_default()))
}

fn render(params: &[Param], points: &[Point]) -> Table {
    let mut headers: Vec<String> = params
        .iter()
        .map(|p| format!("{}.{}", p.guard, p.key))
        .collect();
    headers.extend(
        [
            "tokens saved (failed)",
            "failed runs cut",
            "false terminal (healthy)",
            "default",
        ]
        .map(String::from),
    );
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(headers);
    for p in points {
        let mut row: Vec<String> = p.setting.iter().map(|(_, v)| v.to_string()).collect();
        row.push(thousands(p.tokens_saved_on_failed));
        row.push(format!("{}/{}", p.failed_cut, p.failed_runs));
        row.push(format!(
            "{}/{}",
            p.false_terminal_on_healthy, p.healthy_runs
        ));
        row.push(if p.is_default {
            "*".into()
        } else {
            String::new()
        });
        t.add_row(row);
    }
    for i in 0..params.len() + 3 {
        if let Some(col) = t.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}
