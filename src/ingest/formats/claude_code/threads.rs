//! Sub-agent threads: which agent each line of a session belongs to.
//!
//! Claude Code v1.0.x writes a `Task` sub-agent's lines into the session file itself,
//! marked `isSidechain: true` and naming no `agentId`; parallel `Task` calls interleave
//! their sub-agents' lines. Each sub-agent's lines form one `parentUuid` chain, so a
//! sidechain line whose parent is a sidechain line belongs to that line's thread, and any
//! other sidechain line (parent `null`, a main-thread line, or a line not in the file)
//! starts a thread. A thread is named, in this order of preference:
//!
//! - `sidechain:<agentId>` when its line names an agent (2.x);
//! - `sidechain:<call id>` when its first line is a prompt equal to the `prompt` input of a
//!   `Task` (or `Agent`) call whose sub-agent has not started yet and whose result has not
//!   come (the earliest such call);
//! - `sidechain-<n>` otherwise, `n` counting these threads from 1 in the order of their
//!   first line.
//!
//! A stream-json line (issue #30, item 5) names its thread itself: `parent_tool_use_id`, the
//! `Task` call whose sub-agent wrote it, so it is `sidechain:<call id>` (`stream`).
//!
//! Names depend only on the file, so they are the same on every read.

use super::lines::text_of;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The spawning calls: names of the tool that starts a sub-agent.
const SPAWNERS: [&str; 2] = ["Task", "Agent"];

#[derive(Debug, Default)]
pub struct Threads {
    /// The thread of every sidechain line read, by its `uuid`.
    by_uuid: HashMap<String, String>,
    /// Spawning calls whose sub-agent has not started: (call id, prompt), in call order.
    pending: Vec<(String, String)>,
    /// Threads named by number so far.
    numbered: u32,
}

/// Where a line goes, and what placing it there teaches about threads.
#[derive(Debug)]
pub struct Placed {
    pub agent: String,
    uuid: Option<String>,
    start: Option<Start>,
}

#[derive(Debug)]
enum Start {
    /// Started by the pending call at this position.
    Call(usize),
    Numbered,
}

impl Threads {
    /// The agent of a line; nothing changes until [`Threads::join`].
    pub fn place(&self, obj: &Map<String, Value>) -> Placed {
        let str_of = |key: &str| obj.get(key).and_then(Value::as_str);
        if let Some(agent) = super::stream::thread_of(obj) {
            return Placed {
                agent,
                uuid: None,
                start: None,
            };
        }
        let uuid = str_of("uuid").map(str::to_string);
        if obj.get("isSidechain").and_then(Value::as_bool) != Some(true) {
            return Placed {
                agent: "main".to_string(),
                uuid: None,
                start: None,
            };
        }
        let placed = |agent: String, start| Placed {
            agent,
            uuid: uuid.clone(),
            start,
        };
        if let Some(id) = str_of("agentId") {
            return placed(format!("sidechain:{id}"), None);
        }
        if let Some(agent) = str_of("parentUuid").and_then(|p| self.by_uuid.get(p)) {
            return placed(agent.clone(), None);
        }
        let prompt = match (str_of("type"), obj.get("message")) {
            (Some("user"), Some(Value::Object(m))) => text_of(m.get("content")),
            _ => String::new(),
        };
        let prompt = prompt.trim();
        let spawner = (!prompt.is_empty())
            .then(|| self.pending.iter().position(|(_, p)| p == prompt))
            .flatten();
        match spawner {
            Some(i) => placed(
                format!("sidechain:{}", self.pending[i].0),
                Some(Start::Call(i)),
            ),
            None => placed(
                format!("sidechain-{}", self.numbered + 1),
                Some(Start::Numbered),
            ),
        }
    }

    /// Records a placed line, so the lines that follow it join its thread. Done even for a
    /// line whose content is a problem: its thread is known from its place alone.
    pub fn join(&mut self, placed: Placed) {
        match placed.start {
            Some(Start::Call(i)) => {
                self.pending.remove(i);
            }
            Some(Start::Numbered) => self.numbered += 1,
            None => {}
        }
        if let Some(uuid) = placed.uuid {
            self.by_uuid.insert(uuid, placed.agent);
        }
    }

    /// A tool call was read: a spawning call waits for its sub-agent's first line.
    pub fn called(&mut self, call_id: &str, name: &str, args: &Map<String, Value>) {
        if !SPAWNERS.contains(&name) {
            return;
        }
        if let Some(prompt) = args.get("prompt").and_then(Value::as_str) {
            let prompt = prompt.trim();
            if !prompt.is_empty() {
                self.pending.push((call_id.to_string(), prompt.to_string()));
            }
        }
    }

    /// A call's result came: a sub-agent that has not started by now never will.
    pub fn answered(&mut self, call_id: &str) {
        self.pending.retain(|(id, _)| id != call_id);
    }
}
