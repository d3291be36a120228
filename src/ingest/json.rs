//! Typed field access over simd-json's values, with errors that name the field.
//!
//! Ingest never trusts a record's shape: each accessor says which field was missing
//! or of the wrong type, so a bad record is reported as `file:line: field `x`: ...`.
//!
//! The accessors read either a built value ([`BorrowedValue`]) or simd-json's tape
//! ([`TapeValue`], [`read_tape`]): frames, the large documents, are read from the
//! tape, with no value tree built and dropped for each (issue #13).

use super::error::{FieldError, ProblemKind};
use crate::model::MAX_TOKENS;
use simd_json::prelude::*;
use simd_json::{BorrowedValue, Node};

pub type Object<'a> = simd_json::value::borrowed::Object<'a>;
pub type TapeValue<'t, 'i> = simd_json::tape::Value<'t, 'i>;

/// A JSON value the accessors read, whose strings live for `'v`: a built value or a value
/// on the tape.
pub trait Json<'v>: Copy {
    /// The value's objects and arrays.
    type Object: Fields<'v, Value = Self>;
    type Array: IntoIterator<Item = Self>;
    fn kind(self) -> ValueType;
    fn null(self) -> bool {
        self.kind() == ValueType::Null
    }
    fn u64(self) -> Option<u64>;
    fn i64(self) -> Option<i64>;
    /// A number of any kind, as `f64`.
    fn f64(self) -> Option<f64>;
    fn bool(self) -> Option<bool>;
    fn str(self) -> Option<&'v str>;
    fn object(self) -> Option<Self::Object>;
    fn array(self) -> Option<Self::Array>;
}

/// A JSON object the accessors read fields of.
pub trait Fields<'v>: Copy {
    type Value: Json<'v>;
    fn field(self, key: &str) -> Option<Self::Value>;
}

/// The scalar readings, the same for both kinds of value: simd-json's own, through its
/// `ValueAsScalar` and `TypedValue`.
macro_rules! scalars {
    () => {
        fn kind(self) -> ValueType {
            self.value_type()
        }
        fn u64(self) -> Option<u64> {
            self.as_u64()
        }
        fn i64(self) -> Option<i64> {
            self.as_i64()
        }
        fn f64(self) -> Option<f64> {
            self.cast_f64()
        }
        fn bool(self) -> Option<bool> {
            self.as_bool()
        }
    };
}

impl<'v, 'a> Json<'v> for &'v BorrowedValue<'a> {
    type Object = &'v Object<'a>;
    type Array = &'v Vec<BorrowedValue<'a>>;
    scalars!();
    fn str(self) -> Option<&'v str> {
        self.as_str()
    }
    fn object(self) -> Option<Self::Object> {
        self.as_object()
    }
    fn array(self) -> Option<Self::Array> {
        self.as_array()
    }
}

impl<'v, 'a> Fields<'v> for &'v Object<'a> {
    type Value = &'v BorrowedValue<'a>;
    fn field(self, key: &str) -> Option<Self::Value> {
        self.get(key)
    }
}

impl<'t, 'i: 't> Json<'t> for TapeValue<'t, 'i> {
    type Object = TapeObject<'t, 'i>;
    type Array = simd_json::tape::array::Iter<'t, 'i>;
    scalars!();
    fn str(self) -> Option<&'t str> {
        self.into_string()
    }
    fn object(self) -> Option<Self::Object> {
        self.is_object().then_some(TapeObject(self))
    }
    fn array(self) -> Option<Self::Array> {
        Some(self.into_array()?.iter())
    }
}

/// An object on the tape (simd-json's own tape object is not `Copy`).
#[derive(Clone, Copy)]
pub struct TapeObject<'t, 'i>(TapeValue<'t, 'i>);

impl<'t, 'i: 't> Fields<'t> for TapeObject<'t, 'i> {
    type Value = TapeValue<'t, 'i>;
    fn field(self, key: &str) -> Option<Self::Value> {
        self.0.into_object()?.get(key)
    }
}

/// Maps a simd-json failure to a problem kind (invalid UTF-8 is its own kind).
pub fn json_problem(e: &simd_json::Error) -> ProblemKind {
    if matches!(e.error(), simd_json::ErrorType::InvalidUtf8) {
        ProblemKind::InvalidUtf8
    } else {
        ProblemKind::InvalidJson(e.to_string())
    }
}

