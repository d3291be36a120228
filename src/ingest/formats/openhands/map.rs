//! What one OpenHands event means: an action as a tool call (name and arguments), an
//! observation as a result (success), a task list as todos, recorded token counts.

use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::formats::values::{object, opt_str, str_at, typed, typed_at, wrong};
use crate::ingest::json::token_count;
use crate::model::{Todo, TokenSource, Usage};
use serde_json::{Map, Value};

/// Keys of an action's `args` that are presentation or bookkeeping, not arguments of the
/// call (`thought` is the model's text: it joins the history as an assistant message).
const DROPPED: [&str; 8] = [
    "thought",
    "impl_source",
    "translated_ipython_code",
    "security_risk",
    "confirmation_state",
    "is_confirmed",
    "hidden",
    "include_extra",
];

/// OpenHands argument names → canonical ones (docs/FORMAT.md).
const RENAMED: [(&str, &str); 3] = [
    ("old_str", "old_string"),
    ("new_str", "new_string"),
    ("file_text", "content"),
];

/// The name an action is looked up by in the tool table, and its arguments.
///
/// `args` are completed by the tool call's own JSON arguments where they lack a key (older
/// histories record an `edit` without its `command`, `old_str`, `new_str`). The editor's
/// `command` (`view`, `create`, `str_replace`, `insert`, `undo_edit`) is part of the name
/// (`edit:str_replace`), not an argument: a `command` argument means a shell command.
///
/// A `command`, a tool `name` or its `arguments` of the wrong type is a problem (`args.command`).
pub fn call_of(
    kind: &str,
    args: &Map<String, Value>,
    tool_args: Option<&Map<String, Value>>,
) -> Result<(String, Map<String, Value>), FieldError> {
    let mut args = args.clone();
    for (key, value) in tool_args.into_iter().flatten() {
        if args.get(key).is_none_or(Value::is_null) {
            args.insert(key.clone(), value.clone());
        }
    }
    let mut name = kind.to_string();
    match kind {
        "edit" | "read" | "write" => {
            let command = args.remove("command");
            let command = opt_str(command.as_ref(), "args.command")?.unwrap_or("");
            if kind == "edit" && !command.is_empty() {
                // The line-range fields belong to the LLM-based editor, which has no command.
                for key in ["content", "start", "end"] {
                    args.remove(key);
                }
                name = format!("edit:{command}");
            }
            let default_start = if kind == "read" { 0 } else { 1 };
            if args.get("start").and_then(Value::as_i64) == Some(default_start) {
                args.remove("start");
            }
            if args.get("end").and_then(Value::as_i64) == Some(-1) {
                args.remove("end");
            }
        }
        "mcp" | "call_tool_mcp" => {
            // The first of each pair that is there (not null) is read.
            let first = |keys: [&str; 2]| {
                let key = keys
                    .into_iter()
                    .find(|k| args.get(*k).is_some_and(|v| !v.is_null()));
                key.map(|k| (format!("args.{k}"), &args[k]))
            };
            if let Some((field, v)) = first(["name", "tool_name"]) {
                name = opt_str(Some(v), &field)?.unwrap_or_default().to_string();
            }
            let inner = match first(["arguments", "kwargs"]) {
                Some((field, v)) => typed(Some(v), &field, "object", Value::as_object)?,
                None => None,
            };
            args = inner.cloned().unwrap_or_default();
        }
        _ => {}
    }
    let canonical = args
        .into_iter()
        .filter(|(k, v)| {
            let dropped = DROPPED.contains(&k.as_str()) && kind != "think";
            !v.is_null() && !dropped
        })
        .map(|(k, v)| {
            let key = RENAMED
                .iter()
                .find(|(from, _)| *from == k)
                .map_or(k, |(_, to)| (*to).to_string());
            (key, v)
        })
        .collect::<std::collections::BTreeMap<_, _>>();
    Ok((name, canonical.into_iter().collect()))
}

/// The tool call's JSON arguments, from the model response recorded with the action.
pub fn tool_call_args(meta: &Map<String, Value>) -> Option<Map<String, Value>> {
    let id = meta.get("tool_call_id")?.as_str()?;
    let choices = meta.get("model_response")?.get("choices")?.as_array()?;
    let call = choices
        .iter()
        .filter_map(|c| c.get("message")?.get("tool_calls")?.as_array())
        .flatten()
        .find(|c| c.get("id").and_then(Value::as_str) == Some(id))?;
    let text = call.get("function")?.get("arguments")?.as_str()?;
    serde_json::from_str(text).ok()
}

