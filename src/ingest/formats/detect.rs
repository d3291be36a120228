//! Which format a file holds, judged by structure from its first records, never by its name
//! (docs/FORMAT.md, *Detection and grouping*).
//!
//! Detection is strict: a file is read as a format only when it shows that format's
//! distinctive structure. A file close to a format without it (an audit log with `source`,
//! `action` and `id`; a text game's `trajectory`; a shell logger's `session` header; a
//! chatbot's `user`/`assistant` lines) is a look-alike: it is not read, and the reason is
//! handed back so the file is listed (`input.skipped_files`), never passed over in silence.

use super::{
    atif, claude_code, codex, gemini_cli, mini_swe_agent, opencode, openhands, pi, swe_agent,
    InputFormat, Sniffed,
};
use crate::ingest::error::{ParseError, ProblemKind};
use crate::ingest::files::{open_regular, problem, Limits, BOM};
use crate::ingest::lines::LineReader;
use std::io::{BufRead, BufReader, Read, Seek};
use std::path::Path;

mod skeleton;

/// How much of a file detection reads first.
const SNIFF_BYTES: usize = 64 * 1024;

/// Lines of a JSONL file judged.
const LINES: usize = 8;

/// What detection makes of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detected {
    /// Recorded runs of this format.
    Format(InputFormat),
    /// Close to `format` without its distinctive structure: not read, for `reason`.
    LookAlike { format: InputFormat, reason: String },
    /// JSON Lines no format claims (issue #30, item 7): records, one per line, of no format
    /// hindsight reads; `nearest` is the format whose records share most of its keys.
    Unrecognised {
        nearest: Option<InputFormat>,
        reason: String,
    },
    /// No recorded run: labels, reports, other JSON.
    Other,
}

impl Detected {
    fn of(format: InputFormat, sniffed: Sniffed) -> Self {
        match sniffed {
            Sniffed::Match => Self::Format(format),
            Sniffed::LookAlike(reason) => Self::LookAlike { format, reason },
            Sniffed::No => Self::Other,
        }
    }

    /// The first recognised format of `judged`, else the first look-alike, else the first
    /// unrecognised, else other.
    fn first(judged: impl IntoIterator<Item = Self>) -> Self {
        let (mut look_alike, mut unrecognised) = (None, None);
        for detected in judged {
            match detected {
                Self::Format(_) => return detected,
                Self::LookAlike { .. } if look_alike.is_none() => look_alike = Some(detected),
                Self::Unrecognised { .. } if unrecognised.is_none() => {
                    unrecognised = Some(detected)
                }
                _ => {}
            }
        }
        look_alike.or(unrecognised).unwrap_or(Self::Other)
    }
}

/// The format of `path`, judged by the structure of its first records; `None` for files
/// that are no recorded run (labels, reports, anything else), for look-alikes and for
/// files that cannot be read ([`detect_file`] says why).
pub fn detect(path: &Path) -> Option<InputFormat> {
    match detect_file(path, &Limits::default()) {
        Ok(Detected::Format(format)) => Some(format),
        _ => None,
    }
}