/// Parses one JSON value, refusing an object that names a key twice: simd-json would keep
/// both and read the first, so which one the writer meant is unknown. The field of the
/// error is the repeated key's path (`args.command`); empty for JSON that does not parse.
pub fn parse_unique<'a>(
    bytes: &'a mut [u8],
    buffers: &mut simd_json::Buffers,
) -> Result<BorrowedValue<'a>, FieldError> {
    read_tape(bytes, None, buffers, built)
}

/// This thread's simd-json buffers, lent until dropped: they grow to the largest document
/// the thread has read and are reused, where a fresh set per run grew (and copied) its
/// way up again on every run's frames (issue #13). A second loan while one is out gets a
/// fresh set.
pub struct ThreadBuffers(simd_json::Buffers);

thread_local! {
    static BUFFERS: std::cell::Cell<Option<simd_json::Buffers>> = const { std::cell::Cell::new(None) };
}

impl ThreadBuffers {
    pub fn take() -> Self {
        Self(BUFFERS.take().unwrap_or_default())
    }
}

impl std::ops::Deref for ThreadBuffers {
    type Target = simd_json::Buffers;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for ThreadBuffers {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for ThreadBuffers {
    fn drop(&mut self) {
        BUFFERS.set(Some(std::mem::take(&mut self.0)));
    }
}

/// The value a tape holds, built.
fn built<'a>(root: TapeValue<'_, 'a>) -> BorrowedValue<'a> {
    simd_json::value::lazy::Value::from_tape(root).into_value()
}

/// Parses one JSON value as [`parse_unique`] does, with the same repeated-key check, and
/// gives `read` its root on the tape instead of building a value: what `read` keeps of it
/// is all that is made. With `padded_len`, the document is `bytes[..padded_len]` and
/// `bytes` holds at least [`simd_json::INPUT_PADDING`] bytes more (of any content):
/// simd-json then parses it where it lies instead of first copying it into a padded buffer
/// of its own.
///
/// The tape is this thread's, emptied first: it grows to the size of the largest document,
/// and each frame and event line needs one only while it is read.
pub fn read_tape<'a, T>(
    bytes: &'a mut [u8],
    padded_len: Option<usize>,
    buffers: &mut simd_json::Buffers,
    read: impl FnOnce(TapeValue<'_, 'a>) -> T,
) -> Result<T, FieldError> {
    thread_local! {
        static TAPE: std::cell::Cell<Option<simd_json::Tape<'static>>> = const { std::cell::Cell::new(None) };
    }
    let mut tape = TAPE.take().unwrap_or_else(simd_json::Tape::null).reset();
    let filled = match padded_len {
        Some(len) => simd_json::fill_tape_padded(bytes, len, buffers, &mut tape),
        None => simd_json::fill_tape(bytes, buffers, &mut tape),
    };
    let read = filled
        .map_err(|e| FieldError::new("", json_problem(&e)))
        .and_then(|()| match first_duplicate(&tape.0) {
            Some(at) => Err(FieldError::new(
                path_to(&tape.0, at),
                ProblemKind::DuplicateKey,
            )),
            None => Ok(read(tape.as_value())),
        });
    TAPE.set(Some(tape.reset()));
    read
}

/// Nodes a value spans on the tape, itself included.
fn span(node: &Node<'_>) -> usize {
    match node {
        Node::Object { count, .. } | Node::Array { count, .. } => count + 1,
        _ => 1,
    }
}

/// The tape index of the first key an object repeats, if any. One pass over the tape;
/// each object's keys are compared with the ones before them (through a set when there
/// are many), so the check costs little beside the parse.
fn first_duplicate(nodes: &[Node<'_>]) -> Option<usize> {
    const FEW: usize = 16;
    let mut keys: Vec<&str> = Vec::new();
    let mut many: crate::hash::HashSet<&str> = crate::hash::HashSet::default();
    for (i, node) in nodes.iter().enumerate() {
        let Node::Object { len, .. } = *node else {
            continue;
        };
        if len < 2 {
            continue;
        }
        keys.clear();
        many.clear();
        let mut at = i + 1;
        for _ in 0..len {
            let key = match nodes.get(at) {
                Some(Node::String(key)) => *key,
                _ => return None,
            };
            let repeated = if len <= FEW {
                let seen = keys.contains(&key);
                keys.push(key);
                seen
            } else {
                !many.insert(key)
            };
            if repeated {
                return Some(at);
            }
            at += 1 + nodes.get(at + 1).map_or(1, span);
        }
    }
    None
}

/// The path of the key at tape index `target`, from the root: `todos[2].status`.
fn path_to(nodes: &[Node<'_>], target: usize) -> String {
    let mut path = String::new();
    let mut at = 0;
    loop {
        match nodes.get(at) {
            Some(Node::Object { len, .. }) => {
                let mut key_at = at + 1;
                let mut inside = None;
                for _ in 0..*len {
                    let Some(Node::String(key)) = nodes.get(key_at) else {
                        return path;
                    };
                    let value_at = key_at + 1;
                    let end = value_at + nodes.get(value_at).map_or(1, span);
                    if key_at == target || target < end {
                        if !path.is_empty() {
                            path.push('.');
                        }
                        path.push_str(key);
                        inside = (key_at != target).then_some(value_at);
                        break;
                    }
                    key_at = end;
                }
                match inside {
                    Some(next) => at = next,
                    None => return path,
                }
            }
            Some(Node::Array { len, .. }) => {
                let mut value_at = at + 1;
                let mut inside = None;
                for i in 0..*len {
                    let end = value_at + nodes.get(value_at).map_or(1, span);
                    if target < end {
                        path.push_str(&format!("[{i}]"));
                        inside = Some(value_at);
                        break;
                    }
                    value_at = end;
                }
                match inside {
                    Some(next) => at = next,
                    None => return path,
                }
            }
            _ => return path,
        }
    }
}

/// Name of a JSON value's type, for "expected X, found Y" messages.
pub fn type_name<'v>(v: impl Json<'v>) -> String {
    match v.kind() {
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

fn wrong<'v>(field: &str, expected: &'static str, v: impl Json<'v>) -> FieldError {
    FieldError::new(
        field,
        ProblemKind::WrongType {
            expected,
            found: type_name(v),
        },
    )
}

/// A present, non-null field; `null` counts as absent, as the harness writes optional fields.
fn present<'v, O: Fields<'v>>(obj: O, key: &str) -> Option<O::Value> {
    obj.field(key).filter(|v| !v.null())
}

pub fn required<'v, O: Fields<'v>>(obj: O, key: &str, field: &str) -> Result<O::Value, FieldError> {
    present(obj, key).ok_or_else(|| FieldError::new(field, ProblemKind::MissingField))
}

/// A non-negative integer. Floats with no fraction are accepted (JS writes `3.0` rarely, but does).
pub fn as_count<'v>(v: impl Json<'v>, field: &str) -> Result<u64, FieldError> {
    if let Some(n) = v.u64() {
        return Ok(n);
    }
    if let Some(n) = v.i64() {
        return Err(FieldError::new(
            field,
            ProblemKind::BadValue(format!("expected a non-negative integer, found {n}")),
        ));
    }
    if let Some(f) = v.f64().filter(|_| v.kind() == ValueType::F64) {
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

pub fn req_count<'v>(obj: impl Fields<'v>, key: &str) -> Result<u64, FieldError> {
    as_count(required(obj, key, key)?, key)
}

pub fn opt_count<'v>(obj: impl Fields<'v>, key: &str) -> Result<Option<u64>, FieldError> {
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
pub fn req_tokens<'v>(obj: impl Fields<'v>, key: &str) -> Result<u64, FieldError> {
    token_count(req_count(obj, key)?, key)
}

/// An optional token count.
pub fn opt_tokens<'v>(obj: impl Fields<'v>, key: &str) -> Result<Option<u64>, FieldError> {
    opt_count(obj, key)?
        .map(|n| token_count(n, key))
        .transpose()
}

/// An integer that must fit the 32-bit counters the model uses (turns, sessions).
pub fn as_u32<'v>(v: impl Json<'v>, field: &str) -> Result<u32, FieldError> {
    let n = as_count(v, field)?;
    u32::try_from(n)
        .map_err(|_| FieldError::new(field, ProblemKind::BadValue(format!("{n} is out of range"))))
}

