//! The mapping of a Codex rollout's lines onto the event model (see the parent module).

use super::calls::{self, Call};
use super::field::{missing, tokens, wrong};
use crate::ingest::error::FieldError;
use crate::ingest::formats::builder::{error_class, Builder, SHELL_ERRORS};
use crate::ingest::formats::values::{opt_str, str_at};
use crate::ingest::Copied;
use crate::model::{Request, Todo, TokenSource, Usage};
use serde_json::{Map, Value};

/// The line types of the envelope (`RolloutItem`).
pub(super) const LINE_TYPES: [&str; 5] = [
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

/// `event_msg` types read, or known and left aside (UI copies of response items,
/// lifecycle notices): not counted as unknown.
const EVENTS_KNOWN: [&str; 14] = [
    "token_count",
    "context_compacted",
    "user_message",
    "agent_message",
    "agent_reasoning",
    "agent_reasoning_raw_content",
    "turn_aborted",
    "entered_review_mode",
    "exited_review_mode",
    "undo_completed",
    "task_started",
    "task_complete",
    "error",
    "warning",
];

/// `response_item` types that are the model's output: they belong to a model request.
const OUTPUTS: [&str; 6] = [
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "message",
];

/// A copied parent history lasts this long after the parent's `session_meta`: Codex
/// writes the whole copy at once when it forks or spawns the session.
const COPY_SECONDS: i64 = 1;

/// What one model response holds until its request is emitted: Codex writes a request's
/// `token_count` before or after its output items depending on the version, so the
/// request, its calls and their outputs are gathered and emitted together.
#[derive(Default)]
struct Response {
    usage: Option<Usage>,
    /// An output answered one of its calls: the next model output is a new request.
    answered: bool,
    items: Vec<Item>,
}

enum Item {
    Call(Call),
    Result {
        call_id: String,
        failed: bool,
        text: String,
    },
    Text(&'static str, String),
    Todos(Vec<Todo>),
}

/// The five counts of a `TokenUsage`.
type Totals = [u64; 5];

#[derive(Default)]
pub(super) struct Rollout {
    pub(super) b: Builder,
    /// The file's own session id: the first `session_meta`'s.
    own: Option<String>,
    /// While a parent's history is being read: the time (epoch seconds) it ends.
    copy_until: Option<i64>,
    model: Option<String>,
    last_total: Option<Totals>,
    last_prompt: u64,
    /// A `compacted` line or `context_compacted` event came since the last request.
    compacted: bool,
    open: Option<Response>,
}

impl Rollout {
    pub(super) fn new(b: Builder) -> Self {
        Self {
            b,
            ..Self::default()
        }
    }

    /// One line: an envelope `{timestamp, type, payload}`, or (the older form) a payload.
    pub(super) fn line(&mut self, v: &Value) -> Result<(), FieldError> {
        let obj = v
            .as_object()
            .ok_or(FieldError::new("", crate::ingest::ProblemKind::NotAnObject))?;
        self.b.record();
        let Some(payload) = obj.get("payload") else {
            return self.bare(obj);
        };
        let kind = match obj.get("type") {
            Some(Value::String(s)) => s.as_str(),
            Some(v) => return Err(wrong("type", "string", v)),
            None => return Err(missing("type")),
        };
        let p = payload
            .as_object()
            .ok_or_else(|| wrong("payload", "object", payload))?;
        let time = opt_str(obj.get("timestamp"), "timestamp")?;
        let at = |e: FieldError| crate::ingest::json::nested("payload", e);
        if kind == "session_meta" {
            // Its id decides whether a copied history starts: checked before.
            opt_str(p.get("id"), "id").map_err(at)?;
        }
        self.track_copy(kind, p, time);
        match kind {
            "session_meta" => self.session_meta(p).map_err(at),
            "turn_context" => {
                let model = opt_str(p.get("model"), "model").map_err(at)?;
                self.close();
                if let Some(model) = model {
                    self.model = Some(model.to_string());
                }
                Ok(())
            }
            "response_item" => self.response_item(p).map_err(at),
            "event_msg" => self.event(p).map_err(at),
            "compacted" => {
                let message = match p.get("message") {
                    Some(Value::String(s)) => s.as_str(),
                    None | Some(Value::Null) => "",
                    Some(v) => return Err(at(wrong("message", "string", v))),
                };
                self.compaction(message, true);
                Ok(())
            }
            other => {
                self.count_unknown(other.to_string());
                Ok(())
            }
        }
    }

    /// A line of the envelope-less form (Codex before 0.3x): the session meta first
    /// (`id`, `timestamp`, `instructions`), then response items, and `record_type` state
    /// lines.
    fn bare(&mut self, obj: &Map<String, Value>) -> Result<(), FieldError> {
        if obj.contains_key("record_type") {
            return Ok(());
        }
        match obj.get("type") {
            Some(Value::String(_)) => self.response_item(obj),
            Some(v) => Err(wrong("type", "string", v)),
            None if self.own.is_none() && obj.get("id").is_some_and(Value::is_string) => {
                self.session_meta(obj)
            }
            None => Err(missing("type")),
        }
    }

    fn session_meta(&mut self, p: &Map<String, Value>) -> Result<(), FieldError> {
        let id = match p.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(v) => return Err(wrong("id", "string", v)),
            None => return Err(missing("id")),
        };
        if self.own.is_some() {
            // A parent's header, copied at the head of a fork or sub-agent file.
            return Ok(());
        }
        let cwd = opt_str(p.get("cwd"), "cwd")?.map(str::to_string);
        let model = opt_str(p.get("model"), "model")?;
        let parent = parent_of(p)?;
        if let Some(model) = model {
            self.model = Some(model.to_string());
        }
        if let Some(parent) = parent {
            self.b.stats.copied = Some(Copied {
                from: parent,
                ..Copied::default()
            });
        }
        self.own = Some(id);
        self.b.session_start(cwd);
        Ok(())
    }

    /// A `session_meta` with another session's id starts that session's copied history:
    /// the lines written with it (up to [`COPY_SECONDS`] later) are the copy.
    fn track_copy(&mut self, kind: &str, p: &Map<String, Value>, time: Option<&str>) {
        let other = kind == "session_meta"
            && self.own.is_some()
            && p.get("id").and_then(Value::as_str) != self.own.as_deref();
        if other && self.copy_until.is_none() {
            self.close();
            let stats = &mut self.b.stats;
            let parent = p.get("id").and_then(Value::as_str).unwrap_or_default();
            stats.copied.get_or_insert_with(|| Copied {
                from: parent.to_string(),
                ..Copied::default()
            });
            self.copy_until = Some(time.and_then(epoch_seconds).unwrap_or(i64::MIN) + COPY_SECONDS);
        } else if let Some(until) = self.copy_until {
            let within = time.and_then(epoch_seconds).is_some_and(|t| t <= until);
            if !within {
                self.close();
                self.copy_until = None;
            }
        }
        if self.copy_until.is_some() {
            if let Some(copied) = &mut self.b.stats.copied {
                copied.entries += 1;
            }
        }
    }

    fn copying(&self) -> bool {
        self.copy_until.is_some()
    }

    fn response_item(&mut self, p: &Map<String, Value>) -> Result<(), FieldError> {
        let kind = match p.get("type") {
            Some(Value::String(s)) => s.as_str(),
            Some(v) => return Err(wrong("type", "string", v)),
            None => return Err(missing("type")),
        };
        let role = opt_str(p.get("role"), "role")?;
        if kind == "message" && role != Some("assistant") {
            // A prompt, the user's instructions or the environment context.
            let text = content_text(p.get("content"))?;
            self.close();
            let role = if role == Some("system") {
                "system"
            } else {
                "user"
            };
            self.b.message(role, &text, None);
            return Ok(());
        }
        if OUTPUTS.contains(&kind) {
            let item = match kind {
                "function_call" => Some(self.call(calls::function_call(p, false)?)),
                "custom_tool_call" => Some(self.call(calls::function_call(p, true)?)),
                "local_shell_call" => Some(self.call(calls::local_shell_call(p)?)),
                "message" => Some(vec![Item::Text(
                    "assistant",
                    content_text(p.get("content"))?,
                )]),
                _ => None,
            };
            let open = self.response();
            for item in item.into_iter().flatten() {
                open.items.push(item);
            }
            return Ok(());
        }
        match kind {
            "function_call_output" | "custom_tool_call_output" => {
                let call_id = match p.get("call_id") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => return Err(wrong("call_id", "string", v)),
                    None => return Err(missing("call_id")),
                };
                let out = calls::output(p)?;
                let result = Item::Result {
                    call_id,
                    failed: out.failed,
                    text: out.text,
                };
                match &mut self.open {
                    Some(open) => {
                        open.answered = true;
                        open.items.push(result);
                    }
                    None => self.emit_item(result),
                }
            }
            // Harness records (`ghost_snapshot`) and the encrypted history of a remote
            // compaction (`compaction`), which the `compacted` line accompanies.
            "ghost_snapshot" | "compaction" | "compaction_summary" => {}
            other => self.count_unknown(format!("response_item.{other}")),
        }
        Ok(())
    }

    /// A call's items: the call, and a todo list for `update_plan`.
    fn call(&mut self, call: Call) -> Vec<Item> {
        let todos = (call.tool == "todo_write")
            .then(|| calls::plan(&call.args))
            .flatten();
        let text = format!("{} {}", call.tool, Value::Object(call.args.clone()));
        let mut items = vec![Item::Text("assistant", text), Item::Call(call)];
        items.extend(todos.map(Item::Todos));
        items
    }

    /// The response the next model output belongs to: the open one, unless an output
    /// already answered its calls (the model was asked again).
    fn response(&mut self) -> &mut Response {
        if self.open.as_ref().is_some_and(|r| r.answered) {
            self.close();
        }
        self.open.get_or_insert_with(Response::default)
    }

    fn event(&mut self, p: &Map<String, Value>) -> Result<(), FieldError> {
        let kind = match p.get("type") {
            Some(Value::String(s)) => s.as_str(),
            Some(v) => return Err(wrong("type", "string", v)),
            None => return Err(missing("type")),
        };
        match kind {
            "token_count" => self.token_count(p)?,
            "context_compacted" => self.compaction("", false),
            "user_message" => self.close(),
            k if EVENTS_KNOWN.contains(&k) => {}
            other => self.count_unknown(format!("event_msg.{other}")),
        }
        Ok(())
    }

    /// A `token_count`: a request when its `total_token_usage` differs from the previous
    /// row's (Codex repeats the row unchanged), with `last_token_usage` as its usage
    /// (else the difference of the totals).
    fn token_count(&mut self, p: &Map<String, Value>) -> Result<(), FieldError> {
        let Some(info) = p.get("info").filter(|i| !i.is_null()) else {
            return Ok(());
        };
        let info = info
            .as_object()
            .ok_or_else(|| wrong("info", "object", info))?;
        let total = totals(info, "total_token_usage")?;
        let last = totals(info, "last_token_usage")?;
        let Some(total) = total else {
            return Ok(());
        };
        if self.last_total == Some(total) {
            return Ok(());
        }
        let before = self.last_total.unwrap_or_default();
        self.last_total = Some(total);
        let delta = last.unwrap_or_else(|| {
            let mut d = [0; 5];
            for i in 0..5 {
                d[i] = total[i].saturating_sub(before[i]);
            }
            d
        });
        let usage = usage_of(delta);
        if self.open.as_ref().is_some_and(|r| r.usage.is_none()) {
            if let Some(open) = &mut self.open {
                open.usage = Some(usage);
            }
        } else {
            self.close();
            self.open = Some(Response {
                usage: Some(usage),
                ..Response::default()
            });
        }
        Ok(())
    }

    /// A compaction: a `compacted` line, or a `context_compacted` event unless a
    /// `compacted` line already marked this one (Codex writes both).
    fn compaction(&mut self, summary: &str, line: bool) {
        self.close();
        if self.compacted {
            if line {
                self.b.restart_history(summary);
            }
            return;
        }
        self.compacted = true;
        if self.copying() {
            self.b.restart_history(summary);
            return;
        }
        let after = (summary.chars().count() as u64).div_ceil(4);
        self.b.compaction(self.last_prompt, after, summary);
    }

    /// Emits the open response: its request, then its calls, outputs and texts in order.
    pub(super) fn close(&mut self) {
        let Some(response) = self.open.take() else {
            return;
        };
        self.compacted = false;
        if self.copying() {
            if let Some(copied) = &mut self.b.stats.copied {
                copied.turns += 1;
                copied.tokens = copied
                    .tokens
                    .saturating_add(response.usage.map_or(0, |u| u.total()));
            }
        } else {
            if let Some(u) = response.usage {
                self.last_prompt = u.prompt();
            }
            let request = Request {
                usage: response.usage,
                model: self.model.clone(),
                cost_usd: None,
            };
            self.b.model_request("main", request);
        }
        for item in response.items {
            self.emit_item(item);
        }
    }

    fn emit_item(&mut self, item: Item) {
        let live = !self.copying();
        match item {
            Item::Call(call) if live => self
                .b
                .call_in("main", &call.id, call.tool, call.args, call.cwd),
            Item::Result {
                call_id,
                failed,
                text,
            } => {
                if live {
                    let class = failed.then(|| error_class(SHELL_ERRORS, &text)).flatten();
                    self.b.result("main", &call_id, !failed, &text, class);
                } else {
                    self.b.message("tool", &text, Some(&call_id));
                }
            }
            Item::Text(role, text) if !text.is_empty() => self.b.message(role, &text, None),
            Item::Todos(todos) if live => self.b.todos("main", todos),
            _ => {}
        }
    }

    fn count_unknown(&mut self, kind: String) {
        *self.b.stats.unknown_types.entry(kind).or_default() += 1;
    }
}

