//! Corpora of one shape, for the scaling measurements of `scripts/bench.sh` (issue #13):
//!
//! - a **stuck loop**: one project, one run in which the agent repeats one identical
//!   failing build, turn after turn, for a given number of `events.jsonl` lines (the
//!   shape a guard fires on at every turn);
//! - the **distinct-calls** run of the same size to compare it with: one project, one run
//!   in which every turn reads a different file;
//! - **tiny runs**: many minimal runs (one turn each) spread over projects, so memory per
//!   run shows.
//!
//! Both loop runs have the same layout: a session start, then turns of a `model_usage`,
//! a `tool_call` and its `tool_result`; every tenth turn a `todo_write` (one item done,
//! the next open, with `cargo build` as its `verifyCommand`), and in the stuck loop also
//! a `dedup` of the repeated call (and every fiftieth turn a focus-supervisor
//! `directive`); a `compaction` every [`COMPACT_EVERY`] turns; and every [`FRAME_EVERY`]
//! turns a small context frame (a system prompt, the latest three tool results linked to
//! their calls, and the latest twenty `[RUN EVIDENCE]` blocks). The file stops at exactly
//! the number of lines asked, so its last turn may be cut short (as a killed run's is).
//! Records have the shapes [`super::Run`] writes, but they are streamed to disk: a
//! million-line run is never held in memory.

use super::pretty;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// A context frame every this many turns.
pub const FRAME_EVERY: u64 = 25;
/// A recorded compaction every this many turns (the prompt falls back to its start).
pub const COMPACT_EVERY: u32 = 500;
/// `[RUN EVIDENCE]` blocks a frame carries (the latest ones).
const EVIDENCE_BLOCKS: usize = 20;
/// Tool results a frame carries (the latest ones).
const FRAME_RESULTS: usize = 3;

/// Which loop run to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopShape {
    /// One identical failing call repeated.
    Stuck,
    /// A different call every turn.
    Distinct,
}

impl LoopShape {
    /// The project's folder name.
    pub fn project(self) -> &'static str {
        match self {
            Self::Stuck => "stuck-loop",
            Self::Distinct => "distinct-calls",
        }
    }
}

/// What a loop or tiny-runs corpus came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoopSummary {
    pub bytes: u64,
    pub files: u64,
    pub projects: u64,
    pub runs: u64,
    pub lines: u64,
    pub turns: u64,
    pub frames: u64,
}

/// The check the open todo declares (`verifyCommand`): the build the stuck loop repeats.
const VERIFY: &str = "cargo build";
/// The failing build the stuck loop repeats, and its output (the same every time).
const STUCK_COMMAND: &str = "cargo build";
const STUCK_OUTPUT: &str = concat!(
    "   Compiling parser v0.3.0 (/home/dev/stuck-loop)\n",
    "error[E0308]: mismatched types\n",
    "  --> src/lexer.rs:212:17\n",
    "    |\n",
    "212 |         let n: u32 = tok.len();\n",
    "    |                ---   ^^^^^^^^^ expected `u32`, found `usize`\n",
    "    |                |\n",
    "    |                expected due to this\n",
    "    |\n",
    "help: you can convert a `usize` to a `u32` and panic if the converted value doesn't fit\n",
    "    |\n",
    "212 |         let n: u32 = tok.len().try_into().unwrap();\n",
    "    |                               ++++++++++++++++++++\n",
    "\n",
    "error: could not compile `parser` (lib) due to 1 previous error\n",
);

