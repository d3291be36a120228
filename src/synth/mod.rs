//! Writes runs in the recorded `.omnius/` format (docs/FORMAT.md), turn by turn.
//!
//! The producer side of ingest: the shipped corpora (examples/corpora.rs), the tests'
//! trajectories and the benchmark's generated corpora ([`corpus`], `hindsight synth`) are
//! all written with [`Run`], so they exercise the same reader real dumps go through.

pub mod corpus;
mod eco;
pub mod loops;
mod outputs;
mod session;

pub use corpus::{write_corpus, SynthOptions, SynthSummary};

use crate::ingest::{events::read_events, IngestStats, LoadedRun, Policy, Problems};
use crate::model::{LedgerStatus, TokenSource};
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

/// Builds one run's records turn by turn.
pub struct Run {
    pub id: String,
    pub cwd: String,
    pub turn: u32,
    calls: u32,
    pub events: Vec<Value>,
    pub frames: Vec<Value>,
    /// `completion-ledger.json` status; `None` writes no ledger.
    pub ledger: Option<String>,
    prompt: u64,
}

impl Run {
    pub fn new(id: &str, cwd: &str, prompt: u64) -> Self {
        let mut run = Self {
            id: id.into(),
            cwd: cwd.into(),
            turn: 0,
            calls: 0,
            events: Vec::new(),
            frames: Vec::new(),
            ledger: Some("open".into()),
            prompt,
        };
        run.push(json!({"type": "session_start", "turn": 0, "cwd": cwd}));
        run
    }

    fn push(&mut self, mut v: Value) {
        v["seq"] = json!(self.events.len() + 1);
        v["ts"] = json!(format!(
            "2026-07-04T10:{:02}:{:02}Z",
            self.turn / 60,
            self.turn % 60
        ));
        self.events.push(v);
    }

    /// Starts the next model request; its prompt grows by `growth` tokens.
    pub fn turn(&mut self, growth: u64) -> &mut Self {
        self.turn += 1;
        self.prompt += growth;
        let (turn, prompt) = (self.turn, self.prompt);
        self.push(json!({"type": "model_usage", "turn": turn, "promptTokens": prompt, "completionTokens": 180}));
        self
    }

    pub fn call(&mut self, tool: &str, args: Value) -> String {
        self.calls += 1;
        let id = format!("call_{:03}", self.calls);
        let turn = self.turn;
        self.push(json!({"type": "tool_call", "turn": turn, "callId": id, "tool": tool, "args": args, "cwd": self.cwd.clone()}));
        id
    }

    pub fn result(&mut self, id: &str, success: bool, output: &str, extra: Value) {
        let turn = self.turn;
        let mut v = json!({"type": "tool_result", "turn": turn, "callId": id, "success": success,
            "output": output, "outputChars": output.chars().count(), "durationMs": 1200});
        if let Value::Object(extra) = extra {
            for (k, x) in extra {
                v[k] = x;
            }
        }
        self.push(v);
    }

    pub fn shell(&mut self, command: &str, success: bool, output: &str) {
        let id = self.call("shell", json!({"command": command}));
        let class = if success {
            json!({})
        } else {
            json!({"errorClass": "tool_failed"})
        };
        self.result(&id, success, output, class);
    }

    pub fn edit(&mut self, path: &str, old: &str, new: &str, outcome: Result<&str, (&str, &str)>) {
        let id = self.call(
            "file_edit",
            json!({"path": path, "old_string": old, "new_string": new}),
        );
        match outcome {
            Ok(output) => self.result(
                &id,
                true,
                output,
                json!({"mutation": true, "paths": [path]}),
            ),
            Err((class, output)) => self.result(
                &id,
                false,
                output,
                json!({"errorClass": class, "mutation": false}),
            ),
        }
    }

    pub fn read(&mut self, path: &str, output: &str) {
        let id = self.call("file_read", json!({"path": path}));
        self.result(&id, true, output, json!({}));
    }

    pub fn write(&mut self, path: &str, content: &str) {
        let id = self.call("file_write", json!({"path": path, "content": content}));
        self.result(
            &id,
            true,
            "wrote file",
            json!({"mutation": true, "paths": [path]}),
        );
    }

    pub fn directive(&mut self, action: &str, family: &str, state: &str) {
        let text = format!("Focus: required_next_action={action}");
        self.directive_text(action, family, state, &text);
    }

    /// A directive with the harness's own wording.
    pub fn directive_text(&mut self, action: &str, family: &str, state: &str, text: &str) {
        let turn = self.turn;
        self.push(
            json!({"type": "directive", "turn": turn, "source": "focus_supervisor",
            "requiredNextAction": action, "family": family, "state": state, "text": text}),
        );
    }

