//! `events.jsonl`: one JSON record per line, read a line at a time with simd-json.
//!
//! Implements the record shapes of docs/FORMAT.md (issue #2's minimal shape). A bad
//! line is located (file, line, field) and skipped or, under `--strict`, fatal; a
//! truncated last line from a crashed run is recognised as such.

use super::error::{FieldError, ParseError, Policy, ProblemKind, Problems};
use super::files::{Limits, MIB};
use super::json::*;
use super::lines::{Line, LineReader};
use crate::hash::hash_of;
use crate::model::*;
use crate::recent::Recent;
use simd_json::prelude::*;
use simd_json::BorrowedValue;
use std::collections::BTreeMap;
use std::io::BufRead;

/// Counts of what a file held beyond the records the model knows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IngestStats {
    pub records: u64,
    pub bytes: u64,
    /// Record types this version does not model, by name.
    pub unknown_types: BTreeMap<String, u64>,
    /// Fields not in the documented shape, as `type.field`.
    pub unknown_fields: BTreeMap<String, u64>,
    /// A session that starts with a copy of another's entries (a branched pi session):
    /// they seed the context but are not counted again as turns or tokens.
    pub copied: Option<Copied>,
    /// Entries on branches the session left (a pi branch tree): not replayed, and their
    /// spend not counted in the run's.
    pub abandoned: Option<Abandoned>,
}

/// The entries a session copied from the one it was branched from, and what they held.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Copied {
    /// The session they came from, as a run id (the file name the header names, without
    /// its folder and `.jsonl`).
    pub from: String,
    pub entries: u64,
    /// Model requests among them.
    pub turns: u64,
    /// Their recorded tokens, prompt and completion.
    pub tokens: u64,
}

/// The entries of a session on branches it left, and what they held.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Abandoned {
    /// Branches left: entries off the replayed branch whose parent is on it (or none).
    pub branches: u64,
    pub entries: u64,
    /// Model requests among them.
    pub turns: u64,
    /// Their recorded tokens, prompt and completion.
    pub tokens: u64,
}

/// Reads every record of an events stream, recording problems as it goes, with the
/// default line cap.
pub fn read_events(
    reader: impl BufRead,
    path: &str,
    policy: Policy,
    problems: &mut Problems,
    stats: &mut IngestStats,
) -> Result<Vec<Event>, ParseError> {
    let max_line = Limits::default().max_line;
    read_events_capped(reader, path, policy, max_line, problems, stats)
}

