//! Reading pi's content blocks and arguments.

use super::ARGS;
use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::json::{nested, opt_str, type_name, Object};
use crate::model::Todo;
use simd_json::prelude::*;
use simd_json::BorrowedValue;

/// `content` as the model saw it: a string, or text parts joined (images as `[image]`).
pub(super) fn content_text(obj: &Object<'_>) -> Result<String, FieldError> {
    let Some(content) = obj.get("content").filter(|c| !c.is_null()) else {
        return Ok(String::new());
    };
    if let Some(s) = content.as_str() {
        return Ok(s.to_string());
    }
    let parts = content
        .as_array()
        .ok_or_else(|| wrong("content", "string or array", content))?;
    let mut text = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let at = format!("content[{i}]");
        let part = part.as_object().ok_or_else(|| wrong(&at, "object", part))?;
        let here = |e| nested(&at, e);
        match opt_str(part, "type").map_err(here)? {
            Some("text") => text.extend(opt_str(part, "text").map_err(here)?),
            Some("image") => text.push("[image]"),
            _ => {}
        }
    }
    Ok(text.join("\n"))
}

pub(super) fn wrong(field: &str, expected: &'static str, v: &BorrowedValue<'_>) -> FieldError {
    let found = type_name(v);
    FieldError::new(field, ProblemKind::WrongType { expected, found })
}

/// Renames pi's argument keys to the canonical ones, inside an `edits` batch too.
pub(super) fn rename(
    args: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Map<String, serde_json::Value> {
    args.into_iter()
        .map(|(k, v)| {
            let key = ARGS
                .iter()
                .find(|(from, _)| *from == k)
                .map_or(k, |(_, to)| (*to).to_string());
            let value = match (key.as_str(), v) {
                ("edits", serde_json::Value::Array(items)) => serde_json::Value::Array(
                    items
                        .into_iter()
                        .map(|e| match e {
                            serde_json::Value::Object(map) => {
                                serde_json::Value::Object(rename(map))
                            }
                            other => other,
                        })
                        .collect(),
                ),
                (_, v) => v,
            };
            (key, value)
        })
        .collect()
}

/// One item of the `todo` extension's list: `{id, text, done}`.
pub(super) fn todo(item: &BorrowedValue<'_>) -> Option<Todo> {
    let id = item.get("id").and_then(|v| {
        v.as_u64()
            .map(|n| n.to_string())
            .or_else(|| v.as_str().map(str::to_string))
    })?;
    let done = item.get("done").and_then(|d| d.as_bool()).unwrap_or(false);
    Some(Todo {
        id,
        parent_id: None,
        status: if done { "completed" } else { "pending" }.to_string(),
        content: item
            .get("text")
            .and_then(|t| t.as_str())
            .unwrap_or("")
            .to_string(),
        verify_command: None,
    })
}
