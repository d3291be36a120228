//! Claude Code session logs: `~/.claude/projects/<project>/<session>.jsonl` (Claude Code
//! CLI, v1.0.x; the same shape in 2.x).
//!
//! One JSON object per line. `user`/`assistant` lines carry the API `message`;
//! `assistant` content holds `text`, `thinking` and `tool_use` {id, name, input}; `user`
//! content is a prompt string or `text`/`tool_result` {tool_use_id, content, is_error}
//! items. One API response may be written over several `assistant` lines sharing
//! `message.id`: it is one model request (one turn), its `message.usage` counted once, the
//! largest value of each field over all its lines, other lines between them or not (output
//! grows while it streams). Prompt tokens are
//! `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`, completion
//! `output_tokens`. `isSidechain: true` lines are a sub-agent's (a `Task` delegation):
//! each sub-agent thread is an agent of its own, told apart by `parentUuid` chains and
//! named after its `agentId` or the `Task` call that started it (`threads`). A `system` line with
//! subtype `compact_boundary` (`compactMetadata.preTokens`) and the `isCompactSummary` user
//! line after it are one compaction. `TodoWrite` inputs are todo writes (id: the todo's
//! `id`, else its content). The first line's `cwd` starts the session.
//!
//! Tools: [`TOOLS`]; argument keys `file_path`/`notebook_path` become `path`, the others
//! are kept. Results fail on `is_error: true`, or, for `Bash`, on an `Exit code N` (N ≠
//! 0) first line; errors are classed by [`ERRORS`].
//!
//! Not recorded, so not imported: the task outcome (no exit status or submission), the
//! system prompt, per-call durations and working directories. `summary` lines are titles
//! of a conversation for the resume menu (`leafUuid`), not compactions: counted, no event.
//! Assistant lines with model `<synthetic>` (harness-written, no API request) make no
//! turn. Thinking blocks are not kept in frames. A resumed session that copies an earlier
//! file's history counts that history again.
//!
//! The same importer reads `claude -p --output-format stream-json` output
//! (`InputFormat::ClaudeCodeStream`, issue #30, item 5): its lines carry the same `message`
//! objects, so only its shape, its sub-agent lines and its `result` line differ ([`stream`]).
//! It is a format of its own for detection and grouping (one run per file), not a second
//! importer: the mapping of messages, tools, usage and errors stays in one place.

use crate::ingest::error::{ParseError, Policy, ProblemKind};
use crate::ingest::formats::builder::{ErrorTable, ToolTable};
use crate::ingest::formats::open_lines;
use crate::ingest::unique;
use crate::ingest::{Limits, LoadedRun};
use serde_json::Value;
use std::path::Path;

mod lines;
mod session;
pub mod stream;
mod threads;
use lines::Bad;
use session::Importer;

/// Claude Code tool names → canonical names (docs/FORMAT.md, *Tool kinds*). `Task`,
/// `WebFetch`, `WebSearch` and other tools keep their names.
pub const TOOLS: ToolTable = &[
    ("Bash", "shell"),
    ("Edit", "file_edit"),
    ("MultiEdit", "file_edit"),
    ("NotebookEdit", "file_edit"),
    ("Write", "file_write"),
    ("Read", "file_read"),
    ("NotebookRead", "file_read"),
    ("Glob", "glob"),
    ("Grep", "grep"),
    ("LS", "ls"),
    ("TodoWrite", "todo_write"),
];

/// Claude Code's error wordings → error classes; first match wins. Refusals come first:
/// the tool never ran, whatever else the text says. Of the read-state errors, "not read
/// yet" is a stale view of the file (`stale_edit`: reading it is the recovery), "modified
/// since read" the file changing under a guarded edit (`hash_mismatch`). "Found N matches
/// of the string to replace" is left to the generic rules (`tool_failed`).
pub const ERRORS: ErrorTable = &[
    ("haven't granted it yet", "blocked"),
    ("has been denied", "blocked"),
    ("denied this tool", "blocked"),
    ("was blocked", "blocked"),
    ("hook blocking error", "blocked"),
    ("PreToolUse:", "blocked"),
    ("doesn't want to proceed with this tool use", "blocked"),
    ("String to replace not found", "stale_edit"),
    ("File has not been read yet", "stale_edit"),
    ("File has been modified since read", "hash_mismatch"),
    ("File has been unexpectedly modified", "hash_mismatch"),
    ("File does not exist", "not_found"),
    ("Path does not exist", "not_found"),
    ("No such file", "not_found"),
];