/// What `path` holds, with a problem for a file that cannot be read or judged: not a
/// regular file, unreadable, or a JSONL file whose first lines are longer than the line cap.
pub fn detect_file(path: &Path, limits: &Limits) -> Result<Detected, ParseError> {
    let shown = crate::ingest::display(path);
    let (file, len) = open_regular(path, &shown)?;
    let io = |e: std::io::Error| problem(&shown, ProblemKind::Io(e.to_string()));
    let mut reader = BufReader::new(file);
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut reader)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(io)?;
    if head.starts_with(opencode::store::MAGIC) {
        return Ok(Detected::of(
            InputFormat::OpenCode,
            opencode::judge_database(path),
        ));
    }
    let text = String::from_utf8_lossy(head.strip_prefix(BOM).unwrap_or(&head));
    let first = text.trim_start();
    let judged = judge(first);
    let cut = (head.len() as u64) < len;
    if matches!(judged, Detected::Format(_)) || !cut {
        return Ok(judged);
    }
    let rewind = |reader: &mut BufReader<std::fs::File>| reader.rewind().map_err(io);
    // The head is cut before the structure that tells: a long value first in a document
    // (issue #32, C). Judge the document's skeleton, streamed from the whole file.
    let structure = match first.as_bytes().first() {
        Some(b'{' | b'[') => {
            rewind(&mut reader)?;
            let sk = skeleton::skeleton(&mut reader).map_err(io)?;
            Some((judge_structure(&sk.text), sk.cut))
        }
        _ => None,
    };
    if let Some((detected @ Detected::Format(_), _)) = &structure {
        return Ok(detected.clone());
    }
    // A JSONL file whose head holds fewer whole lines than are judged (a first prompt or an
    // evaluation's instruction over 64 KiB): read its first lines whole, up to the line cap.
    let whole_lines = first.matches('\n').count() < LINES && first.starts_with('{');
    let whole = if whole_lines {
        rewind(&mut reader)?;
        Some(by_whole_lines(reader, &shown, limits))
    } else {
        None
    };
    let (structure, structure_cut) = structure.unwrap_or((Detected::Other, false));
    let detected = match whole {
        Some(Ok(whole)) => Detected::first([whole, structure, judged]),
        // A line too long to judge leaves the file unjudged unless its structure told.
        Some(Err(e)) if matches!(structure, Detected::Other) => return Err(e),
        Some(Err(_)) => structure,
        None => Detected::first([structure, judged]),
    };
    if structure_cut && detected == Detected::Other {
        return Err(problem(
            &shown,
            ProblemKind::BadValue(format!(
                "its structure is larger than the {} MiB that detection reads, so the \
                 file's format cannot be recognised; --input-format reads it without \
                 recognising it",
                skeleton::MAX_BYTES / (1024 * 1024)
            )),
        ));
    }
    Ok(detected)
}

/// A document judged by its skeleton (compact, complete up to where it was cut): an event
/// history, or one of the trajectory and chat documents.
fn judge_structure(skeleton: &str) -> Detected {
    if skeleton.starts_with('[') {
        return Detected::of(InputFormat::Openhands, openhands::judge(skeleton));
    }
    judge_document(skeleton)
}

/// A format judged from the head of a file (possibly cut mid-line or mid-document).
fn judge(first: &str) -> Detected {
    if first.starts_with('[') {
        return Detected::of(InputFormat::Openhands, openhands::judge(first));
    }
    if !first.starts_with('{') {
        return Detected::Other;
    }
    // A JSONL file: judge by its first lines, each a complete object.
    let lines: Vec<serde_json::Value> = first
        .lines()
        .take(LINES)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let sessions = session_format(&lines);
    if matches!(sessions, Detected::Format(_)) {
        return sessions;
    }
    Detected::first([judge_document(first), sessions, unrecognised(&lines)])
}

/// A JSON document (or an evaluation output's first line), judged by its leading keys.
fn judge_document(text: &str) -> Detected {
    let mini = if mini_swe_agent::sniff(text) {
        Detected::Format(InputFormat::MiniSweAgent)
    } else {
        Detected::Other
    };
    Detected::first([
        mini,
        Detected::of(InputFormat::SweAgent, swe_agent::judge(text)),
        Detected::of(InputFormat::Openhands, openhands::judge(text)),
        Detected::of(InputFormat::Atif, atif::judge(text)),
        Detected::of(InputFormat::GeminiCli, gemini_cli::judge_document(text)),
    ])
}

/// Top-level keys each line-based format's records carry, for naming the format an
/// unrecognised JSON Lines file is nearest to.
const RECORD_KEYS: [(InputFormat, &[&str]); 4] = [
    (
        InputFormat::ClaudeCode,
        &[
            "type",
            "message",
            "uuid",
            "parentUuid",
            "sessionId",
            "timestamp",
            "cwd",
        ],
    ),
    (
        InputFormat::Pi,
        &[
            "type",
            "id",
            "parentId",
            "timestamp",
            "message",
            "cwd",
            "version",
        ],
    ),
    (
        InputFormat::OpenCodeStream,
        &["type", "timestamp", "sessionID", "part", "parts", "error"],
    ),
    (
        InputFormat::Openhands,
        &[
            "instance_id",
            "history",
            "instruction",
            "metadata",
            "test_result",
        ],
    ),
];

/// Record keys a JSON Lines file shares with a format to be named near it.
const NEAR: usize = 3;

