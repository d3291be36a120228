//! `opencode run --format json` output (issue #30, item 4): one event per line,
//! `{type, timestamp, sessionID, ...}` (`packages/opencode/src/cli/cmd/run.ts`), of the run's
//! own session only:
//!
//! | `type` | holds |
//! |---|---|
//! | `step_start`, `step_finish`, `text`, `reasoning`, `tool_use` | `part`: the part as stored (a `tool_use` once its state is `completed` or `error`; `reasoning` only with `--thinking`) |
//! | `user` (newer OpenCode) | `parts`: the prompt's parts |
//! | `error` | `error`: the session's error (`{name, data: {message}}`) |
//! | `done` | the session went idle |
//!
//! Parts map as the stored ones do ([`super::session`]); a change of `part.messageID` ends
//! an assistant message. The stream carries no message objects, so no model (a request's
//! `cost` is still OpenCode's own), and no child session: a `task` call's sub-agent spend
//! is not in it.

use super::session::{Origin, Session, StoredPart};
use crate::ingest::error::{FieldError, ParseError, Policy, ProblemKind};
use crate::ingest::formats::builder::Builder;
use crate::ingest::formats::values::{typed, wrong};
use crate::ingest::formats::{open_lines, read_json_lines, LineSink, Sniffed};
use crate::ingest::json::to_serde;
use crate::ingest::{Limits, LoadedRun};
use serde_json::{Map, Value};
use std::path::Path;

/// Event types `opencode run --format json` writes.
const TYPES: [&str; 8] = [
    "step_start",
    "step_finish",
    "text",
    "reasoning",
    "tool_use",
    "user",
    "error",
    "done",
];

/// Why a file close to a stream is not read as one.
pub const LOOK_ALIKE: &str = "looks like `opencode run --format json` output (lines with an \
    event `type` and a string `sessionID`), but no line carries a `part` object with a \
    `type` and a string `messageID`";

/// An event line with a part: the stream's distinctive structure.
fn sniff(line: &Value) -> bool {
    let typed = line
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| TYPES.contains(&t));
    let part = line.get("part").and_then(Value::as_object);
    typed
        && line.get("sessionID").is_some_and(Value::is_string)
        && part.is_some_and(|p| {
            p.get("type").is_some_and(Value::is_string)
                && p.get("messageID").is_some_and(Value::is_string)
        })
}

fn resembles(line: &Value) -> bool {
    line.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| TYPES.contains(&t))
        && line.get("sessionID").is_some_and(Value::is_string)
}

/// A stream, a look-alike of one, or neither, judged by a file's first lines.
pub fn judge(lines: &[Value]) -> Sniffed {
    Sniffed::of_lines(lines, sniff, resembles, LOOK_ALIKE)
}

pub fn import(path: &Path, policy: Policy, limits: &Limits) -> Result<LoadedRun, ParseError> {
    let (shown, mut lines) = open_lines(path, limits)?;
    let mut b = Builder::new(&shown);
    b.session_start(None);
    let mut sink = Sink {
        session: Session::new(&mut b, "main", policy),
        shown: shown.clone(),
        message: None,
        line: 0,
    };
    read_json_lines(&mut lines, &shown, policy, limits, &mut sink)?;
    sink.end()?;
    Ok(b.finish())
}

struct Sink<'b> {
    session: Session<'b>,
    shown: String,
    /// The assistant message whose parts are being read.
    message: Option<String>,
    line: u64,
}

/// No child session is in a stream.
fn no_children(_: &mut Builder, _: &str) -> Result<bool, ParseError> {
    Ok(false)
}

impl Sink<'_> {
    fn end(&mut self) -> Result<(), ParseError> {
        if self.message.take().is_some() {
            self.session.end_assistant(None, &mut no_children)?;
        }
        Ok(())
    }

    fn part(&mut self, part: Map<String, Value>) -> Result<(), FieldError> {
        let message = match part.get("messageID") {
            Some(Value::String(s)) => s.clone(),
            None => return Err(FieldError::new("part.messageID", ProblemKind::MissingField)),
            Some(v) => return Err(wrong("part.messageID", "string", v)),
        };
        if self.message.as_deref() != Some(message.as_str()) {
            self.end().map_err(stop)?;
            let none = Origin::default();
            self.session
                .begin_assistant(&Map::new(), &none)
                .map_err(stop)?;
            self.message = Some(message);
        }
        let at = Origin {
            path: self.shown.clone(),
            line: Some(self.line),
            prefix: "part".into(),
        };
        self.session
            .part(StoredPart { part, at }, &mut no_children)
            .map_err(stop)
    }
}

/// A problem that stopped the import (`--strict`), carried out of a line as its own.
fn stop(e: ParseError) -> FieldError {
    FieldError::new(e.field.unwrap_or_default(), e.kind)
}

impl LineSink for Sink<'_> {
    fn builder(&mut self) -> &mut Builder {
        self.session.b
    }

    fn at_line(&mut self, number: u64) {
        self.line = number;
    }

    fn entry(&mut self, value: &simd_json::BorrowedValue<'_>) -> Result<(), FieldError> {
        self.session.b.record();
        let Value::Object(line) = to_serde(value) else {
            return Err(FieldError::new("", ProblemKind::NotAnObject));
        };
        let kind = match line.get("type") {
            Some(Value::String(t)) => t.clone(),
            None => return Err(FieldError::new("type", ProblemKind::MissingField)),
            Some(v) => return Err(wrong("type", "string", v)),
        };
        match kind.as_str() {
            "step_start" | "step_finish" | "text" | "reasoning" | "tool_use" => {
                match line.get("part") {
                    Some(Value::Object(p)) => self.part(p.clone()),
                    None => Err(FieldError::new("part", ProblemKind::MissingField)),
                    Some(v) => Err(wrong("part", "object", v)),
                }
            }
            "user" => {
                self.end().map_err(stop)?;
                let parts = typed(line.get("parts"), "parts", "array", Value::as_array)?;
                for (i, p) in parts.into_iter().flatten().enumerate() {
                    if let Value::Object(part) = p {
                        let at = Origin {
                            path: self.shown.clone(),
                            line: Some(self.line),
                            prefix: format!("parts[{i}]"),
                        };
                        let part = StoredPart {
                            part: part.clone(),
                            at,
                        };
                        self.session.user_part(&part).map_err(stop)?;
                    }
                }
                Ok(())
            }
            "error" | "done" => Ok(()),
            other => {
                *self
                    .session
                    .b
                    .stats
                    .unknown_types
                    .entry(other.to_string())
                    .or_default() += 1;
                Ok(())
            }
        }
    }
}
