//! The pieces of one Claude Code line: assistant blocks, user items, usage, with the
//! located problems a malformed one raises.

use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::formats::values::{opt_str, wrong};
use crate::model::{TokenSource, Usage, MAX_TOKENS};
use serde_json::{Map, Value};

/// A problem in one line, before it is located in the file.
#[derive(Debug)]
pub struct Bad {
    pub field: Option<String>,
    pub kind: ProblemKind,
}

impl Bad {
    pub fn line(kind: ProblemKind) -> Self {
        Self { field: None, kind }
    }

    pub fn missing(field: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            kind: ProblemKind::MissingField,
        }
    }

    pub fn wrong(field: impl Into<String>, expected: &'static str, found: &Value) -> Self {
        wrong(field, expected, found).into()
    }
}

/// The shared field readers' problems ([`opt_str`] and the like) are a line's.
impl From<FieldError> for Bad {
    fn from(e: FieldError) -> Self {
        Self {
            field: Some(e.field),
            kind: e.kind,
        }
    }
}

/// What an assistant line says: text for the context, or a tool call.
pub enum Block {
    Text(String),
    Call {
        id: String,
        name: String,
        args: Map<String, Value>,
        /// The working directory of the line that carried the call (its `cwd`).
        cwd: Option<String>,
    },
}

/// What a user line says: a prompt (or text the harness added), or a tool's result.
pub enum Item {
    Text(String),
    Result {
        id: String,
        output: String,
        is_error: bool,
    },
}

/// One response's lines: the largest of each field (the last line has the total).
pub fn merge_usage(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Usage {
            input: a.input.max(b.input),
            cache_write: a.cache_write.max(b.cache_write),
            cache_write_1h: a.cache_write_1h.max(b.cache_write_1h),
            cache_read: a.cache_read.max(b.cache_read),
            output: a.output.max(b.output),
            source: a.source.max(b.source),
        }),
        (a, b) => a.or(b),
    }
}

/// A line's `costUSD` (written beside the message by some Claude Code versions): US
/// dollars, a finite non-negative number when present.
pub fn cost_of(line: &Map<String, Value>) -> Result<Option<f64>, Bad> {
    match line.get("costUSD") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|c| c.is_finite() && *c >= 0.0)
            .map(Some)
            .ok_or_else(|| Bad::wrong("costUSD", "non-negative number", v)),
    }
}

/// `message.usage`, field by field: fresh input, cache writes (and of them, the 1-hour
/// tier's, in `cache_creation.ephemeral_1h_input_tokens`), cache reads, output.
pub fn usage_of(message: &Map<String, Value>) -> Result<Option<Usage>, Bad> {
    let usage = match message.get("usage") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(u)) => u,
        Some(other) => return Err(Bad::wrong("message.usage", "object", other)),
    };
    let count = |key: &str| count_in(usage, "message.usage", key);
    let hour = match usage.get("cache_creation") {
        None | Some(Value::Null) => 0,
        Some(Value::Object(tiers)) => count_in(
            tiers,
            "message.usage.cache_creation",
            "ephemeral_1h_input_tokens",
        )?,
        Some(other) => return Err(Bad::wrong("message.usage.cache_creation", "object", other)),
    };
    Ok(Some(Usage {
        input: count("input_tokens")?,
        cache_write: count("cache_creation_input_tokens")?,
        cache_write_1h: hour,
        cache_read: count("cache_read_input_tokens")?,
        output: count("output_tokens")?,
        source: TokenSource::Recorded,
    }))
}

/// The token count at `key` of `map` (found at `at`); 0 when absent.
fn count_in(map: &Map<String, Value>, at: &str, key: &str) -> Result<u64, Bad> {
    Ok(opt_count_in(map, at, key)?.unwrap_or(0))
}

/// The token count at `key` of `map` (found at `at`), when there is one.
pub fn opt_count_in(map: &Map<String, Value>, at: &str, key: &str) -> Result<Option<u64>, Bad> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .filter(|n| *n <= MAX_TOKENS)
            .ok_or_else(|| match v {
                Value::Number(n) if n.is_u64() => Bad {
                    field: Some(format!("{at}.{key}")),
                    kind: ProblemKind::BadValue(format!(
                        "{v} is not a token count (above 2^53 - 1)"
                    )),
                },
                Value::Number(_) => Bad {
                    field: Some(format!("{at}.{key}")),
                    kind: ProblemKind::BadValue(format!("{v} is not a token count")),
                },
                _ => Bad::wrong(format!("{at}.{key}"), "count", v),
            })
            .map(Some),
    }
}

