//! The mapping of pi's session entries onto the event model (see the parent module).

use super::shape::{content_text, rename, todo, wrong};
use super::{ERRORS, TOOLS};
use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::formats::builder::{canonical_tool, error_class, Builder};
use crate::ingest::json::{
    nested, opt_array, opt_bool, opt_count, opt_f64, opt_str, opt_string, opt_tokens, req_bool,
    req_object, req_str, to_serde, Object,
};
use crate::ingest::{Abandoned, Copied};
use crate::model::{tokens_from_chars, Request, TokenSource, Usage};
use simd_json::prelude::*;
use simd_json::BorrowedValue;
use std::collections::{HashMap, HashSet, VecDeque};

/// Known top-level keys per line type; others are counted as `type.field`.
const FIELDS: &[(&str, &[&str])] = &[
    (
        "session",
        &[
            "version",
            "cwd",
            "provider",
            "modelId",
            "thinkingLevel",
            "parentSession",
            "branchedFrom",
        ],
    ),
    ("message", &["message"]),
    ("model_change", &["provider", "modelId"]),
    ("thinking_level_change", &["thinkingLevel"]),
    (
        "compaction",
        &[
            "summary",
            "firstKeptEntryId",
            "firstKeptEntryIndex",
            "tokensBefore",
            "details",
            "fromHook",
        ],
    ),
    (
        "branch_summary",
        &["fromId", "summary", "details", "fromHook"],
    ),
    (
        "custom_message",
        &["customType", "content", "details", "display"],
    ),
    ("custom", &["customType", "data"]),
    ("label", &["targetId", "label"]),
    ("session_info", &["name"]),
];

/// Context kept for a compaction's `firstKeptEntryId`: the latest messages, this many characters.
const WINDOW_CHARS: usize = 1 << 20;

/// A message in the recent context, for the entries a compaction keeps.
struct Kept {
    index: u64,
    role: &'static str,
    text: String,
    call: Option<String>,
}

/// How the entry being read counts (see the parent module).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Reading {
    /// The session's own, on the replayed branch: events and context.
    #[default]
    Live,
    /// Copied from the session this one was branched from, on the replayed branch:
    /// context only.
    Seed,
    /// Copied, on a branch left before the copy: neither.
    Copied,
    /// The session's own, on a branch it left: neither.
    Abandoned,
}

impl Reading {
    fn in_context(self) -> bool {
        matches!(self, Self::Live | Self::Seed)
    }
}

#[derive(Default)]
pub(super) struct Session {
    pub(super) b: Builder,
    /// The entries of the replayed branch, when the file holds others (`tree`).
    branch: Option<HashSet<String>>,
    /// A branched session's header time, while the entries read are older: its copies.
    copies_before: Option<String>,
    reading: Reading,
    /// Calls of an aborted or failed request, by id: emitted only if a result turns up.
    unrun: HashMap<String, (String, serde_json::Map<String, serde_json::Value>)>,
    window: VecDeque<Kept>,
    window_chars: usize,
    /// Entry ids (v2+) by entry index, for `firstKeptEntryId`.
    ids: HashMap<String, u64>,
}

impl Session {
    /// A session whose replayed branch is `branch` (`None`: every entry, in file order).
    pub(super) fn new(mut b: Builder, branch: Option<HashSet<String>>) -> Self {
        if branch.is_some() {
            b.stats.abandoned = Some(Abandoned::default());
        }
        Self {
            b,
            branch,
            ..Default::default()
        }
    }