pub fn req_str<'v>(obj: impl Fields<'v>, key: &str) -> Result<&'v str, FieldError> {
    let v = required(obj, key, key)?;
    v.str().ok_or_else(|| wrong(key, "string", v))
}

pub fn opt_str<'v>(obj: impl Fields<'v>, key: &str) -> Result<Option<&'v str>, FieldError> {
    present(obj, key)
        .map(|v| v.str().ok_or_else(|| wrong(key, "string", v)))
        .transpose()
}

pub fn opt_string<'v>(obj: impl Fields<'v>, key: &str) -> Result<Option<String>, FieldError> {
    Ok(opt_str(obj, key)?.map(str::to_string))
}

pub fn req_bool<'v>(obj: impl Fields<'v>, key: &str) -> Result<bool, FieldError> {
    let v = required(obj, key, key)?;
    v.bool().ok_or_else(|| wrong(key, "boolean", v))
}

pub fn opt_bool<'v>(obj: impl Fields<'v>, key: &str) -> Result<Option<bool>, FieldError> {
    present(obj, key)
        .map(|v| v.bool().ok_or_else(|| wrong(key, "boolean", v)))
        .transpose()
}

/// A number, integer or not (`0` is as good a cost as `0.0`).
pub fn opt_f64<'v>(obj: impl Fields<'v>, key: &str) -> Result<Option<f64>, FieldError> {
    present(obj, key)
        .map(|v| {
            v.f64()
                .filter(|f| f.is_finite())
                .ok_or_else(|| wrong(key, "finite number", v))
        })
        .transpose()
}