    /// The same as [`Run::shell`] for a sub-agent (`agent`), e.g. a delegated test loop.
    pub fn agent_shell(&mut self, agent: &str, command: &str, success: bool, output: &str) {
        self.calls += 1;
        let id = format!("call_{:03}", self.calls);
        let turn = self.turn;
        self.push(
            json!({"type": "tool_call", "turn": turn, "agent": agent, "callId": id,
            "tool": "shell", "args": {"command": command}, "cwd": self.cwd.clone()}),
        );
        let mut v = json!({"type": "tool_result", "turn": turn, "agent": agent, "callId": id,
            "success": success, "output": output, "outputChars": output.chars().count()});
        if !success {
            v["errorClass"] = json!("tool_failed");
        }
        self.push(v);
    }

    pub fn dedup(&mut self, family: &str) {
        let (turn, id) = (self.turn, format!("call_{:03}", self.calls));
        self.push(json!({"type": "dedup", "turn": turn, "callId": id, "family": family}));
    }

    /// A compaction the harness recorded at the current turn.
    pub fn compaction(&mut self, before_tokens: u64, after_tokens: u64) {
        let turn = self.turn;
        self.push(json!({"type": "compaction", "turn": turn, "beforeTokens": before_tokens, "afterTokens": after_tokens}));
    }

    pub fn todos(&mut self, todos: Value) {
        let turn = self.turn;
        self.push(json!({"type": "todo_write", "turn": turn, "todos": todos}));
    }

    pub fn complete(&mut self, status: &str, summary: &str) {
        let turn = self.turn;
        self.push(
            json!({"type": "task_complete", "turn": turn, "status": status, "summary": summary}),
        );
    }

    /// A context frame for the current turn: the system prompt, the last tool results
    /// (linked to their calls), and the injected system blocks given.
    pub fn frame(&mut self, system_chars: usize, tool_ids: &[&str], blocks: &[String]) {
        let mut messages = vec![
            json!({"role": "system", "content": "You are a coding agent. ".repeat(system_chars / 24)}),
        ];
        messages.push(json!({"role": "user", "content": "Finish the task and verify it."}));
        for id in tool_ids {
            let output = self
                .events
                .iter()
                .find(|e| e["type"] == "tool_result" && e["callId"] == *id)
                .and_then(|e| e["output"].as_str())
                .unwrap_or_default()
                .to_string();
            messages.push(json!({"role": "tool", "toolCallId": id, "content": output}));
        }
        for b in blocks {
            messages.push(json!({"role": "system", "content": b}));
        }
        let chars: usize = messages
            .iter()
            .map(|m| m["content"].as_str().map_or(0, str::len))
            .sum();
        self.frames.push(
            json!({"turn": self.turn, "agent": "main", "estimatedTokens": self.prompt,
            "systemPromptChars": system_chars, "messages": messages,
            "signalToNoise": if chars > 0 { Value::Null } else { json!({"ratio": 1.0}) }}),
        );
    }

    pub fn last_call(&self) -> String {
        format!("call_{:03}", self.calls)
    }

    /// Writes the run as `<omnius>/runs/<id>/`; panics on an I/O error (fixtures, tests).
    pub fn write_to(&self, omnius: &Path) {
        self.try_write_to(omnius).expect("write run");
    }

    /// [`Run::write_to`], returning I/O errors (a full disk) instead of panicking.
    pub fn try_write_to(&self, omnius: &Path) -> std::io::Result<()> {
        let dir = omnius.join("runs").join(&self.id);
        fs::create_dir_all(dir.join("context"))?;
        let lines: Vec<String> = self
            .events
            .iter()
            .map(|e| serde_json::to_string(e).expect("json"))
            .collect();
        fs::write(dir.join("events.jsonl"), lines.join("\n") + "\n")?;
        for f in &self.frames {
            let name = format!("frame-{:04}.json", f["turn"].as_u64().unwrap_or(0));
            fs::write(dir.join("context").join(name), pretty(f))?;
        }
        if let Some(status) = &self.ledger {
            let ledger = json!({"status": status, "evidence": self.evidence()});
            fs::write(dir.join("completion-ledger.json"), pretty(&ledger))?;
        }
        Ok(())
    }

    /// The evidence list a harness keeps: one line per result.
    pub fn evidence(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == "tool_result")
            .map(|e| json!({"turn": e["turn"], "callId": e["callId"], "success": e["success"]}))
            .collect()
    }
}

pub fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("json") + "\n"
}

impl Run {
    /// The run as ingest would load it from disk (events only; frames are not parsed).
    pub fn to_loaded(&self) -> LoadedRun {
        let text: String = self.events.iter().map(|e| format!("{e}\n")).collect();
        let mut problems = Problems::default();
        let mut stats = IngestStats::default();
        let events = read_events(
            text.as_bytes(),
            &self.id,
            Policy::Strict,
            &mut problems,
            &mut stats,
        )
        .expect("a written run reads back");
        LoadedRun {
            run_id: self.id.clone(),
            format: Default::default(),
            events,
            frames: Vec::new(),
            ledger: self.ledger.as_deref().and_then(LedgerStatus::parse),
            problems,
            stats,
        }
    }
}

