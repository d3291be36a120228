//! `serde_json` values that refuse an object naming a key twice.
//!
//! `serde_json::Value` keeps the last of two equal keys without a word; the importers that
//! read through serde_json (Claude Code lines, the trajectory documents) parse with
//! [`from_slice`] instead, which builds the same value and fails on a repeated key with its
//! path (`messages[3].content`), so the record is a located problem like any other.

use super::error::{FieldError, ProblemKind};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::RefCell;
use std::fmt;

/// Why a document did not parse.
#[derive(Debug)]
pub enum Error {
    /// Not JSON (or trailing data after the value, for [`from_slice`]).
    Json(serde_json::Error),
    /// A repeated key, with its path.
    Duplicate(String),
}

impl Error {
    /// The problem, with its field for a repeated key; `truncated` turns a parse that ran
    /// out of input into a truncated record.
    pub fn into_field_error(self, truncated: bool) -> FieldError {
        match self {
            Error::Duplicate(path) => FieldError::new(path, ProblemKind::DuplicateKey),
            Error::Json(e) if truncated && e.is_eof() => {
                FieldError::new("", ProblemKind::Truncated)
            }
            Error::Json(e) => FieldError::new("", ProblemKind::InvalidJson(e.to_string())),
        }
    }
}

/// A small JSON file the user hands a command (`--config`, `--prices`, labels), read by the
/// one reader of named files ([`super::files::read_named_file`]: regular files only, capped,
/// a leading byte order mark skipped) and parsed as the recordings are: a key named twice
/// is an error (which of the two was meant is unknown), said with its path (issue #32, J).
/// The error is the reason alone; the caller's message names the path.
pub fn read_user_file(path: &std::path::Path) -> Result<Value, String> {
    let bytes = super::files::read_named_file(path)?;
    from_slice(&bytes).map_err(|e| match e {
        Error::Duplicate(path) => format!("`{path}`: {}", ProblemKind::DuplicateKey),
        Error::Json(e) => format!("not JSON: {e}"),
    })
}

/// Parses one whole JSON value from `bytes`; trailing data is an error.
pub fn from_slice(bytes: &[u8]) -> Result<Value, Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = first(&mut de)?;
    de.end().map_err(Error::Json)?;
    Ok(value)
}

/// Parses the first JSON value of `de`, leaving the rest of the input unread.
pub fn first<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
) -> Result<Value, Error> {
    let path = RefCell::new(None);
    Unique { path: &path }
        .deserialize(de)
        .map_err(|e| match path.into_inner() {
            Some(segments) => Error::Duplicate(join(segments)),
            None => Error::Json(e),
        })
}

/// Segments innermost first, as the error unwound them, joined from the root.
fn join(segments: Vec<String>) -> String {
    let mut path = String::new();
    for segment in segments.into_iter().rev() {
        if !path.is_empty() && !segment.starts_with('[') {
            path.push('.');
        }
        path.push_str(&segment);
    }
    path
}

/// Builds a value as `serde_json::Value` does; on a repeated key, records its path (each
/// enclosing level adds its segment as the error passes through it).
#[derive(Clone, Copy)]
struct Unique<'p> {
    path: &'p RefCell<Option<Vec<String>>>,
}

impl Unique<'_> {
    fn enter(&self, segment: impl FnOnce() -> String) {
        if let Some(segments) = self.path.borrow_mut().as_mut() {
            segments.push(segment());
        }
    }
}

impl<'de> DeserializeSeed<'de> for Unique<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Unique<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        loop {
            match seq.next_element_seed(self) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(Value::Array(items)),
                Err(e) => {
                    let i = items.len();
                    self.enter(|| format!("[{i}]"));
                    return Err(e);
                }
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = match map.next_value_seed(self) {
                Ok(value) => value,
                Err(e) => {
                    self.enter(|| key.clone());
                    return Err(e);
                }
            };
            if members.contains_key(&key) {
                *self.path.borrow_mut() = Some(vec![key]);
                return Err(de::Error::custom("duplicate key"));
            }
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(text: &str) -> Option<String> {
        match from_slice(text.as_bytes()) {
            Err(Error::Duplicate(path)) => Some(path),
            _ => None,
        }
    }

    #[test]
    fn repeated_keys_are_found_with_their_path() {
        assert_eq!(dup(r#"{"a":1,"a":2}"#).as_deref(), Some("a"));
        assert_eq!(
            dup(r#"{"m":[{"x":1},{"c":{"k":1,"k":2}}]}"#).as_deref(),
            Some("m[1].c.k")
        );
        assert_eq!(dup(r#"[[1],[{"z":0,"z":0}]]"#).as_deref(), Some("[1][0].z"));
        assert_eq!(dup(r#"[{"a":1},{"a":2}]"#), None);
    }

    #[test]
    fn values_are_serde_json_values() {
        let text = r#"{"b":[1,-2,2.5,1e400,null,true,"s"],"a":{"u":18446744073709551615}}"#;
        let plain: Result<Value, _> = serde_json::from_str(text);
        match (from_slice(text.as_bytes()), plain) {
            (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs),
            (Err(Error::Json(_)), Err(_)) => {}
            (ours, theirs) => panic!("{ours:?} vs {theirs:?}"),
        }
        let text = r#"{"b":[1,-2,2.5,null,true,"s"],"a":{"u":18446744073709551615}}"#;
        let theirs: Value = serde_json::from_str(text).expect("parses");
        assert_eq!(from_slice(text.as_bytes()).expect("parses"), theirs);
    }

    #[test]
    fn bad_json_and_trailing_data_are_json_errors() {
        assert!(matches!(from_slice(b"{\"a\":"), Err(Error::Json(e)) if e.is_eof()));
        assert!(matches!(from_slice(b"{} {}"), Err(Error::Json(_))));
        let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(matches!(from_slice(deep.as_bytes()), Err(Error::Json(_))));
    }
}
