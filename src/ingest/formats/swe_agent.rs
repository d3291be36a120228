//! SWE-agent trajectories (`<instance>.traj`), as written by SWE-agent (princeton-nlp /
//! SWE-agent/SWE-agent) 0.x, and the same shape in 1.x.
//!
//! One JSON document per task: `{environment, trajectory, history, info}`. Each
//! `trajectory[]` step is one model call and the action it chose: `{action, observation,
//! response, thought, state?, execution_time?, query?}`; `history[]` is the message list
//! sent to the model (`role`, `content`, `agent`, `is_demo`, ...); `info` holds
//! `exit_status`, `submission` and `model_stats {tokens_sent, tokens_received, api_calls,
//! instance_cost}`.
//!
//! Mapping:
//! - one turn per step, whose `action` is one tool call (`step-<n>`) read with [`TOOLS`]
//!   from its command word: `edit <start>:<end>` + replacement + `end_of_edit` is a
//!   `file_edit` of the open file (`state.open_file`) with `startLine`/`endLine` as its
//!   target and the replacement as `new_string`; `open`/`goto`/`scroll_*` read the open
//!   file; `search_dir`/`search_file`/`find_file` search (`pattern`, `path`); `create` writes
//!   an empty file; `submit` completes; `str_replace_editor <command> <path> --old_str ...`
//!   (1.x) maps by its command, flags renamed to `old_string`, `new_string`, `content`,
//!   `insert_line`; anything else is a `shell` call with the whole action as `command`.
//!   A step whose action is empty but whose `response` is not is the model replying with
//!   no command: a turn (a model call, with its share of the usage) and no tool call.
//!   Harness exits (`exit_cost`, `exit_context`, ...), and empty actions with no response,
//!   are no model call: no turn, no call.
//! - the open file: a string `state` (0.x) is the state shown with the step's prompt, an
//!   object `state` (1.x) the state after it; without either, `open`/`create` set it.
//! - results: no exit code or step status is recorded, so the observation decides
//!   (`wording`): a 0.x file window's body (numbered file lines), warning lines
//!   (`Warning:`, a Python warning category, apt's `W: `) and lone markup tags aside, an
//!   observation whose first line opens a listing, search result, 1.x view or diff
//!   (`VIEWS`) succeeded; otherwise every line is matched against anchored rules (`RULES`:
//!   a phrase at a line's start, as the message after a `<program>: ` label or of a named
//!   program, as apt's `E: `, at its end, as its label, or as a whole word; first rule wins;
//!   edge rules only on the first and last lines), and a match is a failure of that class.
//!   Commands print wherever they run: after a window, between other output. The 0.x edit
//!   linter's rejection ("Your proposed edit has
//!   introduced new syntax error(s)": the edit was not applied) is `tool_failed`, not a stale
//!   edit: the target range was valid, the new text was not.
//! - usage: per-call tokens are not recorded, only `info.model_stats` totals. They are
//!   spread over the turns (an estimate, exact in sum, deterministic: largest remainder,
//!   ties to the earlier turn) in proportion to each call's prompt size: the step's `query`
//!   messages (1.x) if every step has them, else the main agent's `history` before its n-th
//!   assistant message (if history has one per step), else evenly; completions in
//!   proportion to each step's `response`. Each share is marked `spread` (the total is
//!   recorded, the share is not). `instance_cost` is spread likewise, in proportion to each
//!   call's tokens, as its recorded cost (none when it is 0: SWE-agent's "could not price").
//!   The model is `replay_config`'s `agent.model.name` (1.x); 0.x names none.
//! - outcome: `info.exit_status` `submitted` is `completed`; any other status is kept as
//!   recorded (`exit_cost`, `submitted (exit_context)`: not a completion claim); the summary
//!   is `info.submission`.
//! - frames: `history` before the first assistant message (system prompt, demonstration,
//!   issue), then each step's response and observation, reconstructed by the Builder.
//!
//! Not recorded: exit codes, per-call usage and timestamps; which messages a history
//! processor dropped from a prompt (the estimate counts the whole history); history of
//! other agents (not in `trajectory`); requeries after format errors (in `api_calls`, not
//! in the steps: their tokens land on the steps).

mod action;
mod skim;
pub(crate) mod usage;
pub(super) mod wording;

use super::builder::{canonical_tool, Builder, ToolTable};
use super::values::{object, str_at, typed, typed_at, wrong};
use super::{read_document, Sniffed};
use crate::ingest::error::{FieldError, ParseError, Policy, ProblemKind};
use crate::ingest::{unique, Limits, LoadedRun};
use crate::model::Request;
use serde_json::{Map, Value};
use std::path::Path;

