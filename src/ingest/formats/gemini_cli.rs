//! Gemini CLI chat records (issue #30, item 3). Qwen Code, its fork, writes another record
//! (JSONL `ChatRecord`s linked by `uuid`/`parentUuid`), not read here.
//!
//! Gemini CLI (`google-gemini/gemini-cli`, `packages/core/src/services/
//! chatRecordingService.ts`, `chatRecordingTypes.ts`) saves each chat under
//! `~/.gemini/tmp/<projectHash>/chats/`: until 2026 one whole-file JSON `ConversationRecord`
//! `{sessionId, projectHash, startTime, lastUpdated, messages[], kind?}`
//! (`session-*.json`); since, JSON Lines of the same record (`session-*.jsonl`): a metadata
//! line, then messages, `{"$set": {...}}` updates and `{"$rewindTo": id}` rewinds
//! ([`record`]). A sub-agent's chat is a file of its own (`kind: "subagent"`) under
//! `chats/<parent session id>/`. Section *Gemini CLI chat records* of docs/FORMAT.md has
//! the details. Shape and mapping ([`message`]):
//!
//! | message `type` | becomes |
//! |---|---|
//! | `user` | history |
//! | `gemini` | one model request: usage from `tokens`, the message's `model`; its text joins the history; each `toolCalls[]` entry a call ([`TOOLS`]) and, once final, its result |
//! | `info`, `error`, `warning` | nothing (the UI's notices) |
//!
//! Tokens: fresh input = `input - cached + tool`, cache reads = `cached`, output =
//! `output + thoughts`. A call fails when its `status` is `error` or `cancelled`, or, for the
//! shell, when its output says `Exit Code: N` with N not 0.

mod message;
mod record;

use super::builder::{Builder, ErrorTable, ToolTable};
use super::mini_swe_agent::head;
use super::{read_document, Sniffed};
use crate::ingest::error::{FieldError, ParseError, Policy, ProblemKind};
use crate::ingest::{unique, Limits, LoadedRun};
use record::{Line, Record};
use serde_json::Value;
use std::path::Path;

/// Gemini CLI's built-in tools (`packages/core/src/tools/definitions/base-declarations.ts`)
/// → the canonical vocabulary (docs/FORMAT.md, *Tool kinds*). `search_file_content` is the
/// grep tool's earlier name. Others (`web_fetch`, `google_web_search`, `invoke_agent`, MCP
/// tools) pass through.
pub const TOOLS: ToolTable = &[
    ("run_shell_command", "shell"),
    ("replace", "file_edit"),
    ("write_file", "file_write"),
    ("read_file", "file_read"),
    ("read_many_files", "file_read"),
    ("glob", "glob"),
    ("grep_search", "grep"),
    ("search_file_content", "grep"),
    ("list_directory", "list_dir"),
    ("write_todos", "todo_write"),
];

/// Gemini CLI's error wordings (`packages/core/src/tools/edit.ts`) and the shared shell
/// table's.
const ERRORS: ErrorTable = &[
    ("could not find the string to replace", "stale_edit"),
    ("0 occurrences found for old_string", "stale_edit"),
    ("File not found", "not_found"),
    ("No such file or directory", "not_found"),
    ("FileNotFoundError", "not_found"),
];

pub const LOOK_ALIKE: &str = "looks like a Gemini CLI chat record (a `sessionId` with \
    `messages` or a `projectHash`), but has no string `sessionId` and `projectHash` with a \
    `messages` array or a `startTime`";

/// Whether a JSON object is a record's metadata: string `sessionId` and `projectHash`,
/// with a `messages` array (the whole record) or a string `startTime` (the first line of
/// the JSONL form).
fn is_metadata(get: impl Fn(&str) -> Option<Kind>) -> bool {
    get("sessionId") == Some(Kind::String)
        && get("projectHash") == Some(Kind::String)
        && (get("messages") == Some(Kind::Array) || get("startTime") == Some(Kind::String))
}

/// Close to a record: a `sessionId` beside `messages`, or a `projectHash`.
fn resembles(get: impl Fn(&str) -> Option<Kind>) -> bool {
    (get("sessionId").is_some() && get("messages").is_some()) || get("projectHash").is_some()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Array,
    Other,
}

fn kind_of_text(value: &str) -> Kind {
    match value.trim_start().as_bytes().first() {
        Some(b'"') => Kind::String,
        Some(b'[') => Kind::Array,
        _ => Kind::Other,
    }
}

fn kind_of_value(v: &Value) -> Kind {
    match v {
        Value::String(_) => Kind::String,
        Value::Array(_) => Kind::Array,
        _ => Kind::Other,
    }
}

fn by_key(v: &Value) -> impl Fn(&str) -> Option<Kind> + '_ {
    move |k| v.get(k).map(kind_of_value)
}