/// The session a fork or sub-agent file was made from: `forked_from_id`, or a sub-agent
/// source's `parent_thread_id` (`source.subagent.thread_spawn`).
/// `source` and `source.subagent` may be names (`"cli"`, `"review"`): only a
/// `thread_spawn` has a parent.
fn parent_of(p: &Map<String, Value>) -> Result<Option<String>, FieldError> {
    if let Some(id) = opt_str(p.get("forked_from_id"), "forked_from_id")? {
        return Ok(Some(id.to_string()));
    }
    let spawn = p
        .get("source")
        .and_then(|s| s.get("subagent"))
        .and_then(|s| s.get("thread_spawn"));
    let at = "source.subagent.thread_spawn";
    Ok(str_at(spawn, at, &["parent_thread_id"])?.map(str::to_string))
}

/// A `TokenUsage` (`input_tokens`, `cached_input_tokens`, `output_tokens`,
/// `reasoning_output_tokens`, `total_tokens`).
fn totals(info: &Map<String, Value>, key: &str) -> Result<Option<Totals>, FieldError> {
    let Some(u) = info.get(key).filter(|u| !u.is_null()) else {
        return Ok(None);
    };
    let u = u.as_object().ok_or_else(|| wrong(key, "object", u))?;
    let mut out = [0; 5];
    let names = [
        "input_tokens",
        "cached_input_tokens",
        "output_tokens",
        "reasoning_output_tokens",
        "total_tokens",
    ];
    for (i, name) in names.iter().enumerate() {
        let field = format!("info.{key}.{name}");
        out[i] = u.get(*name).map_or(Ok(0), |v| tokens(v, &field))?;
    }
    Ok(Some(out))
}

