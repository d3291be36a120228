//! `hindsight sweep`: replay a labeled corpus over a grid of guard settings.

use super::input::{Input, Reward};
use super::{output, EXIT_OK};
use crate::config::Config;
use crate::gate::scores::Difference;
use crate::gate::scores::DEFAULT_RESAMPLES;
use crate::gate::select::{Choice, Figures, Folds, Selection};
use crate::gate::sweep::{configure, grid, Acting, Param, Point, Setting, SweptRun, Value};
use crate::gate::sweep_report::{Selecting, Split, SweepReport};
use crate::gate::{LabelSpec, Labels};
use crate::ingest::ProjectSource;
use crate::replay::{Lineup, RunReplay};
use crate::report::table::Grid;
use crate::report::tables::{
    rate_cell, saving_cell, thousands, tokens_range, SAVINGS_ARE_ESTIMATES,
};
use anyhow::{bail, Context, Result};
use std::io::Write;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight sweep corpora/ --expect corpora/expectations.json \\\n    \
    --param breaker.stalled=2..5 --param breaker.abandon=3..8\n  \
    hindsight sweep corpora/ --expect corpora/expectations.json --param delta.worsening_step=1,2,3 --format json"
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// Labels saying which runs failed and which were healthy (docs/GATE.md): a labels
    /// file, an evaluation summary (SWE-bench, Terminal-Bench `results.json`), a Harbor job
    /// or trial folder, or `DIR=FILE` (repeatable), a summary that labels only the runs
    /// under DIR.
    #[arg(
        long,
        visible_alias = "labels",
        value_name = "PATH|DIR=FILE",
        required = true
    )]
    pub expect: Vec<LabelSpec>,
    #[command(flatten)]
    pub reward: Reward,
    /// `guard.key=FROM..TO` (inclusive) or `guard.key=A,B,C`; repeat for a grid.
    #[arg(long = "param", required = true)]
    pub params: Vec<String>,
    #[arg(long, value_enum, default_value_t = SweepFormat::Table)]
    pub format: SweepFormat,
    /// Choose a setting: constraints and an objective over the scores (docs/GATE.md,
    /// *Choosing a setting*), e.g. `false_cut_rate<=0.01` or `false_cut_rate<=0,max
    /// tokens_saved_on_failed`. The choice is made on a part of the projects and scored on
    /// the rest (`--holdout`).
    #[arg(long, value_name = "EXPR")]
    pub select: Option<Selection>,
    /// The fraction of projects held out from `--select`'s choice, by a hash of each
    /// project's name.
    #[arg(long, default_value_t = 0.3, value_name = "FRACTION")]
    pub holdout: f64,
    /// Instead of one holdout, K folds by a hash of each project's name: each fold's
    /// setting is chosen on the others and scored on it, and the held-out figures are
    /// pooled over the folds (docs/GATE.md, *Choosing a setting*).
    #[arg(long, value_name = "K", conflicts_with = "holdout", value_parser = clap::value_parser!(u32).range(2..=100))]
    pub folds: Option<u32>,
    /// Bootstrap resamples behind each interval (whole projects are drawn; seeded).
    #[arg(long, default_value_t = DEFAULT_RESAMPLES, value_name = "N")]
    pub resamples: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SweepFormat {
    Table,
    Json,
}

pub fn run(args: Args) -> Result<u8> {
    // External guards first: a label or a --param may name one.
    args.input.install_guards()?;
    let labels = args
        .reward
        .labels_or_trials(&args.expect, &args.input.paths)?
        .context("--expect: no labels given (nor a Harbor job folder to take rewards from)")?;
    let params = parse_params(&args.params)?;
    let projects = args.input.projects()?;
    if !(0.0..1.0).contains(&args.holdout) {
        bail!(
            "--holdout {}: expected a fraction from 0 up to (not including) 1",
            args.holdout
        );
    }
    let split = match args.folds {
        Some(k) => Split::Folds(k),
        None => Split::Holdout(args.holdout),
    };
    let selecting = args
        .select
        .clone()
        .map(|selection| Selecting { selection, split });
    let (settings, runs) = sweep(&args.input, &projects, &labels, &params, Acting::Together)?;
    let mut swept = SweepReport::score(
        settings,
        runs,
        args.resamples,
        selecting.as_ref(),
        args.input.shard,
    );
    swept.replayed = Some(
        args.input
            .replayed(&args.input.config()?, &args.input.prices()?),
    );
    let mut out = output(None);
    match args.format {
        SweepFormat::Json => swept.write(&mut out)?,
        SweepFormat::Table => {
            writeln!(
                out,
                "{}\n{}",
                render(&params, &swept.points),
                crate::report::width::fitted(SAVINGS_ARE_ESTIMATES)
            )?;
            for (what, groups) in [("harness", &swept.by_harness), ("model", &swept.by_model)] {
                for g in groups {
                    let table = render(&params, &g.points);
                    writeln!(out, "\nThe {} runs alone ({what}):\n{table}", g.name)?;
                }
            }
            if let (Some(choice), Some(selection)) = (&swept.choice, &args.select) {
                writeln!(out, "\n{}", describe_choice(choice, selection))?;
            }
            if let (Some(folds), Some(selection)) = (&swept.folds, &args.select) {
                writeln!(out, "\n{}", describe_folds(folds, selection))?;
            }
        }
    }
    out.flush()?;
    // No setting meeting the constraints is an answer the caller must not miss.
    let none_chosen = swept.choice.is_some_and(|c| c.chosen.is_none())
        || swept
            .folds
            .is_some_and(|f| f.per_fold.iter().all(|c| c.chosen.is_none()));
    if none_chosen {
        return Ok(EXIT_NO_CHOICE);
    }
    Ok(EXIT_OK)
}

