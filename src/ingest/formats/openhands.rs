//! OpenHands event histories (All-Hands-AI/OpenHands 0.x, CodeAct agent; the shape
//! `event_to_trajectory` writes since early 2025): a JSON array of events, as saved by
//! `save_trajectory_path`, replay trajectories (`tests/runtime/trajs/`) and the server's
//! trajectory export, or an object holding it under `history` (the evaluation harness's
//! `EvalOutput`, one instance per file; the older `[action, observation]` pairs are
//! flattened) or `trajectory`.
//!
//! Each event has `id`, `timestamp`, `source` (`agent`, `user`, `environment`) and either
//! `action` with `args` or `observation` with `content` and `extras`; an observation names
//! the action it answers by `cause` (the action's `id`). Agent actions chosen by the model
//! carry `tool_call_metadata` (`tool_call_id`, the `model_response` with its `usage`) and,
//! in newer versions, `llm_metrics` (`accumulated_token_usage`, cumulative over the run).
//!
//! **Turns.** One per model request: an agent action with `tool_call_metadata` or
//! `llm_metrics`, and an agent `message` (a reply without a tool call carries neither);
//! actions sharing one `model_response.id` (parallel tool calls), or an unchanged
//! cumulative usage, are one request. In a history where no event carries either, every
//! agent action is a request. Usage: the response's own `usage`, else an evaluation's
//! `metrics.token_usages` entry for its response id, else the difference of
//! `accumulated_token_usage` from the agent's previous reading (condenser calls fall into
//! the next request's difference); by kind, `prompt_tokens` already include the cache
//! reads and writes (`map::Tokens::usage`). The model is the response's; the cost is the
//! difference of `accumulated_cost` (0 where OpenHands could not price the model).
//!
//! **Calls.** Agent actions other than messages and bookkeeping are tool calls, named by
//! [`TOOLS`] from the action type and the editor `command` (`map::call_of`); results
//! are the observations they caused, failed by `map::succeeded` and classed by
//! [`ERRORS`]. `finish` is also the run's outcome (`task_completed` `partial`/`false` →
//! status `partial`/`incomplete`, else `completed`), `reject` too (`rejected`); without
//! either, a last agent state `error`/`stopped` (or `EvalOutput.error`) is. `task_tracking`
//! plans are todo writes. A `condensation` action (or `condense` observation) is a
//! compaction: before = the last request's prompt tokens, after = its summary's estimate.
//! Events between a `delegate` action and its `delegate` observation are the delegated
//! agent's, under agent `delegate:<agent>`.
//!
//! The session starts in the first `working_dir` a command observation reports.
//!
//! Not recorded, so not imported: per-call durations, the system prompt's size when no
//! `system` action is kept, which events a condensation kept (frames restart from the
//! summary). User terminal commands are no calls (their output joins the history).
//! OpenHands' per-event store (`events/<n>.json`, one event per file) and the V1 SDK's
//! events (`kind: ActionEvent`) are other shapes, not read.

mod eval;
mod history;
mod map;
mod scan;

pub use eval::{import_line, instances, Instance, Instances};
pub use history::REJECTED;

use super::values::{self, wrong};
use crate::ingest::error::{FieldError, ParseError, Policy, ProblemKind};
use crate::ingest::formats::builder::{ErrorTable, ToolTable};
use crate::ingest::formats::{read_document, Sniffed};
use crate::ingest::{unique, Limits, LoadedRun};
use history::Import;
use serde_json::Value;
use std::path::Path;

/// OpenHands action types (with the editor's `command`) → canonical names. `run_ipython`,
/// `browse`, `browse_interactive`, `think`, `delegate`, `reject` and MCP tools (by their
/// own name) keep their names.
pub const TOOLS: ToolTable = &[
    ("run", "shell"),
    ("edit:str_replace", "file_edit"),
    ("edit:insert", "file_edit"),
    ("edit", "file_edit"),
    ("edit:create", "file_write"),
    ("edit:write", "file_write"),
    ("write", "file_write"),
    ("edit:view", "file_read"),
    ("read", "file_read"),
    ("edit:undo_edit", "undo_edit"),
    ("finish", "task_complete"),
    ("task_tracking", "todo_write"),
];

/// OpenHands' error wordings → error classes; first match wins. Other failures (an
/// `error` observation, a non-zero exit code) are left to the normalizer (`tool_failed`).
pub const ERRORS: ErrorTable = &[
    ("did not appear verbatim", "stale_edit"),
    ("rejected by the user", "blocked"),
    ("no such file or directory", "not_found"),
    ("does not exist", "not_found"),
];

/// Whether `head` (the start of a document, possibly cut) is an OpenHands event history.
pub fn sniff(head: &str) -> bool {
    judge(head) == Sniffed::Match
}

