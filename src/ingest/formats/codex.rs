//! Codex CLI session rollouts (issue #30, item 1).
//!
//! Codex CLI (`openai/codex`, `codex-rs`) appends one JSON object per line to
//! `~/.codex/sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl`: an envelope
//! `{timestamp, type, payload}` whose `type` is a `RolloutItem`
//! (`codex-rs/protocol/src/protocol.rs`). Files of Codex before the envelope hold the
//! payloads themselves, the session meta first. Section *Codex CLI rollouts* of
//! docs/FORMAT.md has the details. Shape and mapping:
//!
//! | line `type` | becomes |
//! |---|---|
//! | `session_meta` (`id`, `cwd`, `source`, `forked_from_id`) | `session_start` with `cwd`; a second one, another session's, starts that session's copied history |
//! | `turn_context` (`model`, `cwd`) | the model of the requests after it |
//! | `response_item` `message` (user, developer) | history |
//! | `response_item` `reasoning`, `message` (assistant), `function_call`, `custom_tool_call`, `local_shell_call` | the output of one model request: its calls ([`TOOLS`]) |
//! | `response_item` `function_call_output`, `custom_tool_call_output` | the result of the call with that `call_id`: failed when the exit code is not 0 |
//! | `event_msg` `token_count` (`info.total_token_usage`, `info.last_token_usage`) | the request's usage, when the total differs from the previous row's |
//! | `compacted`, `event_msg` `context_compacted` | one `compaction` |
//!
//! Requests are counted from `token_count` rows, and only when the cumulative total moves:
//! Codex repeats the row unchanged, and counting every row overcounts (ccusage issues
//! #876, #884, #1288). A request's output items and its `token_count` are gathered and
//! emitted together, whichever comes first (`rollout::Response`). A fork or sub-agent file
//! starts with a copy of its parent's history, written at once after the parent's
//! `session_meta`: it builds the context but makes no events (`IngestStats::copied`).

mod calls;
mod field;
mod rollout;

use super::builder::{Builder, ToolTable};
use super::Sniffed;
use crate::ingest::error::{FieldError, ParseError, Policy};
use crate::ingest::formats::{open_lines, read_json_lines, LineSink};
use crate::ingest::json::to_serde;
use crate::ingest::{Limits, LoadedRun};
use rollout::{Rollout, LINE_TYPES};
use serde_json::Value;
use std::path::Path;

/// Codex's tool names (`codex-rs/core/src/tools/spec.rs`) → the canonical vocabulary
/// (docs/FORMAT.md, *Tool kinds*). MCP tools (`server__tool`) pass through.
pub const TOOLS: ToolTable = &[
    ("shell", "shell"),
    ("container.exec", "shell"),
    ("shell_command", "shell"),
    ("exec_command", "shell"),
    ("local_shell", "shell"),
    ("apply_patch", "file_edit"),
    ("update_plan", "todo_write"),
    ("view_image", "file_read"),
];

/// `response_item` payload types Codex writes (`ResponseItem`).
const ITEM_TYPES: [&str; 11] = [
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
    "ghost_snapshot",
    "compaction",
    "compaction_summary",
];

pub const LOOK_ALIKE: &str = "looks like a Codex rollout (lines of `timestamp`, `type` and \
    `payload`), but none of the first lines is a `session_meta` with `id` and `cwd`, a \
    `response_item` of a type Codex writes, or an `event_msg` `token_count`";

/// Whether the first lines of a file are a Codex rollout: an envelope line whose payload
/// has Codex's shape (a `session_meta` with `id` and `cwd`, a `turn_context` with `model`,
/// a `response_item` of a `ResponseItem` type, an `event_msg` `token_count`), or, in the
/// envelope-less form, a first line with `id`, `timestamp` and `instructions` followed by
/// response items. Envelopes of Codex's line types without that shape are a look-alike.
pub fn judge(lines: &[Value]) -> Sniffed {
    if lines.iter().any(is_codex_line) || is_bare_rollout(lines) {
        return Sniffed::Match;
    }
    if lines.iter().any(is_envelope) {
        return Sniffed::LookAlike(LOOK_ALIKE.into());
    }
    Sniffed::No
}

fn is_envelope(v: &Value) -> bool {
    v.get("timestamp").is_some_and(Value::is_string)
        && v.get("payload").is_some_and(Value::is_object)
        && v.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| LINE_TYPES.contains(&t))
}

fn is_codex_line(v: &Value) -> bool {
    if !is_envelope(v) {
        return false;
    }
    let p = &v["payload"];
    let s = |k: &str| p.get(k).is_some_and(Value::is_string);
    match v["type"].as_str() {
        Some("session_meta") => s("id") && s("cwd"),
        Some("turn_context") => s("model") && s("cwd"),
        Some("response_item") => is_item(p),
        Some("event_msg") => p["type"] == "token_count" && p.get("info").is_some(),
        _ => false,
    }
}

/// A `ResponseItem`: a known type with the fields that type requires.
fn is_item(p: &Value) -> bool {
    let s = |k: &str| p.get(k).is_some_and(Value::is_string);
    match p.get("type").and_then(Value::as_str) {
        Some("message") => s("role") && p.get("content").is_some_and(Value::is_array),
        Some("function_call") => s("name") && s("call_id") && s("arguments"),
        Some("custom_tool_call") => s("name") && s("call_id") && s("input"),
        Some("function_call_output" | "custom_tool_call_output") => {
            s("call_id") && p.get("output").is_some()
        }
        Some(t) => ITEM_TYPES.contains(&t) && t != "message",
        None => false,
    }
}

/// The envelope-less form: the session meta (`id`, `timestamp`, `instructions`, no
/// `type`), then response items.
fn is_bare_rollout(lines: &[Value]) -> bool {
    let Some((head, rest)) = lines.split_first() else {
        return false;
    };
    let s = |k: &str| head.get(k).is_some_and(Value::is_string);
    head.get("type").is_none()
        && s("id")
        && s("timestamp")
        && head.get("instructions").is_some()
        && rest
            .iter()
            .any(|l| l.get("payload").is_none() && is_item(l))
}

/// The `cwd` a rollout's `session_meta` records, from its first lines: what groups rollouts
/// into projects (docs/FORMAT.md, *Detection and grouping*).
pub fn recorded_cwd(path: &Path, limits: &Limits) -> Option<String> {
    let (_, mut lines) = open_lines(path, limits).ok()?;
    for _ in 0..8 {
        let line = lines.next_line()?.ok()?;
        let Ok(v) = serde_json::from_slice::<Value>(line.bytes) else {
            continue;
        };
        let meta = match v.get("type").and_then(Value::as_str) {
            Some("session_meta") => &v["payload"],
            Some("turn_context") => &v["payload"],
            _ => continue,
        };
        if let Some(cwd) = meta.get("cwd").and_then(Value::as_str) {
            return Some(cwd.to_string());
        }
    }
    None
}

pub fn import(path: &Path, policy: Policy, limits: &Limits) -> Result<LoadedRun, ParseError> {
    let (shown, mut lines) = open_lines(path, limits)?;
    let mut run = Rollout::new(Builder::new(&shown));
    read_json_lines(&mut lines, &shown, policy, limits, &mut run)?;
    run.close();
    Ok(run.b.finish())
}

impl LineSink for Rollout {
    fn builder(&mut self) -> &mut Builder {
        &mut self.b
    }

    fn entry(&mut self, value: &simd_json::BorrowedValue<'_>) -> Result<(), FieldError> {
        self.line(&to_serde(value))
    }
}
