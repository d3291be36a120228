//! The text a write or edit call put into its file, from the call's recorded arguments.
//!
//! Harnesses spell the keys differently (`content`/`contents`/`file_text` for whole-file
//! writes; `new_string`/`newString`/`new_str`/`newText`/`new_text` for edits, and batches
//! of edits under `edits`); these helpers read all of them and never the tool's name.

use serde_json::{Map, Value};

const CONTENT: [&str; 3] = ["content", "contents", "file_text"];
const NEW: [&str; 5] = ["new_string", "newString", "new_str", "newText", "new_text"];
const OLD: [&str; 5] = ["old_string", "oldString", "old_str", "oldText", "old_text"];
const REPLACE_ALL: [&str; 2] = ["replace_all", "replaceAll"];

fn str_arg<'a>(args: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// The whole text a write call gave its file.
pub fn full_text(args: &Map<String, Value>) -> Option<&str> {
    str_arg(args, &CONTENT)
}

/// One replacement of an edit: the old text (if recorded), the new text, and whether
/// every occurrence is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replacement<'a> {
    pub old: Option<&'a str>,
    pub new: &'a str,
    pub all: bool,
}

fn replacement(args: &Map<String, Value>) -> Option<Replacement<'_>> {
    Some(Replacement {
        old: str_arg(args, &OLD),
        new: str_arg(args, &NEW)?,
        all: REPLACE_ALL
            .iter()
            .any(|k| args.get(*k).and_then(Value::as_bool) == Some(true)),
    })
}

/// The replacements of an edit call: its own, then each of a batch's `edits`.
pub fn replacements(args: &Map<String, Value>) -> Vec<Replacement<'_>> {
    let batch = args
        .get("edits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter_map(replacement);
    replacement(args).into_iter().chain(batch).collect()
}

/// Every text a call wrote or replaced: a write's content, or each edit's old and new text.
pub fn touched_texts(args: &Map<String, Value>) -> Vec<&str> {
    if let Some(text) = full_text(args) {
        return vec![text];
    }
    replacements(args)
        .iter()
        .flat_map(|r| r.old.into_iter().chain([r.new]))
        .collect()
}

/// `text` with the replacements applied; `None` when an old text is not found (the
/// recorded text no longer matches the file).
pub fn apply(text: &str, edits: &[Replacement<'_>]) -> Option<String> {
    let mut out = text.to_string();
    for r in edits {
        let old = r.old.filter(|o| !o.is_empty())?;
        if !out.contains(old) {
            return None;
        }
        out = if r.all {
            out.replace(old, r.new)
        } else {
            out.replacen(old, r.new, 1)
        };
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn every_spelling_and_batches() {
        let write = args(json!({"path": "a.h", "file_text": "int x;"}));
        assert_eq!(touched_texts(&write), ["int x;"]);
        let batch = args(json!({"path": "a.h", "edits": [
            {"oldText": "a", "newText": "b"},
            {"old_str": "c", "new_str": "d", "replace_all": true}
        ]}));
        assert_eq!(touched_texts(&batch), ["a", "b", "c", "d"]);
        assert_eq!(
            apply("a c c", &replacements(&batch)).as_deref(),
            Some("b d d")
        );
        let stale = args(json!({"oldString": "zz", "newString": "y"}));
        assert_eq!(apply("a c c", &replacements(&stale)), None);
    }
}