    pub(super) fn entry(&mut self, value: &BorrowedValue<'_>) -> Result<(), FieldError> {
        let obj = value
            .as_object()
            .ok_or(FieldError::new("", ProblemKind::NotAnObject))?;
        let kind = req_str(obj, "type")?;
        let id = opt_str(obj, "id")?;
        let time = opt_str(obj, "timestamp")?;
        let parent = opt_str(obj, "parentId")?;
        self.b.record();
        // The entry's position in pi's own entry list (v1 `firstKeptEntryIndex`).
        let index = self.b.stats.records - 1;
        if let Some(id) = id {
            self.ids.insert(id.to_string(), index);
        }
        self.reading = self.reading_of(kind, id, time, parent);
        if let Some((_, known)) = FIELDS.iter().find(|(t, _)| *t == kind) {
            for key in obj
                .keys()
                .filter(|k| !["type", "id", "parentId", "timestamp"].contains(&k.as_ref()))
            {
                if !known.contains(&key.as_ref()) {
                    *self
                        .b
                        .stats
                        .unknown_fields
                        .entry(format!("{kind}.{key}"))
                        .or_default() += 1;
                }
            }
        }
        let at = |role, text: String| Kept {
            index,
            role,
            text,
            call: None,
        };
        match kind {
            "session" => {
                let cwd = opt_str(obj, "cwd")?.map(str::to_string);
                let parent = match opt_str(obj, "branchedFrom")? {
                    Some(parent) => Some(parent),
                    None => opt_str(obj, "parentSession")?,
                };
                if let (Some(parent), None) = (parent, &self.b.stats.copied) {
                    self.copies_before = opt_str(obj, "timestamp")?.map(str::to_string);
                    self.b.stats.copied = Some(Copied {
                        from: run_id_of(parent),
                        ..Copied::default()
                    });
                }
                self.b.session_start(cwd);
            }
            "message" => {
                let m = req_object(obj, "message")?;
                self.message(m, at("user", String::new()))
                    .map_err(|e| nested("message", e))?;
            }
            "compaction" => {
                let summary = req_str(obj, "summary")?;
                let before = opt_tokens(obj, "tokensBefore")?.unwrap_or(0);
                let first = match opt_str(obj, "firstKeptEntryId")? {
                    Some(f) => self.ids.get(f).copied(),
                    None => opt_count(obj, "firstKeptEntryIndex")?,
                };
                if !self.reading.in_context() {
                    return Ok(());
                }
                // Kept: the messages from the first kept entry on (none if it is unknown).
                let start = self
                    .window
                    .iter()
                    .position(|k| first.is_some_and(|f| k.index >= f))
                    .unwrap_or(self.window.len());
                let kept: Vec<Kept> = self.window.drain(start..).collect();
                let chars = summary.chars().count()
                    + kept.iter().map(|k| k.text.chars().count()).sum::<usize>();
                if self.reading == Reading::Live {
                    self.b
                        .compaction(before, tokens_from_chars(chars as u64), summary);
                } else {
                    self.b.restart_history(summary);
                }
                self.window.clear();
                self.window_chars = 0;
                self.remember(at("user", summary.to_string()));
                for k in kept {
                    self.b.message(k.role, &k.text, k.call.as_deref());
                    self.remember(k);
                }
            }
            "branch_summary" => {
                let summary = req_str(obj, "summary")?;
                self.say(at("user", summary.to_string()));
            }
            "custom_message" => {
                let text = content_text(obj)?;
                self.say(at("user", text));
            }
            "model_change" | "thinking_level_change" | "label" | "session_info" | "custom" => {}
            other => {
                *self
                    .b
                    .stats
                    .unknown_types
                    .entry(other.to_string())
                    .or_default() += 1
            }
        }
        Ok(())
    }

    fn message(&mut self, m: &Object<'_>, at: Kept) -> Result<(), FieldError> {
        match req_str(m, "role")? {
            "user" | "custom" | "hookMessage" => {
                let text = content_text(m)?;
                self.say(Kept { text, ..at });
            }
            "bashExecution" => {
                if opt_bool(m, "excludeFromContext")? != Some(true) {
                    let (command, output) = (
                        opt_str(m, "command")?.unwrap_or(""),
                        opt_str(m, "output")?.unwrap_or(""),
                    );
                    self.say(Kept {
                        text: format!("Ran `{command}`\n{output}"),
                        ..at
                    });
                }
            }
            "assistant" => self.assistant(m, at)?,
            "toolResult" => self.tool_result(m, at)?,
            role => {
                *self
                    .b
                    .stats
                    .unknown_types
                    .entry(format!("message.{role}"))
                    .or_default() += 1
            }
        }
        Ok(())
    }

