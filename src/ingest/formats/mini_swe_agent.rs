//! mini-swe-agent trajectories (`<instance>.traj.json`), read into the event model.
//!
//! mini-swe-agent (SWE-agent/mini-swe-agent) saves one JSON document per task:
//! `{"info": {...}, "messages": [...], "trajectory_format": "mini-swe-agent-1.1",
//! "instance_id": ...}`. `info` holds `exit_status` (`Submitted`, `LimitsExceeded`, ...),
//! `submission` (the final diff), `model_stats` and the `config` (`environment.cwd`).
//! `messages` is the whole conversation, never compacted:
//!
//! | message | read as |
//! |---|---|
//! | `system`, first `user` | history (frames) |
//! | `assistant` (or a Responses API `{"object": "response"}`) | one turn: usage by kind from `extra.response.usage`, model from the response (else `info.config.model.model_name`), cost from `extra.cost` (`fields::request`); one shell call per `extra.actions` entry (else per `tool_calls`, else the single ```` ```bash ```` block of a 1.0 text response) |
//! | `tool` (`tool_call_id`), Responses `function_call_output` (`call_id`) | the result of that call; `success` = `extra.returncode` (else `<returncode>N</returncode>`) is 0; the output comes out of the observation wrapper ([`fields::unwrapped_output`]) |
//! | `user` while a text-based action waits (1.0, or 2.x text mode) | that action's result (a timeout notice without return code is a failure) |
//! | `user` with `extra.interrupt_type: "FormatError"` | a rejected model response: a turn of its own (with the usage and cost recent versions keep in its `extra`), unless it answers an assistant message with no action |
//! | `exit` | the outcome: `task_complete` |
//!
//! The action carrying the submission marker (`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`,
//! 1.0: `MINI_SWE_AGENT_FINAL_OUTPUT`) ends the run without a result: it becomes the
//! `task_complete` of its turn, status from [`OUTCOMES`] (`Submitted` is `completed`, others
//! kept as recorded), summary = the submission. Detection is by structure ([`sniff`]).
//!
//! Not recorded by the format: sub-agents, todos, compactions, durations (only the
//! observation timestamps), which files a shell command changed (edits are `sed -i`,
//! heredocs and scripts, so they are shell calls and carry no `stale_edit` class), and the
//! usage of a response rejected by versions that did not save it.

pub(super) mod fields;
pub(super) mod head;
mod reader;

use super::builder::{ErrorTable, ToolTable};
use super::read_document;
use super::values;
use crate::ingest::error::{ParseError, Policy, ProblemKind};
use crate::ingest::{unique, Limits, LoadedRun};
use reader::Reader;
use serde_json::Value;
use std::path::Path;

/// Tool names to the canonical vocabulary. mini-swe-agent has one tool; others named in
/// `tool_calls` (forks) pass through and are judged by their arguments.
const TOOLS: ToolTable = &[("bash", "shell")];

/// Shell error wordings to error classes: the shared shell table.
const ERRORS: ErrorTable = super::builder::SHELL_ERRORS;

/// Exit statuses to `task_complete` statuses; others are kept as recorded (no success claim).
const OUTCOMES: &[(&str, &str)] = &[("Submitted", "completed")];

/// The first line of output that makes the harness stop and submit.
const SUBMIT_MARKERS: [&str; 2] = [
    "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    "MINI_SWE_AGENT_FINAL_OUTPUT",
];

/// Whether the head of a document is a mini-swe-agent trajectory: a top-level object whose
/// `trajectory_format` starts with `mini-swe-agent`, or (that key being written last, often
/// past the head) whose members include an `info` object with `exit_status`, `mini_version`
/// or `model_stats`, and a `messages` array whose first element has a `role` (or, the head
/// ending inside a leading `info`, that `info` shows `exit_status` and `submission`).
/// Documents with SWE-agent's `trajectory`/`history` are not.
pub fn sniff(head: &str) -> bool {
    let Some(members) = head::members(head) else {
        return false;
    };
    let get = |key: &str| members.iter().find(|m| m.key == key);
    if get("trajectory").is_some() || get("history").is_some() {
        return false;
    }
    match get("trajectory_format") {
        Some(f) if f.complete => {
            let value: Option<String> = serde_json::from_str(f.value).ok();
            return value.is_some_and(|v| v.starts_with("mini-swe-agent"));
        }
        Some(f) if f.value.starts_with("\"mini-swe-agent") => return true,
        _ => {} // absent, or cut too early to tell: judge by the shape
    }
    let Some(info) = get("info") else {
        return false;
    };
    let info_keys = head::members(info.value).unwrap_or_default();
    let has = |key: &str| info_keys.iter().any(|m| m.key == key);
    let info_ok = has("exit_status") || has("mini_version") || has("model_stats");
    match get("messages") {
        Some(messages) => {
            info_ok
                && match head::first_element(messages.value) {
                    Some(None) => true,
                    Some(Some((first, _))) => {
                        head::members(first).is_some_and(|m| m.iter().any(|m| m.key == "role"))
                    }
                    None => false,
                }
        }
        // 1.x writes `info` first, its submission before the rest: a large diff can push
        // `messages` past the head.
        None => members.len() == 1 && !info.complete && has("exit_status") && has("submission"),
    }
}

pub fn import(path: &Path, policy: Policy, limits: &Limits) -> Result<LoadedRun, ParseError> {
    let (shown, bytes) = read_document(path, limits)?;
    let mut reader = Reader::new(shown, policy);
    reader.b.stats.bytes = bytes.len() as u64;
    let doc: Value = match unique::from_slice(&bytes) {
        Ok(doc) => doc,
        Err(e) => {
            let e = e.into_field_error(true);
            let field = (!e.field.is_empty()).then_some(e.field);
            return reader.fail(field, e.kind);
        }
    };
    let Some(top) = doc.as_object() else {
        return reader.fail(None, ProblemKind::NotAnObject);
    };
    // `info` and what it records; a field of the wrong type is a problem and counts as absent.
    let info = values::typed(top.get("info"), "info", "object", values::object);
    let info = reader.checked(None, info)?;
    let config = reader.checked(
        None,
        values::typed_at(info, "info", &["config"], "object", values::object),
    )?;
    let mut text = |v, at, keys: &[&str]| {
        let found = values::str_at(v, at, keys).map(|s| s.filter(|s| !s.is_empty()));
        reader.checked(None, found).map(|s| s.map(str::to_string))
    };
    let cwd = text(config, "info.config", &["environment", "cwd"])?;
    let model = text(config, "info.config", &["model", "model_name"])?;
    let exit_status = text(info, "info", &["exit_status"])?;
    let submission = text(info, "info", &["submission"])?;
    reader.exit_status = exit_status;
    reader.model = model;
    reader.submission = submission.unwrap_or_default();
    let messages = match top.get("messages") {
        Some(Value::Array(list)) => list,
        None | Some(Value::Null) => {
            return reader.fail(Some("messages".into()), ProblemKind::MissingField)
        }
        Some(other) => {
            let kind = ProblemKind::WrongType {
                expected: "array",
                found: values::kind_of(other).into(),
            };
            return reader.fail(Some("messages".into()), kind);
        }
    };
    reader.b.session_start(cwd);
    for (i, message) in messages.iter().enumerate() {
        reader.b.record();
        match message {
            Value::Object(m) => reader.message(i, m)?,
            _ => reader.problem(format!("messages[{i}]"), ProblemKind::NotAnObject)?,
        }
    }
    reader.finish()
}
