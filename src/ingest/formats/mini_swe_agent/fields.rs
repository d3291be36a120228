//! Reading the fields of one mini-swe-agent message: its text, its usage, its actions,
//! and the return code of an observation.

use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::json::token_count;
use crate::model::sum_tokens;
use serde_json::{Map, Value};

/// One shell action of an assistant message.
pub struct Action {
    /// The model's tool-call id; `None` for text-based actions (```` ```bash ```` blocks).
    pub id: Option<String>,
    /// The tool as the model named it (`bash` unless a tool call says otherwise).
    pub tool: String,
    pub args: Map<String, Value>,
}

/// The text of a message's `content` (or a Responses API item's `output`): a string, or an
/// array of parts whose `text` strings are joined with `\n`; anything else is empty.
pub fn text_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The text an assistant message carries: `content`, or for a Responses API response the
/// text of its `output` message items.
pub fn assistant_text(m: &Map<String, Value>) -> String {
    if let Some(items) = m.get("output").and_then(Value::as_array) {
        return items
            .iter()
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
            .map(|i| text_of(i.get("content")))
            .collect::<Vec<_>>()
            .join("\n");
    }
    text_of(m.get("content"))
}

/// Token usage of the request that produced this assistant message: `(prompt, completion)`.
/// Chat Completions usage (`prompt_tokens`, already counting cached prompt tokens) is taken
/// as is; Anthropic-style usage (`input_tokens` beside `cache_creation_input_tokens` and
/// `cache_read_input_tokens`) is summed, as is the Responses API's `input_tokens`.
pub fn usage(m: &Map<String, Value>) -> Result<Option<(u64, u64)>, FieldError> {
    let extra = m.get("extra");
    let found = [
        (
            extra
                .and_then(|e| e.get("response"))
                .and_then(|r| r.get("usage")),
            "extra.response.usage",
        ),
        (m.get("usage"), "usage"),
        (extra.and_then(|e| e.get("usage")), "extra.usage"),
    ];
    let Some((Value::Object(u), at)) = found
        .into_iter()
        .find_map(|(v, at)| v.filter(|v| !v.is_null()).map(|v| (v, at)))
    else {
        return Ok(None);
    };
    let count = |key: &str| -> Result<u64, FieldError> {
        match u.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => match v.as_u64() {
                Some(n) => token_count(n, &format!("{at}.{key}")),
                None => {
                    let kind = ProblemKind::WrongType {
                        expected: "count",
                        found: kind_of(v).into(),
                    };
                    Err(FieldError::new(format!("{at}.{key}"), kind))
                }
            },
        }
    };
    if u.contains_key("prompt_tokens") {
        return Ok(Some((count("prompt_tokens")?, count("completion_tokens")?)));
    }
    if u.contains_key("input_tokens") {
        let prompt = sum_tokens([
            count("input_tokens")?,
            count("cache_creation_input_tokens")?,
            count("cache_read_input_tokens")?,
        ]);
        return Ok(Some((prompt, count("output_tokens")?)));
    }
    Ok(None)
}

/// Argument keys renamed to the canonical ones (docs/FORMAT.md), for tools other than bash.
const ARG_TABLE: &[(&str, &str)] = &[
    ("file_path", "path"),
    ("old_str", "old_string"),
    ("new_str", "new_string"),
    ("file_text", "content"),
];

