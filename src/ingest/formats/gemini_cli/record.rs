//! The conversation a Gemini CLI chat file holds once replayed (issue #30, item 3): the
//! whole-file JSON record, or the JSON Lines of the same record that Gemini CLI writes since
//! 2026, replayed as `loadConversationRecord` does (`chatRecordingService.ts`).

use crate::ingest::error::{FieldError, ProblemKind};
use serde_json::{Map, Value};

/// Where a message or a problem came from: a line of the JSONL form (from 1), or none for
/// the whole-file form (its problems are located by field).
pub type Line = Option<u64>;

/// The record: its metadata (`sessionId`, `projectHash`, `kind`, ...) and its messages in
/// order, each with the line it was last written on.
#[derive(Debug, Default)]
pub struct Record {
    pub meta: Map<String, Value>,
    pub messages: Vec<(Line, Value)>,
}

impl Record {
    /// The whole-file form (or the legacy one-line record): metadata and `messages[]`.
    pub fn document(top: Map<String, Value>) -> Result<Self, FieldError> {
        let mut record = Self::default();
        record.line(None, Value::Object(top))?;
        Ok(record)
    }

    /// One line of the JSONL form, applied to the record so far:
    ///
    /// - `{"$rewindTo": id}` drops that message and every later one (none found: all);
    /// - `{"$set": {...}}` merges metadata; a `messages` array in it replaces the messages;
    /// - a record with a string `id` is a message; an id seen before is rewritten in place
    ///   (the last write wins, at the first write's position);
    /// - a record with `sessionId` and `projectHash` is metadata, its `messages` appended.
    pub fn line(&mut self, at: Line, v: Value) -> Result<(), FieldError> {
        let Value::Object(mut o) = v else {
            return Err(FieldError::new("", ProblemKind::NotAnObject));
        };
        if let Some(id) = o.get("$rewindTo") {
            let id = id
                .as_str()
                .ok_or_else(|| wrong("$rewindTo", "string", id))?;
            self.rewind(id);
        } else if let Some(set) = o.remove("$set") {
            let Value::Object(mut set) = set else {
                return Err(wrong("$set", "object", &set));
            };
            if let Some(list) = set.remove("messages") {
                self.messages.clear();
                self.append(at, "$set.messages", list)?;
            }
            self.meta.extend(set);
        } else if o.get("id").is_some_and(Value::is_string) {
            self.upsert(at, Value::Object(o));
        } else if o.get("sessionId").is_some() && o.get("projectHash").is_some() {
            let list = o.remove("messages");
            self.meta.extend(o);
            if let Some(list) = list {
                self.append(at, "messages", list)?;
            }
        } else {
            return Err(FieldError::new(
                "",
                ProblemKind::BadValue(
                    "neither a message (`id`), `$set`, `$rewindTo` nor session metadata".into(),
                ),
            ));
        }
        Ok(())
    }

    fn append(&mut self, at: Line, field: &str, list: Value) -> Result<(), FieldError> {
        let Value::Array(list) = list else {
            return Err(wrong(field, "array", &list));
        };
        for (i, m) in list.into_iter().enumerate() {
            if !m.get("id").is_some_and(Value::is_string) {
                return Err(FieldError::new(
                    format!("{field}[{i}].id"),
                    ProblemKind::MissingField,
                ));
            }
            self.upsert(at, m);
        }
        Ok(())
    }

    fn upsert(&mut self, at: Line, m: Value) {
        let id = m["id"].as_str().unwrap_or_default();
        match self.messages.iter().position(|(_, old)| old["id"] == id) {
            Some(i) => self.messages[i] = (at, m),
            None => self.messages.push((at, m)),
        }
    }

    fn rewind(&mut self, id: &str) {
        let keep = self
            .messages
            .iter()
            .position(|(_, m)| m["id"] == id)
            .unwrap_or(0);
        self.messages.truncate(keep);
    }

    /// The file's own `kind`: `subagent` for a sub-agent's conversation.
    pub fn is_subagent(&self) -> Result<bool, FieldError> {
        let kind = crate::ingest::formats::values::opt_str(self.meta.get("kind"), "kind")?;
        Ok(kind == Some("subagent"))
    }
}

pub(super) use crate::ingest::formats::values::wrong;
