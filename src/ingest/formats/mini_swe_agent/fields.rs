//! Reading the fields of one mini-swe-agent message: its text, its usage, its actions,
//! and the return code of an observation.

use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::formats::values::{object, opt_str, text_of, typed, wrong};
use crate::ingest::json::token_count;
use crate::model::{sum_tokens, Request, TokenSource, Usage};
use serde_json::{Map, Value};

/// One shell action of an assistant message.
pub struct Action {
    /// The model's tool-call id; `None` for text-based actions (```` ```bash ```` blocks).
    pub id: Option<String>,
    /// The tool as the model named it (`bash` unless a tool call says otherwise).
    pub tool: String,
    pub args: Map<String, Value>,
}

/// The text of a message's `content` (at `field`) as [`text_of`] reads it: content that is
/// neither a string nor an array (nor absent or `null`) is a problem.
pub fn content_text(v: Option<&Value>, field: &str) -> Result<String, FieldError> {
    match v {
        None | Some(Value::Null | Value::String(_) | Value::Array(_)) => Ok(text_of(v)),
        Some(other) => Err(wrong(field, "string or array", other)),
    }
}

/// The text an assistant message carries: `content`, or for a Responses API response the
/// text of its `output` message items.
pub fn assistant_text(m: &Map<String, Value>) -> Result<String, FieldError> {
    if let Some(items) = typed(m.get("output"), "output", "array", Value::as_array)? {
        let mut texts = Vec::new();
        for (k, item) in items.iter().enumerate() {
            if opt_str(item.get("type"), &format!("output[{k}].type"))? == Some("message") {
                texts.push(content_text(
                    item.get("content"),
                    &format!("output[{k}].content"),
                )?);
            }
        }
        return Ok(texts.join("\n"));
    }
    content_text(m.get("content"), "content")
}

/// What the log records of the request behind a message (an assistant message, or the
/// format error 2.x saves in place of a response it could not parse): its usage by kind,
/// its model (the response's `model`, else `default_model`, the trajectory's configured
/// model) and its cost (`extra.cost`; a 0 for a request that used tokens is a harness that
/// could not price the model, not a free request, so it is no cost).
pub fn request(m: &Map<String, Value>, default_model: Option<&str>) -> Result<Request, FieldError> {
    let usage = usage(m)?;
    let extra = m.get("extra");
    let response = typed(
        extra.and_then(|e| e.get("response")),
        "extra.response",
        "object",
        object,
    )?;
    let model = match opt_str(
        response.and_then(|r| r.get("model")),
        "extra.response.model",
    )? {
        Some(model) => Some(model),
        None => opt_str(m.get("model"), "model")?,
    };
    let model = model
        .filter(|s| !s.is_empty())
        .or(default_model)
        .map(str::to_string);
    let cost = match extra.and_then(|e| e.get("cost")).filter(|c| !c.is_null()) {
        None => None,
        Some(v) => match v.as_f64() {
            Some(c) if c.is_finite() && c >= 0.0 => Some(c),
            _ => {
                let kind = ProblemKind::BadValue(format!(
                    "expected a cost in US dollars (a finite, non-negative number), found {v}"
                ));
                return Err(FieldError::new("extra.cost", kind));
            }
        },
    };
    let used = usage.map(|u| u.total());
    let cost_usd = cost.filter(|&c| c > 0.0 || used == Some(0));
    Ok(Request {
        usage,
        model,
        cost_usd,
    })
}

