//! One Gemini CLI message to events (issue #30, item 3): a `gemini` message is one model
//! request with its usage and model, its `toolCalls[]` calls and results; `user` text is
//! history; `info`, `error` and `warning` are the UI's notices.

use super::record::wrong;
use super::{ERRORS, TOOLS};
use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::formats::builder::{canonical_tool, error_class, Builder};
use crate::ingest::formats::values::{opt_str, str_at};
use crate::model::{Request, TokenSource, Usage};
use serde_json::{Map, Value};

/// Message types Gemini CLI writes that carry no model traffic.
const NOTICES: [&str; 3] = ["info", "error", "warning"];

/// Maps `m` (a message object) onto `b`, on agent thread `agent`.
pub fn message(b: &mut Builder, agent: &str, m: &Map<String, Value>) -> Result<(), FieldError> {
    match opt_str(m.get("type"), "type")? {
        Some("user") => {
            let text = parts_text(m.get("content"), "content")?;
            if agent == "main" {
                b.message("user", &text, None);
            }
        }
        Some("gemini") => model_message(b, agent, m)?,
        Some(t) if NOTICES.contains(&t) => {}
        Some(t) => *b.stats.unknown_types.entry(t.to_string()).or_default() += 1,
        None => return Err(FieldError::new("type", ProblemKind::MissingField)),
    }
    Ok(())
}

fn model_message(b: &mut Builder, agent: &str, m: &Map<String, Value>) -> Result<(), FieldError> {
    let usage = match m.get("tokens") {
        None | Some(Value::Null) => None,
        Some(t) => Some(usage(t)?),
    };
    let model = opt_str(m.get("model"), "model")?.map(str::to_string);
    let text = parts_text(m.get("content"), "content")?;
    // The calls' endings, checked before any of the message is applied.
    let mut endings = Vec::new();
    if let Some(Value::Array(calls)) = m.get("toolCalls") {
        for (i, call) in calls.iter().enumerate() {
            let ending = call.as_object().map(ending).transpose();
            endings.push(ending.map_err(|e| at_call(i, e))?);
        }
    }
    b.model_request(
        agent,
        Request {
            usage,
            model,
            cost_usd: None,
        },
    );
    if agent == "main" && !text.is_empty() {
        b.message("assistant", &text, None);
    }
    let calls = match m.get("toolCalls") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(calls)) => calls,
        Some(other) => return Err(wrong("toolCalls", "array", other)),
    };
    for (i, call) in calls.iter().enumerate() {
        let call = call
            .as_object()
            .ok_or_else(|| FieldError::new(format!("toolCalls[{i}]"), ProblemKind::NotAnObject))?;
        let ending = match endings.get_mut(i).and_then(Option::take) {
            Some(ending) => ending,
            None => self::ending(call).map_err(|e| at_call(i, e))?,
        };
        tool_call(b, agent, call, ending).map_err(|e| at_call(i, e))?;
    }
    Ok(())
}

fn at_call(i: usize, e: FieldError) -> FieldError {
    FieldError {
        field: format!("toolCalls[{i}].{}", e.field),
        ..e
    }
}

/// What a call's result is read from: the text the model saw and the `status` (absent:
/// final).
struct Ending<'m> {
    output: String,
    status: Option<&'m str>,
}

fn ending(c: &Map<String, Value>) -> Result<Ending<'_>, FieldError> {
    let output = result_text(c)?;
    let status = opt_str(c.get("status"), "status")?;
    Ok(Ending { output, status })
}

/// `tokens` `{input, output, cached, thoughts, tool, total}` (`TokensSummary`): `input`
/// (`promptTokenCount`) includes `cached`; `thoughts` are billed as output and are not in
/// `output`; `tool` (`toolUsePromptTokenCount`) counts tool execution results sent back as
/// input, apart from `input`.
fn usage(t: &Value) -> Result<Usage, FieldError> {
    let Value::Object(t) = t else {
        return Err(wrong("tokens", "object", t));
    };
    let n = |k: &str| -> Result<u64, FieldError> {
        match t.get(k) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v
                .as_u64()
                .ok_or_else(|| wrong(format!("tokens.{k}"), "integer", v)),
        }
    };
    let (input, cached) = (n("input")?, n("cached")?);
    let cached = cached.min(input);
    Ok(Usage {
        input: input - cached + n("tool")?,
        cache_read: cached,
        output: n("output")? + n("thoughts")?,
        source: TokenSource::Recorded,
        ..Usage::default()
    })
}

