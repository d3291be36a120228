//! Context-window frames (`context/*.json`) and the two ledgers, each a whole JSON document.
//!
//! Frames are the large documents (the seeds report one of 380 KB), so they go through
//! simd-json with reused buffers. Message content may be a string or a list of text parts.

use super::error::{FieldError, ParseError, ProblemKind};
use super::json::*;
use crate::model::*;
use simd_json::prelude::*;
use simd_json::BorrowedValue;

/// Parses one frame document held in `bytes` (which simd-json rewrites in place).
pub fn parse_frame(
    bytes: &mut [u8],
    path: &str,
    buffers: &mut simd_json::Buffers,
) -> Result<Frame, ParseError> {
    let value = document(bytes, path, buffers)?;
    let obj = root_object(&value, path)?;
    frame_from(obj, path).map_err(|e| e.locate(path, None))
}

fn document<'a>(
    bytes: &'a mut [u8],
    path: &str,
    buffers: &mut simd_json::Buffers,
) -> Result<BorrowedValue<'a>, ParseError> {
    parse_unique(bytes, buffers).map_err(|e| ParseError {
        path: path.to_string(),
        line: None,
        field: (!e.field.is_empty()).then_some(e.field),
        kind: e.kind,
    })
}

fn root_object<'v, 'a>(
    value: &'v BorrowedValue<'a>,
    path: &str,
) -> Result<&'v Object<'a>, ParseError> {
    value.as_object().ok_or_else(|| ParseError {
        path: path.to_string(),
        line: None,
        field: None,
        kind: ProblemKind::NotAnObject,
    })
}

fn frame_from(obj: &Object<'_>, path: &str) -> Result<Frame, FieldError> {
    let turn = as_u32(required(obj, "turn", "turn")?, "turn")?;
    let messages = req_array(obj, "messages")?
        .iter()
        .enumerate()
        .map(|(i, m)| message_from(m).map_err(|e| nested(&format!("messages[{i}]"), e)))
        .collect::<Result<Vec<_>, _>>()?;
    let signal_to_noise = match obj.get("signalToNoise").filter(|v| !v.is_null()) {
        None => None,
        Some(v) => {
            let snr = v.as_object().ok_or_else(|| {
                FieldError::new(
                    "signalToNoise",
                    ProblemKind::WrongType {
                        expected: "object or null",
                        found: type_name(v),
                    },
                )
            })?;
            opt_f64(snr, "ratio").map_err(|e| nested("signalToNoise", e))?
        }
    };
    Ok(Frame {
        turn,
        agent: opt_str(obj, "agent")?.unwrap_or("main").to_string(),
        estimated_tokens: opt_tokens(obj, "estimatedTokens")?,
        system_prompt_chars: opt_count(obj, "systemPromptChars")?,
        messages,
        signal_to_noise,
        source: path.to_string(),
    })
}

fn message_from(v: &BorrowedValue<'_>) -> Result<Message, FieldError> {
    let obj = v.as_object().ok_or_else(|| {
        FieldError::new(
            "",
            ProblemKind::WrongType {
                expected: "object",
                found: type_name(v),
            },
        )
    })?;
    let role = req_str(obj, "role")?.to_string();
    let content = match obj.get("content") {
        None => String::new(),
        Some(c) if c.is_null() => String::new(),
        Some(c) => content_text(c).ok_or_else(|| {
            FieldError::new(
                "content",
                ProblemKind::WrongType {
                    expected: "string or array of text parts",
                    found: type_name(c),
                },
            )
        })?,
    };
    let tool_call_id = match opt_string(obj, "toolCallId")? {
        Some(id) => Some(id),
        None => opt_string(obj, "callId")?,
    };
    Ok(Message {
        role,
        content: content.into(),
        tool_call_id,
    })
}

/// A message's text: a string, or the `text` of each part of a content array, joined.
fn content_text(c: &BorrowedValue<'_>) -> Option<String> {
    if let Some(s) = c.as_str() {
        return Some(s.to_string());
    }
    let parts = c.as_array()?;
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|p| {
            p.as_str()
                .or_else(|| p.get("text").and_then(|t| t.as_str()))
        })
        .collect();
    Some(texts.join("\n"))
}

/// `completion-ledger.json`: the run's recorded completion status.
pub fn parse_completion_ledger(
    bytes: &mut [u8],
    path: &str,
    buffers: &mut simd_json::Buffers,
) -> Result<LedgerStatus, ParseError> {
    let value = document(bytes, path, buffers)?;
    let obj = root_object(&value, path)?;
    let status = req_str(obj, "status").map_err(|e| e.locate(path, None))?;
    LedgerStatus::parse(status).ok_or_else(|| ParseError {
        path: path.to_string(),
        line: None,
        field: Some("status".into()),
        kind: ProblemKind::BadValue(format!(
            "unknown status {status:?} (expected open, completed or incomplete_verification)"
        )),
    })
}

/// `convergence-ledger.json`: the harness's own family keys and round counts.
pub fn parse_convergence_ledger(
    bytes: &mut [u8],
    path: &str,
    buffers: &mut simd_json::Buffers,
) -> Result<Vec<LedgerFamily>, ParseError> {
    let value = document(bytes, path, buffers)?;
    let obj = root_object(&value, path)?;
    let families = req_object(obj, "families").map_err(|e| e.locate(path, None))?;
    let mut out = families
        .iter()
        .map(|(family, entry)| {
            let field = format!("families.{family}");
            let entry = entry.as_object().ok_or_else(|| {
                FieldError::new(
                    &field,
                    ProblemKind::WrongType {
                        expected: "object",
                        found: type_name(entry),
                    },
                )
            })?;
            let rounds = req_count(entry, "rounds").map_err(|e| nested(&field, e))?;
            Ok(LedgerFamily {
                family: family.to_string(),
                rounds: u32::try_from(rounds).unwrap_or(u32::MAX),
            })
        })
        .collect::<Result<Vec<_>, FieldError>>()
        .map_err(|e| e.locate(path, None))?;
    out.sort_by(|a, b| a.family.cmp(&b.family));
    Ok(out)
}
