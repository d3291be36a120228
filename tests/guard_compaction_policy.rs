//! Acceptance of seed 000 (`000_053cae7e53b598d3.txt`) WO-5 "Decision-Based Compaction +
//! Validation" (`compaction_policy`), with seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-05's
//! signal-to-noise ratio.
//!
//! Genericity: the stuck families are make/gcc, pytest and tsc; nothing keys on a tool name.

mod common;

use common::replay_loaded;
use hindsight::config::Config;
use hindsight::guards::{Effect, Firing};
use hindsight::ingest::frames::parse_frame;
use hindsight::ingest::LoadedRun;
use hindsight::replay::RunReplay;
use hindsight::synth::Run;
use serde_json::{json, Value};

/// The run as ingest loads it, frames included.
fn loaded(run: &Run) -> LoadedRun {
    let mut loaded = run.to_loaded();
    let mut buffers = simd_json::Buffers::default();
    for f in &run.frames {
        let mut bytes = serde_json::to_vec(f).expect("json");
        loaded
            .frames
            .push(parse_frame(&mut bytes, "frame.json", &mut buffers).expect("frame"));
    }
    loaded.frames.sort_by_key(|f| f.turn);
    loaded
}

fn replay(run: &Run) -> RunReplay {
    replay_loaded(&loaded(run), &Config::default())
}

fn firings<'a>(replay: &'a RunReplay, action: &str) -> Vec<&'a Firing> {
    replay
        .firings
        .iter()
        .filter(|f| f.guard == "compaction_policy" && f.action == action)
        .collect()
}

fn metric(replay: &RunReplay, name: &str) -> Option<u64> {
    replay.metrics["compaction_policy"]
        .get(name)
        .and_then(Value::as_u64)
}

fn compaction(run: &mut Run) {
    let turn = run.turn;
    run.events.push(
        json!({"type": "compaction", "turn": turn, "beforeTokens": 90_000, "afterTokens": 30_000}),
    );
}

/// A frame at the current turn with the given (role, content) messages.
fn frame(run: &mut Run, messages: &[(&str, &str)], snr: Value) {
    let messages: Vec<Value> = messages
        .iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let turn = run.turn;
    run.frames
        .push(json!({"turn": turn, "agent": "main", "messages": messages, "signalToNoise": snr}));
}

// ---------------------------------------------------------------- SNR

/// "compute and emit `signalToNoiseRatio` (no longer null)": every frame recorded with a
/// null ratio gets one, 1 − folded characters / frame characters, reported ×1000.
#[test]
fn null_snr_is_computed_for_every_frame() {
    let mut run = Run::new("1783400000000-cp01", "/w/fw", 1_000);
    let system = "s".repeat(200);
    let user = "u".repeat(50);
    let block = |t: u32| {
        format!("[FOCUS] turn {t}: shell:make failed; required_next_action=run_verification")
    };
    let len = block(1).chars().count() as u64;
    run.turn(100);
    let noisy: Vec<String> = (1..=4).map(block).collect();
    let mut messages = vec![("system", system.as_str()), ("user", user.as_str())];
    messages.extend(noisy.iter().map(|b| ("system", b.as_str())));
    frame(&mut run, &messages, Value::Null);
    run.turn(100);
    frame(
        &mut run,
        &[("system", &system), ("user", &user)],
        Value::Null,
    );
    run.turn(100);
    frame(&mut run, &[("system", &system)], json!({"ratio": 0.42}));
    run.turn(100);
    frame(&mut run, &[], Value::Null);
    let replay = replay(&run);

    // Three repeats of the 72-character block fold, the first stays: 1 − 216 / 538.
    assert_eq!(len, 72);
    let noisy_x1000 = (538 - 216) * 1000 / 538;
    assert_eq!(noisy_x1000, 598);
    assert_eq!(metric(&replay, "frames_without_snr"), Some(3));
    // The empty frame scores 0, the clean one 1000.
    assert_eq!(metric(&replay, "snr_min_x1000"), Some(0));
    assert_eq!(
        metric(&replay, "snr_mean_x1000"),
        Some((noisy_x1000 + 1000) / 3)
    );
}

/// A run whose frames all carry a ratio reports no computed one.
#[test]
fn recorded_snr_is_left_alone() {
    let mut run = Run::new("1783400000000-cp02", "/w/fw", 1_000);
    run.turn(100);
    frame(&mut run, &[("user", "fix it")], json!({"ratio": 0.9}));
    let replay = replay(&run);
    assert_eq!(metric(&replay, "frames_without_snr"), Some(0));
    assert_eq!(metric(&replay, "snr_min_x1000"), None);
}

// ---------------------------------------------------------------- rubric

/// "fire when subtask resolved/converging, hold when mid-derivation/stuck": each recorded
/// compaction is judged; the one made while a family kept failing is flagged.
#[test]
fn rubric_fire_hold_and_threshold_only() {
    let mut run = Run::new("1783400000000-cp03", "/w/fw", 1_000);
    run.turn(100)
        .shell("pytest -q", true, "===== 12 passed in 0.4s =====");
    compaction(&mut run); // turn 1: a verification passed since the run began: fire
    let gcc = "src/motor.c:12:5: error: 'cfg' undeclared\nmake: *** [all] Error 1";
    for _ in 0..3 {
        run.turn(100).shell("make 2>&1 | tail -40", false, gcc);
    }
    compaction(&mut run); // turn 4: three make failures in a row: hold
    run.turn(100)
        .read("src/motor.c", "int main(void) { return 0; }");
    compaction(&mut run); // turn 5: neither: threshold-only
    let replay = replay(&run);

    let stuck = firings(&replay, "compaction_while_stuck");
    assert_eq!(stuck.len(), 1);
    assert_eq!(stuck[0].turn, 4);
    assert_eq!(stuck[0].effect, Effect::Advisory);
    assert_eq!(stuck[0].family.as_deref(), Some("shell:make"));
    assert_eq!(
        stuck[0].detail.as_deref(),
        Some("rubric says hold: the last 3 results are shell:make, still failing")
    );
    assert_eq!(metric(&replay, "compactions"), Some(3));
    assert_eq!(metric(&replay, "held"), Some(1));
    assert_eq!(metric(&replay, "rubric_fire"), Some(1));
    assert_eq!(metric(&replay, "threshold_only"), Some(1));
}