/// Usage by kind: `input_tokens` includes `cached_input_tokens` (fresh = input - cached,
/// cache read = cached), and `output_tokens` includes `reasoning_output_tokens`.
fn usage_of(t: Totals) -> Usage {
    let cached = t[1].min(t[0]);
    Usage {
        input: t[0] - cached,
        cache_write: 0,
        cache_write_1h: 0,
        cache_read: cached,
        output: t[2],
        source: TokenSource::Recorded,
    }
}

/// The text of a message's `content` items (`input_text`, `output_text`; images as
/// `[image]`); an item that is no object, or a `type` or `text` of another type, is a
/// problem.
fn content_text(content: Option<&Value>) -> Result<String, FieldError> {
    let items = match content {
        None | Some(Value::Null) => return Ok(String::new()),
        Some(Value::String(s)) => return Ok(s.clone()),
        Some(Value::Array(items)) => items,
        Some(v) => return Err(wrong("content", "string or array", v)),
    };
    let mut texts = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("content[{i}]");
        if !item.is_object() {
            return Err(wrong(at, "object", item));
        }
        match opt_str(item.get("type"), &format!("{at}.type"))? {
            Some("input_image") => texts.push("[image]"),
            _ => texts.extend(opt_str(item.get("text"), &format!("{at}.text"))?),
        }
    }
    Ok(texts.join("\n"))
}

/// Seconds since the epoch of an RFC 3339 time (`2025-11-17T21:30:28.664Z`), read to the
/// second; the offset is taken as UTC, as Codex writes it.
fn epoch_seconds(t: &str) -> Option<i64> {
    let n = |r: std::ops::Range<usize>| t.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}