/// What an observation records of its outcome, each field of its type (a field of another
/// type is a problem, never read as absent).
pub struct Observed<'o> {
    /// The id of the action it answers.
    pub cause: Option<i64>,
    /// `success`, where recorded.
    pub success: Option<bool>,
    /// A command's exit code: `extras.metadata.exit_code`, else (older) `extras.exit_code`.
    pub exit_code: Option<i64>,
    /// `extras.agent_state`.
    pub agent_state: Option<&'o str>,
}

impl<'o> Observed<'o> {
    pub fn of(obs: &'o Map<String, Value>) -> Result<Self, FieldError> {
        let extras = typed(obs.get("extras"), "extras", "object", object)?;
        let metadata = typed_at(extras, "extras", &["metadata"], "object", object)?;
        let code = |v, at, key| typed_at(v, at, &[key], "integer", Value::as_i64);
        let exit_code = match code(metadata, "extras.metadata", "exit_code")? {
            Some(c) => Some(c),
            None => code(extras, "extras", "exit_code")?,
        };
        // Read only for the session's directory, before any event: checked here so a bad
        // one is still a problem of its event.
        str_at(metadata, "extras.metadata", &["working_dir"])?;
        Ok(Self {
            cause: typed(obs.get("cause"), "cause", "integer", Value::as_i64)?,
            success: typed(obs.get("success"), "success", "boolean", Value::as_bool)?,
            exit_code,
            agent_state: str_at(extras, "extras", &["agent_state"])?,
        })
    }
}

/// Whether an observation reports success: a command by its exit code (0), an error
/// observation or a refusal never, an editor result unless its text starts `ERROR:`,
/// anything else by its `success` flag where recorded.
pub fn succeeded(kind: &str, obs: &Observed<'_>, content: &str) -> bool {
    let flag = obs.success;
    match kind {
        "error" | "user_rejected" => false,
        "run" => obs.exit_code.map_or(flag.unwrap_or(true), |c| c == 0),
        "edit" | "read" | "write" => {
            !content.trim_start().starts_with("ERROR:") && flag.unwrap_or(true)
        }
        _ => flag.unwrap_or(true),
    }
}

/// A `task_tracking` task list as todos: `todo` → `pending`, `done` → `completed`, other
/// statuses kept; the title is the content, the 1-based position the id when none is given.
pub fn todos(items: &[Value]) -> Result<Vec<Todo>, FieldError> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let field = format!("task_list[{i}]");
            let task = item
                .as_object()
                .ok_or_else(|| FieldError::new(&field, ProblemKind::NotAnObject))?;
            let id = match task.get("id") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                None | Some(Value::Null) => (i + 1).to_string(),
                Some(other) => return Err(wrong(format!("{field}.id"), "string or number", other)),
            };
            let at = |key: &str| format!("{field}.{key}");
            let status = match opt_str(task.get("status"), &at("status"))?.unwrap_or("todo") {
                "todo" => "pending",
                "done" => "completed",
                other => other,
            };
            Ok(Todo {
                id,
                parent_id: None,
                status: status.to_string(),
                content: opt_str(task.get("title"), &at("title"))?
                    .unwrap_or_default()
                    .to_string(),
                verify_command: None,
            })
        })
        .collect()
}

/// A usage reading as OpenHands and LiteLLM write it: `prompt_tokens` (every prompt token,
/// cached or not), the parts of it read from and written to the provider's cache, and
/// `completion_tokens`. One request's usage, or a cumulative counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub prompt: u64,
    pub completion: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Tokens {
    /// The tokens since `earlier`, a cumulative reading this one continues (a cache count
    /// that went down counts 0).
    pub fn since(&self, earlier: &Tokens) -> Tokens {
        Tokens {
            prompt: self.prompt.saturating_sub(earlier.prompt),
            completion: self.completion.saturating_sub(earlier.completion),
            cache_read: self.cache_read.saturating_sub(earlier.cache_read),
            cache_write: self.cache_write.saturating_sub(earlier.cache_write),
        }
    }

    /// The request's usage by kind. OpenHands' `prompt_tokens` is LiteLLM's, which follows
    /// OpenAI: it already includes the cached input. Cache reads (`cached_tokens`, Anthropic's
    /// `cache_read_input_tokens`) are always in it; LiteLLM adds Anthropic's cache writes
    /// (`cache_creation_input_tokens`) to it too (a request that wrote 3,482 tokens to the
    /// cache reports `prompt_tokens` 3,486), so fresh input is
    /// `prompt - cache_read - cache_write`, and the kinds add up to `prompt_tokens`. Some
    /// LiteLLM releases left the writes out of the prompt: a prompt too small to hold its
    /// cache reads and writes is taken to be fresh input and reads only, the writes counted
    /// beside it; reads above the prompt are capped at it.
    pub fn usage(&self) -> Usage {
        let cache_read = self.cache_read.min(self.prompt);
        let rest = self.prompt - cache_read;
        let input = rest.checked_sub(self.cache_write).unwrap_or(rest);
        Usage {
            input,
            cache_write: self.cache_write,
            cache_write_1h: 0,
            cache_read,
            output: self.completion,
            source: TokenSource::Recorded,
        }
    }
}