/// Converging is not stuck: a family that fails and then passes, or failures of different
/// families, do not hold a compaction.
#[test]
fn converging_or_mixed_failures_do_not_hold() {
    let mut run = Run::new("1783400000000-cp04", "/w/web", 1_000);
    let tsc = "src/a.ts(3,7): error TS2322: Type 'string' is not assignable";
    run.turn(100).shell("npx tsc --noEmit", false, tsc);
    run.turn(100).shell("npx tsc --noEmit", false, tsc);
    run.turn(100)
        .shell("npx tsc --noEmit", true, "Found 0 errors.");
    compaction(&mut run);
    run.turn(100).shell("npx tsc --noEmit", false, tsc);
    run.turn(100).shell(
        "npm test",
        false,
        "FAIL src/a.test.ts\nTests: 1 failed, 4 passed",
    );
    run.turn(100).shell("npx tsc --noEmit", false, tsc);
    compaction(&mut run);
    let replay = replay(&run);
    assert!(firings(&replay, "compaction_while_stuck").is_empty());
    assert_eq!(metric(&replay, "rubric_fire"), Some(1));
    assert_eq!(metric(&replay, "threshold_only"), Some(1));
}

// ---------------------------------------------------------------- pinned items

const TASK: &str = "Add retries with backoff to the HTTP client; keep the RetryPolicy type shared \
                    by client.ts and server.ts, and cover both with tests that run offline.";
const TODO_OPEN: &str =
    "Keep RetryPolicy { attempts, backoffMs } identical in client.ts and server.ts";
const TODO_DONE: &str = "Read the existing client";

fn pinned_run(id: &str) -> Run {
    let mut run = Run::new(id, "/w/web", 1_000);
    run.turn(100).todos(json!([
        {"id": 1, "status": "completed", "content": TODO_DONE},
        {"id": 2, "status": "in_progress", "content": TODO_OPEN},
    ]));
    let todo_block = format!("Todos:\n- [x] {TODO_DONE}\n- [ ] {TODO_OPEN}");
    frame(
        &mut run,
        &[
            ("system", "You are a coding agent."),
            ("user", TASK),
            ("system", &todo_block),
        ],
        Value::Null,
    );
    run.turn(100);
    compaction(&mut run);
    run
}

/// "validator blocks a compaction that drops a pinned symbol in a fixture": the first frame
/// after the compaction lost the open todo (and the task); the validator flags it.
#[test]
fn compaction_that_drops_a_pinned_todo_is_flagged() {
    let mut run = pinned_run("1783400000000-cp05");
    run.turn(100);
    frame(
        &mut run,
        &[
            ("system", "You are a coding agent."),
            (
                "user",
                "[summary] Earlier work: read the client, started on retries.",
            ),
        ],
        Value::Null,
    );
    let replay = replay(&run);
    let dropped = firings(&replay, "dropped_pinned");
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].turn, 3);
    assert_eq!(dropped[0].effect, Effect::Advisory);
    assert_eq!(
        dropped[0].detail.as_deref(),
        Some(
            "compaction at turn 2 dropped 2: task \"Add retries with backoff to the HTTP \
             client; keep the RetryP...\"; todo \"Keep RetryPolicy { attempts, backoffMs } \
             identical in client...\""
        )
    );
    assert_eq!(metric(&replay, "pins_dropped"), Some(2));
}

/// The pins survive when re-injected, whatever their whitespace; a completed todo is not
/// pinned; a long pin survives by its prefix.
#[test]
fn compaction_that_keeps_the_pins_is_quiet() {
    let mut run = pinned_run("1783400000000-cp06");
    run.turn(100);
    let reflowed = TODO_OPEN.replace(' ', "\n  ");
    let truncated_task: String = TASK.chars().take(120).collect();
    assert!(truncated_task.len() < TASK.len());
    frame(
        &mut run,
        &[
            ("system", "You are a coding agent."),
            ("user", &format!("{truncated_task} [...]")),
            ("system", &format!("Open todos:\n{reflowed}")),
        ],
        Value::Null,
    );
    let replay = replay(&run);
    assert!(firings(&replay, "dropped_pinned").is_empty());
    assert_eq!(metric(&replay, "pins_dropped"), Some(0));
}

/// Only the first frame after the compaction is checked; frames at the compaction's turn
/// (sent before it) are not.
#[test]
fn only_the_first_frame_after_the_compaction_is_checked() {
    let mut run = pinned_run("1783400000000-cp07");
    frame(&mut run, &[("user", "(pre-compaction frame)")], Value::Null);
    run.turn(100);
    frame(
        &mut run,
        &[("user", TASK), ("system", TODO_OPEN)],
        Value::Null,
    );
    run.turn(100);
    frame(&mut run, &[("user", "later frame, pins gone")], Value::Null);
    let replay = replay(&run);
    assert!(firings(&replay, "dropped_pinned").is_empty());
}
