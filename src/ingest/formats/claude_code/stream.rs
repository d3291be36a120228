//! Claude Code `-p --output-format stream-json` output (issue #30, item 5): what a CI
//! wrapper saves of one `claude -p` run, read by the session importer itself.
//!
//! One JSON object per line: a `system` line (`subtype: "init"`, `session_id`, `cwd`,
//! `model`, `tools`), then `assistant` and `user` lines that carry the session log's own
//! `message` objects beside a `session_id` and a `parent_tool_use_id` (the `Task` call whose
//! sub-agent wrote the line, null for the main agent), and a `result` line (`subtype`,
//! `is_error`, `total_cost_usd`, `usage`, `num_turns`, `duration_ms`). Messages map as in
//! the session logs; this module recognises the shape, places sub-agent lines, and reads
//! the `result` line: the run's outcome and its recorded cost, a run total spread over its
//! requests as SWE-agent's `instance_cost` is.

use super::lines::Bad;
use crate::ingest::formats::swe_agent::usage::spread_cost;
use crate::ingest::formats::values::opt_str;
use crate::ingest::formats::Sniffed;
use crate::model::{Event, EventKind, Request};
use serde_json::{Map, Value};

/// Why a file close to a stream is not read as one.
pub const LOOK_ALIKE: &str = "looks like Claude Code stream-json output (lines with `type` \
    and `session_id`), but no line is its `system` init line (`subtype: \"init\"` with \
    `session_id`, `cwd` and `tools`) or a message line with `message`, `session_id` and a \
    `parent_tool_use_id` key and no session log's `parentUuid` or `isSidechain`";

/// A stream, a look-alike of one, or neither, judged by a file's first lines.
pub fn judge(lines: &[Value]) -> Sniffed {
    Sniffed::of_lines(lines, sniff, resembles, LOOK_ALIKE)
}

/// A stream's `system` init line, or one of its message lines.
pub fn sniff(line: &Value) -> bool {
    let Some(obj) = line.as_object() else {
        return false;
    };
    let has = |k: &str, f: fn(&Value) -> bool| obj.get(k).is_some_and(f);
    let session = has("session_id", Value::is_string);
    match obj.get("type").and_then(Value::as_str) {
        Some("system") => {
            obj.get("subtype").and_then(Value::as_str) == Some("init")
                && session
                && has("cwd", Value::is_string)
                && has("tools", Value::is_array)
        }
        Some("user" | "assistant") => {
            session
                && has("message", Value::is_object)
                && has("parent_tool_use_id", |p| p.is_string() || p.is_null())
                && !obj.contains_key("parentUuid")
                && !obj.contains_key("isSidechain")
        }
        _ => false,
    }
}

/// A line with a stream's `type` and a string `session_id`, whatever else it lacks (a
/// `result` line alone is `--output-format json`: no messages).
fn resembles(line: &Value) -> bool {
    matches!(
        line.get("type").and_then(Value::as_str),
        Some("system" | "user" | "assistant" | "result")
    ) && line.get("session_id").is_some_and(Value::is_string)
}

/// The sub-agent thread of a stream line: `sidechain:<call id>` of its
/// `parent_tool_use_id`, named as a session log's thread started by that `Task` call.
pub fn thread_of(obj: &Map<String, Value>) -> Option<String> {
    let parent = obj.get("parent_tool_use_id")?.as_str()?;
    Some(format!("sidechain:{parent}"))
}

/// What a `result` line records.
#[derive(Debug)]
pub struct Outcome {
    /// `total_cost_usd`, when a positive number.
    pub cost_usd: Option<f64>,
    /// `completed` for a `success` that is no error, else the `subtype` (`error` when a
    /// `success` is flagged `is_error`).
    pub status: String,
    /// The final answer, `result`, when written.
    pub summary: String,
}

/// A `result` line's outcome and cost. `usage` is not read: the messages' own usage is
/// the count, the line's is the harness's sum of it.
pub fn outcome(obj: &Map<String, Value>) -> Result<Outcome, Bad> {
    let is_error = match obj.get("is_error") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(Bad::wrong("is_error", "boolean", other)),
    };
    let subtype = match obj.get("subtype") {
        Some(Value::String(s)) => s.as_str(),
        None | Some(Value::Null) => return Err(Bad::missing("subtype")),
        Some(other) => return Err(Bad::wrong("subtype", "string", other)),
    };
    let status = match (subtype, is_error) {
        ("success", false) => "completed",
        ("success", true) => "error",
        (other, _) => other,
    };
    let summary = opt_str(obj.get("result"), "result")?.unwrap_or("");
    Ok(Outcome {
        cost_usd: cost(obj)?,
        status: status.to_string(),
        summary: summary.to_string(),
    })
}

/// `total_cost_usd`: US dollars, a finite non-negative number; 0 is no cost (a model the
/// CLI could not price), as SWE-agent's `instance_cost` of 0.
fn cost(obj: &Map<String, Value>) -> Result<Option<f64>, Bad> {
    match obj.get("total_cost_usd") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(c) if c.is_finite() && c >= 0.0 => Ok((c > 0.0).then_some(c)),
            _ => Err(Bad::wrong("total_cost_usd", "non-negative number", v)),
        },
    }
}

/// Gives each request its share of the run's recorded cost, in proportion to its tokens
/// (evenly when none has any), replacing any cost a message line recorded: the shares add
/// up to `total`, so nothing is counted twice.
pub fn spread(events: &mut [Event], total: f64) {
    let weights: Vec<u64> = requests(events)
        .map(|r| r.usage.map_or(0, |u| u.total()))
        .collect();
    let shares = spread_cost(total, &weights);
    for (request, share) in requests(events).zip(shares) {
        request.cost_usd = Some(share);
    }
}

fn requests(events: &mut [Event]) -> impl Iterator<Item = &mut Request> {
    events.iter_mut().filter_map(|e| match &mut e.kind {
        EventKind::ModelRequest(request) => Some(request),
        _ => None,
    })
}