/// SWE-agent command words to the canonical tool names; any other command is `shell`.
pub const TOOLS: ToolTable = &[
    ("edit", "file_edit"),
    ("insert", "file_edit"),
    ("open", "file_read"),
    ("goto", "file_read"),
    ("scroll_up", "file_read"),
    ("scroll_down", "file_read"),
    ("search_dir", "search"),
    ("search_file", "search"),
    ("find_file", "search"),
    ("create", "file_write"),
    ("submit", "task_complete"),
    ("str_replace_editor view", "file_read"),
    ("str_replace_editor create", "file_write"),
    ("str_replace_editor str_replace", "file_edit"),
    ("str_replace_editor insert", "file_edit"),
    ("str_replace_editor undo_edit", "file_edit"),
];

/// Whether the head of a document is a SWE-agent trajectory ([`judge`]).
pub fn sniff(head: &str) -> bool {
    judge(head) == Sniffed::Match
}

/// The head of a document is a SWE-agent trajectory: a top-level `trajectory` array (no
/// `trajectory_format`) whose first step holds SWE-agent's four step keys, `action`,
/// `observation`, `response` and `thought`. A head cut inside the first step is judged by
/// what it shows: step keys only, with `action` and one of the other three or beside an
/// `environment` key. So is an empty or cut array beside `environment`. A complete first
/// step with an `action` but not the rest (a text game's `action` and `observation`) is a
/// look-alike.
pub fn judge(head: &str) -> Sniffed {
    let shape = skim::shape(head);
    let has = |keys: &[String], k: &str| keys.iter().any(|x| x == k);
    if !shape.trajectory || has(&shape.keys, "trajectory_format") {
        return Sniffed::No;
    }
    let environment = has(&shape.keys, "environment");
    let Some(step) = shape.first_step else {
        return if environment {
            Sniffed::Match
        } else {
            Sniffed::No
        };
    };
    let action = has(&step, "action");
    let voiced = ["observation", "response", "thought"]
        .iter()
        .any(|k| has(&step, k));
    let matched = if shape.first_step_complete {
        ["action", "observation", "response", "thought"]
            .iter()
            .all(|k| has(&step, k))
    } else {
        step.iter().all(|k| STEP_KEYS.contains(&k.as_str())) && (environment || action && voiced)
    };
    match (matched, action) {
        (true, _) => Sniffed::Match,
        (false, true) => {
            let missing: Vec<String> = ["observation", "response", "thought"]
                .iter()
                .filter(|k| !has(&step, k))
                .map(|k| format!("`{k}`"))
                .collect();
            Sniffed::LookAlike(format!(
                "looks like a SWE-agent trajectory (a `trajectory` of steps with `action`), \
                 but its first step has no {}",
                missing.join(" or ")
            ))
        }
        (false, false) => Sniffed::No,
    }
}

/// The keys a trajectory step may have.
const STEP_KEYS: [&str; 8] = [
    "action",
    "observation",
    "response",
    "thought",
    "state",
    "execution_time",
    "query",
    "extra_info",
];

