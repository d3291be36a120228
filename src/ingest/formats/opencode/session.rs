//! One OpenCode session's messages and parts to events (issue #30, item 4), whichever source
//! they come from: the SQLite store, the legacy JSON storage, or a `run --format json` stream.
//!
//! An assistant message holds one or more steps, each one model request: a `step-start`
//! part, the request's output parts (text, reasoning, tools), and a `step-finish` part with
//! its tokens and cost (`packages/opencode/src/session/processor.ts`). The message's own
//! `tokens` are the *last* step's (OpenCode overwrites them at every step) while its `cost`
//! is their sum, so requests are counted from `step-finish` parts, and from the message only
//! when it has no step parts at all. A step is emitted when it finishes: its request first,
//! then its calls and results in order, a `task` call's child session inline before the
//! call's result.

use super::{ERRORS, TOOLS};
use crate::ingest::error::{FieldError, ParseError, Policy, ProblemKind};
use crate::ingest::formats::builder::{canonical_tool, error_class, Builder};
use crate::ingest::formats::values::{object, opt_str, typed, typed_at, wrong};
use crate::ingest::Copied;
use crate::model::{Request, Todo, TokenSource, Usage};
use serde_json::{Map, Value};

/// Where a record came from, for locating its problems: the file (a message or part file,
/// the database, the stream) and the field path of the record in it (`message[msg_1].data`,
/// or empty for a file that is the record).
#[derive(Debug, Clone, Default)]
pub struct Origin {
    pub path: String,
    pub line: Option<u64>,
    pub prefix: String,
}

impl Origin {
    pub fn problem(&self, e: FieldError) -> ParseError {
        let field = match (self.prefix.as_str(), e.field.as_str()) {
            ("", "") => None,
            ("", f) => Some(f.to_string()),
            (p, "") => Some(p.to_string()),
            (p, f) => Some(format!("{p}.{f}")),
        };
        ParseError {
            path: self.path.clone(),
            line: self.line,
            field,
            kind: e.kind,
        }
    }
}

/// A part as stored: its object (with `type`) and where it came from.
#[derive(Debug, Clone)]
pub struct StoredPart {
    pub part: Map<String, Value>,
    pub at: Origin,
}

/// A message as stored: its info (`role`, `time`, `tokens`, `modelID`, ...) and its parts
/// in creation order.
#[derive(Debug, Clone)]
pub struct StoredMessage {
    pub info: Map<String, Value>,
    pub parts: Vec<StoredPart>,
    pub at: Origin,
}

impl StoredMessage {
    /// `time.created`, epoch milliseconds.
    pub fn created(&self) -> Option<i64> {
        created_of(&self.info)
    }
}

/// `time.created` of a message or session object, epoch milliseconds.
pub fn created_of(info: &Map<String, Value>) -> Option<i64> {
    info.get("time")?.get("created")?.as_i64()
}

/// Emits the child session `id` on `b` (a `task` call's sub-agent); whether it was.
pub type Children<'c> = dyn FnMut(&mut Builder, &str) -> Result<bool, ParseError> + 'c;

/// One session's events on one agent thread.
pub struct Session<'b> {
    pub b: &'b mut Builder,
    agent: String,
    policy: Policy,
    /// The model of the assistant message being read.
    model: Option<String>,
    /// The step being read, until its `step-finish` (or the message's end).
    step: Option<Step>,
    /// The assistant message being read has step parts.
    stepped: bool,
    /// Parts of the assistant message outside any step (a message of an OpenCode without
    /// step parts).
    loose: Vec<StoredPart>,
    /// The message being read is a compaction's summary.
    summary: bool,
    /// The main agent's last recorded prompt: the size a compaction starts from.
    last_prompt: u64,
}

#[derive(Debug, Default)]
struct Step {
    parts: Vec<StoredPart>,
}

impl<'b> Session<'b> {
    pub fn new(b: &'b mut Builder, agent: &str, policy: Policy) -> Self {
        Self {
            b,
            agent: agent.to_string(),
            policy,
            model: None,
            step: None,
            stepped: false,
            loose: Vec::new(),
            summary: false,
            last_prompt: 0,
        }
    }

    fn main(&self) -> bool {
        self.agent == "main"
    }

    fn record(&mut self, at: &Origin, e: FieldError) -> Result<(), ParseError> {
        self.b.problems.record(self.policy, at.problem(e))
    }

