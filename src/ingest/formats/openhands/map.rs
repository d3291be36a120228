//! What one OpenHands event means: an action as a tool call (name and arguments), an
//! observation as a result (success), a task list as todos, recorded token counts.

use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::json::token_count;
use crate::model::Todo;
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
pub fn call_of(
    kind: &str,
    args: &Map<String, Value>,
    tool_args: Option<&Map<String, Value>>,
) -> (String, Map<String, Value>) {
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
            let command = command.as_ref().and_then(Value::as_str).unwrap_or("");
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
            let tool = ["name", "tool_name"]
                .iter()
                .find_map(|k| args.get(*k).and_then(Value::as_str));
            if let Some(tool) = tool {
                name = tool.to_string();
            }
            let inner = ["arguments", "kwargs"]
                .iter()
                .find_map(|k| args.get(*k).and_then(Value::as_object));
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
    (name, canonical.into_iter().collect())
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

/// Whether an observation reports success: a command by its exit code (0), an error
/// observation or a refusal never, an editor result unless its text starts `ERROR:`,
/// anything else by its `success` flag where recorded.
pub fn succeeded(kind: &str, obs: &Map<String, Value>, content: &str) -> bool {
    let extras = obs.get("extras");
    let flag = obs.get("success").and_then(Value::as_bool);
    match kind {
        "error" | "user_rejected" => false,
        "run" => {
            let code = extras
                .and_then(|e| {
                    e.get("metadata")
                        .and_then(|m| m.get("exit_code"))
                        .or_else(|| e.get("exit_code"))
                })
                .and_then(Value::as_i64);
            code.map_or(flag.unwrap_or(true), |c| c == 0)
        }
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
                _ => (i + 1).to_string(),
            };
            let status = match task.get("status").and_then(Value::as_str).unwrap_or("todo") {
                "todo" => "pending",
                "done" => "completed",
                other => other,
            };
            Ok(Todo {
                id,
                parent_id: None,
                status: status.to_string(),
                content: task
                    .get("title")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                verify_command: None,
            })
        })
        .collect()
}

/// `prompt_tokens` and `completion_tokens` of a usage object (absent counts as 0; a
/// non-count is a problem). OpenHands' `prompt_tokens` already include cached input.
pub fn usage(v: &Value, field: &str) -> Result<(u64, u64), FieldError> {
    let count = |key: &str| match v.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(n) => match n.as_u64() {
            Some(n) => token_count(n, &format!("{field}.{key}")),
            None => Err(FieldError::new(
                format!("{field}.{key}"),
                ProblemKind::BadValue(format!("expected a non-negative integer, found {n}")),
            )),
        },
    };
    Ok((count("prompt_tokens")?, count("completion_tokens")?))
}

/// The outcome a `finish` (or `reject`) records: `task_completed` `partial`/`false` →
/// `partial`/`incomplete`, else `completed` (`rejected` for a reject); the summary is the
/// final thought, else the outputs' `content` (a reject's `reason`).
pub fn outcome<'a>(kind: &str, args: &'a Map<String, Value>) -> (&'static str, &'a str) {
    let completed = match args.get("task_completed") {
        Some(Value::Bool(b)) => Some(if *b { "true" } else { "false" }),
        other => other.and_then(Value::as_str),
    };
    let status = match (kind, completed) {
        ("reject", _) => "rejected",
        (_, Some("partial")) => "partial",
        (_, Some("false")) => "incomplete",
        _ => "completed",
    };
    let outputs = args.get("outputs");
    let summary = ["final_thought", "thought"]
        .iter()
        .find_map(|k| args.get(*k)?.as_str().filter(|s| !s.is_empty()))
        .or_else(|| {
            ["content", "reason"]
                .iter()
                .find_map(|k| outputs?.get(*k)?.as_str())
        })
        .unwrap_or_default();
    (status, summary)
}

pub fn text<'v>(obj: &'v Map<String, Value>, key: &str) -> Result<Option<&'v str>, FieldError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(wrong(key, "string", v)),
    }
}

pub fn wrong(field: &str, expected: &'static str, v: &Value) -> FieldError {
    let found = match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    FieldError::new(
        field,
        ProblemKind::WrongType {
            expected,
            found: found.into(),
        },
    )
}