pub fn import(path: &Path, policy: Policy, limits: &Limits) -> Result<LoadedRun, ParseError> {
    let (shown, bytes) = read_document(path, limits)?;
    let mut b = Builder::new(&shown);
    b.stats.bytes = bytes.len() as u64;
    let problem = |field: Option<&str>, kind| ParseError {
        path: shown.clone(),
        line: None,
        field: field.map(str::to_string),
        kind,
    };
    let doc: Value = match unique::from_slice(&bytes) {
        Ok(doc) => doc,
        Err(e) => {
            let e = e.into_field_error(true);
            let field = (!e.field.is_empty()).then_some(e.field.as_str());
            b.problems.record(policy, problem(field, e.kind))?;
            return Ok(b.finish());
        }
    };
    let Some(doc) = doc.as_object() else {
        b.problems
            .record(policy, problem(None, ProblemKind::NotAnObject))?;
        return Ok(b.finish());
    };
    let Some(Value::Array(raw_steps)) = doc.get("trajectory") else {
        let kind = match doc.get("trajectory") {
            None | Some(Value::Null) => ProblemKind::MissingField,
            Some(v) => wrong_type("array", v),
        };
        b.problems
            .record(policy, problem(Some("trajectory"), kind))?;
        return Ok(b.finish());
    };
    let mut steps: Vec<&Map<String, Value>> = Vec::new();
    for (i, raw) in raw_steps.iter().enumerate() {
        let Some(step) = raw.as_object() else {
            let field = format!("trajectory[{i}]");
            b.problems
                .record(policy, problem(Some(&field), ProblemKind::NotAnObject))?;
            continue;
        };
        let bad = ["action", "observation", "response"]
            .into_iter()
            .find_map(|k| {
                let v = step.get(k).filter(|v| !v.is_string() && !v.is_null())?;
                Some((format!("trajectory[{i}].{k}"), wrong_type("string", v)))
            });
        match bad {
            Some((field, kind)) => b.problems.record(policy, problem(Some(&field), kind))?,
            None => steps.push(step),
        }
    }
    let text = |step: &Map<String, Value>, k: &str| {
        step.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let calls: Vec<&Map<String, Value>> = steps
        .iter()
        .copied()
        .filter(|s| action::is_model_call(&text(s, "action"), &text(s, "response")))
        .collect();

    let (history, bad) = usage::history_of(doc.get("history"));
    for e in bad {
        b.problems.record(policy, e.locate_document(&shown))?;
    }
    // What `info` records; a field of the wrong type is a problem and counts as absent.
    let info = typed(doc.get("info"), "info", "object", object);
    let info = absent_if_bad(&mut b, policy, &shown, info)?;
    let stats = typed_at(info, "info", &["model_stats"], "object", object);
    let stats = absent_if_bad(&mut b, policy, &shown, stats)?;
    let status = str_at(info, "info", &["exit_status"]);
    let status = absent_if_bad(&mut b, policy, &shown, status)?;
    let sent = absent_if_bad(&mut b, policy, &shown, usage::total(stats, "tokens_sent"))?;
    let received = absent_if_bad(
        &mut b,
        policy,
        &shown,
        usage::total(stats, "tokens_received"),
    )?;
    let cost = absent_if_bad(&mut b, policy, &shown, usage::cost(stats))?;
    let model = absent_if_bad(&mut b, policy, &shown, usage::model(doc))?;
    let requests = usage::requests((sent, received), cost, &calls, &history);
    b.session_start(steps.iter().find_map(|s| action::state(s).1));
    let first_reply = history
        .iter()
        .position(|m| m.role == "assistant" && !m.demo)
        .unwrap_or(history.len());
    for m in &history[..first_reply] {
        b.message(&m.role, &m.content, None);
    }
    let mut open: Option<String> = None;
    let mut calls_seen = 0;
    for step in steps {
        b.record();
        let action = text(step, "action");
        let (open_file, _, after) = action::state(step);
        if !after {
            open = open_file.clone().or(open);
        }
        let response = text(step, "response");
        if !action::is_model_call(&action, &response) {
            continue;
        }
        let (usage, cost_usd) = requests.get(calls_seen).copied().unwrap_or_default();
        b.model_request(
            "main",
            Request {
                usage,
                model: model.clone(),
                cost_usd,
            },
        );
        calls_seen += 1;
        b.message("assistant", &response, None);
        let observation = text(step, "observation");
        if !action::is_tool_call(&action) {
            // A reply with no command: a model call and no tool call. What the harness
            // showed next, if anything, joins the history.
            if !observation.trim().is_empty() {
                b.message("user", &observation, None);
            }
            if after {
                open = open_file.or(open);
            }
            continue;
        }
        let key = action::command_key(&action);
        let known = TOOLS.iter().any(|(word, _)| *word == key);
        let tool = if known {
            canonical_tool(TOOLS, &key)
        } else {
            "shell".to_string()
        };
        let args = action::arguments(if known { &key } else { "" }, &action, open.as_deref());
        let id = format!("step-{}", b.turn());
        b.call("main", &id, tool, args);
        let class = wording::failure(&observation);
        b.result("main", &id, class.is_none(), &observation, class);
        match after {
            true => open = open_file.or(open),
            false => open = action::opens(&key, &action).or(open),
        }
    }
    outcome(&mut b, info, status);
    Ok(b.finish())
}

/// `found`, or, when it is a problem, that problem recorded and the field absent.
fn absent_if_bad<T>(
    b: &mut Builder,
    policy: Policy,
    shown: &str,
    found: Result<Option<T>, FieldError>,
) -> Result<Option<T>, ParseError> {
    found.or_else(|e| {
        let problem = e.locate_document(shown);
        b.problems.record(policy, problem).map(|()| None)
    })
}

fn wrong_type(expected: &'static str, v: &Value) -> ProblemKind {
    wrong("", expected, v).kind
}

/// `info.exit_status` (`status`, read already) and `info.submission` as the run's
/// completion.
fn outcome(b: &mut Builder, info: Option<&Value>, status: Option<&str>) {
    let Some(info) = info else { return };
    let submission = match info.get("submission") {
        Some(Value::String(s)) => Some(s.clone()),
        None | Some(Value::Null) => None,
        Some(other) => Some(other.to_string()),
    };
    if status.is_none() && submission.is_none() {
        return;
    }
    let status = match status.map(str::trim) {
        Some(s) if s.eq_ignore_ascii_case("submitted") => "completed",
        Some(s) => s,
        None => "unknown",
    };
    b.complete(status, submission.as_deref().unwrap_or(""));
}