/// A `ToolCallRecord` (`id`, `name`, `args`, `status`, `result`, `resultDisplay`): a call,
/// then its result once the status is final (`success`, `error`, `cancelled`; a call still
/// `scheduled` or `executing` when the file was written has none).
fn tool_call(
    b: &mut Builder,
    agent: &str,
    c: &Map<String, Value>,
    ending: Ending<'_>,
) -> Result<(), FieldError> {
    let text = |k: &str| -> Result<&str, FieldError> {
        match c.get(k) {
            Some(Value::String(s)) => Ok(s),
            None | Some(Value::Null) => Err(FieldError::new(k, ProblemKind::MissingField)),
            Some(v) => Err(wrong(k, "string", v)),
        }
    };
    let (id, name) = (text("id")?, text("name")?);
    let args = match c.get("args") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(v) => return Err(wrong("args", "object", v)),
    };
    let tool = canonical_tool(TOOLS, name);
    let todos = (tool == "todo_write").then(|| todos(&args)).flatten();
    b.call(agent, id, tool.clone(), args);
    if let Some(todos) = todos {
        b.todos(agent, todos);
    }
    let output = ending.output;
    let ran = match ending.status {
        Some("success") | None => true,
        Some("error" | "cancelled") => false,
        Some(_) => return Ok(()),
    };
    // Gemini's shell tool reports a command that exits non-zero as a success whose output
    // says `Exit Code: N`: that is a failed command.
    let exited = tool != "shell" || exit_code(&output).is_none_or(|code| code == 0);
    let success = ran && exited;
    let class = (!success).then(|| error_class(ERRORS, &output)).flatten();
    b.result(agent, id, success, &output, class);
    Ok(())
}

/// The text the model saw: the `functionResponse` parts of `result` (their `output`, or
/// `error`, else the response as JSON), else its text parts, else a textual `resultDisplay`.
/// (`resultDisplay` may also be an object, a diff or a todo list: then it is not read.)
fn result_text(c: &Map<String, Value>) -> Result<String, FieldError> {
    let from_result = parts_text(c.get("result"), "result")?;
    if !from_result.is_empty() {
        return Ok(from_result);
    }
    Ok(c.get("resultDisplay")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string())
}

/// The text of a `PartListUnion`: a string, a part, or a list of either. Text parts as they
/// are, a `functionResponse` by its response, inline data as `[<mime type>]`. `v` is at
/// `field`: a part of another type, or a `text` or `inlineData.mimeType` of another type than
/// a string, is a problem there.
pub fn parts_text(v: Option<&Value>, field: &str) -> Result<String, FieldError> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut texts = Vec::new();
            for (i, p) in parts.iter().enumerate() {
                let text = parts_text(Some(p), &format!("{field}[{i}]"))?;
                if !text.is_empty() {
                    texts.push(text);
                }
            }
            Ok(texts.join("\n"))
        }
        Some(Value::Object(p)) => part_text(p, field),
        Some(v) => Err(wrong(field, "string, part or array", v)),
    }
}

fn part_text(p: &Map<String, Value>, field: &str) -> Result<String, FieldError> {
    if let Some(t) = opt_str(p.get("text"), &format!("{field}.text"))? {
        return Ok(t.to_string());
    }
    // The response is the tool's own: read as it comes.
    if let Some(r) = p.get("functionResponse").and_then(|f| f.get("response")) {
        return Ok(["output", "error", "content"]
            .iter()
            .find_map(|k| r.get(*k).and_then(Value::as_str))
            .map_or_else(|| r.to_string(), str::to_string));
    }
    let data = format!("{field}.inlineData");
    let mime = str_at(p.get("inlineData"), &data, &["mimeType"])?;
    Ok(mime.map_or_else(String::new, |mime| format!("[{mime}]")))
}

/// The exit code Gemini's shell tool states in its output (`Exit Code: N`).
fn exit_code(output: &str) -> Option<i64> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix("Exit Code: "))
        .and_then(|n| n.trim().parse().ok())
}

/// A `write_todos` call's `todos` (`{description, status}`), ids by position from 1.
fn todos(args: &Map<String, Value>) -> Option<Vec<crate::model::Todo>> {
    let list = args.get("todos")?.as_array()?;
    let todo = |(i, t): (usize, &Value)| crate::model::Todo {
        id: (i + 1).to_string(),
        parent_id: None,
        status: t["status"].as_str().unwrap_or("pending").to_string(),
        content: t["description"].as_str().unwrap_or_default().to_string(),
        verify_command: None,
    };
    Some(list.iter().enumerate().map(todo).collect())
}
