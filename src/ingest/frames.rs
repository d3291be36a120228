//! Context-window frames (`context/*.json`) and the two ledgers, each a whole JSON document.
//!
//! Frames are the large documents (the seeds report one of 380 KB), so they go through
//! simd-json with reused buffers and are read from its tape, with no value tree built.
//! Message content may be a string or a list of text parts.
//!
//! A frame's text is only inspected, never changed, so it is not copied out message by
//! message: a frame read from disk ([`parse_frame_owned`]) keeps its document, and each
//! message's content is a span of it ([`Text::span`]); simd-json leaves every string it
//! parses where it lies in the document, unescaped in place.

use super::error::{FieldError, ParseError, ProblemKind};
use super::json::*;
use crate::model::*;
use simd_json::BorrowedValue;
use std::sync::Arc;

/// Parses one frame document held in `bytes` (which simd-json rewrites in place). The
/// messages' text is copied once, into one string they share.
pub fn parse_frame(
    bytes: &mut [u8],
    path: &str,
    buffers: &mut simd_json::Buffers,
) -> Result<Frame, ParseError> {
    let mut arena = String::new();
    let (frame, pieces) = read_frame(bytes, None, path, buffers, &mut |text| {
        let start = arena.len();
        arena.push_str(text);
        Piece::At(start, arena.len())
    })?;
    Ok(frame.with_text(&Arc::new(arena), pieces))
}

/// Parses one frame document read whole into `bytes` (by
/// [`super::files::read_document_with_room`], with room for simd-json's padding), and
/// keeps it: the messages' text is spans of the document, not copies.
pub fn parse_frame_owned(
    mut bytes: Vec<u8>,
    path: &str,
    buffers: &mut simd_json::Buffers,
) -> Result<Frame, ParseError> {
    let len = bytes.len();
    bytes.resize(len + simd_json::INPUT_PADDING, b' ');
    let (base, end) = (bytes.as_ptr() as usize, bytes.as_ptr() as usize + len);
    let (frame, pieces) = read_frame(&mut bytes, Some(len), path, buffers, &mut |text| {
        // A string simd-json left in the document (it always does): its offsets.
        let at = text.as_ptr() as usize;
        if at >= base && at + text.len() <= end {
            Piece::At(at - base, at - base + text.len())
        } else {
            Piece::Own(text.to_string())
        }
    })?;
    // Everything but the messages' text becomes spaces, which leaves the document valid
    // UTF-8 (the spans were `str`s; escapes and keys are gone) and so a `String` for free.
    bytes.truncate(len);
    let mut spans = Vec::with_capacity(2 * pieces.len());
    for (content, id) in &pieces {
        spans.extend(
            [Some(content), id.as_ref()]
                .into_iter()
                .filter_map(|p| match p {
                    Some(Piece::At(start, end)) => Some((*start, *end)),
                    _ => None,
                }),
        );
    }
    spans.sort_unstable();
    let mut at = 0;
    for (start, end) in spans {
        if let Some(gap) = bytes.get_mut(at..start) {
            gap.fill(b' ');
        }
        at = at.max(end);
    }
    if let Some(gap) = bytes.get_mut(at..) {
        gap.fill(b' ');
    }
    // SAFETY: `bytes` is UTF-8, so validating it again (a pass over the whole document)
    // is not needed. Each span holds the bytes of a `str` that simd-json returned from this
    // buffer (the offsets were taken from the `str`s, and nothing has written to them
    // since), so it is UTF-8 and starts and ends on character boundaries; every other byte
    // is now an ASCII space.
    let doc = unsafe { String::from_utf8_unchecked(bytes) };
    debug_assert!(std::str::from_utf8(doc.as_bytes()).is_ok());
    Ok(frame.with_text(&Arc::new(doc), pieces))
}

/// Where a message's text is: a span of the frame's shared text, or a string of its own
/// (content given as a list of parts, joined).
enum Piece {
    At(usize, usize),
    Own(String),
}

impl Piece {
    fn into_text(self, doc: &Arc<String>) -> Text {
        match self {
            // Always a span (the pieces were `str`s of `doc`); a copy otherwise.
            Piece::At(start, end) => Text::span(doc, start, end).unwrap_or_else(|| {
                let bytes = doc.as_bytes().get(start..end).unwrap_or_default();
                Text::from(String::from_utf8_lossy(bytes).as_ref())
            }),
            Piece::Own(text) => Text::from(text),
        }
    }
}

/// Where a message's content and its tool call id are.
type MessagePieces = (Piece, Option<Piece>);