/// Judges a JSON Lines file by its first lines: one of them is a record's metadata.
pub fn judge(lines: &[Value]) -> Sniffed {
    Sniffed::of_lines(
        lines,
        |v| is_metadata(by_key(v)),
        |v| resembles(by_key(v)),
        LOOK_ALIKE,
    )
}

/// Judges the head of a whole-file record (pretty-printed, possibly cut) by its leading keys.
pub fn judge_document(head: &str) -> Sniffed {
    let Some(members) = head::members(head) else {
        return Sniffed::No;
    };
    let get = |k: &str| {
        members
            .iter()
            .find(|m| m.key == k)
            .map(|m| kind_of_text(m.value))
    };
    if is_metadata(get) {
        Sniffed::Match
    } else if resembles(get) {
        Sniffed::LookAlike(LOOK_ALIKE.into())
    } else {
        Sniffed::No
    }
}

/// A string the record's metadata gives at its head (the first line of the JSONL form):
/// `projectHash` groups chats into projects, `startTime` orders them (docs/FORMAT.md,
/// *Detection and grouping*).
pub fn recorded(path: &Path, key: &str) -> Option<String> {
    use std::io::Read;
    let (file, _) = crate::ingest::files::open_regular(path, "").ok()?;
    let mut head = Vec::new();
    file.take(64 * 1024).read_to_end(&mut head).ok()?;
    let head = String::from_utf8_lossy(&head);
    let members = head::members(&head)?;
    let member = members.iter().find(|m| m.key == key)?;
    serde_json::from_str(member.value).ok()
}

pub fn import(path: &Path, policy: Policy, limits: &Limits) -> Result<LoadedRun, ParseError> {
    let (shown, bytes) = read_document(path, limits)?;
    let mut b = Builder::new(&shown);
    b.stats.bytes = bytes.len() as u64;
    let problem = |line: Line, e: FieldError| ParseError {
        path: shown.clone(),
        line,
        field: (!e.field.is_empty()).then_some(e.field),
        kind: e.kind,
    };
    let record = match read_record(&bytes, &mut b, policy, &problem)? {
        Some(record) => record,
        None => return Ok(b.finish()),
    };
    // A `kind` of the wrong type is a problem and counts as absent (the main agent's).
    let subagent = match record.is_subagent() {
        Ok(subagent) => subagent,
        Err(e) => {
            b.problems.record(policy, problem(None, e))?;
            false
        }
    };
    let agent = if subagent { "subagent" } else { "main" };
    b.session_start(None);
    let whole = record.messages.iter().all(|(line, _)| line.is_none());
    for (i, (line, m)) in record.messages.iter().enumerate() {
        if whole {
            b.record();
        }
        let outcome = match m.as_object() {
            Some(m) => message::message(&mut b, agent, m),
            None => Err(FieldError::new("", ProblemKind::NotAnObject)),
        };
        if let Err(e) = outcome {
            let e = match line {
                Some(_) => e,
                None => FieldError::new(located(i, &e.field), e.kind),
            };
            b.problems.record(policy, problem(*line, e))?;
        }
    }
    Ok(b.finish())
}

fn located(i: usize, field: &str) -> String {
    match field {
        "" => format!("messages[{i}]"),
        f => format!("messages[{i}].{f}"),
    }
}

/// The record a file holds: one JSON document, else JSON Lines replayed line by line (a bad
/// line is a problem, skipped). `None` when the document is unreadable (lenient).
fn read_record(
    bytes: &[u8],
    b: &mut Builder,
    policy: Policy,
    problem: &impl Fn(Line, FieldError) -> ParseError,
) -> Result<Option<Record>, ParseError> {
    let first = bytes
        .split(|c| *c == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .unwrap_or_default();
    let lines = bytes.len() > first.len() + 1 && unique::from_slice(first).is_ok();
    if !lines {
        let parsed = unique::from_slice(bytes).map_err(|e| e.into_field_error(true));
        let top = parsed.and_then(|v| match v {
            Value::Object(top) => Ok(top),
            _ => Err(FieldError::new("", ProblemKind::NotAnObject)),
        });
        return match top.and_then(Record::document) {
            Ok(record) => Ok(Some(record)),
            Err(e) => b.problems.record(policy, problem(None, e)).map(|_| None),
        };
    }
    let mut record = Record::default();
    for (i, line) in bytes.split(|c| *c == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        b.record();
        let number = Some(i as u64 + 1);
        let applied = unique::from_slice(line)
            .map_err(|e| e.into_field_error(false))
            .and_then(|v| record.line(number, v));
        if let Err(e) = applied {
            b.problems.record(policy, problem(number, e))?;
        }
    }
    Ok(Some(record))
}