pub fn parse_params(texts: &[String]) -> Result<Vec<Param>> {
    Ok(texts
        .iter()
        .map(|p| Param::parse(p))
        .collect::<Result<Vec<_>, _>>()?)
}

/// Sweeps `projects` over the grid of `params` and scores each point over `labels`.
pub fn sweep_points(
    input: &Input,
    projects: &[ProjectSource],
    labels: &Labels,
    params: &[Param],
    resamples: u32,
) -> Result<Vec<Point>> {
    let (settings, runs) = sweep(input, projects, labels, params, Acting::Together)?;
    Ok(SweepReport::score(settings, runs, resamples, None, None).points)
}

/// The grid's settings, and every labelled run as each of them leaves it (`acting`: every
/// guard together, or the swept ones alone): one replay reads, parses and normalizes each
/// run once, running the guards the grid leaves alone once and the swept ones once per
/// setting ([`Lineup`]). The labels must name some replayed run, except in a shard
/// (`--shard`), where the merge checks the whole.
pub fn sweep(
    input: &Input,
    projects: &[ProjectSource],
    labels: &Labels,
    params: &[Param],
    acting: Acting,
) -> Result<(Vec<Setting>, Vec<SweptRun>)> {
    let base = input.config()?;
    let prices = input.prices()?;
    let (settings, configs) = valid_settings(&base, grid(params)?)?;
    let mut swept: Vec<&'static str> = params.iter().map(|p| p.guard).collect();
    swept.sort_unstable();
    swept.dedup();
    let lineup = Lineup::sweep(&base, configs, swept);
    let (mut names, mut runs) = (Vec::new(), Vec::new());
    let score = |r: RunReplay| {
        let name = (r.project.clone(), r.run_id.clone());
        (name, SweptRun::of(&r, &prices, labels, acting))
    };
    input.replay_lineup(projects, &lineup, &score, |(name, run)| {
        names.push(name);
        runs.extend(run);
    })?;
    if input.shard.is_none() {
        labels.check_matches(names.iter().map(|(p, r)| (p.as_str(), r.as_str())))?;
    }
    Ok((settings, runs))
}

/// The grid points the guards accept, each with its configuration. Points a guard refuses
/// (`stalled` above `abandon`, a zero threshold) are left out and said on stderr; a grid
/// with none left is a usage error.
fn valid_settings(base: &Config, grid: Vec<Setting>) -> Result<(Vec<Setting>, Vec<Config>)> {
    let total = grid.len();
    let mut first_refusal = None;
    let mut kept = (Vec::new(), Vec::new());
    for setting in grid {
        match configure(base, &setting) {
            Ok(config) => {
                kept.0.push(setting);
                kept.1.push(config);
            }
            Err(e) => {
                first_refusal.get_or_insert_with(|| format!("{}: {e}", shown(&setting)));
            }
        }
    }
    let refused = total - kept.0.len();
    match first_refusal {
        Some(first) if kept.0.is_empty() => {
            bail!("every setting of the grid is refused; first: {first}")
        }
        Some(first) => eprintln!("note: {refused} of {total} settings left out; first: {first}"),
        None => {}
    }
    Ok(kept)
}

