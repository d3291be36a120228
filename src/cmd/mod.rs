//! The command line: one file per subcommand (xsv's layout, STYLE.md), each a clap
//! `Args` and a `run` returning the process exit code.
//!
//! Exit codes: 0 success, 1 reserved for findings a command is asked to fail on
//! (the regression gate), 2 usage or input error (including any problem under `--strict`),
//! 130 and 143 when stopped by SIGINT or SIGTERM (`crate::interrupt`).

pub mod events;
pub mod explain;
pub mod gate;
pub mod guards;
pub mod import;
pub mod input;
pub mod merge;
pub mod replay;
pub mod report;
pub mod sweep;
pub mod synth;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub const EXIT_OK: u8 = 0;
pub const EXIT_INPUT: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "hindsight",
    version,
    about = "Replay coding-agent harness guards over recorded telemetry",
    long_about = "Replay coding-agent harness guards over recorded telemetry.\n\n\
        hindsight reads recorded runs (.omnius/ dumps, Claude Code and pi sessions, Codex CLI \
        rollouts, Claude Code stream-json output, Gemini CLI chats, SWE-agent, mini-swe-agent, OpenHands and ATIF trajectories, Harbor trial folders), re-runs the harness guards (work orders) \
        over each trajectory, and reports which guard would have fired at which turn and an estimate \
        of the tokens it would have saved.",
    after_help = "Examples:\n  hindsight replay corpora/\n  hindsight replay runs/ --format json --out report.json\n  hindsight guards\n  hindsight gate corpora/ --expect corpora/expectations.json\n  hindsight explain corpora/telegram-dropbear --format markdown\n  hindsight events corpora/myactuator --run 1783159200000-p7x2vd\n  hindsight sweep corpora/ --expect corpora/expectations.json --param breaker.abandon=3..8\n  \
        hindsight replay corpora/ --shard 2/3 --format json --out shard-2.json\n  \
        hindsight merge shard-1.json shard-2.json shard-3.json --out report.json\n\n\
        Exit codes: 0 success, 1 findings a command was asked to fail on, 2 usage or input error, \
        130 and 143 stopped by SIGINT (Ctrl-C) or SIGTERM."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Tables as wide as their content. By default a table fits `COLUMNS`, else the
    /// terminal, wrapping its widest cells; piped with no `COLUMNS`, it is never limited.
    #[arg(long, global = true)]
    pub wide: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay the guards over recorded runs and report firings and savings.
    Replay(replay::Args),
    /// List the guard catalogue: id, work order, seed section, defaults.
    Guards(guards::Args),
    /// Judge a replay against labels and/or a saved baseline (exit 1 on regressions).
    Gate(gate::Args),
    /// Replay a labeled corpus over a grid of guard settings: savings against false cuts.
    Sweep(sweep::Args),
    /// Write a work-order review folder: charts (SVG, PNG), Markdown and HTML, tables.
    Report(report::Args),
    /// The post-mortem of a run: evidence, firings, timeline, from its recording.
    Explain(explain::Args),
    /// What the guards observe of each run, as JSON Lines (docs/EVENTS.md).
    Events(events::Args),
    /// Write any supported input (Claude Code, pi, SWE-bench trajectories...) as `.omnius/`.
    Import(import::Args),
    /// Combine the JSON reports of `--shard K/N` replays into the unsharded report.
    Merge(merge::Args),
    Synth(synth::Args),
}

pub fn run(cli: Cli) -> ExitCode {
    crate::interrupt::install();
    crate::report::width::set_wide(cli.wide);
    let code = match cli.command {
        Command::Replay(args) => replay::run(args),
        Command::Guards(args) => guards::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Report(args) => report::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Events(args) => events::run(args),
        Command::Import(args) => import::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Synth(args) => synth::run(args),
    };
    crate::interrupt::wait_if_stopping();
    // Idle external guards get their stdin closed and a moment to exit.
    crate::guards::external::shutdown();
    match code {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_broken_pipe(&e) => ExitCode::from(EXIT_OK),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_INPUT)
        }
    }
}

/// A closed stdout (`hindsight replay | head`) is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Runs `write` on `out` (a file staged beside it by `guard`, put in place only once
/// everything was written, so a failure leaves the previous file) or on stdout; with
/// `hold`, stdout gets nothing unless `write` succeeds (its bytes are held until then).
pub fn write_staged(
    guard: &crate::output::Guard,
    out: Option<&std::path::Path>,
    hold: bool,
    write: impl FnOnce(&mut dyn std::io::Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut staged = out.map(|p| guard.stage_file(p)).transpose()?;
    let mut sink = output(staged.as_mut().and_then(crate::output::Staged::take_file));
    if hold && out.is_none() {
        let mut held = Vec::new();
        write(&mut held)?;
        sink.write_all(&held)?;
    } else {
        write(&mut *sink)?;
    }
    sink.flush()?;
    drop(sink);
    if let (Some(staged), Some(path)) = (staged, out) {
        staged
            .commit()
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Writes to `file` when given (one staged by [`crate::output::Guard::stage_file`]), else
/// to stdout.
pub fn output(file: Option<std::fs::File>) -> Box<dyn std::io::Write> {
    match file {
        Some(f) => Box::new(std::io::BufWriter::new(f)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    }
}

/// A saved JSON report (`replay --format json`, `merge`, `report`'s `report.json`).
pub fn load_report(path: &std::path::Path) -> anyhow::Result<crate::report::Report> {
    parse_json(path, &read_text(path)?, "replay --format json")
}

/// The text of `path`, read by the one reader of named files
/// ([`crate::ingest::files::read_named_file`]).
pub fn read_text(path: &std::path::Path) -> anyhow::Result<String> {
    let fail = |reason: String| anyhow::anyhow!("{}: {reason}", path.display());
    let bytes = crate::ingest::files::read_named_file(path).map_err(fail)?;
    String::from_utf8(bytes).map_err(|_| fail("invalid UTF-8".into()))
}

/// `text` (read from `path`) as the JSON `hindsight <what>` writes.
pub fn parse_json<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    text: &str,
    what: &str,
) -> anyhow::Result<T> {
    use anyhow::Context;
    serde_json::from_str(text)
        .with_context(|| format!("{}: not a `hindsight {what}` report", path.display()))
}