/// Argument keys renamed to the canonical ones (same meaning).
pub const ARG_KEYS: [(&str, &str); 2] = [("file_path", "path"), ("notebook_path", "path")];

/// A line of a Claude Code session log: a message line (`user`, `assistant`, `system`)
/// with its session, its uuid and the CLI's conversation tree (`parentUuid`, string or
/// null, and `isSidechain`), a title (`summary` with `leafUuid`) or a file-history
/// snapshot.
pub fn sniff(line: &Value) -> bool {
    let Some(obj) = line.as_object() else {
        return false;
    };
    let has_str = |k: &str| obj.get(k).is_some_and(Value::is_string);
    let tree = || {
        obj.get("parentUuid")
            .is_some_and(|p| p.is_string() || p.is_null())
            && obj.get("isSidechain").is_some_and(Value::is_boolean)
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("user" | "assistant") => resembles(line) && has_str("uuid") && tree(),
        Some("system") => has_str("sessionId") && has_str("uuid") && tree(),
        Some("summary") => has_str("leafUuid"),
        Some("file-history-snapshot") => obj.contains_key("snapshot") && has_str("messageId"),
        _ => false,
    }
}

/// A chat line that looks like Claude Code's (`type` `user` or `assistant`, a `message`
/// object, a string `sessionId`) whether or not it has the rest of its structure.
pub fn resembles(line: &Value) -> bool {
    matches!(
        line.get("type").and_then(Value::as_str),
        Some("user" | "assistant")
    ) && line.get("message").is_some_and(Value::is_object)
        && line.get("sessionId").is_some_and(Value::is_string)
}

/// Why a file whose lines [`resemble`](resembles) Claude Code's is not read as a session.
pub const LOOK_ALIKE: &str = "looks like a Claude Code session (lines with `type`, \
    `sessionId` and `message`), but no line has Claude Code's `uuid`, `parentUuid` and \
    `isSidechain`";

pub fn import(path: &Path, policy: Policy, limits: &Limits) -> Result<LoadedRun, ParseError> {
    let (shown, mut lines) = open_lines(path, limits)?;
    let mut run = Importer::new(&shown);
    while let Some(line) = lines.next_line() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                let error = located(&shown, None, None, ProblemKind::Io(e.to_string()));
                run.b.problems.record(policy, error)?;
                break;
            }
        };
        run.b.stats.bytes += line.raw_len;
        let number = line.number;
        if line.too_long {
            let kind = ProblemKind::LineTooLong(limits.line_mib());
            run.b
                .problems
                .record(policy, located(&shown, Some(number), None, kind))?;
            continue;
        }
        if line.bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse(line.bytes, line.terminated).and_then(|v| run.line(&v)) {
            Ok(()) => run.b.record(),
            Err(e) => run
                .b
                .problems
                .record(policy, located(&shown, Some(number), e.field, e.kind))?,
        }
    }
    Ok(run.finish())
}

fn located(path: &str, line: Option<u64>, field: Option<String>, kind: ProblemKind) -> ParseError {
    ParseError {
        path: path.to_string(),
        line,
        field,
        kind,
    }
}

fn parse(line: &[u8], terminated: bool) -> Result<Value, Bad> {
    let fail = |kind| Err(Bad::line(kind));
    let Ok(text) = std::str::from_utf8(line) else {
        return fail(ProblemKind::InvalidUtf8);
    };
    match unique::from_slice(text.as_bytes()) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => fail(ProblemKind::NotAnObject),
        Err(unique::Error::Duplicate(path)) => Err(Bad {
            field: Some(path),
            kind: ProblemKind::DuplicateKey,
        }),
        Err(_) if !terminated => fail(ProblemKind::Truncated),
        Err(unique::Error::Json(e)) => fail(ProblemKind::InvalidJson(e.to_string())),
    }
}
