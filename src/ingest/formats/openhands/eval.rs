//! OpenHands evaluation outputs (`output.jsonl`): the evaluation harness appends one
//! `EvalOutput` per instance, one JSON object a line (`instance_id`, `instruction`,
//! `metadata`, `history`, `metrics`, `error`, `test_result`, ...). Files run to hundreds of
//! megabytes, so nothing here holds more than one line: discovery streams the file once
//! for each line's instance id and byte offset ([`instances`]), and each instance is read
//! later from its own line ([`import_line`]) as a run named by its instance id.

use super::history::Import;
use super::scan::is_instance_line;
use crate::ingest::error::{ParseError, Policy, ProblemKind};
use crate::ingest::files::{open_regular, problem, Limits};
use crate::ingest::formats::kind_of;
use crate::ingest::lines::{LineAt, LineReader};
use crate::ingest::{display, unique, LoadedRun};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::HashMap;
use std::fmt;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// One instance of an evaluation output: its id and the line that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub id: String,
    pub at: LineAt,
}

/// The instances of one file, in file order, and the lines that could not be read (each
/// located by file and line; a bad line skips only its instance).
#[derive(Debug, Clone, Default)]
pub struct Instances {
    pub runs: Vec<Instance>,
    pub problems: Vec<ParseError>,
}

/// How much of a first line over the line cap is read to tell its layout.
const HEAD_BYTES: u64 = 64 * 1024;

/// The instances of `path` when it is an evaluation output: its first non-blank line is
/// an `EvalOutput` object on its own (an `instance_id` and a `history` array on that line).
/// `None` for any other layout (a history document, pretty-printed or not). Only a file
/// that cannot be opened or read is an error.
pub fn instances(path: &Path, limits: &Limits) -> Result<Option<Instances>, ParseError> {
    let shown = display(path);
    let (file, _) = open_regular(path, &shown)?;
    let io = |e: std::io::Error| problem(&shown, ProblemKind::Io(e.to_string()));
    let mut lines = LineReader::new(BufReader::new(file), limits.max_line);
    let mut found = Instances::default();
    let mut first_line: HashMap<String, u64> = HashMap::new();
    let (mut offset, mut judged) = (0u64, false);
    while let Some(line) = lines.next_line() {
        let line = line.map_err(io)?;
        let at = LineAt {
            offset,
            number: line.number,
        };
        offset += line.raw_len;
        if !line.too_long && line.bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !judged {
            judged = true;
            let instance = if line.too_long {
                head_is_instance(path, &shown, at.offset)?
            } else {
                is_instance_line(&String::from_utf8_lossy(line.bytes))
            };
            if !instance {
                return Ok(None);
            }
        }
        let located = |field: Option<&str>, kind| ParseError {
            path: shown.clone(),
            line: Some(at.number),
            field: field.map(str::to_string),
            kind,
        };
        if line.too_long {
            let kind = ProblemKind::LineTooLong(limits.line_mib());
            found.problems.push(located(None, kind));
            continue;
        }
        match instance_id(line.bytes, line.terminated) {
            Ok(id) => match first_line.get(&id) {
                Some(earlier) => {
                    let kind = ProblemKind::BadValue(format!(
                        "instance `{id}` is already on line {earlier}: only the first is read"
                    ));
                    found.problems.push(located(Some("instance_id"), kind));
                }
                None => {
                    first_line.insert(id.clone(), at.number);
                    found.runs.push(Instance { id, at });
                }
            },
            Err((field, kind)) => found.problems.push(located(field, kind)),
        }
    }
    Ok(Some(found))
}

/// Whether the first 64 KiB of the line at `offset` (a line over the cap) start an
/// `EvalOutput` object.
fn head_is_instance(path: &Path, shown: &str, offset: u64) -> Result<bool, ParseError> {
    let io = |e: std::io::Error| problem(shown, ProblemKind::Io(e.to_string()));
    let (mut file, _) = open_regular(path, shown)?;
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut head = Vec::new();
    file.take(HEAD_BYTES).read_to_end(&mut head).map_err(io)?;
    let head = head
        .strip_prefix(crate::ingest::files::BOM)
        .unwrap_or(&head);
    Ok(is_instance_line(&String::from_utf8_lossy(head)))
}