/// Token usage of the request behind a message, by kind, from `extra.response.usage`, else
/// `usage` (a Responses API item), else `extra.usage`:
///
/// - Chat Completions (`prompt_tokens`, which counts cached prompt tokens): cache reads are
///   `prompt_tokens_details.cached_tokens` (else `cache_read_input_tokens`, else DeepSeek's
///   `prompt_cache_hit_tokens`), cache writes `prompt_tokens_details.cache_creation_tokens`
///   (else `cache_creation_input_tokens`, as LiteLLM passes Anthropic's on), and fresh input
///   the rest of `prompt_tokens`; completions are `completion_tokens`.
/// - Anthropic (`input_tokens` beside `cache_creation_input_tokens` or
///   `cache_read_input_tokens`, none of them counting another): taken as they are.
/// - The Responses API (`input_tokens`, which counts `input_tokens_details.cached_tokens`):
///   cache reads are those, fresh input the rest.
///
/// Cached tokens above the prompt count they should be part of mean that count left them
/// out (as older LiteLLM releases wrote Anthropic's `prompt_tokens`): they are added to it.
pub fn usage(m: &Map<String, Value>) -> Result<Option<Usage>, FieldError> {
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
    let Some((u, at)) = found
        .into_iter()
        .find_map(|(v, at)| v.filter(|v| !v.is_null()).map(|v| (v, at)))
    else {
        return Ok(None);
    };
    let u = u.as_object().ok_or_else(|| wrong(at, "object", u))?;
    // A count at `path` under the usage object: `None` when absent or null.
    let get = |path: &[&str]| -> Result<Option<u64>, FieldError> {
        let mut keys = path.iter();
        let mut v = keys.next().and_then(|k| u.get(*k));
        for key in keys {
            v = v.and_then(|v| v.get(key));
        }
        let field = || format!("{at}.{}", path.join("."));
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) => token_count(n, &field()).map(Some),
                None => Err(wrong(field(), "count", v)),
            },
        }
    };
    let first = |paths: &[&[&str]]| -> Result<u64, FieldError> {
        for path in paths {
            if let Some(n) = get(path)? {
                return Ok(n);
            }
        }
        Ok(0)
    };
    let (prompt, cache_read, cache_write, output) = if u.contains_key("prompt_tokens") {
        (
            first(&[&["prompt_tokens"]])?,
            first(&[
                &["prompt_tokens_details", "cached_tokens"],
                &["cache_read_input_tokens"],
                &["prompt_cache_hit_tokens"],
            ])?,
            first(&[
                &["prompt_tokens_details", "cache_creation_tokens"],
                &["cache_creation_input_tokens"],
            ])?,
            first(&[&["completion_tokens"]])?,
        )
    } else if u.contains_key("input_tokens") {
        let input = first(&[&["input_tokens"]])?;
        let output = first(&[&["output_tokens"]])?;
        let write = get(&["cache_creation_input_tokens"])?;
        let read = get(&["cache_read_input_tokens"])?;
        if write.is_some() || read.is_some() {
            return Ok(Some(Usage {
                input,
                cache_write: write.unwrap_or(0),
                cache_write_1h: 0,
                cache_read: read.unwrap_or(0),
                output,
                source: TokenSource::Recorded,
            }));
        }
        let cached = first(&[&["input_tokens_details", "cached_tokens"]])?;
        (input, cached, 0, output)
    } else {
        return Ok(None);
    };
    let cached = sum_tokens([cache_read, cache_write]);
    Ok(Some(Usage {
        input: prompt.checked_sub(cached).unwrap_or(prompt),
        cache_write,
        cache_write_1h: 0,
        cache_read,
        output,
        source: TokenSource::Recorded,
    }))
}

/// Argument keys renamed to the canonical ones (docs/FORMAT.md), for tools other than bash.
const ARG_TABLE: &[(&str, &str)] = &[
    ("file_path", "path"),
    ("old_str", "old_string"),
    ("new_str", "new_string"),
    ("file_text", "content"),
];

/// A tool call of an assistant message, its fields checked.
struct ToolCall<'m> {
    id: Option<&'m str>,
    name: Option<&'m str>,
    arguments: Option<&'m Value>,
}

/// The `tool_calls` of an assistant message; a call, id, function or name of the wrong type
/// is a problem.
fn tool_calls(m: &Map<String, Value>) -> Result<Vec<ToolCall<'_>>, FieldError> {
    let Some(list) = typed(m.get("tool_calls"), "tool_calls", "array", Value::as_array)? else {
        return Ok(Vec::new());
    };
    list.iter()
        .enumerate()
        .map(|(k, c)| {
            let at = |key: &str| format!("tool_calls[{k}]{key}");
            let c = c.as_object().ok_or_else(|| wrong(at(""), "object", c))?;
            let function = typed(c.get("function"), &at(".function"), "object", object)?;
            Ok(ToolCall {
                id: opt_str(c.get("id"), &at(".id"))?,
                name: opt_str(function.and_then(|f| f.get("name")), &at(".function.name"))?,
                arguments: function.and_then(|f| f.get("arguments")),
            })
        })
        .collect()
}

/// The actions of an assistant message whose text is `text`: `extra.actions` (what the
/// harness ran), else its tool calls, else the single ```` ```bash ```` block of a
/// text-based response (1.0).
pub fn actions(m: &Map<String, Value>, text: &str) -> Result<Vec<Action>, FieldError> {
    let calls = tool_calls(m)?;
    let name_of = |id: Option<&str>| {
        calls
            .iter()
            .find(|c| id.is_some() && c.id == id)
            .and_then(|c| c.name)
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
                    None | Some(Value::Null) => None,
                    Some(other) => return Err(wrong(at() + ".tool_call_id", "string", &other)),
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
                let field = || format!("tool_calls[{k}].function.arguments");
                let args = match c.arguments {
                    Some(Value::String(s)) => serde_json::from_str::<Map<String, Value>>(s)
                        .map_err(|e| {
                            let kind = ProblemKind::BadValue(format!(
                                "arguments are not a JSON object: {e}"
                            ));
                            FieldError::new(field(), kind)
                        })?,
                    Some(Value::Object(o)) => o.clone(),
                    None | Some(Value::Null) => Map::new(),
                    Some(other) => return Err(wrong(field(), "string or object", other)),
                };
                let args = args
                    .into_iter()
                    .map(|(key, v)| {
                        let renamed = ARG_TABLE.iter().find(|(from, _)| *from == key);
                        (renamed.map_or(key, |(_, to)| (*to).to_string()), v)
                    })
                    .collect();
                Ok(Action {
                    id: c.id.map(str::to_string),
                    tool: c.name.unwrap_or("bash").to_string(),
                    args,
                })
            })
            .collect(),
        Some(Value::Null) | None => Ok(text_action(text).into_iter().collect()),
        Some(other) => Err(wrong("extra.actions", "array", other)),
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