/// What `head` (the start of a document or of an evaluation output's first line, possibly
/// cut) is: an OpenHands event history, a look-alike (the reason), or neither.
pub fn judge(head: &str) -> Sniffed {
    scan::judge(head.trim_start())
}

pub fn import(path: &Path, policy: Policy, limits: &Limits) -> Result<LoadedRun, ParseError> {
    let (shown, bytes) = read_document(path, limits)?;
    let mut run = Import::new(&shown, policy, None);
    run.b.stats.bytes = bytes.len() as u64;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return run.fail("", ProblemKind::BadValue("empty document".into()));
    }
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    let doc = match unique::first(&mut de) {
        Ok(doc) => doc,
        Err(e) => {
            let e = e.into_field_error(false);
            return run.fail(&e.field, e.kind);
        }
    };
    if de.end().is_err() {
        let e = FieldError::new(
            "",
            ProblemKind::BadValue(
                "more than one document (one instance per file): only the first is read".into(),
            ),
        );
        run.problem("", e)?;
    }
    history_of(run, &doc)
}

/// Reads the history `doc` holds: an array of events, or an object with one under
/// `history` or `trajectory` (with the evaluation's `error` as a fallback outcome).
fn history_of(mut run: Import, doc: &Value) -> Result<LoadedRun, ParseError> {
    let (prefix, events, error) = match doc {
        Value::Array(events) => ("", events, None),
        Value::Object(o) => {
            // The first of `history` and `trajectory` that is there; one that is no array
            // is a problem, not a history left to look for.
            let found = ["history", "trajectory"]
                .into_iter()
                .find_map(|k| o.get(k).filter(|v| !v.is_null()).map(|v| (k, v)));
            let (key, events) = match found {
                Some((key, Value::Array(events))) => (key, events),
                Some((key, other)) => {
                    return run.fail(key, wrong("", "array of events", other).kind)
                }
                None => return run.fail("history", ProblemKind::MissingField),
            };
            let usages = values::typed_at(
                Some(doc),
                "",
                &["metrics", "token_usages"],
                "array",
                Value::as_array,
            );
            if let Some(usages) = run.checked(usages)? {
                token_usages(&mut run, usages)?;
            }
            let error = run.checked(values::opt_str(o.get("error"), "error"))?;
            (key, events, error)
        }
        _ => {
            return run.fail(
                "",
                ProblemKind::WrongType {
                    expected: "array of events",
                    found: "scalar".into(),
                },
            )
        }
    };
    let flat: Vec<(String, &Value)> = events
        .iter()
        .enumerate()
        .flat_map(|(i, e)| match e {
            Value::Array(pair) => pair
                .iter()
                .enumerate()
                .map(|(j, e)| (format!("{prefix}[{i}][{j}]"), e))
                .collect(),
            e => vec![(format!("{prefix}[{i}]"), e)],
        })
        .collect();
    run.marked = flat.iter().any(|(_, e)| {
        ["tool_call_metadata", "llm_metrics"]
            .iter()
            .any(|k| e.get(*k).is_some_and(|m| !m.is_null()))
    });
    let cwd = flat.iter().find_map(|(_, e)| {
        e.get("extras")?
            .get("metadata")?
            .get("working_dir")?
            .as_str()
    });
    run.b.session_start(cwd.map(str::to_string));
    for (at, event) in &flat {
        run.b.record();
        if let Err(e) = run.event(event) {
            run.problem(at, e)?;
        }
    }
    run.outcome_at_end(error);
    Ok(run.b.finish())
}

/// An evaluation's `metrics.token_usages`: OpenHands' record of each response's usage
/// (`prompt_tokens`, `completion_tokens`, `cache_read_tokens`, `cache_write_tokens`) and
/// model, by `response_id`; the first entry of an id counts. An entry that cannot be read is
/// a problem and is passed over.
fn token_usages(run: &mut Import, usages: &[Value]) -> Result<(), ParseError> {
    for (i, entry) in usages.iter().enumerate() {
        let read = || -> Result<_, FieldError> {
            if !entry.is_object() {
                return Err(FieldError::new("", ProblemKind::NotAnObject));
            }
            let id = values::opt_str(entry.get("response_id"), "response_id")?;
            let Some(id) = id.filter(|id| !id.is_empty()) else {
                return Ok(None);
            };
            let tokens = map::usage(entry, "")?;
            Ok(Some((id, tokens, map::model(entry.get("model"), "model")?)))
        };
        match read() {
            Ok(Some((id, tokens, model))) => {
                run.recorded
                    .entry(id.to_string())
                    .or_insert((tokens, model));
            }
            Ok(None) => {}
            Err(e) => {
                let field = e.field.trim_start_matches('.').to_string();
                run.problem(
                    &format!("metrics.token_usages[{i}]"),
                    FieldError::new(field, e.kind),
                )?;
            }
        }
    }
    Ok(())
}