    fn assistant(&mut self, m: &Object<'_>, at: Kept) -> Result<(), FieldError> {
        // Validate the whole record before it changes anything.
        let request = request_of(m)?;
        let ran = !matches!(opt_str(m, "stopReason")?, Some("aborted" | "error"));
        let mut texts = Vec::new();
        let mut calls = Vec::new();
        for (i, item) in opt_array(m, "content")?.into_iter().flatten().enumerate() {
            let at = format!("content[{i}]");
            let item = item.as_object().ok_or_else(|| wrong(&at, "object", item))?;
            let here = |e| nested(&at, e);
            match opt_str(item, "type").map_err(here)? {
                Some("text") => texts.push(
                    opt_str(item, "text")
                        .map_err(here)?
                        .unwrap_or("")
                        .to_string(),
                ),
                Some("toolCall") => {
                    let id = req_str(item, "id").map_err(here)?.to_string();
                    let name = req_str(item, "name").map_err(here)?;
                    let args = match item.get("arguments") {
                        None => serde_json::Map::new(),
                        Some(a) => match to_serde(a) {
                            serde_json::Value::Null => serde_json::Map::new(),
                            serde_json::Value::Object(map) => rename(map),
                            _ => return Err(here(wrong("arguments", "object", a))),
                        },
                    };
                    texts.push(format!(
                        "{name} {}",
                        serde_json::Value::Object(args.clone())
                    ));
                    calls.push((id, canonical_tool(TOOLS, name), args));
                }
                _ => {}
            }
        }
        self.unrun.clear();
        if self.reading != Reading::Live {
            self.set_aside(request.usage.map_or(0, |u| u.total()));
            self.say(Kept {
                role: "assistant",
                text: texts.join("\n"),
                ..at
            });
            return Ok(());
        }
        self.b.model_request("main", request);
        self.say(Kept {
            role: "assistant",
            text: texts.join("\n"),
            ..at
        });
        for (id, tool, args) in calls {
            if ran {
                self.b.call("main", &id, tool, args);
            } else {
                self.unrun.insert(id, (tool, args));
            }
        }
        Ok(())
    }

    fn tool_result(&mut self, m: &Object<'_>, at: Kept) -> Result<(), FieldError> {
        let call_id = req_str(m, "toolCallId")?.to_string();
        let failed = req_bool(m, "isError")?;
        let output = content_text(m)?;
        let tool_name = opt_str(m, "toolName")?;
        if self.reading == Reading::Seed {
            self.b.message("tool", &output, Some(&call_id));
        }
        if self.reading != Reading::Live {
            if self.reading.in_context() {
                self.remember(Kept {
                    role: "tool",
                    text: output,
                    call: Some(call_id),
                    ..at
                });
            }
            return Ok(());
        }
        if let Some((tool, args)) = self.unrun.remove(&call_id) {
            self.b.call("main", &call_id, tool, args);
        }
        let class = if failed {
            error_class(ERRORS, &output)
        } else {
            None
        };
        self.b.result("main", &call_id, !failed, &output, class);
        self.remember(Kept {
            role: "tool",
            text: output,
            call: Some(call_id),
            ..at
        });
        let todos = m
            .get("details")
            .and_then(|d| d.get("todos"))
            .and_then(|t| t.as_array());
        if let Some(list) = todos.filter(|_| !failed && tool_name == Some("todo")) {
            self.b.todos("main", list.iter().filter_map(todo).collect());
        }
        Ok(())
    }

    /// A message the model sees from now on (if it is on the replayed branch).
    fn say(&mut self, kept: Kept) {
        if self.reading.in_context() {
            self.b.message(kept.role, &kept.text, None);
            self.remember(kept);
        }
    }