/// One event as the record docs/FORMAT.md defines: the inverse of ingest.
pub fn event_json(e: &crate::model::Event) -> Value {
    use crate::model::EventKind as K;
    let mut v = match &e.kind {
        K::SessionStart { cwd } => json!({"type": "session_start", "cwd": cwd}),
        K::ToolCall(c) => json!({"type": "tool_call", "callId": c.call_id, "tool": c.tool,
            "args": Value::Object((*c.args).clone()), "cwd": c.cwd}),
        K::ToolResult(r) => {
            json!({"type": "tool_result", "callId": r.call_id, "success": r.success,
            "errorClass": r.error_class, "output": r.output.as_deref(), "outputChars": r.output_chars,
            "durationMs": r.duration_ms, "mutation": r.mutation, "paths": r.paths,
            "verification": r.verification})
        }
        K::ModelRequest(r) => {
            let mut v = match &r.usage {
                None => json!({"type": "model_request"}),
                Some(u) => json!({"type": "model_usage",
                    "promptTokens": u.prompt(), "completionTokens": u.output}),
            };
            let u = r.usage.unwrap_or_default();
            let optional = [
                (
                    "cacheReadTokens",
                    (u.cache_read > 0).then(|| json!(u.cache_read)),
                ),
                (
                    "cacheWriteTokens",
                    (u.cache_write > 0).then(|| json!(u.cache_write)),
                ),
                (
                    "tokenSource",
                    (u.source != TokenSource::Recorded).then(|| json!(u.source.as_str())),
                ),
                ("model", r.model.as_ref().map(|m| json!(m))),
                ("costUsd", r.cost_usd.map(|c| json!(c))),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    v[key] = value;
                }
            }
            v
        }
        K::Directive(d) => json!({"type": "directive", "source": d.source,
            "requiredNextAction": d.required_next_action, "family": d.family, "state": d.state,
            "text": d.text}),
        K::Dedup { call_id, family } => {
            json!({"type": "dedup", "callId": call_id, "family": family})
        }
        K::Compaction {
            before_tokens,
            after_tokens,
        } => json!({"type": "compaction",
            "beforeTokens": before_tokens, "afterTokens": after_tokens}),
        K::TodoWrite { todos } => {
            json!({"type": "todo_write", "todos": todos.iter().map(|t| json!({
            "id": t.id, "parentId": t.parent_id, "status": t.status, "content": t.content,
            "verifyCommand": t.verify_command})).collect::<Vec<_>>()})
        }
        K::TaskComplete { status, summary } => {
            json!({"type": "task_complete", "status": status, "summary": summary})
        }
        K::Unknown { type_name } => json!({"type": type_name}),
    };
    v["turn"] = json!(e.at.turn);
    v["seq"] = json!(e.at.seq);
    v["session"] = json!(e.at.session);
    v["agent"] = json!(e.at.agent);
    if let Value::Object(map) = &mut v {
        // Absent optional fields are left out rather than written as null.
        map.retain(|_, x| !x.is_null());
    }
    v
}

/// One frame as docs/FORMAT.md defines it.
pub fn frame_json(f: &crate::model::Frame) -> Value {
    json!({
        "turn": f.turn,
        "agent": f.agent,
        "estimatedTokens": f.estimated_tokens,
        "systemPromptChars": f.system_prompt_chars,
        "messages": f.messages.iter().map(|m| {
            let mut v = json!({"role": m.role, "content": &*m.content});
            if let Some(id) = &m.tool_call_id {
                v["toolCallId"] = json!(id.as_str());
            }
            v
        }).collect::<Vec<_>>(),
        "signalToNoise": f.signal_to_noise.map(|r| json!({"ratio": r})),
    })
}

/// Writes a loaded run (from any format) as `<omnius>/runs/<runId>/`, each file a new one
/// put in place once whole ([`crate::output::write_file`]).
pub fn write_loaded(run: &LoadedRun, omnius: &Path) -> std::io::Result<()> {
    let dir = omnius.join("runs").join(&run.run_id);
    fs::create_dir_all(dir.join("context"))?;
    let mut events = String::new();
    for e in &run.events {
        events.push_str(&event_json(e).to_string());
        events.push('\n');
    }
    crate::output::write_file(&dir.join("events.jsonl"), events)?;
    for (i, f) in run.frames.iter().enumerate() {
        let name = format!("frame-{:05}-{i:03}.json", f.turn);
        crate::output::write_file(&dir.join("context").join(name), pretty(&frame_json(f)))?;
    }
    if let Some(status) = run.ledger {
        crate::output::write_file(
            &dir.join("completion-ledger.json"),
            pretty(&json!({"status": status.as_str(), "evidence": []})),
        )?;
    }
    Ok(())
}