pub fn req_object<'v, O: Fields<'v>>(
    obj: O,
    key: &str,
) -> Result<<O::Value as Json<'v>>::Object, FieldError> {
    let v = required(obj, key, key)?;
    v.object().ok_or_else(|| wrong(key, "object", v))
}

pub fn opt_array<'v, O: Fields<'v>>(
    obj: O,
    key: &str,
) -> Result<Option<<O::Value as Json<'v>>::Array>, FieldError> {
    present(obj, key)
        .map(|v| v.array().ok_or_else(|| wrong(key, "array", v)))
        .transpose()
}

pub fn req_array<'v, O: Fields<'v>>(
    obj: O,
    key: &str,
) -> Result<<O::Value as Json<'v>>::Array, FieldError> {
    let v = required(obj, key, key)?;
    v.array().ok_or_else(|| wrong(key, "array", v))
}

/// An array of strings (e.g. `paths`).
pub fn opt_str_list<'v>(obj: impl Fields<'v>, key: &str) -> Result<Vec<String>, FieldError> {
    let Some(items) = opt_array(obj, key)? else {
        return Ok(Vec::new());
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.str()
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
        BorrowedValue::Object(map) => J::Object(object_to_serde(map)),
    }
}

/// An object as a `serde_json` map ([`to_serde`]).
pub fn object_to_serde(map: &Object<'_>) -> serde_json::Map<String, serde_json::Value> {
    map.iter()
        .map(|(k, v)| (k.to_string(), to_serde(v)))
        .collect()
}

/// Whether `v` is the value `to_serde(v)` would give `s`, without building it: how a
/// repeated value is recognised before it is converted ([`crate::recent`]).
pub fn same_as_serde(v: &BorrowedValue<'_>, s: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (v, s) {
        (BorrowedValue::String(a), J::String(b)) => a == b,
        (BorrowedValue::Array(a), J::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_as_serde(x, y))
        }
        (BorrowedValue::Object(a), J::Object(b)) => same_object_as_serde(a, b),
        (BorrowedValue::Static(_), _) => to_serde(v) == *s,
        _ => false,
    }
}

/// Whether `a` is the map [`object_to_serde`] would give `b` ([`same_as_serde`]).
pub fn same_object_as_serde(
    a: &Object<'_>,
    b: &serde_json::Map<String, serde_json::Value>,
) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, x)| b.get(k.as_ref()).is_some_and(|y| same_as_serde(x, y)))
}