/// The return code of an observation: `extra.returncode`, else the
/// `<returncode>N</returncode>` its text carries ([`text_returncode`]). A recorded return
/// code that is no integer is a problem.
pub fn returncode(m: &Map<String, Value>, text: &str) -> Result<Option<i64>, FieldError> {
    let recorded = m.get("extra").and_then(|e| e.get("returncode"));
    match typed(recorded, "extra.returncode", "integer", Value::as_i64)? {
        Some(rc) => Ok(Some(rc)),
        None => Ok(text_returncode(text)),
    }
}

/// The `<returncode>N</returncode>` an observation's text carries.
pub fn text_returncode(text: &str) -> Option<i64> {
    let start = text.find("<returncode>")? + "<returncode>".len();
    let end = text[start..].find("</returncode>")?;
    text[start..start + end].trim().parse().ok()
}

/// The command's output inside mini-swe-agent's observation wrapper (its default
/// `observation_template`): an optional `<exception>…</exception>` (a timeout, a crash),
/// `<returncode>N</returncode>`, then `<output>…</output>`, or, for a long output, a
/// `<warning>`, `<output_head>…</output_head>`, `<elided_chars>N characters
/// elided</elided_chars>` and `<output_tail>…</output_tail>`, joined here with the elision
/// marked on a line of its own. `None` when `text` is not so wrapped (another template):
/// it is then the output as it is.
pub fn unwrapped_output(text: &str) -> Option<String> {
    let text = text.trim_start();
    let (exception, rest) = match text.strip_prefix("<exception>") {
        Some(rest) => {
            let end = rest.find("</exception>")?;
            (
                Some(rest[..end].trim()),
                &rest[end + "</exception>".len()..],
            )
        }
        None => (None, text),
    };
    let rest = rest.trim_start().strip_prefix("<returncode>")?;
    let rest = &rest[rest.find("</returncode>")? + "</returncode>".len()..];
    let inner = |tag: &str| -> Option<&str> {
        let open = format!("<{tag}>");
        let start = rest.find(&open)? + open.len();
        let end = start + rest[start..].rfind(&format!("</{tag}>"))?;
        let body = &rest[start..end];
        let body = body.strip_prefix('\n').unwrap_or(body);
        Some(body.strip_suffix('\n').unwrap_or(body))
    };
    let output = match inner("output") {
        Some(output) => output.to_string(),
        None => {
            let (head, tail) = (inner("output_head")?, inner("output_tail")?);
            let elided = inner("elided_chars").map_or("", str::trim);
            format!("{head}\n[{elided}]\n{tail}")
        }
    };
    Some(match exception {
        Some(e) if output.is_empty() => e.to_string(),
        Some(e) => format!("{e}\n{output}"),
        None => output,
    })
}

#[cfg(test)]
mod tests {
    use super::unwrapped_output;

    #[test]
    fn the_observation_wrapper_comes_off() {
        let plain = "<returncode>1</returncode>\n<output>\nE   assert 1 == 2\n</output>";
        assert_eq!(
            unwrapped_output(plain).as_deref(),
            Some("E   assert 1 == 2")
        );
        let long = "<returncode>0</returncode>\n<warning>\nThe output of your last command \
            was too long.\n</warning><output_head>\nfirst\n</output_head>\n<elided_chars>\n\
            825 characters elided\n</elided_chars>\n<output_tail>\nlast\n</output_tail>";
        assert_eq!(
            unwrapped_output(long).as_deref(),
            Some("first\n[825 characters elided]\nlast")
        );
        let timeout = "<exception>TimeoutExpired: 60 s</exception>\n<returncode>-1</returncode>\n\
            <output>\n</output>";
        assert_eq!(
            unwrapped_output(timeout).as_deref(),
            Some("TimeoutExpired: 60 s")
        );
        // An output that itself prints the closing tag keeps it.
        let nested = "<returncode>0</returncode>\n<output>\necho '</output>'\n</output>";
        assert_eq!(
            unwrapped_output(nested).as_deref(),
            Some("echo '</output>'")
        );
        assert_eq!(unwrapped_output("Observation: ok"), None);
    }
}