impl Frame {
    /// The frame with each message's content and call id set from `pieces` (in message
    /// order).
    fn with_text(mut self, doc: &Arc<String>, pieces: Vec<MessagePieces>) -> Frame {
        for (message, (content, id)) in self.messages.iter_mut().zip(pieces) {
            message.content = content.into_text(doc);
            message.tool_call_id = id.map(|id| id.into_text(doc));
        }
        self
    }
}

/// The frame in `bytes` (as [`read_tape`] takes them), read from the tape; `keep` places
/// each string the messages' text is taken from.
fn read_frame(
    bytes: &mut [u8],
    padded_len: Option<usize>,
    path: &str,
    buffers: &mut simd_json::Buffers,
    keep: &mut dyn FnMut(&str) -> Piece,
) -> Result<(Frame, Vec<MessagePieces>), ParseError> {
    read_tape(bytes, padded_len, buffers, |root| {
        frame_from(root_object(root, path)?, path, keep).map_err(|e| e.locate(path, None))
    })
    .map_err(|e| e.locate_document(path))?
}

fn document<'a>(
    bytes: &'a mut [u8],
    path: &str,
    buffers: &mut simd_json::Buffers,
) -> Result<BorrowedValue<'a>, ParseError> {
    parse_unique(bytes, buffers).map_err(|e| e.locate_document(path))
}

/// The document's root, which must be an object (a built value or one on the tape).
fn root_object<'v, V: Json<'v>>(value: V, path: &str) -> Result<V::Object, ParseError> {
    value.object().ok_or_else(|| ParseError {
        path: path.to_string(),
        line: None,
        field: None,
        kind: ProblemKind::NotAnObject,
    })
}

/// The frame with empty message contents, and where each message's text is (`keep`
/// places a string the document holds).
fn frame_from<'t>(
    obj: TapeObject<'t, '_>,
    path: &str,
    keep: &mut dyn FnMut(&str) -> Piece,
) -> Result<(Frame, Vec<MessagePieces>), FieldError> {
    let turn = as_u32(required(obj, "turn", "turn")?, "turn")?;
    let list = req_array(obj, "messages")?;
    let mut messages = Vec::with_capacity(list.size_hint().0);
    let mut pieces = Vec::with_capacity(list.size_hint().0);
    // Every message's content until [`Frame::with_text`] sets it: one shared empty text.
    let empty = Text::from("");
    for (i, m) in list.enumerate() {
        let (message, piece) =
            message_from(m, &empty, keep).map_err(|e| nested(&format!("messages[{i}]"), e))?;
        messages.push(message);
        pieces.push(piece);
    }
    let signal_to_noise = match obj.field("signalToNoise").filter(|v| !v.null()) {
        None => None,
        Some(v) => {
            let snr = v.object().ok_or_else(|| {
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
    let frame = Frame {
        turn,
        agent: opt_str(obj, "agent")?.unwrap_or("main").to_string(),
        estimated_tokens: opt_tokens(obj, "estimatedTokens")?,
        system_prompt_chars: opt_count(obj, "systemPromptChars")?,
        messages,
        signal_to_noise,
        source: path.to_string(),
    };
    Ok((frame, pieces))
}

fn message_from<'t>(
    v: TapeValue<'t, '_>,
    empty: &Text,
    keep: &mut dyn FnMut(&str) -> Piece,
) -> Result<(Message, MessagePieces), FieldError> {
    let obj = v.object().ok_or_else(|| {
        FieldError::new(
            "",
            ProblemKind::WrongType {
                expected: "object",
                found: type_name(v),
            },
        )
    })?;
    let role = role(req_str(obj, "role")?);
    let piece = match obj.field("content") {
        None => Piece::At(0, 0),
        Some(c) if c.null() => Piece::At(0, 0),
        Some(c) => content_text(c, keep).ok_or_else(|| {
            FieldError::new(
                "content",
                ProblemKind::WrongType {
                    expected: "string or array of text parts",
                    found: type_name(c),
                },
            )
        })?,
    };
    let tool_call_id = match opt_str(obj, "toolCallId")? {
        Some(id) => Some(id),
        None => opt_str(obj, "callId")?,
    };
    let message = Message {
        role,
        content: empty.clone(),
        tool_call_id: None,
    };
    Ok((message, (piece, tool_call_id.map(keep))))
}

/// A message's text: a string, or the `text` of each part of a content array, joined.
fn content_text(c: TapeValue<'_, '_>, keep: &mut dyn FnMut(&str) -> Piece) -> Option<Piece> {
    if let Some(s) = c.str() {
        return Some(keep(s));
    }
    let parts = c.array()?;
    let texts: Vec<&str> = parts
        .filter_map(|p| {
            p.str()
                .or_else(|| p.object()?.field("text").and_then(|t| t.str()))
        })
        .collect();
    Some(Piece::Own(texts.join("\n")))
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
            let entry = entry.object().ok_or_else(|| {
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