/// A hash of `v` that equal values share whatever the order of their objects' keys
/// (entries are summed), for finding a repeat ([`crate::recent`]).
pub fn hash_value(v: &BorrowedValue<'_>) -> u64 {
    use crate::hash::hash_of;
    match v {
        BorrowedValue::Static(s) => match s {
            simd_json::StaticNode::Null => hash_of(&0u8),
            simd_json::StaticNode::Bool(b) => hash_of(&(1u8, *b)),
            simd_json::StaticNode::I64(n) => hash_of(&(2u8, *n)),
            simd_json::StaticNode::U64(n) => hash_of(&(3u8, *n)),
            simd_json::StaticNode::F64(f) => hash_of(&(4u8, f.to_bits())),
            #[allow(unreachable_patterns)]
            _ => hash_of(&5u8),
        },
        BorrowedValue::String(s) => hash_of(&(6u8, s.as_ref() as &str)),
        BorrowedValue::Array(items) => items.iter().fold(hash_of(&(7u8, items.len())), |h, x| {
            hash_of(&(h, hash_value(x)))
        }),
        BorrowedValue::Object(map) => map.iter().fold(hash_of(&(8u8, map.len())), |h, (k, x)| {
            h.wrapping_add(hash_of(&(k.as_ref() as &str, hash_value(x))))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(text: &str) -> Option<String> {
        let mut bytes = text.as_bytes().to_vec();
        let mut buffers = simd_json::Buffers::default();
        parse_unique(&mut bytes, &mut buffers)
            .err()
            .map(|e| e.field)
    }

    #[test]
    fn repeated_keys_are_found_at_any_depth() {
        assert_eq!(dup(r#"{"a":1,"b":2}"#), None);
        assert_eq!(dup(r#"{"a":1,"a":2}"#).as_deref(), Some("a"));
        assert_eq!(
            dup(r#"{"t":1,"args":{"x":[1,{"y":2}],"c":"a","c":"b"}}"#).as_deref(),
            Some("args.c")
        );
        assert_eq!(
            dup(r#"{"todos":[{"id":1},{"id":2,"s":"a","s":"b"}]}"#).as_deref(),
            Some("todos[1].s")
        );
        // Past 16 keys the check goes through a set.
        let many: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
        let text = format!("{{{},\"k7\":0}}", many.join(","));
        assert_eq!(dup(&text).as_deref(), Some("k7"));
        assert_eq!(dup(&format!("{{{}}}", many.join(","))), None);
        // The same key in two objects is no repeat.
        assert_eq!(dup(r#"[{"a":1},{"a":2}]"#), None);
    }

    #[test]
    fn the_value_is_the_one_simd_json_builds() {
        let mut a = br#"{"type":"x","n":[1,2.5,null,true,"s"],"o":{"k":"v"}}"#.to_vec();
        let mut b = a.clone();
        let mut buffers = simd_json::Buffers::default();
        let unique = parse_unique(&mut a, &mut buffers).expect("parses");
        let plain = simd_json::to_borrowed_value(&mut b).expect("parses");
        assert_eq!(unique, plain);
    }
}

#[cfg(test)]
mod repeat_tests {
    use super::*;

    fn with_value<R>(text: &str, f: impl FnOnce(&BorrowedValue<'_>) -> R) -> R {
        let mut bytes = text.as_bytes().to_vec();
        let mut buffers = simd_json::Buffers::default();
        let value = parse_unique(&mut bytes, &mut buffers).expect("valid");
        f(&value)
    }

    #[test]
    fn a_value_is_the_same_as_its_conversion_and_nothing_else() {
        let texts = [
            r#"{"command":"pytest -x","env":{"A":"1"},"n":[1,2]}"#,
            r#"{"command":"pytest -x","env":{"A":"2"},"n":[1,2]}"#,
            r#"{"command":"pytest -x","env":{"A":"1"},"n":[1,2.0]}"#,
            r#"{"command":"pytest -x","env":{"A":"1"},"n":[1]}"#,
            r#"{"command":"pytest -x","env":{"A":"1"},"m":[1,2]}"#,
            r#"{"command":"pytest -x","env":{"A":"1"},"n":[1,2],"x":true}"#,
            r#"{"command":"pytest -x","env":null,"n":[1,2]}"#,
            r#"["pytest -x"]"#,
            r#""pytest -x""#,
            "-1",
        ];
        let converted: Vec<serde_json::Value> =
            texts.iter().map(|t| with_value(t, to_serde)).collect();
        for (i, text) in texts.iter().enumerate() {
            with_value(text, |v| {
                for (j, c) in converted.iter().enumerate() {
                    assert_eq!(same_as_serde(v, c), i == j, "{text} against {c}");
                }
            });
        }
    }

    #[test]
    fn equal_values_hash_alike_whatever_the_order_of_their_keys() {
        let a = with_value(r#"{"a":1,"b":{"c":[true,null],"d":"x"}}"#, hash_value);
        let b = with_value(r#"{"b":{"d":"x","c":[true,null]},"a":1}"#, hash_value);
        let c = with_value(r#"{"a":1,"b":{"c":[null,true],"d":"x"}}"#, hash_value);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