/// As [`read_events`], with lines of at most `max_line` bytes: a longer line is a located
/// problem and is skipped without being held whole.
pub fn read_events_capped(
    reader: impl BufRead,
    path: &str,
    policy: Policy,
    max_line: u64,
    problems: &mut Problems,
    stats: &mut IngestStats,
) -> Result<Vec<Event>, ParseError> {
    let mut events = Vec::new();
    let mut lines = LineReader::new(reader, max_line);
    let mut buffers = ThreadBuffers::take();
    let mut repeats = Repeats::default();
    while let Some(line) = lines.next_line() {
        let Line {
            number,
            bytes,
            terminated,
            raw_len,
            too_long,
        } = match line {
            Ok(l) => l,
            Err(e) => {
                problems.record(
                    policy,
                    located(path, None, None, ProblemKind::Io(e.to_string())),
                )?;
                break;
            }
        };
        stats.bytes += raw_len;
        if too_long {
            let kind = ProblemKind::LineTooLong(max_line / MIB);
            problems.record(policy, located(path, Some(number), None, kind))?;
            continue;
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match parse_line(bytes, number, &mut buffers, &mut repeats, stats) {
            Ok(event) => {
                stats.records += 1;
                events.push(event);
            }
            Err(mut error) => {
                if !terminated && matches!(error.kind, ProblemKind::InvalidJson(_)) {
                    error.kind = ProblemKind::Truncated;
                }
                problems.record(policy, error.locate(path, Some(number)))?;
            }
        }
    }
    Ok(events)
}

fn located(path: &str, line: Option<u64>, field: Option<String>, kind: ProblemKind) -> ParseError {
    ParseError {
        path: path.to_string(),
        line,
        field,
        kind,
    }
}

/// A line-level failure before it is given its file.
pub struct LineError {
    field: Option<String>,
    kind: ProblemKind,
}

impl LineError {
    fn locate(self, path: &str, line: Option<u64>) -> ParseError {
        located(path, line, self.field, self.kind)
    }
}

impl From<FieldError> for LineError {
    fn from(e: FieldError) -> Self {
        Self {
            field: (!e.field.is_empty()).then_some(e.field),
            kind: e.kind,
        }
    }
}

pub use super::json::json_problem;

/// The arguments and outputs a stream's records repeat, each kept once and shared by the
/// records that repeat it: a stuck run's calls and their failures are mostly repeats
/// ([`crate::recent`], issue #13).
#[derive(Default)]
struct Repeats {
    args: Recent<std::sync::Arc<serde_json::Map<String, serde_json::Value>>>,
    outputs: Recent<Text>,
}

impl Repeats {
    /// A call's arguments, `v` (an object), as the earlier record with the same ones has
    /// them, or converted.
    fn args(
        &mut self,
        v: &BorrowedValue<'_>,
    ) -> Option<std::sync::Arc<serde_json::Map<String, serde_json::Value>>> {
        let BorrowedValue::Object(object) = v else {
            return None;
        };
        let same = |m: &std::sync::Arc<serde_json::Map<_, _>>| same_object_as_serde(object, m);
        let make = || std::sync::Arc::new(object_to_serde(object));
        Some(std::sync::Arc::clone(self.args.get_or_insert(
            hash_value(v),
            same,
            make,
        )))
    }

    /// A result's output, shared with the earlier record whose output is the same text.
    fn output(&mut self, text: &str) -> Text {
        let same = |t: &Text| t.as_str() == text;
        self.outputs
            .get_or_insert(hash_of(&text), same, || Text::from(text))
            .clone()
    }
}

fn parse_line(
    bytes: &mut [u8],
    number: u64,
    buffers: &mut simd_json::Buffers,
    repeats: &mut Repeats,
    stats: &mut IngestStats,
) -> Result<Event, LineError> {
    let value = parse_unique(bytes, buffers)?;
    let obj = value.as_object().ok_or(LineError {
        field: None,
        kind: ProblemKind::NotAnObject,
    })?;
    let type_name = req_str(obj, "type")?;
    let at = At {
        turn: match type_name {
            // A session marker may precede the first request.
            "session_start" => opt_u32(obj, "turn")?.unwrap_or(0),
            _ => as_u32(required(obj, "turn", "turn")?, "turn")?,
        },
        seq: opt_count(obj, "seq")?.unwrap_or(number),
        session: opt_u32(obj, "session")?.unwrap_or(1),
        agent: opt_str(obj, "agent")?.unwrap_or("main").to_string(),
    };
    let kind = parse_kind(type_name, obj, repeats)?;
    count_unknown_fields(type_name, obj, &kind, stats);
    Ok(Event { at, kind })
}

fn opt_u32(obj: &Object<'_>, key: &str) -> Result<Option<u32>, FieldError> {
    obj.get(key)
        .filter(|v| !v.is_null())
        .map(|v| as_u32(v, key))
        .transpose()
}

fn parse_kind(
    type_name: &str,
    obj: &Object<'_>,
    repeats: &mut Repeats,
) -> Result<EventKind, FieldError> {
    Ok(match type_name {
        "session_start" => EventKind::SessionStart {
            cwd: opt_string(obj, "cwd")?,
        },
        "tool_call" => EventKind::ToolCall(ToolCall {
            call_id: req_str(obj, "callId")?.to_string(),
            tool: req_str(obj, "tool")?.to_string(),
            args: match obj.get("args").filter(|v| !v.is_null()) {
                None => std::sync::Arc::default(),
                Some(v) => repeats.args(v).ok_or_else(|| {
                    FieldError::new(
                        "args",
                        ProblemKind::WrongType {
                            expected: "object",
                            found: type_name_of(v),
                        },
                    )
                })?,
            },
            cwd: opt_string(obj, "cwd")?,
        }),
        "tool_result" => EventKind::ToolResult(ToolResult {
            call_id: req_str(obj, "callId")?.to_string(),
            success: req_bool(obj, "success")?,
            error_class: opt_string(obj, "errorClass")?,
            output: opt_str(obj, "output")?.map(|text| repeats.output(text)),
            output_chars: opt_count(obj, "outputChars")?,
            duration_ms: opt_count(obj, "durationMs")?,
            mutation: opt_bool(obj, "mutation")?,
            paths: opt_str_list(obj, "paths")?,
            verification: opt_bool(obj, "verification")?,
        }),
        "model_usage" => EventKind::ModelRequest(Request {
            usage: Some(usage(obj)?),
            ..request(obj)?
        }),
        "model_request" => EventKind::ModelRequest(request(obj)?),
        "directive" => EventKind::Directive(Directive {
            source: req_str(obj, "source")?.to_string(),
            required_next_action: req_str(obj, "requiredNextAction")?.to_string(),
            family: opt_string(obj, "family")?,
            state: opt_string(obj, "state")?,
            text: opt_string(obj, "text")?,
        }),
        "dedup" => EventKind::Dedup {
            call_id: opt_string(obj, "callId")?,
            family: opt_string(obj, "family")?,
        },
        "compaction" => EventKind::Compaction {
            before_tokens: req_tokens(obj, "beforeTokens")?,
            after_tokens: req_tokens(obj, "afterTokens")?,
        },
        "todo_write" => EventKind::TodoWrite {
            todos: parse_todos(req_array(obj, "todos")?)?,
        },
        "task_complete" => EventKind::TaskComplete {
            status: req_str(obj, "status")?.to_string(),
            summary: opt_string(obj, "summary")?.unwrap_or_default(),
        },
        other => EventKind::Unknown {
            type_name: other.to_string(),
        },
    })
}

fn type_name_of(v: &BorrowedValue<'_>) -> String {
    type_name(v)
}

fn parse_todos(items: &[BorrowedValue<'_>]) -> Result<Vec<Todo>, FieldError> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let parent = format!("todos[{i}]");
            let obj = item.as_object().ok_or_else(|| {
                FieldError::new(
                    &parent,
                    ProblemKind::WrongType {
                        expected: "object",
                        found: type_name(item),
                    },
                )
            })?;
            let todo = || -> Result<Todo, FieldError> {
                Ok(Todo {
                    id: todo_id(obj, "id")?
                        .ok_or_else(|| FieldError::new("id", ProblemKind::MissingField))?,
                    parent_id: todo_id(obj, "parentId")?,
                    status: req_str(obj, "status")?.to_string(),
                    content: opt_string(obj, "content")?.unwrap_or_default(),
                    verify_command: opt_string(obj, "verifyCommand")?,
                })
            };
            todo().map_err(|e| nested(&parent, e))
        })
        .collect()
}