/// Writes `<out>/<project>/.omnius/runs/<id>/` holding one run of `lines` event lines
/// (at least 1: the session start). `out` must be empty or missing (or `force`).
pub fn write_loop(
    shape: LoopShape,
    lines: u64,
    out: &Path,
    force: bool,
) -> io::Result<LoopSummary> {
    super::corpus::prepare_out(out, force)?;
    let project = out.join(shape.project());
    super::corpus::remove_entry(&project)?;
    let omnius = project.join(".omnius");
    let id = "1783000000000-loop01";
    let dir = omnius.join("runs").join(id);
    let context = dir.join("context");
    fs::create_dir_all(&context).map_err(|e| located(&context, e))?;
    let cwd = format!("/home/dev/{}", shape.project());
    let mut w = LoopWriter {
        out: BufWriter::with_capacity(1 << 20, fs::File::create(dir.join("events.jsonl"))?),
        lines: 0,
        max: lines.max(1),
        turn: 0,
        bytes: 0,
    };
    let mut summary = LoopSummary {
        projects: 1,
        runs: 1,
        files: 1,
        ..LoopSummary::default()
    };
    let mut results: VecDeque<(String, String)> = VecDeque::new();
    let mut evidence: VecDeque<String> = VecDeque::new();
    w.emit(json!({"type": "session_start", "cwd": cwd}))?;
    const START_PROMPT: u64 = 4_000;
    let mut prompt = START_PROMPT;
    while !w.full() {
        w.turn += 1;
        let turn = w.turn;
        if turn % COMPACT_EVERY == 0 {
            w.emit(json!({"type": "compaction", "beforeTokens": prompt,
                "afterTokens": START_PROMPT}))?;
            prompt = START_PROMPT;
        }
        prompt += 40;
        w.emit(json!({"type": "model_usage", "promptTokens": prompt, "completionTokens": 180}))?;
        let call_id = format!("call_{turn:03}");
        let (tool, args, success, output) = match shape {
            LoopShape::Stuck => (
                "shell",
                json!({"command": STUCK_COMMAND}),
                false,
                STUCK_OUTPUT.to_string(),
            ),
            LoopShape::Distinct => {
                let path = format!("src/gen/module_{turn}.rs");
                let output = distinct_output(turn, STUCK_OUTPUT.len());
                ("file_read", json!({"path": path}), true, output)
            }
        };
        let what = match shape {
            LoopShape::Stuck => format!("shell {STUCK_COMMAND}"),
            LoopShape::Distinct => format!("file_read src/gen/module_{turn}.rs"),
        };
        w.emit(
            json!({"type": "tool_call", "callId": call_id, "tool": tool, "args": args,
            "cwd": cwd}),
        )?;
        let mut result = json!({"type": "tool_result", "callId": call_id, "success": success,
            "output": output, "outputChars": output.chars().count(), "durationMs": 1200});
        if !success {
            result["errorClass"] = json!("tool_failed");
        }
        w.emit(result)?;
        if turn % 10 == 0 {
            // The todo list: the previous item done, the next one open.
            let k = turn / 10;
            w.emit(json!({"type": "todo_write", "todos": [
                {"id": format!("t{}", k - 1), "status": "completed",
                 "content": format!("step {} of the task", k - 1)},
                {"id": format!("t{k}"), "status": "in_progress",
                 "content": format!("step {k} of the task"), "verifyCommand": VERIFY}]}))?;
        }
        if shape == LoopShape::Stuck && turn % 10 == 5 {
            w.emit(json!({"type": "dedup", "callId": call_id,
                "family": format!("shell:{STUCK_COMMAND}")}))?;
        }
        if shape == LoopShape::Stuck && turn % 50 == 25 {
            w.emit(json!({"type": "directive", "source": "focus_supervisor",
                "requiredNextAction": "run_verification", "family": format!("shell:{STUCK_COMMAND}"),
                "state": "forced_replan",
                "text": format!("Focus: `{STUCK_COMMAND}` failed again; required_next_action=run_verification")}))?;
        }
        let status = if success { "ok" } else { "failed" };
        evidence.push_back(format!(
            "[RUN EVIDENCE] turn {turn}: {what} {status} ({} chars)",
            output.len()
        ));
        if evidence.len() > EVIDENCE_BLOCKS {
            evidence.pop_front();
        }
        results.push_back((call_id, output));
        if results.len() > FRAME_RESULTS {
            results.pop_front();
        }
        if u64::from(turn) % FRAME_EVERY == 0 && !w.full() {
            let mut messages = vec![
                json!({"role": "system", "content": "You are a coding agent. ".repeat(40)}),
                json!({"role": "user", "content": "Finish the task and verify it."}),
            ];
            for (id, output) in &results {
                messages.push(json!({"role": "tool", "toolCallId": id, "content": output}));
            }
            for block in &evidence {
                messages.push(json!({"role": "system", "content": block}));
            }
            let frame = json!({"turn": turn, "agent": "main", "estimatedTokens": prompt,
                "systemPromptChars": 960, "messages": messages, "signalToNoise": null});
            let path = context.join(format!("frame-{turn:07}.json"));
            let text = pretty(&frame);
            fs::write(&path, &text).map_err(|e| located(&path, e))?;
            summary.bytes += text.len() as u64;
            summary.files += 1;
            summary.frames += 1;
        }
    }
    w.out.flush()?;
    let ledger = pretty(&json!({"status": "open", "evidence": []}));
    fs::write(dir.join("completion-ledger.json"), &ledger)?;
    summary.bytes += w.bytes + ledger.len() as u64;
    summary.files += 1;
    summary.lines = w.lines;
    summary.turns = u64::from(w.turn);
    Ok(summary)
}

