//! Typed field access over simd-json's borrowed values, with errors that name the field.
//!
//! Ingest never trusts a record's shape: each accessor says which field was missing
//! or of the wrong type, so a bad record is reported as `file:line: field `x`: ...`.

use super::error::{FieldError, ProblemKind};
use crate::model::MAX_TOKENS;
use simd_json::prelude::*;
use simd_json::BorrowedValue;

pub type Object<'a> = simd_json::value::borrowed::Object<'a>;

/// Name of a JSON value's type, for "expected X, found Y" messages.
pub fn type_name(v: &BorrowedValue<'_>) -> String {
    match v.value_type() {
        ValueType::Null => "null",
        ValueType::Bool => "boolean",
        ValueType::I64 | ValueType::U64 | ValueType::I128 | ValueType::U128 => "integer",
        ValueType::F64 => "number",
        ValueType::String => "string",
        ValueType::Array => "array",
        ValueType::Object => "object",
        _ => "value",
    }
    .to_string()
}

fn wrong(field: &str, expected: &'static str, v: &BorrowedValue<'_>) -> FieldError {
    FieldError::new(
        field,
        ProblemKind::WrongType {
            expected,
            found: type_name(v),
        },
    )
}

/// A present, non-null field; `null` counts as absent, as the harness writes optional fields.
fn present<'v, 'a>(obj: &'v Object<'a>, key: &str) -> Option<&'v BorrowedValue<'a>> {
    obj.get(key).filter(|v| !v.is_null())
}

pub fn required<'v, 'a>(
    obj: &'v Object<'a>,
    key: &str,
    field: &str,
) -> Result<&'v BorrowedValue<'a>, FieldError> {
    present(obj, key).ok_or_else(|| FieldError::new(field, ProblemKind::MissingField))
}

/// A non-negative integer. Floats with no fraction are accepted (JS writes `3.0` rarely, but does).
pub fn as_count(v: &BorrowedValue<'_>, field: &str) -> Result<u64, FieldError> {
    if let Some(n) = v.as_u64() {
        return Ok(n);
    }
    if let Some(n) = v.as_i64() {
        return Err(FieldError::new(
            field,
            ProblemKind::BadValue(format!("expected a non-negative integer, found {n}")),
        ));
    }
    if let Some(f) = v.as_f64() {
        if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 9.0e15 {
            return Ok(f as u64);
        }
        return Err(FieldError::new(
            field,
            ProblemKind::BadValue(format!("expected a non-negative integer, found {f}")),
        ));
    }
    Err(wrong(field, "integer", v))
}

pub fn req_count(obj: &Object<'_>, key: &str) -> Result<u64, FieldError> {
    as_count(required(obj, key, key)?, key)
}

pub fn opt_count(obj: &Object<'_>, key: &str) -> Result<Option<u64>, FieldError> {
    present(obj, key).map(|v| as_count(v, key)).transpose()
}

/// `n` as the token count of `field`: above [`MAX_TOKENS`] it is a problem.
pub fn token_count(n: u64, field: &str) -> Result<u64, FieldError> {
    if n > MAX_TOKENS {
        return Err(FieldError::new(
            field,
            ProblemKind::BadValue(format!("{n} is not a token count (above 2^53 - 1)")),
        ));
    }
    Ok(n)
}

/// A required token count.
pub fn req_tokens(obj: &Object<'_>, key: &str) -> Result<u64, FieldError> {
    token_count(req_count(obj, key)?, key)
}

/// An optional token count.
pub fn opt_tokens(obj: &Object<'_>, key: &str) -> Result<Option<u64>, FieldError> {
    opt_count(obj, key)?
        .map(|n| token_count(n, key))
        .transpose()
}

/// An integer that must fit the 32-bit counters the model uses (turns, sessions).
pub fn as_u32(v: &BorrowedValue<'_>, field: &str) -> Result<u32, FieldError> {
    let n = as_count(v, field)?;
    u32::try_from(n)
        .map_err(|_| FieldError::new(field, ProblemKind::BadValue(format!("{n} is out of range"))))
}

