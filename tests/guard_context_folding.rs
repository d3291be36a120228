//! Acceptance of seed 000 (`000_053cae7e53b598d3.txt`) WO-4 "Context-Folding": a subtask
//! closed by a passing verification folds to one line (`context_folding`).
//!
//! Genericity: the subtasks span cargo, npm/jest and pytest; nothing keys on a tool name.

mod common;

use common::{firings, replay};
use hindsight::cost::{cost, Prices};
use hindsight::guards::{Effect, Firing};
use hindsight::model::tokens_from_chars;
use hindsight::replay::RunReplay;
use hindsight::synth::Run;
use serde_json::{json, Value};

const GUARD: &str = "context_folding";

fn folds(replay: &RunReplay) -> Vec<&Firing> {
    firings(replay, GUARD)
}

fn metric(replay: &RunReplay, name: &str) -> Option<Value> {
    replay.metrics[GUARD].get(name).cloned()
}

/// Carried characters of the main agent's calls and results in turns `from..=to`, counted
/// as the cost model counts them.
fn carried(run: &Run, from: u32, to: u32) -> u64 {
    run.events
        .iter()
        .filter(|e| (from..=to).contains(&(e["turn"].as_u64().unwrap_or(0) as u32)))
        .filter(|e| e.get("agent").is_none())
        .map(|e| match e["type"].as_str() {
            Some("tool_call") => e["args"].to_string().len() as u64,
            Some("tool_result") => e["outputChars"].as_u64().unwrap_or(0),
            _ => 0,
        })
        .sum()
}

/// A build or test log of about `lines` lines, ending with `last`.
fn log(line: &str, lines: usize, last: &str) -> String {
    format!("{}{last}", format!("{line}\n").repeat(lines))
}

/// Three subtasks in three ecosystems, each with a large failing build/test log, a fix and
/// a passing run, then the start of a fourth.
fn three_subtasks() -> Run {
    let mut run = Run::new("1783300000000-cf01", "/w/svc", 20_000);
    let source = "pub fn parse(input: &str) -> Result<Config, Error> { todo!() }\n".repeat(60);
    run.turn(5_000).read("src/config.rs", &source);
    run.turn(5_000).shell(
        "cargo build",
        false,
        &log(
            "error[E0425]: cannot find value `limit` in this scope --> src/config.rs:12:9",
            90,
            "error: could not compile `svc`",
        ),
    );
    run.turn(5_000).edit(
        "src/config.rs",
        "todo!()",
        "parse_toml(input)",
        Ok("applied"),
    );
    run.turn(5_000).shell(
        "cargo test",
        true,
        &log(
            "test config::tests::parses_defaults ... ok",
            80,
            "test result: ok. 80 passed; 0 failed",
        ),
    );
    run.turn(5_000).shell(
        "npm test",
        false,
        &log(
            "  ● Client › retries › expected 3 calls, received 1",
            100,
            "FAIL src/client.test.ts\nTests: 2 failed, 30 passed, 32 total",
        ),
    );
    run.turn(5_000)
        .edit("src/client.ts", "retries: 1", "retries: 3", Ok("applied"));
    run.turn(5_000).shell(
        "npm test",
        true,
        &log("PASS src/client.test.ts", 40, "Tests: 32 passed, 32 total"),
    );
    run.turn(5_000).shell(
        "pytest -q",
        false,
        &log(
            "FAILED tests/test_io.py::test_roundtrip - AssertionError: b'' != b'abc'",
            70,
            "===== 1 failed, 64 passed in 1.9s =====",
        ),
    );
    run.turn(5_000)
        .write("pkg/io.py", "def roundtrip(b):\n    return bytes(b)\n");
    run.turn(5_000)
        .shell("pytest -q", true, &log(".", 65, "65 passed in 1.8s"));
    run.turn(5_000).read("README.md", "# svc\n");
    run
}

/// "a run that folds 3 completed subtasks shows active-window tokens drop ≥5× vs unfolded;
/// folded outcomes remain queryable."
#[test]
fn three_folded_subtasks_shrink_the_active_window_five_fold() {
    let run = three_subtasks();
    let replay = replay(&run);
    let folds = folds(&replay);
    let turns: Vec<u32> = folds.iter().map(|f| f.turn).collect();
    assert_eq!(turns, [4, 7, 10]);
    let segments = [(1, 4), (5, 7), (8, 10)];
    for (fold, (from, to)) in folds.iter().zip(segments) {
        let chars = carried(&run, from, to);
        assert_eq!(
            fold.effect,
            Effect::Suppress {
                tokens: tokens_from_chars(chars - 120)
            },
            "turns {from}-{to}"
        );
    }
    assert_eq!(
        folds[0].detail.as_deref(),
        Some("turns 1-4 folded: 4 results, shell:cargo test passed")
    );
    assert_eq!(
        folds[1].detail.as_deref(),
        Some("turns 5-7 folded: 3 results, shell:npm test passed")
    );
    assert_eq!(folds[2].family.as_deref(), Some("shell:pytest -q"));

    // The active window right after the third fold: everything carried so far, against
    // three one-line outcomes.
    let unfolded = carried(&run, 1, 10);
    let ratio = metric(&replay, "active_window_ratio_x100").and_then(|v| v.as_u64());
    assert_eq!(ratio, Some(unfolded * 100 / 360));
    assert!(ratio >= Some(500), "drop of at least 5x: {ratio:?}");
    assert_eq!(metric(&replay, "subtasks_folded"), Some(json!(3)));

    // Queryable: each subtask's outcome is a line naming its turns and its verifier.
    let outcomes = metric(&replay, "folded_outcomes").expect("outcomes");
    assert_eq!(
        outcomes,
        json!([
            "turns 1-4: shell:cargo test passed",
            "turns 5-7: shell:npm test passed",
            "turns 8-10: shell:pytest -q passed"
        ])
    );
}

