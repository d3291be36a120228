//! Recorded runs in other harnesses' formats, read into the same event model.
//!
//! One importer per format (issue #6): each maps its harness's records to turns, tool
//! calls and results, usage, compactions, todos and outcome, with its own table of tool
//! names (to the canonical vocabulary of docs/FORMAT.md) and of error wordings (to the
//! error classes), so guards never see a harness's own words. Formats are recognised by
//! structure, never by file name; `--input-format` forces one.

pub mod atif;
pub mod builder;
pub mod claude_code;
pub mod codex;
mod detect;
pub mod gemini_cli;
pub mod mini_swe_agent;
pub mod opencode;
pub mod openhands;
pub mod pi;
pub mod swe_agent;
pub mod values;

pub use detect::{detect, detect_file, Detected};
/// The JSON kind of a value, as problems name it (`string`, `integer`, `object`, ...).
pub use values::kind_of;

use super::error::{ParseError, Policy, ProblemKind};
use super::files::{self, open_regular, Limits};
use super::lines::{LineAt, LineReader};
use super::LoadedRun;
use std::io::{BufRead, BufReader, Seek};
use std::path::Path;

/// The input formats hindsight reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum InputFormat {
    /// `.omnius/` dumps (docs/FORMAT.md).
    #[default]
    Omnius,
    /// Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`).
    ClaudeCode,
    /// pi coding-agent session JSONL.
    Pi,
    /// mini-swe-agent trajectory JSON.
    MiniSweAgent,
    /// SWE-agent `.traj`.
    SweAgent,
    /// OpenHands event history JSON.
    Openhands,
    /// Codex CLI session rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    Codex,
    /// ATIF trajectory JSON (Harbor's `trajectory.json`, alone or in a trial folder).
    Atif,
    /// Claude Code `-p --output-format stream-json` output: one `claude -p` run per file.
    ClaudeCodeStream,
    /// Gemini CLI chat record, JSON or JSONL
    /// (`~/.gemini/tmp/<projectHash>/chats/session-*.json[l]`).
    GeminiCli,
    /// OpenCode's session store: its SQLite database (`~/.local/share/opencode/opencode.db`)
    /// or its legacy JSON storage folder (`storage/`); each root session is a run.
    #[value(name = "opencode")]
    OpenCode,
    /// `opencode run --format json` output: one `opencode run` per file.
    #[value(name = "opencode-stream")]
    OpenCodeStream,
}

impl InputFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Omnius => "omnius",
            Self::ClaudeCode => "claude-code",
            Self::Pi => "pi",
            Self::MiniSweAgent => "mini-swe-agent",
            Self::SweAgent => "swe-agent",
            Self::Openhands => "openhands",
            Self::Codex => "codex",
            Self::Atif => "atif",
            Self::ClaudeCodeStream => "claude-code-stream",
            Self::GeminiCli => "gemini-cli",
            Self::OpenCode => "opencode",
            Self::OpenCodeStream => "opencode-stream",
        }
    }

    /// Session formats: one file per session, a directory of them is one project whose
    /// sessions carry state forward. The others hold one whole task per file (a Claude Code
    /// stream is one `claude -p` invocation, one task).
    pub fn is_session_log(self) -> bool {
        matches!(
            self,
            Self::ClaudeCode | Self::Pi | Self::Codex | Self::GeminiCli | Self::OpenCode
        )
    }
}

/// What a detector makes of the head of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sniffed {
    /// The format's distinctive structure.
    Match,
    /// Close to the format, without its distinctive structure: why it is not read.
    LookAlike(String),
    /// Nothing like it.
    No,
}

impl Sniffed {
    /// A JSON Lines format judged by a file's first lines: a match when one of them has
    /// its distinctive structure, a look-alike (for `why`) when one only resembles it.
    pub fn of_lines(
        lines: &[serde_json::Value],
        matches: impl Fn(&serde_json::Value) -> bool,
        resembles: impl Fn(&serde_json::Value) -> bool,
        why: &str,
    ) -> Self {
        if lines.iter().any(matches) {
            Self::Match
        } else if lines.iter().any(resembles) {
            Self::LookAlike(why.into())
        } else {
            Self::No
        }
    }
}

/// Reads one recorded run of `format` from `path`, with the default size caps.
pub fn import(
    path: &Path,
    run_id: &str,
    format: InputFormat,
    policy: Policy,
) -> Result<LoadedRun, ParseError> {
    import_capped(path, run_id, format, policy, &Limits::default())
}

/// As [`import`], with the given size caps.
pub fn import_capped(
    path: &Path,
    run_id: &str,
    format: InputFormat,
    policy: Policy,
    limits: &Limits,
) -> Result<LoadedRun, ParseError> {
    let mut run = match format {
        InputFormat::ClaudeCode | InputFormat::ClaudeCodeStream => {
            claude_code::import(path, policy, limits)?
        }
        InputFormat::Pi => pi::import(path, policy, limits)?,
        InputFormat::MiniSweAgent => mini_swe_agent::import(path, policy, limits)?,
        InputFormat::SweAgent => swe_agent::import(path, policy, limits)?,
        InputFormat::Openhands => openhands::import(path, policy, limits)?,
        InputFormat::Codex => codex::import(path, policy, limits)?,
        InputFormat::Atif => atif::import(path, policy, limits)?,
        InputFormat::GeminiCli => gemini_cli::import(path, policy, limits)?,
        InputFormat::OpenCodeStream => opencode::import_stream(path, policy, limits)?,
        InputFormat::OpenCode => {
            return Err(ParseError {
                path: super::display(path),
                line: None,
                field: None,
                kind: ProblemKind::BadValue(
                    "an OpenCode store holds sessions: a run is one of them, not the store".into(),
                ),
            })
        }
        InputFormat::Omnius => {
            return Err(ParseError {
                path: super::display(path),
                line: None,
                field: None,
                kind: ProblemKind::BadValue("an .omnius run is a directory, not a file".into()),
            })
        }
    };
    run.run_id = run_id.to_string();
    run.format = format;
    Ok(run)
}