fn content_items(message: &Map<String, Value>) -> Result<Option<&[Value]>, Bad> {
    match message.get("content") {
        None | Some(Value::Null) | Some(Value::String(_)) => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(Bad::wrong("message.content", "string or array", other)),
    }
}

/// The text of a message's `content`: a string, or the text of its items ([`text_of`]).
pub fn content_text(message: &Map<String, Value>) -> Result<String, Bad> {
    content_items(message)?;
    Ok(text_of(message.get("content")))
}

/// Item `i` of a message's `content` array, an object, and its `type`.
fn item(i: usize, item: &Value) -> Result<(&Map<String, Value>, Option<&str>), Bad> {
    let at = format!("message.content[{i}]");
    let obj = item
        .as_object()
        .ok_or_else(|| Bad::wrong(&at, "object", item))?;
    Ok((obj, opt_str(obj.get("type"), &format!("{at}.type"))?))
}

/// A `text` item's text.
fn item_text(obj: &Map<String, Value>, field: String) -> Result<String, Bad> {
    Ok(opt_str(obj.get("text"), &field)?
        .unwrap_or_default()
        .to_string())
}

fn str_field(item: &Map<String, Value>, field: String, key: &str) -> Result<String, Bad> {
    match item.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(Bad::missing(field)),
        Some(other) => Err(Bad::wrong(field, "string", other)),
    }
}

pub fn assistant_blocks(message: &Map<String, Value>) -> Result<Vec<Block>, Bad> {
    let Some(items) = content_items(message)? else {
        let text = text_of(message.get("content"));
        return Ok(if text.is_empty() {
            Vec::new()
        } else {
            vec![Block::Text(text)]
        });
    };
    let mut blocks = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = |key: &str| format!("message.content[{i}].{key}");
        let (obj, kind) = self::item(i, item)?;
        match kind {
            Some("text") => blocks.push(Block::Text(item_text(obj, at("text"))?)),
            Some("tool_use") => {
                let args = match obj.get("input") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(m)) => m.clone(),
                    Some(other) => return Err(Bad::wrong(at("input"), "object", other)),
                };
                blocks.push(Block::Call {
                    id: str_field(obj, at("id"), "id")?,
                    name: str_field(obj, at("name"), "name")?,
                    args,
                    cwd: None,
                });
            }
            _ => {} // thinking, redacted_thinking, server tool blocks
        }
    }
    Ok(blocks)
}

pub fn user_items(message: &Map<String, Value>) -> Result<Vec<Item>, Bad> {
    let Some(items) = content_items(message)? else {
        let text = text_of(message.get("content"));
        return Ok(if text.is_empty() {
            Vec::new()
        } else {
            vec![Item::Text(text)]
        });
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = |key: &str| format!("message.content[{i}].{key}");
        let (obj, kind) = self::item(i, item)?;
        match kind {
            Some("text") => out.push(Item::Text(item_text(obj, at("text"))?)),
            Some("tool_result") => {
                let is_error = match obj.get("is_error") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(other) => return Err(Bad::wrong(at("is_error"), "boolean", other)),
                };
                // A result's content is a string or an array of items, as a message's.
                let output = match obj.get("content") {
                    content @ (None | Some(Value::Null | Value::String(_) | Value::Array(_))) => {
                        text_of(content)
                    }
                    Some(other) => return Err(Bad::wrong(at("content"), "string or array", other)),
                };
                out.push(Item::Result {
                    id: str_field(obj, at("tool_use_id"), "tool_use_id")?,
                    output,
                    is_error,
                });
            }
            _ => {} // images, documents
        }
    }
    Ok(out)
}

/// The text of a content value: a string, or the `text` of each item, one per line
/// (`[image]` for an image).
pub fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(s.clone()),
                Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("image") => {
                    Some("[image]".to_string())
                }
                Value::Object(o) => o.get("text").and_then(Value::as_str).map(str::to_string),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `N` of a Bash result that starts `Exit code N`.
pub fn exit_code(output: &str) -> Option<i64> {
    let first = output.trim_start().lines().next()?;
    first.strip_prefix("Exit code ")?.trim().parse().ok()
}