/// Each fold saves its tokens at every later request (no compaction in this run), and the
/// saving shows in the cost model.
#[test]
fn folds_are_priced_at_every_later_request() {
    let run = three_subtasks();
    let replay = replay(&run);
    let tokens: Vec<u64> = folds(&replay)
        .iter()
        .map(|f| match f.effect {
            Effect::Suppress { tokens } => tokens,
            _ => 0,
        })
        .collect();
    // Turns 5-11 after the first fold, 8-11 after the second, 11 after the third.
    let expected = 7 * tokens[0] + 4 * tokens[1] + tokens[2];
    assert_eq!(
        cost(&replay, &Prices::none())
            .by_guard
            .get("context_folding")
            .map(|s| s.tokens),
        Some(expected)
    );
}

/// Fewer than three folds: no ratio is reported; a failing verification closes nothing.
#[test]
fn failing_verifications_do_not_fold() {
    let mut run = Run::new("1783300000000-cf02", "/w/app", 1_000);
    run.turn(100).shell(
        "go test ./...",
        false,
        "--- FAIL: TestParse (0.00s)\nFAIL\texample.com/app\t0.01s",
    );
    run.turn(100)
        .edit("parse.go", "return nil", "return err", Ok("applied"));
    run.turn(100).shell(
        "go test ./...",
        false,
        "--- FAIL: TestParse (0.00s)\nFAIL\texample.com/app\t0.01s",
    );
    let replay = replay(&run);
    assert!(folds(&replay).is_empty());
    assert_eq!(metric(&replay, "subtasks_folded"), Some(json!(0)));
    assert_eq!(metric(&replay, "active_window_ratio_x100"), None);
    run.turn(100)
        .shell("go test ./...", true, "ok  \texample.com/app\t0.02s");
    let replay = self::replay(&run);
    assert_eq!(
        folds(&replay)[0].detail.as_deref(),
        Some("turns 1-4 folded: 4 results, shell:go test ./... passed")
    );
    assert_eq!(metric(&replay, "active_window_ratio_x100"), None);
}

/// A recorded compaction already dropped what was carried: a subtask open across it folds
/// only what came after, and the window restarts.
#[test]
fn compaction_resets_the_window_and_the_open_segment() {
    let mut run = Run::new("1783300000000-cf03", "/w/lib", 1_000);
    run.turn(100).shell(
        "make",
        false,
        &log("src/a.c:3:1: error: expected ';'", 50, ""),
    );
    run.turn(100);
    run.events.push(
        json!({"type": "compaction", "turn": 2, "beforeTokens": 90_000, "afterTokens": 20_000}),
    );
    run.turn(100)
        .edit("src/a.c", "int x", "int x;", Ok("applied"));
    run.turn(100)
        .shell("make", true, "cc -c src/a.c\nbuilt: 0 errors");
    let replay = replay(&run);
    let folds = folds(&replay);
    assert_eq!(folds.len(), 1);
    assert_eq!(
        folds[0].detail.as_deref(),
        Some("turns 1-4 folded: 3 results, shell:make passed")
    );
    let after = carried(&run, 3, 4);
    assert_eq!(
        folds[0].effect,
        Effect::Suppress {
            tokens: tokens_from_chars(after.saturating_sub(120))
        }
    );
}

/// A sub-agent's passing check does not fold the main agent's subtask, and its output is
/// not the main agent's context.
#[test]
fn sub_agent_verifications_stay_apart() {
    let mut run = Run::new("1783300000000-cf04", "/w/web", 1_000);
    run.turn(100).read(
        "src/app.tsx",
        &"export const App = () => null;\n".repeat(20),
    );
    for (kind, body) in [
        (
            "tool_call",
            json!({"tool": "shell", "args": {"command": "npx tsc --noEmit"}}),
        ),
        (
            "tool_result",
            json!({"success": true, "output": "Found 0 errors.", "verification": true}),
        ),
    ] {
        let mut record = json!({"type": kind, "turn": 1, "callId": "sub_1", "agent": "checker"});
        if let (Value::Object(r), Value::Object(b)) = (&mut record, body) {
            r.extend(b);
        }
        run.events.push(record);
    }
    let replay = replay(&run);
    assert!(folds(&replay).is_empty());
    run.turn(100)
        .shell("npx tsc --noEmit", true, "Found 0 errors. 0 errors");
    let replay = self::replay(&run);
    let folds = folds(&replay);
    assert_eq!(folds.len(), 1);
    assert_eq!(folds[0].agent, "main");
    assert_eq!(
        folds[0].detail.as_deref(),
        Some("turns 1-2 folded: 2 results, shell:npx tsc --noEmit passed")
    );
}