/// A file's text of about `len` bytes, different for every turn.
fn distinct_output(turn: u32, len: usize) -> String {
    let mut out = String::with_capacity(len + 64);
    let mut i = 0;
    while out.len() < len {
        i += 1;
        out.push_str(&format!(
            "pub fn item_{turn}_{i}(x: u32) -> u32 {{ x.wrapping_mul({}) }}\n",
            turn + i
        ));
    }
    out
}

/// Writes `runs` minimal runs (a session start, one request, one call and its result)
/// spread over `projects` projects (`tiny-<p>`), to measure what each run costs in
/// memory.
pub fn write_tiny_runs(
    runs: u64,
    projects: u64,
    out: &Path,
    force: bool,
) -> io::Result<LoopSummary> {
    super::corpus::prepare_out(out, force)?;
    let projects = projects.max(1);
    let mut summary = LoopSummary::default();
    for p in 0..projects {
        let name = format!("tiny-{p}");
        let project = out.join(&name);
        super::corpus::remove_entry(&project)?;
        let omnius = project.join(".omnius").join("runs");
        let cwd = format!("/home/dev/{name}");
        // Project p gets runs p, p + projects, ... of the total.
        let count = runs / projects + u64::from(p < runs % projects);
        for i in 0..count {
            let dir = omnius.join(format!("{}-tiny{i:06}", 1_783_000_000_000 + i * 60_000));
            fs::create_dir_all(&dir).map_err(|e| located(&dir, e))?;
            let mut text = String::new();
            let mut w = LoopWriter {
                out: Vec::new(),
                lines: 0,
                max: 4,
                turn: 0,
                bytes: 0,
            };
            w.emit(json!({"type": "session_start", "cwd": cwd}))?;
            w.turn = 1;
            w.emit(json!({"type": "model_usage", "promptTokens": 1200, "completionTokens": 40}))?;
            w.emit(
                json!({"type": "tool_call", "callId": "call_001", "tool": "shell",
                "args": {"command": "ls"}, "cwd": cwd}),
            )?;
            w.emit(
                json!({"type": "tool_result", "callId": "call_001", "success": true,
                "output": "src\n", "outputChars": 4, "durationMs": 20}),
            )?;
            text.push_str(std::str::from_utf8(&w.out).unwrap_or_default());
            let path = dir.join("events.jsonl");
            fs::write(&path, &text).map_err(|e| located(&path, e))?;
            summary.bytes += text.len() as u64;
            summary.files += 1;
            summary.runs += 1;
            summary.lines += w.lines;
            summary.turns += 1;
        }
        summary.projects += 1;
    }
    Ok(summary)
}

/// Streams records as `events.jsonl` lines, numbering them, up to `max` lines.
struct LoopWriter<W: Write> {
    out: W,
    lines: u64,
    max: u64,
    turn: u32,
    bytes: u64,
}

impl<W: Write> LoopWriter<W> {
    fn full(&self) -> bool {
        self.lines >= self.max
    }

    /// Writes one record with its turn, seq and timestamp; nothing once `max` is reached.
    fn emit(&mut self, mut v: Value) -> io::Result<()> {
        if self.full() {
            return Ok(());
        }
        self.lines += 1;
        let turn = u64::from(self.turn);
        v["turn"] = json!(self.turn);
        v["seq"] = json!(self.lines);
        v["ts"] = json!(format!(
            "2026-07-{:02}T{:02}:{:02}:{:02}Z",
            4 + turn / 86_400,
            turn / 3_600 % 24,
            turn / 60 % 60,
            turn % 60
        ));
        let line = serde_json::to_string(&v).map_err(io::Error::other)?;
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.bytes += line.len() as u64 + 1;
        Ok(())
    }
}

fn located(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_run_has_exactly_the_lines_asked() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for (shape, lines) in [(LoopShape::Stuck, 200), (LoopShape::Distinct, 201)] {
            let out = tmp.path().join(shape.project());
            let summary = write_loop(shape, lines, &out, false).expect("written");
            let events = out
                .join(shape.project())
                .join(".omnius/runs/1783000000000-loop01/events.jsonl");
            let text = fs::read_to_string(events).expect("events");
            assert_eq!(text.lines().count() as u64, lines);
            assert_eq!(summary.lines, lines);
            let whole = summary.turns / FRAME_EVERY;
            assert!(summary.frames == whole || summary.frames + 1 == whole);
        }
    }

    #[test]
    fn tiny_runs_are_spread_over_the_projects() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let summary = write_tiny_runs(10, 3, tmp.path(), false).expect("written");
        assert_eq!((summary.runs, summary.projects), (10, 3));
        let runs = fs::read_dir(tmp.path().join("tiny-0/.omnius/runs")).expect("runs");
        assert_eq!(runs.count(), 4);
    }
}