/// The fields `model_request` and `model_usage` share: the model and a recorded cost.
fn request(obj: &Object<'_>) -> Result<Request, FieldError> {
    let cost_usd = opt_f64(obj, "costUsd")?;
    if cost_usd.is_some_and(|c| !(c.is_finite() && c >= 0.0)) {
        return Err(FieldError::new(
            "costUsd",
            ProblemKind::BadValue("a cost must be a finite, non-negative number".into()),
        ));
    }
    Ok(Request {
        usage: None,
        model: opt_string(obj, "model")?,
        cost_usd,
    })
}

/// A `model_usage` record's tokens: `promptTokens` counts every prompt token, of which
/// `cacheReadTokens` and `cacheWriteTokens` (optional) were read from or written to the
/// provider's cache; `tokenSource` says when the figures are not recorded per request.
fn usage(obj: &Object<'_>) -> Result<Usage, FieldError> {
    let prompt = req_tokens(obj, "promptTokens")?;
    let cache_read = opt_tokens(obj, "cacheReadTokens")?.unwrap_or(0);
    let cache_write = opt_tokens(obj, "cacheWriteTokens")?.unwrap_or(0);
    if cache_read.saturating_add(cache_write) > prompt {
        return Err(FieldError::new(
            "cacheReadTokens",
            ProblemKind::BadValue(format!(
                "cached tokens ({}) exceed promptTokens ({prompt})",
                cache_read.saturating_add(cache_write)
            )),
        ));
    }
    let source = match opt_str(obj, "tokenSource")? {
        None | Some("recorded") => TokenSource::Recorded,
        Some("spread") => TokenSource::Spread,
        Some("estimated") => TokenSource::Estimated,
        Some(other) => {
            return Err(FieldError::new(
                "tokenSource",
                ProblemKind::BadValue(format!(
                    "unknown source {other:?} (expected recorded, spread or estimated)"
                )),
            ))
        }
    };
    Ok(Usage {
        input: prompt - cache_read - cache_write,
        cache_write,
        cache_write_1h: 0,
        cache_read,
        output: req_tokens(obj, "completionTokens")?,
        source,
    })
}

/// A todo id: harnesses write strings and integers; both name the same todo.
fn todo_id(obj: &Object<'_>, key: &str) -> Result<Option<String>, FieldError> {
    match obj.get(key) {
        Some(v) if v.as_u64().is_some() => Ok(v.as_u64().map(|n| n.to_string())),
        _ => opt_string(obj, key),
    }
}

