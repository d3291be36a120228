//! `hindsight events`: what the guards observe of each run, as JSON Lines (issue #15).
//! The shape of every line is `crate::events`'s, documented in docs/EVENTS.md; the order
//! is the replay's ([`walk`]), run by run as `replay` reports them.

use super::explain::{pick, wanted_run};
use super::input::Input;
use super::{write_staged, EXIT_OK};
use crate::config::Config;
use crate::events::{RunInfo, RunLines, RunTotals};
use crate::ingest::{self, LoadedRun, ProjectSource};
use crate::replay::{last_turn, walk, RunReplay};
use anyhow::{Context, Result};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight events corpora/telegram-dropbear\n  \
    hindsight events corpora/myactuator --run 1783159200000-p7x2vd --out stream.jsonl\n  \
    hindsight events corpora/ | jq -c 'select(.type == \"tool_result\" and .success == false)'\n  \
    hindsight events ~/.claude/projects/-home-me-shop --out shop.jsonl\n\n\
    One JSON object a line, every one with \"schema\": 1 and a \"type\": for each run \
    (projects in input order, each project's sessions in order) a run_start line, one \
    line per step the guards observe (session_start, model_turn, tool_call, tool_result, \
    directive, dedup, todos, completion_claim, compaction, frame, unknown) in replay \
    order, and a run_end line. Fields that do not apply are left out, never null. \
    docs/EVENTS.md specifies every field. The output is the same at any --threads.\n\n\
    Exit codes: 0 success, 2 usage or input error (an unknown --run, a bad path or \
    setting, any bad record under --strict)."
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// Only this run: its id, or `project/id`.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// Write the stream here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<u8> {
    let input = &args.input;
    let wanted = wanted_run(input, args.run.as_deref())?;
    let config = input.config()?;
    let projects = input.projects()?;
    let guard = input.guard(&projects, &[]);
    if let Some(out) = &args.out {
        guard.check(out)?;
    }
    let picked = wanted
        .map(|w| pick(&projects, Some(&w), None))
        .transpose()?;
    // A picked run's project is replayed whole: what it carries in comes from the
    // sessions before it.
    let replayed: Vec<ProjectSource> = projects
        .iter()
        .filter(|p| {
            picked
                .as_ref()
                .is_none_or(|runs| runs.iter().any(|(name, _)| name == &p.name))
        })
        .cloned()
        .collect();
    let by_name: HashMap<&str, &ProjectSource> =
        replayed.iter().map(|p| (p.name.as_str(), p)).collect();
    let policy = input.policy();
    // On a worker thread, each run is read again and walked into its lines.
    let lines = |r: RunReplay| -> Result<Vec<u8>> {
        let key = (r.project.clone(), r.run_id.clone());
        if picked.as_ref().is_some_and(|runs| !runs.contains(&key)) {
            return Ok(Vec::new());
        }
        let source = by_name
            .get(r.project.as_str())
            .and_then(|p| p.runs.get(r.session_index))
            .context("a replayed run is missing")?;
        let loaded = ingest::load_run(source, policy)?;
        run_lines(&r, source.format.as_str(), &loaded)
    };
    write_staged(&guard, args.out.as_deref(), input.all_or_nothing(), |out| {
        write_stream(input, &replayed, &config, &lines, out)
    })?;
    Ok(EXIT_OK)
}

/// Replays `projects` and writes each run's lines, in input order, as they come.
fn write_stream(
    input: &Input,
    projects: &[ProjectSource],
    config: &Config,
    lines: &(dyn Fn(RunReplay) -> Result<Vec<u8>> + Sync),
    out: &mut dyn Write,
) -> Result<()> {
    let mut failed = None;
    input.replay_each(projects, config, lines, |bytes| {
        if failed.is_none() {
            failed = bytes.and_then(|b| Ok(out.write_all(&b)?)).err();
        }
    })?;
    failed.map_or(Ok(()), Err)
}

/// One run's lines: its start, every step of [`walk`], its end.
fn run_lines(replay: &RunReplay, format: &str, loaded: &LoadedRun) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let info = RunInfo {
        project: &replay.project,
        run_id: &replay.run_id,
        session_index: replay.session_index,
        format,
        completion_ledger: loaded.ledger,
        last_turn: last_turn(loaded),
        carry_in: &replay.carry_in,
        state: None,
    };
    let mut lines = RunLines::start(&info, &mut out);
    let state = walk(loaded, |norm, _, state| {
        lines.step(&replay.project, &replay.run_id, norm, state, &mut out);
    });
    let totals = RunTotals {
        project: &replay.project,
        run_id: &replay.run_id,
        records: loaded.stats.records,
        skipped: loaded.problems.count,
        orphan_results: state.orphan_results,
    };
    lines.end(&totals, &mut out);
    Ok(out)
}
