//! Recorded runs in other harnesses' formats, read into the same event model.
//!
//! One importer per format (issue #6): each maps its harness's records to turns, tool
//! calls and results, usage, compactions, todos and outcome, with its own table of tool
//! names (to the canonical vocabulary of docs/FORMAT.md) and of error wordings (to the
//! error classes), so guards never see a harness's own words. Formats are recognised by
//! structure, never by file name; `--input-format` forces one.

pub mod builder;
pub mod claude_code;
pub mod mini_swe_agent;
pub mod openhands;
pub mod pi;
pub mod swe_agent;

use super::error::{ParseError, Policy, ProblemKind};
use super::files::{self, open_regular, problem, Limits, BOM};
use super::lines::LineReader;
use super::LoadedRun;
use std::io::{BufRead, BufReader, Read, Seek};
use std::path::Path;

/// The input formats hindsight reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum InputFormat {
    /// `.omnius/` dumps (docs/FORMAT.md).
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
        }
    }

    /// Session formats: one file per session, a directory of them is one project whose
    /// sessions carry state forward. The others hold one whole task per file.
    pub fn is_session_log(self) -> bool {
        matches!(self, Self::ClaudeCode | Self::Pi)
    }
}

/// How much of a file detection reads first.
const SNIFF_BYTES: usize = 64 * 1024;

/// The format of `path`, judged by the structure of its first records; `None` for files
/// that are no recorded run (labels, reports, anything else) and for files that cannot be
/// read ([`detect_file`] says why).
pub fn detect(path: &Path) -> Option<InputFormat> {
    detect_file(path, &Limits::default()).ok().flatten()
}

/// As [`detect`], with a problem for a file that cannot be read or judged: not a regular
/// file, unreadable, or a JSONL file whose first lines are longer than the line cap.
pub fn detect_file(path: &Path, limits: &Limits) -> Result<Option<InputFormat>, ParseError> {
    let shown = super::display(path);
    let (file, len) = open_regular(path, &shown)?;
    let mut reader = BufReader::new(file);
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| problem(&shown, ProblemKind::Io(e.to_string())))?;
    let text = String::from_utf8_lossy(head.strip_prefix(BOM).unwrap_or(&head));
    let first = text.trim_start();
    if let Some(format) = judge(first) {
        return Ok(Some(format));
    }
    // The head holds no whole line to judge a session log by (a first prompt over 64 KiB):
    // read its first lines whole, up to the line cap.
    let cut = (head.len() as u64) < len && !first.contains('\n');
    if !(cut && first.starts_with('{')) {
        return Ok(None);
    }
    reader
        .rewind()
        .map_err(|e| problem(&shown, ProblemKind::Io(e.to_string())))?;
    session_by_whole_lines(reader, &shown, limits)
}

/// A format judged from the head of a file (possibly cut mid-line or mid-document).
fn judge(first: &str) -> Option<InputFormat> {
    if first.starts_with('[') {
        return openhands::sniff(first).then_some(InputFormat::Openhands);
    }
    if !first.starts_with('{') {
        return None;
    }
    // A JSONL file: judge by its first lines, each a complete object.
    let lines: Vec<serde_json::Value> = first
        .lines()
        .take(8)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if let Some(format) = session_format(&lines) {
        return Some(format);
    }
    // A JSON document: its leading keys tell (the head may be cut mid-document).
    if mini_swe_agent::sniff(first) {
        Some(InputFormat::MiniSweAgent)
    } else if swe_agent::sniff(first) {
        Some(InputFormat::SweAgent)
    } else if openhands::sniff(first) {
        Some(InputFormat::Openhands)
    } else {
        None
    }
}

/// The session-log format some of `lines` belong to.
fn session_format(lines: &[serde_json::Value]) -> Option<InputFormat> {
    if lines.iter().any(claude_code::sniff) {
        Some(InputFormat::ClaudeCode)
    } else if lines.iter().any(pi::sniff) {
        Some(InputFormat::Pi)
    } else {
        None
    }
}

/// Judges a session log by its first 8 non-blank lines read whole, reading no more than
/// the line cap in all. A line over the cap that leaves the file unjudged is a problem: the
/// file may be a session whose format cannot be recognised, so it is not passed over
/// in silence.
fn session_by_whole_lines(
    reader: impl BufRead,
    shown: &str,
    limits: &Limits,
) -> Result<Option<InputFormat>, ParseError> {
    let mut lines = LineReader::new(reader, limits.max_line);
    let (mut judged, mut budget, mut too_long) = (0, limits.max_line, None);
    while let Some(line) = lines.next_line() {
        let line = line.map_err(|e| problem(shown, ProblemKind::Io(e.to_string())))?;
        if line.too_long {
            too_long = too_long.or(Some(line.number));
            break;
        }
        if line.bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed = serde_json::from_slice::<serde_json::Value>(line.bytes).ok();
        if let Some(format) = parsed.and_then(|v| session_format(&[v])) {
            return Ok(Some(format));
        }
        judged += 1;
        budget = budget.saturating_sub(line.raw_len);
        if judged == 8 || budget == 0 {
            break;
        }
    }
    match too_long {
        Some(number) => Err(ParseError {
            path: shown.to_string(),
            line: Some(number),
            field: None,
            kind: ProblemKind::BadValue(format!(
                "longer than the {} MiB line cap (--max-line-mib), so the file's format \
                 cannot be recognised; --input-format reads it without recognising it",
                limits.line_mib()
            )),
        }),
        None => Ok(None),
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
        InputFormat::ClaudeCode => claude_code::import(path, policy, limits)?,
        InputFormat::Pi => pi::import(path, policy, limits)?,
        InputFormat::MiniSweAgent => mini_swe_agent::import(path, policy, limits)?,
        InputFormat::SweAgent => swe_agent::import(path, policy, limits)?,
        InputFormat::Openhands => openhands::import(path, policy, limits)?,
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
    Ok(run)
}

/// Reads a whole JSON document (the trajectory formats are single documents), up to the
/// document cap.
pub fn read_document(path: &Path, limits: &Limits) -> Result<(String, Vec<u8>), ParseError> {
    let shown = super::display(path);
    let bytes = files::read_document(path, &shown, limits)?;
    Ok((shown, bytes))
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
