//! Reading `serde_json` values with their types checked, shared by every importer that
//! reads JSON records: a field of the wrong type is a located problem, never read as absent
//! (docs/FORMAT.md, *Values*; issue #32, H).

use crate::ingest::error::{FieldError, ProblemKind};
use serde_json::Value;

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

/// `found` where `expected` was: a problem at `field`, naming the JSON kind found
/// ([`kind_of`]). The importers that read `serde_json` values share it.
pub fn wrong(field: impl Into<String>, expected: &'static str, found: &Value) -> FieldError {
    let kind = ProblemKind::WrongType {
        expected,
        found: kind_of(found).into(),
    };
    FieldError::new(field, kind)
}

/// An optional field read by `read` (`Value::as_str`, `Value::as_i64`, ...): `None` when
/// absent or `null`; a value `read` refuses is a problem at `field` naming `expected` and
/// the kind found, never read as absent (docs/FORMAT.md, *Values*).
pub fn typed<'v, T>(
    v: Option<&'v Value>,
    field: &str,
    expected: &'static str,
    read: impl FnOnce(&'v Value) -> Option<T>,
) -> Result<Option<T>, FieldError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(v).map(Some).ok_or_else(|| wrong(field, expected, v)),
    }
}

/// An optional string field ([`typed`]).
pub fn opt_str<'v>(v: Option<&'v Value>, field: &str) -> Result<Option<&'v str>, FieldError> {
    typed(v, field, "string", Value::as_str)
}

/// The value at `keys` under `v` (itself at `at`): `None` when a key on the way is absent or
/// `null`; a step that is no object is a problem naming that step (`info.config`).
pub fn lookup<'v>(
    v: Option<&'v Value>,
    at: &str,
    keys: &[&str],
) -> Result<Option<&'v Value>, FieldError> {
    let mut v = v;
    let mut path = at.to_string();
    for key in keys {
        let Some(obj) = typed(v, &path, "object", Value::as_object)? else {
            return Ok(None);
        };
        v = obj.get(*key);
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    }
    Ok(v)
}

/// The optional field at `keys` under `v` (itself at `at`), read as [`typed`] reads it and
/// located by its whole path (`info.config.environment.cwd`).
pub fn typed_at<'v, T>(
    v: Option<&'v Value>,
    at: &str,
    keys: &[&str],
    expected: &'static str,
    read: impl FnOnce(&'v Value) -> Option<T>,
) -> Result<Option<T>, FieldError> {
    let found = lookup(v, at, keys)?;
    let field = [at]
        .into_iter()
        .chain(keys.iter().copied())
        .filter(|k| !k.is_empty())
        .collect::<Vec<_>>()
        .join(".");
    typed(found, &field, expected, read)
}

/// The optional string at `keys` under `v` ([`typed_at`]).
pub fn str_at<'v>(
    v: Option<&'v Value>,
    at: &str,
    keys: &[&str],
) -> Result<Option<&'v str>, FieldError> {
    typed_at(v, at, keys, "string", Value::as_str)
}

/// A value that is an object, itself: what [`typed`] reads to check an object it then
/// looks into.
pub fn object(v: &Value) -> Option<&Value> {
    v.is_object().then_some(v)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_field_of_the_wrong_type_is_a_problem_not_an_absence() {
        let wrong = |field: &str, expected, found: &str| {
            let found = found.to_string();
            FieldError::new(field, ProblemKind::WrongType { expected, found })
        };
        let doc = json!({"s": "x", "n": null, "i": 5, "o": {"a": {"b": "deep"}}, "f": 1.5});
        assert_eq!(opt_str(doc.get("s"), "s"), Ok(Some("x")));
        assert_eq!(opt_str(doc.get("n"), "n"), Ok(None));
        assert_eq!(opt_str(doc.get("absent"), "absent"), Ok(None));
        assert_eq!(
            opt_str(doc.get("i"), "i"),
            Err(wrong("i", "string", "integer"))
        );
        let int = |key: &str| typed(doc.get(key), key, "integer", Value::as_i64);
        assert_eq!(int("i"), Ok(Some(5)));
        assert_eq!(int("f"), Err(wrong("f", "integer", "number")));
        let deep = lookup(Some(&doc), "", &["o", "a", "b"]);
        assert_eq!(deep, Ok(Some(&json!("deep"))));
        assert_eq!(lookup(Some(&doc), "", &["o", "x", "b"]), Ok(None));
        assert_eq!(lookup(Some(&doc), "", &["n", "b"]), Ok(None));
        // The step that is no object is named, from the root the caller gives.
        assert_eq!(
            lookup(doc.get("o"), "o", &["a", "b", "c"]),
            Err(wrong("o.a.b", "object", "string"))
        );
        assert_eq!(str_at(Some(&doc), "", &["o", "a", "b"]), Ok(Some("deep")));
        assert_eq!(
            str_at(doc.get("o"), "o", &["a"]),
            Err(wrong("o.a", "string", "object"))
        );
    }
}