pub fn req_str<'v>(obj: &'v Object<'_>, key: &str) -> Result<&'v str, FieldError> {
    let v = required(obj, key, key)?;
    v.as_str().ok_or_else(|| wrong(key, "string", v))
}

pub fn opt_str<'v>(obj: &'v Object<'_>, key: &str) -> Result<Option<&'v str>, FieldError> {
    present(obj, key)
        .map(|v| v.as_str().ok_or_else(|| wrong(key, "string", v)))
        .transpose()
}

pub fn opt_string(obj: &Object<'_>, key: &str) -> Result<Option<String>, FieldError> {
    Ok(opt_str(obj, key)?.map(str::to_string))
}

pub fn req_bool(obj: &Object<'_>, key: &str) -> Result<bool, FieldError> {
    let v = required(obj, key, key)?;
    v.as_bool().ok_or_else(|| wrong(key, "boolean", v))
}

pub fn opt_bool(obj: &Object<'_>, key: &str) -> Result<Option<bool>, FieldError> {
    present(obj, key)
        .map(|v| v.as_bool().ok_or_else(|| wrong(key, "boolean", v)))
        .transpose()
}

pub fn opt_f64(obj: &Object<'_>, key: &str) -> Result<Option<f64>, FieldError> {
    present(obj, key)
        .map(|v| {
            v.as_f64()
                .filter(|f| f.is_finite())
                .ok_or_else(|| wrong(key, "finite number", v))
        })
        .transpose()
}

pub fn req_object<'v, 'a>(obj: &'v Object<'a>, key: &str) -> Result<&'v Object<'a>, FieldError> {
    let v = required(obj, key, key)?;
    v.as_object().ok_or_else(|| wrong(key, "object", v))
}

pub fn opt_array<'v, 'a>(
    obj: &'v Object<'a>,
    key: &str,
) -> Result<Option<&'v Vec<BorrowedValue<'a>>>, FieldError> {
    present(obj, key)
        .map(|v| v.as_array().ok_or_else(|| wrong(key, "array", v)))
        .transpose()
}

pub fn req_array<'v, 'a>(
    obj: &'v Object<'a>,
    key: &str,
) -> Result<&'v Vec<BorrowedValue<'a>>, FieldError> {
    let v = required(obj, key, key)?;
    v.as_array().ok_or_else(|| wrong(key, "array", v))
}

/// An array of strings (e.g. `paths`).
pub fn opt_str_list(obj: &Object<'_>, key: &str) -> Result<Vec<String>, FieldError> {
    let Some(items) = opt_array(obj, key)? else {
        return Ok(Vec::new());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| wrong(&format!("{key}[{i}]"), "string", v))
        })
        .collect()
}

/// Prefixes a nested field error with its parent, e.g. `todos[2].status`.
pub fn nested(parent: &str, e: FieldError) -> FieldError {
    let field = if e.field.is_empty() {
        parent.to_string()
    } else {
        format!("{parent}.{}", e.field)
    };
    FieldError::new(field, e.kind)
}

/// Converts to an owned `serde_json` value; its maps are sorted, so the result is canonical.
pub fn to_serde(v: &BorrowedValue<'_>) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        BorrowedValue::Static(s) => match s {
            simd_json::StaticNode::Null => J::Null,
            simd_json::StaticNode::Bool(b) => J::Bool(*b),
            simd_json::StaticNode::I64(n) => J::from(*n),
            simd_json::StaticNode::U64(n) => J::from(*n),
            simd_json::StaticNode::F64(f) => {
                serde_json::Number::from_f64(*f).map_or(J::Null, J::Number)
            }
            #[allow(unreachable_patterns)]
            _ => J::Null,
        },
        BorrowedValue::String(s) => J::String(s.to_string()),
        BorrowedValue::Array(items) => J::Array(items.iter().map(to_serde).collect()),
        BorrowedValue::Object(map) => J::Object(
            map.iter()
                .map(|(k, v)| (k.to_string(), to_serde(v)))
                .collect(),
        ),
    }
}
