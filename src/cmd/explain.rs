//! `hindsight explain`: the post-mortem of a run, written from its recording and its
//! replay (issue #14; the model is `report::explain`).

use super::input::{Input, Reward};
use super::{write_staged, EXIT_OK};
use crate::gate::{Label, LabelSpec, Labels};
use crate::ingest::{self, ProjectSource};
use crate::report::explain::{self, Explain, Format};
use crate::report::RunReport;
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight explain corpora/telegram-dropbear\n  \
    hindsight explain corpora/myactuator --format markdown --out myactuator.md\n  \
    hindsight explain corpora/ --labels corpora/expectations.json --format html --out failed.html\n  \
    hindsight explain corpora/myactuator --run 1783159200000-p7x2vd --format json\n  \
    hindsight explain corpora/myactuator/.omnius/runs/1783159200000-p7x2vd\n  \
    hindsight explain ~/.claude/projects/-home-me-shop --run 3f2a9c4e-7b1d-4e8a-9c3f-5d6e7a8b9c01\n\n\
    PATH is a run folder (.omnius/runs/<id>), a log file of any supported format, or a \
    corpus. Without --run, every run labelled failed is explained (--labels), or every run \
    when there are no labels. The project's sessions are replayed in order, so a resumed \
    session shows what was carried into it.\n\n\
    Sections: Run (project, format, session and carry in, turns, tokens, cost, ledger, \
    label), Evidence snapshot (mutations, failures by family, directives, context growth, \
    todos, completion claims against checks, compactions), What would have fired (every \
    firing, the earliest terminal cut and each guard's saving), Timeline (a line per turn, \
    repeats folded) and Where to look first. Every fact names its turns; estimated tokens \
    are marked ~ (docs/EXPLAIN.md).\n\n\
    Exit codes: 0 success, 2 usage or input error (an unknown --run, a bad path or \
    setting, any bad record under --strict)."
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// The run to explain: its id, or `project/id`.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// Labels (docs/GATE.md): without --run, the runs labelled failed; each page shows
    /// its run's label. A labels file, an evaluation summary (SWE-bench, Terminal-Bench
    /// `results.json`), a Harbor job or trial folder, or `DIR=FILE` (repeatable).
    #[arg(long, value_name = "PATH|DIR=FILE", visible_alias = "expect")]
    pub labels: Vec<LabelSpec>,
    #[command(flatten)]
    pub reward: Reward,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the page here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<u8> {
    let input = &args.input;
    let wanted = wanted_run(input, args.run.as_deref())?;
    let config = input.config()?;
    let prices = input.prices()?;
    let labels = args.reward.labels(&args.labels)?;
    let projects = input.projects()?;
    let files: Vec<_> = Labels::files(&args.labels).collect();
    let guard = input.guard(&projects, &files);
    if let Some(out) = &args.out {
        guard.check(out)?;
    }
    let picked = pick(&projects, wanted.as_deref(), labels.as_ref())?;
    if picked.is_empty() {
        let why = if labels.is_some() {
            "none is labelled failed"
        } else {
            "no run was found"
        };
        eprintln!("note: no run to explain: {why}");
    }
    // Only the projects of the picked runs are replayed, each whole: a session's carry
    // comes from the sessions before it.
    let names: BTreeSet<&str> = picked.iter().map(|(name, _)| name.as_str()).collect();
    let replayed: Vec<ProjectSource> = projects
        .iter()
        .filter(|p| names.contains(p.name.as_str()))
        .cloned()
        .collect();
    let keep = |r: crate::replay::RunReplay| {
        let chosen = picked.contains(&(r.project.clone(), r.run_id.clone()));
        chosen.then(|| {
            let report = RunReport::of(&r, &prices);
            (r, report)
        })
    };
    let mut runs: Vec<Explain> = Vec::new();
    let mut failed = None;
    input.replay_each(&replayed, &config, &keep, |kept| {
        let Some((replay, report)) = kept else { return };
        if failed.is_some() {
            return;
        }
        match explain_one(
            &replayed,
            &replay,
            &report,
            labels.as_ref(),
            input,
            &config,
            &prices,
        ) {
            Ok(e) => runs.push(e),
            Err(e) => failed = Some(e),
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    // The page is rendered once every run is replayed: nothing to hold.
    write_staged(&guard, args.out.as_deref(), false, |out| {
        Ok(explain::render(&runs, args.format, out)?)
    })?;
    Ok(EXIT_OK)
}

/// The run asked for: `--run`, or that of the run folder given as PATH (they must agree
/// when both are given). [`Input::projects`] reads a run folder as that run alone.
pub(super) fn wanted_run(input: &Input, run: Option<&str>) -> Result<Option<String>> {
    let folder_run = run_folder(input)?;
    Ok(match (run, folder_run) {
        (Some(a), Some(b)) if a != b => bail!("--run {a}: the path given is the run folder of {b}"),
        (run, folder) => run.map(str::to_string).or(folder),
    })
}

/// The run (`project/id`) of the run folder given as PATH (`.omnius/runs/<id>`, holding
/// `events.jsonl`), if one is.
fn run_folder(input: &Input) -> Result<Option<String>> {
    let mut picked = None;
    for path in &input.paths {
        let Some(omnius) = ingest::omnius_of_run(path) else {
            continue;
        };
        let project = omnius.parent().unwrap_or(Path::new("."));
        let run_id = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = ingest::display(project);
        let name = if name.is_empty() {
            ".".to_string()
        } else {
            name
        };
        if picked.replace(format!("{name}/{run_id}")).is_some() {
            bail!("give one run folder (or a corpus and --run ID)");
        }
    }
    Ok(picked)
}

/// The (project, run id) of every run to explain, in input order: the one `--run` names
/// (its id, or `project/id`), else those labelled failed, else all.
pub(super) fn pick(
    projects: &[ProjectSource],
    wanted: Option<&str>,
    labels: Option<&Labels>,
) -> Result<BTreeSet<(String, String)>> {
    let all = projects.iter().flat_map(|p| {
        p.runs
            .iter()
            .map(move |r| (p.name.clone(), r.run_id.clone()))
    });
    let Some(wanted) = wanted else {
        if let Some(labels) = labels {
            let runs: Vec<(String, String)> = all.clone().collect();
            labels.check_matches(runs.iter().map(|(p, r)| (p.as_str(), r.as_str())))?;
        }
        return Ok(all
            .filter(|(project, run)| {
                labels.is_none_or(|l| {
                    l.get_of(project, run)
                        .is_some_and(|label| label.label == Label::Failed)
                })
            })
            .collect());
    };
    let matching: BTreeSet<(String, String)> = all
        .filter(|(project, run)| {
            run == wanted
                || format!("{project}/{run}") == wanted
                || crate::report::run_name(project, run) == wanted
        })
        .collect();
    match matching.len() {
        0 => bail!(
            "--run {wanted}: no such run under the paths given{}",
            candidates(all_runs(projects), wanted)
        ),
        1 => Ok(matching),
        _ => {
            let names: Vec<String> = matching.iter().map(|(p, r)| format!("{p}/{r}")).collect();
            bail!(
                "--run {wanted} names several runs; give one of: {}",
                names.join(", ")
            )
        }
    }
}

fn all_runs(projects: &[ProjectSource]) -> Vec<String> {
    projects
        .iter()
        .flat_map(|p| {
            p.runs
                .iter()
                .map(|r| crate::report::run_name(&p.name, &r.run_id))
        })
        .collect()
}

/// Runs a mistyped `--run` may have meant: those whose name holds it (a prefix of an id, a
/// project's name), else every run when there are few; `, e.g. a, b` or nothing.
fn candidates(names: Vec<String>, wanted: &str) -> String {
    const LISTED: usize = 8;
    let near: Vec<&String> = names.iter().filter(|n| n.contains(wanted)).collect();
    let (what, list): (&str, Vec<&String>) = if !near.is_empty() {
        ("runs whose name holds it", near)
    } else if names.len() <= LISTED {
        ("the runs there", names.iter().collect())
    } else {
        return format!(" ({} runs; `hindsight replay` lists them)", names.len());
    };
    let more = list.len().saturating_sub(LISTED);
    let shown: Vec<&str> = list.iter().take(LISTED).map(|n| n.as_str()).collect();
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("; {what}: {}{tail}", shown.join(", "))
}

/// Reads the run's recording again and explains it beside its replay (its project is one
/// of `projects`).
pub(super) fn explain_one(
    projects: &[ProjectSource],
    replay: &crate::replay::RunReplay,
    report: &RunReport,
    labels: Option<&Labels>,
    input: &Input,
    config: &crate::config::Config,
    prices: &crate::cost::Prices,
) -> Result<Explain> {
    let project = projects
        .iter()
        .find(|p| p.name == replay.project)
        .context("a replayed project is missing")?;
    let source = project
        .runs
        .get(replay.session_index)
        .context("a replayed run is missing")?;
    let loaded = ingest::load_run(source, input.policy())?;
    let label = labels
        .and_then(|l| l.get_of(&report.project, &report.run_id))
        .map(|l| l.label.as_str().to_string());
    let run = explain::Run {
        loaded: &loaded,
        replay,
        report,
        format: source.format,
        sessions: project.runs.len(),
        label,
    };
    Ok(explain::explain(&run, config, prices))
}