/// JSON Lines no format claims: at least two of the first lines are whole objects. A
/// single JSON document (its first line `{`) or one object on one line is not JSON Lines:
/// labels, reports and configuration files stay unlisted.
fn unrecognised(lines: &[serde_json::Value]) -> Detected {
    let records: Vec<&serde_json::Map<String, serde_json::Value>> = lines
        .iter()
        .filter_map(serde_json::Value::as_object)
        .collect();
    if records.len() < 2 {
        return Detected::Other;
    }
    let keys: std::collections::BTreeSet<&str> = records
        .iter()
        .flat_map(|r| r.keys().map(String::as_str))
        .collect();
    let shared = |names: &[&str]| names.iter().filter(|k| keys.contains(*k)).count();
    // `type` and `timestamp` alone are in every log: near means more than those.
    let nearest = RECORD_KEYS
        .iter()
        .map(|(format, names)| (shared(names), *format))
        .filter(|(n, _)| *n >= NEAR)
        .max_by_key(|(n, format)| (*n, std::cmp::Reverse(*format)))
        .map(|(_, format)| format);
    let listed: Vec<&str> = keys.iter().take(8).copied().collect();
    let reason = format!(
        "JSON Lines whose records match no format hindsight reads (their keys: {}{})",
        listed.join(", "),
        if keys.len() > listed.len() {
            ", ..."
        } else {
            ""
        }
    );
    Detected::Unrecognised { nearest, reason }
}

/// The session-log format `lines` (a file's first lines) belong to, or resemble.
fn session_format(lines: &[serde_json::Value]) -> Detected {
    if lines.iter().any(claude_code::sniff) {
        return Detected::Format(InputFormat::ClaudeCode);
    }
    let claude = if lines.iter().any(claude_code::resembles) {
        Detected::LookAlike {
            format: InputFormat::ClaudeCode,
            reason: claude_code::LOOK_ALIKE.into(),
        }
    } else {
        Detected::Other
    };
    let stream = Detected::of(
        InputFormat::ClaudeCodeStream,
        claude_code::stream::judge(lines),
    );
    if matches!(stream, Detected::Format(_)) {
        return stream;
    }
    Detected::first([
        Detected::of(InputFormat::Pi, pi::judge(lines)),
        Detected::of(InputFormat::Codex, codex::judge(lines)),
        Detected::of(InputFormat::GeminiCli, gemini_cli::judge(lines)),
        Detected::of(InputFormat::OpenCodeStream, opencode::judge_stream(lines)),
        claude,
        stream,
    ])
}

/// Judges a JSONL file by its first 8 non-blank lines read whole, reading no more than
/// the line cap in all: as a session log, or by its first line as an OpenHands evaluation
/// output. A line over the cap that leaves the file unjudged is a problem: the file may be
/// a recorded run whose format cannot be recognised, so it is not passed over in silence.
fn by_whole_lines(
    reader: impl BufRead,
    shown: &str,
    limits: &Limits,
) -> Result<Detected, ParseError> {
    let mut lines = LineReader::new(reader, limits.max_line);
    let (mut budget, mut too_long, mut judged) = (limits.max_line, None, 0);
    let (mut parsed, mut first) = (Vec::new(), None);
    while let Some(line) = lines.next_line() {
        let line = line.map_err(|e| problem(shown, ProblemKind::Io(e.to_string())))?;
        if line.too_long {
            too_long = too_long.or(Some(line.number));
            break;
        }
        if line.bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = String::from_utf8_lossy(line.bytes);
        parsed.extend(serde_json::from_str::<serde_json::Value>(&text).ok());
        first.get_or_insert_with(|| text.into_owned());
        judged += 1;
        budget = budget.saturating_sub(line.raw_len);
        if judged == LINES || budget == 0 {
            break;
        }
    }
    let evaluation = first.as_deref().map_or(Detected::Other, |line| {
        Detected::of(InputFormat::Openhands, openhands::judge(line))
    });
    let judged = Detected::first([session_format(&parsed), evaluation, unrecognised(&parsed)]);
    match (too_long, &judged) {
        (Some(number), Detected::Other) => Err(ParseError {
            path: shown.to_string(),
            line: Some(number),
            field: None,
            kind: ProblemKind::BadValue(format!(
                "longer than the {} MiB line cap (--max-line-mib), so the file's format \
                 cannot be recognised; --input-format reads it without recognising it",
                limits.line_mib()
            )),
        }),
        _ => Ok(judged),
    }
}