    /// How an entry counts: a copy while its time is before a branched session's header
    /// (copies come first: the first entry that is not one ends them), abandoned when a
    /// branch is replayed and the entry is not on it. Counts it where it is set aside.
    fn reading_of(
        &mut self,
        kind: &str,
        id: Option<&str>,
        time: Option<&str>,
        parent: Option<&str>,
    ) -> Reading {
        if kind == "session" {
            return Reading::Live;
        }
        let copy = match (&self.copies_before, time) {
            (Some(header), Some(time)) if time < header.as_str() => true,
            _ => {
                self.copies_before = None;
                false
            }
        };
        let on_branch = |id: &str| self.branch.as_ref().is_none_or(|b| b.contains(id));
        let reading = match (copy, id.is_none_or(on_branch)) {
            (false, true) => Reading::Live,
            (true, true) => Reading::Seed,
            (true, false) => Reading::Copied,
            (false, false) => Reading::Abandoned,
        };
        if let (Reading::Seed | Reading::Copied, Some(copied)) = (reading, &mut self.b.stats.copied)
        {
            copied.entries += 1;
        }
        if let (Reading::Abandoned, Some(abandoned)) = (reading, &mut self.b.stats.abandoned) {
            abandoned.entries += 1;
            // The first entry of a branch: its parent is on the replayed one, or it has none.
            if parent.is_none_or(on_branch) {
                abandoned.branches += 1;
            }
        }
        reading
    }

    /// A request that is not the run's own: its turn and tokens counted apart.
    fn set_aside(&mut self, tokens: u64) {
        let (turns, total) = match (self.reading, &mut self.b.stats) {
            (Reading::Seed | Reading::Copied, stats) => match &mut stats.copied {
                Some(c) => (&mut c.turns, &mut c.tokens),
                None => return,
            },
            (Reading::Abandoned, stats) => match &mut stats.abandoned {
                Some(a) => (&mut a.turns, &mut a.tokens),
                None => return,
            },
            (Reading::Live, _) => return,
        };
        *turns += 1;
        *total = total.saturating_add(tokens);
    }

    fn remember(&mut self, kept: Kept) {
        self.window_chars += kept.text.len();
        self.window.push_back(kept);
        while self.window_chars > WINDOW_CHARS && self.window.len() > 1 {
            let old = self.window.pop_front().map_or(0, |k| k.text.len());
            self.window_chars -= old;
        }
    }
}

/// What an assistant message records of its request: `usage` by kind (`input`,
/// `cacheWrite`, `cacheRead`, `output`), `usage.cost.total` in dollars, and `model`.
fn request_of(m: &Object<'_>) -> Result<Request, FieldError> {
    let model = opt_string(m, "model")?;
    let Some(u) = m.get("usage").filter(|u| !u.is_null()) else {
        return Ok(Request {
            model,
            ..Request::default()
        });
    };
    let u = u.as_object().ok_or_else(|| wrong("usage", "object", u))?;
    let n = |k| {
        opt_tokens(u, k)
            .map(Option::unwrap_or_default)
            .map_err(|e| nested("usage", e))
    };
    let usage = Usage {
        input: n("input")?,
        cache_write: n("cacheWrite")?,
        cache_write_1h: 0,
        cache_read: n("cacheRead")?,
        output: n("output")?,
        source: TokenSource::Recorded,
    };
    let cost_usd = match u.get("cost").filter(|c| !c.is_null()) {
        None => None,
        Some(c) => {
            let c = c
                .as_object()
                .ok_or_else(|| wrong("usage.cost", "object", c))?;
            opt_f64(c, "total").map_err(|e| nested("usage.cost", e))?
        }
    };
    Ok(Request {
        usage: Some(usage),
        model,
        cost_usd,
    })
}

/// The run id of the session a header names: its file name without folder and `.jsonl`.
fn run_id_of(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.strip_suffix(".jsonl").unwrap_or(name).to_string()
}