    /// A whole stored message, in order; `copied` when it is a fork's copy of its original
    /// session's history (it builds the context and makes no events).
    pub fn message(
        &mut self,
        m: &StoredMessage,
        copied: bool,
        children: &mut Children<'_>,
    ) -> Result<(), ParseError> {
        self.b.record();
        if copied {
            return self.copied(m);
        }
        match m.info.get("role").and_then(Value::as_str) {
            Some("user") => {
                for p in &m.parts {
                    self.user_part(p)?;
                }
                Ok(())
            }
            Some("assistant") => {
                self.begin_assistant(&m.info, &m.at)?;
                for p in &m.parts {
                    self.b.record();
                    self.part(p.clone(), children)?;
                }
                self.end_assistant(Some(m), children)
            }
            Some(_) | None => {
                let e = match m.info.get("role") {
                    None => FieldError::new("role", ProblemKind::MissingField),
                    Some(v) => role_error(v),
                };
                self.record(&m.at, e)
            }
        }
    }

    /// A user part: its text joins the history (the main agent's); a `compaction` part asks
    /// for the summary the next assistant message holds. A part whose `type`, `text` or
    /// `ignored` has the wrong type is a problem and is passed over.
    pub fn user_part(&mut self, p: &StoredPart) -> Result<(), ParseError> {
        let kind = match opt_str(p.part.get("type"), "type") {
            Ok(kind) => kind,
            Err(e) => return self.record(&p.at, e),
        };
        match kind {
            Some("text") => {
                let ignored = typed(p.part.get("ignored"), "ignored", "boolean", Value::as_bool);
                let text = ignored.and_then(|i| Ok((i, opt_str(p.part.get("text"), "text")?)));
                let (ignored, text) = match text {
                    Ok((ignored, text)) => (ignored == Some(true), text),
                    Err(e) => return self.record(&p.at, e),
                };
                let text = text.unwrap_or("");
                if self.main() && !ignored && !text.is_empty() {
                    self.b.message("user", text, None);
                }
            }
            Some("compaction" | "file" | "agent" | "subtask") => {}
            Some(t) => self.unknown(t),
            None => {}
        }
        Ok(())
    }

    fn unknown(&mut self, t: &str) {
        *self
            .b
            .stats
            .unknown_types
            .entry(format!("part:{t}"))
            .or_default() += 1;
    }

    /// The start of an assistant message (found at `at`): its model, and whether it is a
    /// summary. A `modelID` or `summary` of the wrong type is a problem and counts as absent.
    pub fn begin_assistant(
        &mut self,
        info: &Map<String, Value>,
        at: &Origin,
    ) -> Result<(), ParseError> {
        let model = match opt_str(info.get("modelID"), "modelID") {
            Ok(model) => model.map(str::to_string),
            Err(e) => self.record(at, e).map(|()| None)?,
        };
        let summary = match typed(info.get("summary"), "summary", "boolean", Value::as_bool) {
            Ok(summary) => summary,
            Err(e) => self.record(at, e).map(|()| None)?,
        };
        self.model = model;
        self.summary = summary == Some(true);
        self.stepped = false;
        self.loose.clear();
        Ok(())
    }

    /// One part of an assistant message, in order.
    pub fn part(&mut self, p: StoredPart, children: &mut Children<'_>) -> Result<(), ParseError> {
        let kind = match opt_str(p.part.get("type"), "type") {
            Ok(kind) => kind,
            Err(e) => return self.record(&p.at, e),
        };
        match kind {
            Some("step-start") => {
                self.stepped = true;
                self.finish_step(None, children)?;
                self.step = Some(Step::default());
            }
            Some("step-finish") => {
                self.stepped = true;
                let finish = match recorded(&p.part) {
                    Ok(request) => request,
                    Err(e) => {
                        self.record(&p.at, e)?;
                        Request::default()
                    }
                };
                self.step.get_or_insert_with(Step::default);
                self.finish_step(Some(finish), children)?;
            }
            Some("text" | "tool" | "reasoning") => match &mut self.step {
                Some(step) => step.parts.push(p),
                None => self.loose.push(p),
            },
            Some("patch" | "snapshot" | "retry" | "agent" | "file" | "compaction" | "subtask") => {}
            Some(t) => self.unknown(t),
            None => self.record(&p.at, FieldError::new("type", ProblemKind::MissingField))?,
        }
        Ok(())
    }

    /// The end of an assistant message: a step left open is a request whose usage was never
    /// written (the stream broke or was aborted); a message without step parts is one
    /// request with the message's own tokens and cost.
    pub fn end_assistant(
        &mut self,
        m: Option<&StoredMessage>,
        children: &mut Children<'_>,
    ) -> Result<(), ParseError> {
        if self.step.is_some() {
            self.finish_step(None, children)?;
        }
        if !self.stepped {
            if let Some(m) = m {
                let request = match recorded(&m.info) {
                    Ok(request) => request,
                    Err(e) => {
                        self.record(&m.at, e)?;
                        Request::default()
                    }
                };
                let loose = std::mem::take(&mut self.loose);
                // A message that holds nothing and used nothing (aborted, or failed before
                // its request was sent) is no request.
                let used = request.usage.is_some_and(|u| u.prompt() + u.output > 0)
                    || request.cost_usd.is_some_and(|c| c > 0.0);
                if used || !loose.is_empty() {
                    self.emit(request, loose, children)?;
                }
            }
        }
        self.summary = false;
        Ok(())
    }

