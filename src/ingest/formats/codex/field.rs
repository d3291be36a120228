//! Field errors of Codex lines, located by their path in the line (`payload.call_id`).

use crate::ingest::error::{FieldError, ProblemKind};
use serde_json::Value;

pub(super) fn missing(field: &str) -> FieldError {
    FieldError::new(field, ProblemKind::MissingField)
}

/// `found` where `expected` was ([`values::wrong`]: `integer` and `number` told apart).
pub(super) use crate::ingest::formats::values::wrong;

/// A token count: a non-negative integer no larger than 2^53 - 1 (docs/FORMAT.md, *Values*).
pub(super) fn tokens(v: &Value, field: &str) -> Result<u64, FieldError> {
    match v {
        Value::Null => Ok(0),
        Value::Number(n) => match n.as_u64() {
            Some(n) => crate::ingest::json::token_count(n, field),
            None => Err(FieldError::new(
                field,
                ProblemKind::BadValue(format!("expected a non-negative integer, found {n}")),
            )),
        },
        v => Err(wrong(field, "integer", v)),
    }
}
