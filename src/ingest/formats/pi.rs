//! pi coding-agent session logs (issue #6).
//!
//! pi (`badlogic/pi-mono`, `packages/coding-agent`) appends one JSON object per line to
//! `~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`. Session versions 1-3 are read
//! alike (v1, e.g. pi 0.7, has no `version` and no `id`/`parentId` on entries). Section
//! *pi session logs* of docs/FORMAT.md has the details. Shape and mapping:
//!
//! | line `type` | becomes |
//! |---|---|
//! | `session` (`id`, `timestamp`, `cwd`, ...) | `session_start` with `cwd` |
//! | `message`, `role: "user"` / `"custom"` / `"bashExecution"` | history only (user text; a `!cmd` the user ran is not a model tool call) |
//! | `message`, `role: "assistant"` (`usage`, `stopReason`) | one turn: its usage by kind (`input`, `cacheWrite`, `cacheRead`, `output`), `usage.cost.total` and `model`, then its `toolCall` items |
//! | `message`, `role: "toolResult"` (`toolCallId`, `isError`) | `tool_result`: success = `!isError`, class from [`ERRORS`] |
//! | `compaction` (`summary`, `tokensBefore`, `firstKeptEntryId`) | `compaction`; the history restarts from the summary plus the kept entries |
//! | `branch_summary`, `custom_message` | history (user text) |
//! | `model_change`, `thinking_level_change`, `label`, `session_info`, `custom` | nothing (not sent to the model) |
//!
//! Every assistant message is a request, aborted ones with zero usage included: pi had
//! started it. Tool calls of an `aborted` or `error` request were never run; they are kept
//! only if a result for them turns up. Tool names map by [`TOOLS`], argument keys by
//! [`ARGS`]; the `todo` extension's result `details.todos` becomes a `todo_write`.
//! Not recorded by pi: a run outcome (no `task_complete`), sub-agents (pi runs them as
//! separate sessions), system prompt, cwd per call.
//!
//! Branches. A session whose header names the session it was branched from
//! (`branchedFrom`, `parentSession` since version 2) starts with a copy of that session's
//! entries, older than its header: they build the context (history, frames, compactions)
//! but make no events, so they are not counted again as turns, calls or tokens
//! (`IngestStats::copied` says how many, what they spent, and from which session). In a
//! version 2+ tree, the branch replayed is the path from the root to the file's last entry
//! (`tree`); entries off it make neither events nor context, and their spend is counted
//! apart (`IngestStats::abandoned`).

use super::builder::{Builder, ErrorTable, ToolTable};
use crate::ingest::error::{FieldError, ParseError, Policy, ProblemKind};
use crate::ingest::formats::{open_lines, read_json_lines, LineSink, Sniffed};
use crate::ingest::{Limits, LoadedRun};
use session::Session;
use std::path::Path;

/// pi's tool names → the canonical vocabulary (docs/FORMAT.md, *Tool kinds*).
pub const TOOLS: ToolTable = &[
    ("bash", "shell"),
    ("edit", "file_edit"),
    ("write", "file_write"),
    ("read", "file_read"),
    ("grep", "grep"),
    ("find", "find"),
    ("ls", "ls"),
    ("todo", "todo_write"),
];

/// pi's argument keys → canonical ones (also inside an `edits` batch).
pub const ARGS: &[(&str, &str)] = &[("oldText", "old_string"), ("newText", "new_string")];

/// Wordings of pi's tools (`core/tools/*.ts`) → error classes.
pub const ERRORS: ErrorTable = &[
    ("Could not find the exact text", "stale_edit"),
    ("Could not find edits[", "stale_edit"),
    ("File not found", "not_found"),
    ("Path not found", "not_found"),
    ("ENOENT", "not_found"),
];

mod session;
mod shape;
mod tree;

/// Whether the first lines of a file are a pi session: a `message` entry in pi's own
/// vocabulary (a tool result with `toolCallId` and `isError`, an assistant message with
/// `stopReason` and a `content` array), or the header (`type: "session"` with `id`,
/// `timestamp` and `cwd`) with an entry of pi's types after it. A header followed by
/// nothing pi writes is a look-alike (a shell-session logger writes such headers).
pub fn judge(lines: &[serde_json::Value]) -> Sniffed {
    if lines.iter().any(is_message_entry) {
        return Sniffed::Match;
    }
    let Some(header) = lines.iter().position(is_header) else {
        return Sniffed::No;
    };
    let entry = |v: &serde_json::Value| {
        let kind = v.get("type").and_then(serde_json::Value::as_str);
        match kind {
            Some("message") => v
                .get("message")
                .and_then(|m| m.get("role"))
                .and_then(serde_json::Value::as_str)
                .is_some_and(|r| ROLES.contains(&r)),
            Some(kind) => ENTRY_TYPES.contains(&kind),
            None => false,
        }
    };
    if lines.iter().skip(header + 1).any(entry) {
        Sniffed::Match
    } else {
        Sniffed::LookAlike(
            "looks like a pi session (a `session` header with `id`, `timestamp` and `cwd`), \
             but no entry pi writes (`message`, `model_change`, `compaction`, ...) follows \
             it in the first lines"
                .into(),
        )
    }
}

/// Entry types pi writes besides `message` (docs/FORMAT.md, *pi session logs*).
const ENTRY_TYPES: [&str; 8] = [
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

/// Message roles pi writes.
const ROLES: [&str; 6] = [
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "hookMessage",
];

fn is_header(v: &serde_json::Value) -> bool {
    let is_str = |k: &str| v.get(k).is_some_and(serde_json::Value::is_string);
    v.get("type").and_then(serde_json::Value::as_str) == Some("session")
        && is_str("id")
        && is_str("timestamp")
        && is_str("cwd")
}

fn is_message_entry(v: &serde_json::Value) -> bool {
    let is_str =
        |v: &serde_json::Value, k: &str| v.get(k).is_some_and(serde_json::Value::is_string);
    if v.get("type").and_then(serde_json::Value::as_str) != Some("message") {
        return false;
    }
    v.get("message").is_some_and(
        |m| match m.get("role").and_then(serde_json::Value::as_str) {
            Some("toolResult") => is_str(m, "toolCallId") && m.get("isError").is_some(),
            Some("assistant") => {
                m.get("stopReason").is_some() && m.get("content").is_some_and(|c| c.is_array())
            }
            _ => false,
        },
    )
}

pub fn import(path: &Path, policy: Policy, limits: &Limits) -> Result<LoadedRun, ParseError> {
    let (shown, mut lines) = open_lines(path, limits)?;
    let located = |line: Option<u64>, kind| ParseError {
        path: shown.clone(),
        line,
        field: None,
        kind,
    };
    // First pass: the branch to replay. Second: the entries, from the first line again.
    let branch = tree::replayed_branch(&mut lines);
    let mut lines = match lines.rewound() {
        Ok(lines) => lines,
        Err(e) => {
            let mut b = Builder::new(&shown);
            let kind = ProblemKind::Io(e.to_string());
            b.problems.record(policy, located(None, kind))?;
            return Ok(b.finish());
        }
    };
    let mut run = Session::new(Builder::new(&shown), branch);
    read_json_lines(&mut lines, &shown, policy, limits, &mut run)?;
    Ok(run.b.finish())
}

impl LineSink for Session {
    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn entry(&mut self, value: &simd_json::BorrowedValue<'_>) -> Result<(), FieldError> {
        Session::entry(self, value)
    }
}