    /// Emits the open step, with `finish` (its `step-finish`) or without usage.
    fn finish_step(
        &mut self,
        finish: Option<Request>,
        children: &mut Children<'_>,
    ) -> Result<(), ParseError> {
        let Some(step) = self.step.take() else {
            return Ok(());
        };
        self.emit(finish.unwrap_or_default(), step.parts, children)
    }

    /// One model request and what it output, in order.
    fn emit(
        &mut self,
        mut request: Request,
        parts: Vec<StoredPart>,
        children: &mut Children<'_>,
    ) -> Result<(), ParseError> {
        request.model = self.model.clone();
        if let Some(u) = request.usage {
            if self.main() {
                self.last_prompt = u.prompt();
            }
        }
        self.b.model_request(&self.agent, request);
        let mut said = Vec::new();
        for p in parts {
            match p.part.get("type").and_then(Value::as_str) {
                Some("text") => match opt_str(p.part.get("text"), "text") {
                    Ok(t) => said.extend(t.map(str::to_string)),
                    Err(e) => self.record(&p.at, e)?,
                },
                Some("tool") => {
                    if let Err(e) = self.tool(&p.part, children) {
                        match e {
                            Stop::Field(e) => self.record(&p.at, e)?,
                            Stop::Parse(e) => return Err(e),
                        }
                    }
                }
                _ => {}
            }
        }
        let text = said.join("\n");
        if self.summary && self.main() {
            let after = (text.chars().count() as u64).div_ceil(4);
            self.b.compaction(self.last_prompt, after, &text);
        } else if self.main() && !text.is_empty() {
            self.b.message("assistant", &text, None);
        }
        Ok(())
    }