/// Reads the run on one line of `path` (an OpenHands evaluation output's instance).
pub fn import_line(
    path: &Path,
    at: LineAt,
    run_id: &str,
    format: InputFormat,
    policy: Policy,
    limits: &Limits,
) -> Result<LoadedRun, ParseError> {
    if format != InputFormat::Openhands {
        return Err(ParseError {
            path: super::display(path),
            line: Some(at.number),
            field: None,
            kind: ProblemKind::BadValue(format!(
                "{} holds one run per file, not one per line",
                format.as_str()
            )),
        });
    }
    let mut run = openhands::import_line(path, at, policy, limits)?;
    run.run_id = run_id.to_string();
    run.format = format;
    Ok(run)
}

/// Reads root session `session` of the OpenCode store at `path` (a database or a storage
/// folder) as one run.
pub fn import_session(
    path: &Path,
    session: &str,
    run_id: &str,
    format: InputFormat,
    policy: Policy,
    limits: &Limits,
) -> Result<LoadedRun, ParseError> {
    if format != InputFormat::OpenCode {
        return Err(ParseError {
            path: super::display(path),
            line: None,
            field: None,
            kind: ProblemKind::BadValue(format!(
                "{} holds no sessions by id; only an OpenCode store does",
                format.as_str()
            )),
        });
    }
    let mut run = opencode::store::import(path, session, policy, limits)?;
    run.run_id = run_id.to_string();
    run.format = format;
    Ok(run)
}

/// Reads a whole JSON document (the trajectory formats are single documents), up to the
/// document cap.
pub fn read_document(path: &Path, limits: &Limits) -> Result<(String, Vec<u8>), ParseError> {
    let shown = super::display(path);
    let bytes = files::read_document(path, &shown, limits)?;
    Ok((shown, bytes))
}

/// A JSONL importer's state, fed one parsed line at a time by [`read_json_lines`].
pub trait LineSink {
    /// Where problems and input counts go.
    fn builder(&mut self) -> &mut builder::Builder;
    /// The number of the line whose record comes next (for problems found later, when a
    /// record is read together with others).
    fn at_line(&mut self, _number: u64) {}
    /// One line's record; a problem it returns is located at the line.
    fn entry(
        &mut self,
        value: &simd_json::BorrowedValue<'_>,
    ) -> Result<(), super::error::FieldError>;
}

/// Feeds every line of a JSONL log to `sink`, as every JSONL importer reads one: bytes
/// counted, blank lines skipped; a line over the cap, a line that is no JSON (a cut last
/// line: truncated), and what `sink` finds wrong with a record are problems located at
/// their line (file:line:field), recorded under `policy`.
pub fn read_json_lines<R: BufRead>(
    lines: &mut LineReader<R>,
    shown: &str,
    policy: Policy,
    limits: &Limits,
    sink: &mut impl LineSink,
) -> Result<(), ParseError> {
    use super::error::FieldError;
    let located = |line: Option<u64>, field: Option<String>, kind| ParseError {
        path: shown.to_string(),
        line,
        field,
        kind,
    };
    let mut buffers = super::json::ThreadBuffers::take();
    while let Some(line) = lines.next_line() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                let kind = ProblemKind::Io(e.to_string());
                sink.builder()
                    .problems
                    .record(policy, located(None, None, kind))?;
                break;
            }
        };
        sink.builder().stats.bytes += line.raw_len;
        let (number, terminated) = (line.number, line.terminated);
        if line.too_long {
            let kind = ProblemKind::LineTooLong(limits.line_mib());
            let problem = located(Some(number), None, kind);
            sink.builder().problems.record(policy, problem)?;
            continue;
        }
        let buf = line.bytes;
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let outcome = match super::json::parse_unique(buf, &mut buffers) {
            Err(e) if !terminated && matches!(e.kind, ProblemKind::InvalidJson(_)) => {
                Err(FieldError::new("", ProblemKind::Truncated))
            }
            Err(e) => Err(e),
            Ok(value) => {
                sink.at_line(number);
                sink.entry(&value)
            }
        };
        if let Err(e) = outcome {
            let field = (!e.field.is_empty()).then_some(e.field);
            let problem = located(Some(number), field, e.kind);
            sink.builder().problems.record(policy, problem)?;
        }
    }
    Ok(())
}

/// Opens a JSONL session log, a regular file only.
pub fn open_lines(
    path: &Path,
    limits: &Limits,
) -> Result<(String, LineReader<impl BufRead + Seek>), ParseError> {
    let shown = super::display(path);
    let (file, _) = open_regular(path, &shown)?;
    let reader = LineReader::new(BufReader::new(file), limits.max_line);
    Ok((shown, reader))
}