fn shown(setting: &[(String, Value)]) -> String {
    setting
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn render(params: &[Param], points: &[Point]) -> Grid {
    let mut headers: Vec<String> = params
        .iter()
        .map(|p| format!("{}.{}", p.guard, p.key))
        .collect();
    headers.extend(
        [
            "saved (failed)",
            "failed runs cut",
            "false terminal (healthy)",
            "advised only (failed)",
            "advised only (healthy)",
            "lost (healthy cut)",
            "vs default: saved / cut failed / cut healthy",
            "default",
        ]
        .map(String::from),
    );
    let mut t = Grid::new(headers);
    for p in points {
        let i = &p.intervals;
        let mut row: Vec<String> = p.setting.iter().map(|(_, v)| v.to_string()).collect();
        row.push(saving_cell(
            p.tokens_saved_on_failed,
            p.cost_saved_usd_on_failed,
            i.tokens_saved_on_failed,
        ));
        row.push(rate_cell(
            p.failed_cut,
            p.failed_runs,
            i.cut_on_failed_permille,
        ));
        row.push(rate_cell(
            p.false_terminal_on_healthy,
            p.healthy_runs,
            i.cut_on_healthy_permille,
        ));
        row.push(rate_cell(
            p.advised_on_failed,
            p.failed_runs,
            i.advisory_on_failed_permille,
        ));
        row.push(rate_cell(
            p.advised_on_healthy,
            p.healthy_runs,
            i.advisory_on_healthy_permille,
        ));
        row.push(saving_cell(
            p.tokens_lost_on_healthy,
            None,
            i.tokens_lost_on_healthy,
        ));
        row.push(
            p.versus_default
                .as_ref()
                .map_or_else(String::new, difference_cell),
        );
        row.push(if p.is_default {
            "*".into()
        } else {
            String::new()
        });
        t.add_row(row);
    }
    for i in 0..params.len() + 7 {
        t.right(i);
    }
    t
}

/// A setting against the defaults: `+1,200 [-300..2,900] / +0.07 [0.00..0.13] / ...`.
fn difference_cell(d: &Difference) -> String {
    let signed = |n: i64| {
        let sign = if n < 0 { "-" } else { "+" };
        format!("{sign}{}", thousands(n.unsigned_abs()))
    };
    let share = |n: i32| format!("{:+.2}", f64::from(n) / 1000.0);
    let tokens = match d.tokens_saved_on_failed_interval {
        Some([lo, hi]) => format!(
            "{} [{}..{}]",
            signed(d.tokens_saved_on_failed),
            signed(lo),
            signed(hi)
        ),
        None => signed(d.tokens_saved_on_failed),
    };
    let rate = |point: i32, interval: Option<[i32; 2]>| match interval {
        Some([lo, hi]) => format!("{} [{}..{}]", share(point), share(lo), share(hi)),
        None => share(point),
    };
    format!(
        "{tokens} / {} / {}",
        rate(d.cut_on_failed_permille, d.cut_on_failed_interval),
        rate(d.cut_on_healthy_permille, d.cut_on_healthy_interval)
    )
}

/// `sweep --select` found no setting that meets its constraints.
const EXIT_NO_CHOICE: u8 = 1;

/// What `--select` chose, and how it fares on the held-out projects beside the defaults.
fn describe_choice(choice: &Choice, selection: &Selection) -> String {
    let mut text = format!(
        "Choice under {}: chosen on {} projects, scored on {} held out (--holdout {}, by a hash of each project's name).",
        selection.describe(),
        choice.training_projects,
        choice.held_out_projects,
        choice.holdout
    );
    let Some(chosen) = &choice.chosen else {
        text.push_str(&format!(
            "\nNo setting meets the constraints on the {} training projects.",
            choice.training_projects
        ));
        return text;
    };
    for (name, held) in [
        ("chosen", Some(chosen)),
        ("defaults", choice.defaults.as_ref()),
    ] {
        let Some(h) = held else { continue };
        let setting: Vec<String> = h.setting.iter().map(|(k, v)| format!("{k}={v}")).collect();
        text.push_str(&format!(
            "\n  {name:<8} {}: held out, {}",
            setting.join(" "),
            held_out_figures(&h.figures)
        ));
        // Per harness only when the held-out runs come from more than one.
        if h.by_harness.len() > 1 {
            for f in &h.by_harness {
                text.push_str(&format!(
                    "\n           {}: {}",
                    f.harness,
                    held_out_figures(&f.figures)
                ));
            }
        }
    }
    text
}

/// What `--select` chose in each fold, and the pooled held-out figures.
fn describe_folds(folds: &Folds, selection: &Selection) -> String {
    let mut text = format!(
        "Choice under {} in {} folds (by a hash of each project's name): each fold chosen on the others, scored on its own projects.",
        selection.describe(),
        folds.folds
    );
    for (i, c) in folds.per_fold.iter().enumerate() {
        let line = match &c.chosen {
            Some(h) => format!(
                "{}: held out, {}",
                shown(&h.setting),
                held_out_figures(&h.figures)
            ),
            None => format!(
                "no setting meets the constraints on its {} training projects",
                c.training_projects
            ),
        };
        text.push_str(&format!(
            "\n  fold {} ({} projects) {line}",
            i + 1,
            c.held_out_projects
        ));
    }
    for (name, figures) in [
        ("pooled", &folds.pooled),
        ("defaults", &folds.pooled_defaults),
    ] {
        if let Some(f) = figures {
            text.push_str(&format!("\n  {name:<8} {}", held_out_figures(f)));
        }
    }
    if folds.pooled.is_none() {
        text.push_str("\nNo setting meets the constraints in any fold.");
    }
    text
}

/// Held-out figures in a line: saved, failed runs cut, healthy runs cut, with intervals.
fn held_out_figures(f: &Figures) -> String {
    let i = &f.intervals;
    format!(
        "saved (failed) {}, failed runs cut {}, false terminal (healthy) {}",
        tokens_range(f.tokens_saved_on_failed, i.tokens_saved_on_failed),
        rate_cell(
            f.failed_cut as usize,
            f.failed_runs as usize,
            i.cut_on_failed_permille
        ),
        rate_cell(
            f.false_terminal_on_healthy as usize,
            f.healthy_runs as usize,
            i.cut_on_healthy_permille
        ),
    )
}