/// The actions of an assistant message: `extra.actions` (what the harness ran), else its
/// tool calls, else the single ```` ```bash ```` block of a text-based response (1.0).
pub fn actions(m: &Map<String, Value>) -> Result<Vec<Action>, FieldError> {
    let calls: Vec<&Map<String, Value>> = m
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default();
    let name_of = |id: Option<&str>| {
        calls
            .iter()
            .find(|c| id.is_some() && c.get("id").and_then(Value::as_str) == id)
            .and_then(|c| c.get("function")?.get("name")?.as_str())
            .unwrap_or("bash")
            .to_string()
    };
    match m.get("extra").and_then(|e| e.get("actions")) {
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(k, a)| {
                let at = || format!("extra.actions[{k}]");
                let mut args = match a {
                    Value::String(cmd) => Map::from_iter([("command".into(), cmd.clone().into())]),
                    Value::Object(o) => o.clone(),
                    other => return Err(wrong(at(), "object", other)),
                };
                let id = match args.remove("tool_call_id") {
                    Some(Value::String(id)) => Some(id),
                    _ => None,
                };
                match args.get("command") {
                    Some(Value::String(_)) => {}
                    None => {
                        return Err(FieldError::new(
                            at() + ".command",
                            ProblemKind::MissingField,
                        ))
                    }
                    Some(other) => return Err(wrong(at() + ".command", "string", other)),
                }
                let tool = name_of(id.as_deref());
                Ok(Action { id, tool, args })
            })
            .collect(),
        Some(Value::Null) | None if !calls.is_empty() => calls
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let function = c.get("function");
                let raw = function.and_then(|f| f.get("arguments"));
                let args = match raw {
                    Some(Value::String(s)) => serde_json::from_str::<Map<String, Value>>(s)
                        .map_err(|e| {
                            let kind = ProblemKind::BadValue(format!(
                                "arguments are not a JSON object: {e}"
                            ));
                            FieldError::new(format!("tool_calls[{k}].function.arguments"), kind)
                        })?,
                    Some(Value::Object(o)) => o.clone(),
                    _ => Map::new(),
                };
                let args = args
                    .into_iter()
                    .map(|(key, v)| {
                        let renamed = ARG_TABLE.iter().find(|(from, _)| *from == key);
                        (renamed.map_or(key, |(_, to)| (*to).to_string()), v)
                    })
                    .collect();
                let id = c.get("id").and_then(Value::as_str).map(str::to_string);
                let tool = function.and_then(|f| f.get("name")).and_then(Value::as_str);
                Ok(Action {
                    id,
                    tool: tool.unwrap_or("bash").to_string(),
                    args,
                })
            })
            .collect(),
        Some(Value::Null) | None => Ok(text_action(&assistant_text(m)).into_iter().collect()),
        Some(other) => Err(wrong("extra.actions".into(), "array", other)),
    }
}

/// The one action of a text-based response; none when it has zero or several blocks (the
/// harness answers those with a format error and runs nothing).
fn text_action(content: &str) -> Option<Action> {
    let mut found = Vec::new();
    for fence in ["```bash", "```mswea_bash_command"] {
        for (at, _) in content.match_indices(fence) {
            let rest = &content[at + fence.len()..];
            let body = rest.trim_start_matches([' ', '\t', '\r']);
            let Some(body) = body.strip_prefix('\n') else {
                continue;
            };
            if let Some(end) = body.find("\n```") {
                found.push(body[..end].trim().to_string());
            }
        }
    }
    let [command] = <[String; 1]>::try_from(found).ok()?;
    let args = Map::from_iter([("command".to_string(), Value::String(command))]);
    Some(Action {
        id: None,
        tool: "bash".into(),
        args,
    })
}

/// The return code of an observation: `extra.returncode`, else the `<returncode>N</returncode>`
/// its text carries.
pub fn returncode(m: &Map<String, Value>, text: &str) -> Option<i64> {
    if let Some(rc) = m
        .get("extra")
        .and_then(|e| e.get("returncode"))
        .and_then(Value::as_i64)
    {
        return Some(rc);
    }
    let start = text.find("<returncode>")? + "<returncode>".len();
    let end = text[start..].find("</returncode>")?;
    text[start..start + end].trim().parse().ok()
}

fn wrong(field: String, expected: &'static str, found: &Value) -> FieldError {
    let kind = ProblemKind::WrongType {
        expected,
        found: kind_of(found).into(),
    };
    FieldError::new(field, kind)
}

pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