/// A line's instance id, the line checked whole as JSON (without building it). A line
/// with no id, or no `history` array, is a problem (field, kind).
fn instance_id(
    bytes: &[u8],
    terminated: bool,
) -> Result<String, (Option<&'static str>, ProblemKind)> {
    if std::str::from_utf8(bytes).is_err() {
        return Err((None, ProblemKind::InvalidUtf8));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let head = match de
        .deserialize_any(HeadVisitor)
        .and_then(|head| de.end().map(|()| head))
    {
        Ok(head) => head,
        Err(e) if e.is_eof() && !terminated => return Err((None, ProblemKind::Truncated)),
        Err(e) => return Err((None, ProblemKind::InvalidJson(e.to_string()))),
    };
    let Some(head) = head else {
        return Err((None, ProblemKind::NotAnObject));
    };
    if let Some(key) = head.repeated {
        return Err((Some(key), ProblemKind::DuplicateKey));
    }
    let id = match head.id {
        None | Some(serde_json::Value::Null) => {
            return Err((Some("instance_id"), ProblemKind::MissingField))
        }
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => s,
        Some(serde_json::Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
        Some(other) => {
            return Err((
                Some("instance_id"),
                ProblemKind::WrongType {
                    expected: "non-empty string or integer",
                    found: kind_of(&other).into(),
                },
            ))
        }
    };
    match head.history {
        Some(Kind::Array) => Ok(id),
        None | Some(Kind::Null) => Err((Some("history"), ProblemKind::MissingField)),
        Some(Kind::Other(found)) => Err((
            Some("history"),
            ProblemKind::WrongType {
                expected: "array of events",
                found: found.into(),
            },
        )),
    }
}

/// What discovery keeps of a line: the instance id and the kind of `history`.
struct Head {
    id: Option<serde_json::Value>,
    history: Option<Kind>,
    /// `instance_id` or `history` named twice.
    repeated: Option<&'static str>,
}

/// The JSON kind of a value read past without being built.
enum Kind {
    Array,
    Null,
    Other(&'static str),
}

/// Reads a line's top-level object; `None` when the line is JSON but no object.
struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = Option<Head>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut head = Head {
            id: None,
            history: None,
            repeated: None,
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "instance_id" => {
                    if head.id.is_some() {
                        head.repeated.get_or_insert("instance_id");
                    }
                    head.id = Some(map.next_value()?);
                }
                "history" => {
                    if head.history.is_some() {
                        head.repeated.get_or_insert("history");
                    }
                    head.history = Some(map.next_value::<KindOf>()?.0);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(head))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A value's kind, its content read past.
struct KindOf(Kind);

impl<'de> de::Deserialize<'de> for KindOf {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KindOf;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<KindOf, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(KindOf(Kind::Array))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KindOf, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(KindOf(Kind::Other("object")))
            }

            fn visit_unit<E: de::Error>(self) -> Result<KindOf, E> {
                Ok(KindOf(Kind::Null))
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<KindOf, E> {
                Ok(KindOf(Kind::Other("boolean")))
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<KindOf, E> {
                Ok(KindOf(Kind::Other("integer")))
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<KindOf, E> {
                Ok(KindOf(Kind::Other("integer")))
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<KindOf, E> {
                Ok(KindOf(Kind::Other("number")))
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<KindOf, E> {
                Ok(KindOf(Kind::Other("string")))
            }
        }
        d.deserialize_any(V)
    }
}

/// Reads the instance on the line at `at` as one run: its `history` as a history document
/// is read, problems located by file, line and field (`history[3].source`).
pub fn import_line(
    path: &Path,
    at: LineAt,
    policy: Policy,
    limits: &Limits,
) -> Result<LoadedRun, ParseError> {
    let shown = display(path);
    let io = |e: std::io::Error| problem(&shown, ProblemKind::Io(e.to_string()));
    let (mut file, _) = open_regular(path, &shown)?;
    file.seek(SeekFrom::Start(at.offset)).map_err(io)?;
    let mut lines = LineReader::new(BufReader::new(file), limits.max_line);
    let mut run = Import::new(&shown, policy, Some(at.number));
    let Some(line) = lines.next_line() else {
        return run.fail(
            "",
            ProblemKind::BadValue("the line is gone (file changed)".into()),
        );
    };
    let line = line.map_err(io)?;
    run.b.stats.bytes = line.raw_len;
    if line.too_long {
        return run.fail("", ProblemKind::LineTooLong(limits.line_mib()));
    }
    if std::str::from_utf8(line.bytes).is_err() {
        return run.fail("", ProblemKind::InvalidUtf8);
    }
    let doc = match unique::from_slice(line.bytes) {
        Ok(doc) => doc,
        Err(e) => {
            let e = e.into_field_error(!line.terminated);
            return run.fail(&e.field, e.kind);
        }
    };
    if !doc.is_object() {
        return run.fail("", ProblemKind::NotAnObject);
    }
    super::history_of(run, &doc)
}