    /// A `tool` part (`callID`, `tool`, `state`): a call, a `task` call's child session,
    /// then its result once the state is final (`completed`, `error`).
    fn tool(&mut self, p: &Map<String, Value>, children: &mut Children<'_>) -> Result<(), Stop> {
        let text = |k: &str| -> Result<&str, FieldError> {
            match p.get(k) {
                Some(Value::String(s)) => Ok(s),
                None | Some(Value::Null) => Err(FieldError::new(k, ProblemKind::MissingField)),
                Some(v) => Err(wrong(k, "string", v)),
            }
        };
        let (id, name) = (text("callID")?, text("tool")?);
        let state = match p.get("state") {
            Some(Value::Object(s)) => s,
            None => return Err(FieldError::new("state", ProblemKind::MissingField).into()),
            Some(v) => return Err(wrong("state", "object", v).into()),
        };
        let args = match state.get("input") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(v) => return Err(wrong("state.input", "object", v).into()),
        };
        // The metadata the part's result reads, checked before the call is made.
        let metadata = typed(state.get("metadata"), "state.metadata", "object", object)?;
        let meta = |k| typed_at(metadata, "state.metadata", &[k], "string", Value::as_str);
        let child = meta("sessionId")?;
        let exit = typed_at(
            metadata,
            "state.metadata",
            &["exit"],
            "integer",
            Value::as_i64,
        )?;
        let tool = canonical_tool(TOOLS, name);
        let todos = (tool == "todo_write").then(|| todos(&args)).flatten();
        self.b.call(&self.agent, id, tool.clone(), args);
        if let Some(todos) = todos {
            self.b.todos(&self.agent, todos);
        }
        if let Some(child) = child {
            children(self.b, child)?;
        }
        let status = match state.get("status") {
            Some(Value::String(s)) => s.as_str(),
            None => return Err(FieldError::new("state.status", ProblemKind::MissingField).into()),
            Some(v) => return Err(wrong("state.status", "string", v).into()),
        };
        let (ran, key) = match status {
            "completed" => (true, "output"),
            "error" => (false, "error"),
            // Still pending or running when it was written: no result.
            _ => return Ok(()),
        };
        let output = opt_str(state.get(key), &format!("state.{key}"))?.unwrap_or_default();
        // OpenCode's shell tool completes a command that exits non-zero and records the
        // code as `metadata.exit`: that is a failed command.
        let success = ran && exit.is_none_or(|code| code == 0);
        let class = (!success).then(|| error_class(ERRORS, output)).flatten();
        self.b.result(&self.agent, id, success, output, class);
        Ok(())
    }

    /// A fork's copy of its original session's message: its text and tool outputs build the
    /// context; its requests and tokens are counted under `input.copied`.
    fn copied(&mut self, m: &StoredMessage) -> Result<(), ParseError> {
        let copied = self.b.stats.copied.get_or_insert_with(Copied::default);
        copied.entries += 1;
        let role = m.info.get("role").and_then(Value::as_str).unwrap_or("");
        if role == "assistant" {
            let steps = m
                .parts
                .iter()
                .filter(|p| p.part.get("type").and_then(Value::as_str) == Some("step-finish"))
                .map(|p| recorded(&p.part).ok().and_then(|r| r.usage))
                .collect::<Vec<_>>();
            let usages = if steps.is_empty() {
                vec![recorded(&m.info).ok().and_then(|r| r.usage)]
            } else {
                steps
            };
            copied.turns += usages.len() as u64;
            for u in usages.into_iter().flatten() {
                copied.tokens = copied.tokens.saturating_add(u.prompt() + u.output);
            }
        }
        if !self.main() {
            return Ok(());
        }
        for p in &m.parts {
            let part = &p.part;
            match (role, part.get("type").and_then(Value::as_str)) {
                ("user", _) => self.user_part(p)?,
                ("assistant", Some("text")) => {
                    let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                    if !text.is_empty() {
                        self.b.message("assistant", text, None);
                    }
                }
                ("assistant", Some("tool")) => {
                    let state = part.get("state");
                    let output = state
                        .and_then(|s| s.get("output").or_else(|| s.get("error")))
                        .and_then(Value::as_str);
                    let id = part.get("callID").and_then(Value::as_str);
                    if let Some(output) = output {
                        self.b.message("tool", output, id);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Why a tool part is not read: a field of the part, or a problem that stops the import
/// (under `--strict`, in a child session).
enum Stop {
    Field(FieldError),
    Parse(ParseError),
}

impl From<FieldError> for Stop {
    fn from(e: FieldError) -> Self {
        Self::Field(e)
    }
}

impl From<ParseError> for Stop {
    fn from(e: ParseError) -> Self {
        Self::Parse(e)
    }
}

fn role_error(v: &Value) -> FieldError {
    match v {
        Value::String(s) => FieldError::new(
            "role",
            ProblemKind::BadValue(format!("expected `user` or `assistant`, found `{s}`")),
        ),
        v => wrong("role", "string", v),
    }
}

/// What a `step-finish` part, or an assistant message without steps, records: `tokens`
/// (`{input, output, reasoning, cache: {read, write}}`) and `cost`.
///
/// OpenCode's `input` excludes both cache reads and writes (`Session.getUsage` takes them
/// out for providers that count them in), so the kinds add up to the prompt; `reasoning` is
/// billed as output and is not in `output`, so output is `output + reasoning`. `cost` is
/// OpenCode's own price of the step (0 where its model table has no price: subscription
/// providers, custom models), kept as recorded.
fn recorded(o: &Map<String, Value>) -> Result<Request, FieldError> {
    let usage = match o.get("tokens") {
        None | Some(Value::Null) => None,
        Some(Value::Object(t)) => Some(usage(t)?),
        Some(v) => return Err(wrong("tokens", "object", v)),
    };
    let cost_usd = match o.get("cost") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_f64().ok_or_else(|| wrong("cost", "number", v))?),
    };
    Ok(Request {
        usage,
        model: None,
        cost_usd,
    })
}

fn usage(t: &Map<String, Value>) -> Result<Usage, FieldError> {
    let n = |o: &Map<String, Value>, path: &str, k: &str| -> Result<u64, FieldError> {
        match o.get(k) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v
                .as_u64()
                .ok_or_else(|| wrong(format!("{path}{k}"), "integer", v)),
        }
    };
    let cache = match t.get("cache") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(c)) => c.clone(),
        Some(v) => return Err(wrong("tokens.cache", "object", v)),
    };
    Ok(Usage {
        input: n(t, "tokens.", "input")?,
        cache_read: n(&cache, "tokens.cache.", "read")?,
        cache_write: n(&cache, "tokens.cache.", "write")?,
        output: n(t, "tokens.", "output")?.saturating_add(n(t, "tokens.", "reasoning")?),
        source: TokenSource::Recorded,
        ..Usage::default()
    })
}

/// A `todowrite` call's `todos` (`{content, status, priority, id}`), ids by position from 1
/// where one has none.
fn todos(args: &Map<String, Value>) -> Option<Vec<Todo>> {
    let list = args.get("todos")?.as_array()?;
    let todo = |(i, t): (usize, &Value)| Todo {
        id: t["id"]
            .as_str()
            .map_or_else(|| (i + 1).to_string(), str::to_string),
        parent_id: None,
        status: t["status"].as_str().unwrap_or("pending").to_string(),
        content: t["content"].as_str().unwrap_or_default().to_string(),
        verify_command: None,
    };
    Some(list.iter().enumerate().map(todo).collect())
}
