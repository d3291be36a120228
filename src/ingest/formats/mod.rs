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
use super::LoadedRun;
use std::io::Read;
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

/// How much of a file detection reads.
const SNIFF_BYTES: usize = 64 * 1024;

/// The format of `path`, judged by the structure of its first records; `None` for files
/// that are no recorded run (labels, reports, anything else).
pub fn detect(path: &Path) -> Option<InputFormat> {
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    std::fs::File::open(path)
        .ok()?
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let first = text.trim_start();
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
    if !lines.is_empty() {
        if lines.iter().any(claude_code::sniff) {
            return Some(InputFormat::ClaudeCode);
        }
        if lines.iter().any(pi::sniff) {
            return Some(InputFormat::Pi);
        }
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

/// Reads one recorded run of `format` from `path`.
pub fn import(
    path: &Path,
    run_id: &str,
    format: InputFormat,
    policy: Policy,
) -> Result<LoadedRun, ParseError> {
    let mut run = match format {
        InputFormat::ClaudeCode => claude_code::import(path, policy)?,
        InputFormat::Pi => pi::import(path, policy)?,
        InputFormat::MiniSweAgent => mini_swe_agent::import(path, policy)?,
        InputFormat::SweAgent => swe_agent::import(path, policy)?,
        InputFormat::Openhands => openhands::import(path, policy)?,
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

/// Reads a whole JSON document (the trajectory formats are single documents).
pub fn read_document(path: &Path) -> Result<(String, Vec<u8>), ParseError> {
    let shown = super::display(path);
    let bytes = std::fs::read(path).map_err(|e| ParseError {
        path: shown.clone(),
        line: None,
        field: None,
        kind: if e.kind() == std::io::ErrorKind::NotFound {
            ProblemKind::MissingFile
        } else {
            ProblemKind::Io(e.to_string())
        },
    })?;
    Ok((shown, bytes))
}