/// The token counts of a usage object: OpenHands' `TokenUsage` (`prompt_tokens`,
/// `completion_tokens`, `cache_read_tokens`, `cache_write_tokens`) or a model response's
/// `usage` (cache reads in `prompt_tokens_details.cached_tokens`, as OpenHands reads them,
/// else `cache_read_input_tokens`; writes in `cache_creation_input_tokens`). Absent counts
/// as 0; a non-count is a problem.
pub fn usage(v: &Value, field: &str) -> Result<Tokens, FieldError> {
    let count = |obj: &Value, at: &str, key: &str| match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(n) => match n.as_u64() {
            Some(n) => token_count(n, &format!("{field}.{at}{key}")).map(Some),
            None => Err(FieldError::new(
                format!("{field}.{at}{key}"),
                ProblemKind::BadValue(format!("expected a non-negative integer, found {n}")),
            )),
        },
    };
    let details = match v.get("prompt_tokens_details") {
        None | Some(Value::Null) => None,
        Some(d) if d.is_object() => count(d, "prompt_tokens_details.", "cached_tokens")?,
        Some(d) => return Err(wrong(format!("{field}.prompt_tokens_details"), "object", d)),
    };
    let cache_read = match count(v, "", "cache_read_tokens")? {
        Some(n) => Some(n),
        None => details.or(count(v, "", "cache_read_input_tokens")?),
    };
    let cache_write = match count(v, "", "cache_write_tokens")? {
        Some(n) => Some(n),
        None => count(v, "", "cache_creation_input_tokens")?,
    };
    Ok(Tokens {
        prompt: count(v, "", "prompt_tokens")?.unwrap_or(0),
        completion: count(v, "", "completion_tokens")?.unwrap_or(0),
        cache_read: cache_read.unwrap_or(0),
        cache_write: cache_write.unwrap_or(0),
    })
}

/// A model name as OpenHands records it (at `field`); its `Metrics` default `default` names
/// none.
pub fn model(v: Option<&Value>, field: &str) -> Result<Option<String>, FieldError> {
    Ok(opt_str(v, field)?
        .map(str::trim)
        .filter(|m| !m.is_empty() && *m != "default")
        .map(str::to_string))
}

/// The outcome a `finish` (or `reject`) records: `task_completed` `partial`/`false` →
/// `partial`/`incomplete`, else `completed` (`rejected` for a reject); the summary is the
/// final thought, else the outputs' `content` (a reject's `reason`). Each is read where it
/// is there (not null); one of the wrong type is a problem.
pub fn outcome<'a>(
    kind: &str,
    args: &'a Map<String, Value>,
) -> Result<(&'static str, &'a str), FieldError> {
    let completed = match args.get("task_completed") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(if *b { "true" } else { "false" }),
        Some(Value::String(s)) => Some(s.as_str()),
        Some(other) => return Err(wrong("args.task_completed", "boolean or string", other)),
    };
    let status = match (kind, completed) {
        ("reject", _) => "rejected",
        (_, Some("partial")) => "partial",
        (_, Some("false")) => "incomplete",
        _ => "completed",
    };
    let outputs = typed(args.get("outputs"), "args.outputs", "object", object)?;
    let mut summary = None;
    for k in ["final_thought", "thought"] {
        let found = opt_str(args.get(k), &format!("args.{k}"))?;
        summary = summary.or(found.filter(|s| !s.is_empty()));
    }
    for k in ["content", "reason"] {
        summary = summary.or(str_at(outputs, "args.outputs", &[k])?);
    }
    Ok((status, summary.unwrap_or_default()))
}

pub fn text<'v>(obj: &'v Map<String, Value>, key: &str) -> Result<Option<&'v str>, FieldError> {
    opt_str(obj.get(key), key)
}