/// The documented fields per record type; anything else is counted, not fatal.
fn known_fields(kind: &EventKind) -> &'static [&'static str] {
    match kind {
        EventKind::SessionStart { .. } => &["cwd"],
        EventKind::ToolCall(_) => &["callId", "tool", "args", "cwd"],
        EventKind::ToolResult(_) => &[
            "callId",
            "success",
            "errorClass",
            "output",
            "outputChars",
            "durationMs",
            "mutation",
            "paths",
            "verification",
        ],
        EventKind::ModelRequest(Request { usage: Some(_), .. }) => &[
            "promptTokens",
            "completionTokens",
            "cacheReadTokens",
            "cacheWriteTokens",
            "tokenSource",
            "model",
            "costUsd",
        ],
        EventKind::ModelRequest(_) => &["model", "costUsd"],
        EventKind::Directive(_) => &["source", "requiredNextAction", "family", "state", "text"],
        EventKind::Dedup { .. } => &["callId", "family"],
        EventKind::Compaction { .. } => &["beforeTokens", "afterTokens"],
        EventKind::TodoWrite { .. } => &["todos"],
        EventKind::TaskComplete { .. } => &["status", "summary"],
        EventKind::Unknown { .. } => &[],
    }
}

const COMMON_FIELDS: [&str; 6] = ["type", "turn", "seq", "ts", "session", "agent"];

fn count_unknown_fields(
    type_name: &str,
    obj: &Object<'_>,
    kind: &EventKind,
    stats: &mut IngestStats,
) {
    if let EventKind::Unknown { type_name } = kind {
        *stats.unknown_types.entry(type_name.clone()).or_default() += 1;
        return;
    }
    let known = known_fields(kind);
    for key in obj.keys() {
        let key: &str = key;
        if !COMMON_FIELDS.contains(&key) && !known.contains(&key) {
            *stats
                .unknown_fields
                .entry(format!("{type_name}.{key}"))
                .or_default() += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Event> {
        let (mut problems, mut stats) = (Problems::default(), IngestStats::default());
        read_events(
            text.as_bytes(),
            "e",
            Policy::Strict,
            &mut problems,
            &mut stats,
        )
        .expect("valid")
    }

    fn call(e: &Event) -> &ToolCall {
        match &e.kind {
            EventKind::ToolCall(c) => c,
            other => panic!("a call, not {other:?}"),
        }
    }

    fn output(e: &Event) -> &Text {
        match &e.kind {
            EventKind::ToolResult(r) => r.output.as_ref().expect("an output"),
            other => panic!("a result, not {other:?}"),
        }
    }

    #[test]
    fn repeated_arguments_and_outputs_are_read_once_and_shared() {
        let events = read(concat!(
            r#"{"type":"tool_call","turn":1,"callId":"a","tool":"shell","args":{"command":"go test ./...","timeout":60}}"#,
            "\n",
            r#"{"type":"tool_result","turn":1,"callId":"a","success":false,"output":"FAIL\tpkg 0.1s"}"#,
            "\n",
            r#"{"type":"tool_call","turn":2,"callId":"b","tool":"shell","args":{"timeout":60,"command":"go test ./..."}}"#,
            "\n",
            r#"{"type":"tool_result","turn":2,"callId":"b","success":false,"output":"FAIL\tpkg 0.1s"}"#,
            "\n",
        ));
        assert!(std::sync::Arc::ptr_eq(
            &call(&events[0]).args,
            &call(&events[2]).args
        ));
        assert_eq!(output(&events[1]).as_ptr(), output(&events[3]).as_ptr());
        assert_eq!(output(&events[3]).as_str(), "FAIL\tpkg 0.1s");
        assert_eq!(output(&events[3]).char_count(), 13);
    }

    #[test]
    fn arguments_that_differ_in_any_value_or_number_form_are_not_shared() {
        let events = read(concat!(
            r#"{"type":"tool_call","turn":1,"callId":"a","tool":"t","args":{"n":1,"p":["x"]}}"#,
            "\n",
            r#"{"type":"tool_call","turn":2,"callId":"b","tool":"t","args":{"n":1.0,"p":["x"]}}"#,
            "\n",
            r#"{"type":"tool_call","turn":3,"callId":"c","tool":"t","args":{"n":1,"p":["y"]}}"#,
            "\n",
            r#"{"type":"tool_call","turn":4,"callId":"d","tool":"t","args":{"n":1,"p":["x"],"q":null}}"#,
            "\n",
        ));
        let args: Vec<String> = events
            .iter()
            .map(|e| serde_json::to_string(&*call(e).args).unwrap())
            .collect();
        assert_eq!(
            args,
            [
                r#"{"n":1,"p":["x"]}"#,
                r#"{"n":1.0,"p":["x"]}"#,
                r#"{"n":1,"p":["y"]}"#,
                r#"{"n":1,"p":["x"],"q":null}"#,
            ]
        );
        for (i, a) in events.iter().enumerate() {
            for b in &events[i + 1..] {
                assert!(!std::sync::Arc::ptr_eq(&call(a).args, &call(b).args));
            }
        }
    }
}
