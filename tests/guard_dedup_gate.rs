//! Seed 000 (`000_053cae7e53b598d3.txt`) names the cross-turn duplicate-call gate
//! (`src/dedup-gate.ts`, "Verified integration map") and counts its events in "The failure
//! signature these work orders attack" (15,342 duplicate-call dedup events); it gives no
//! acceptance lines of its own. These tests pin the replayed gate: a repeat with nothing
//! changed in between is blocked, a repeat after a mutation is not, and the replay is
//! compared with the harness's own `dedup` records. Ecosystems: cargo, npm, pytest, go,
//! make/gcc, tsc.

mod common;

use common::{firings, metric, replay};
use hindsight::cost::{cost, Prices};
use hindsight::guards::Effect;
use hindsight::model::tokens_from_chars;
use hindsight::synth::Run;
use serde_json::json;

const GUARD: &str = "dedup_gate";

/// Characters a shell call's arguments add to the context.
fn shell_args(command: &str) -> u64 {
    serde_json::to_string(&json!({ "command": command }))
        .expect("json")
        .len() as u64
}

const CARGO_ERR: &str =
    "error[E0425]: cannot find value `cfg` in this scope\nerror: could not compile `demo`";

/// The failure signature's dedup events: the same build re-run with nothing changed. Both
/// repeats are blocked, and they are exactly the calls the harness recorded as duplicates.
#[test]
fn identical_build_repeats_are_blocked_and_agree_with_the_record() {
    let mut run = Run::new("1780000000000-a", "/w/crate", 50_000);
    run.turn(10).shell("cargo build", false, CARGO_ERR);
    run.turn(10).shell("cargo build", false, CARGO_ERR);
    run.dedup("shell:cargo build");
    run.turn(10).shell("cargo build", false, CARGO_ERR);
    run.dedup("shell:cargo build");
    run.turn(10).read("src/main.rs", "fn main() {}\n");
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    let got: Vec<(u32, &str, Option<&str>)> = f
        .iter()
        .map(|f| (f.turn, f.action.as_str(), f.detail.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                2,
                "block_duplicate",
                Some("repeat 1 of the call at turn 1; no mutation since; earlier result returned")
            ),
            (
                3,
                "block_duplicate",
                Some("repeat 2 of the call at turn 1; no mutation since; earlier result returned")
            ),
        ]
    );
    assert_eq!(f[0].family.as_deref(), Some("shell:cargo build"));
    let tokens = tokens_from_chars(CARGO_ERR.chars().count() as u64 + shell_args("cargo build"));
    assert_eq!(f[0].effect, Effect::Suppress { tokens });
    for (name, want) in [
        ("replayed", 2),
        ("recorded", 2),
        ("agree", 2),
        ("only_recorded", 0),
        ("only_replayed", 0),
        ("outcome_differed", 0),
        ("tokens_suppressed", 2 * tokens),
    ] {
        assert_eq!(metric(&replay, GUARD, name), want, "{name}");
    }
    // Suppressed at turn 2 (carried by turns 3 and 4) and at turn 3 (turn 4).
    assert_eq!(
        cost(&replay, &Prices::none()).by_guard["dedup_gate"].tokens,
        3 * tokens
    );
}

/// Quiet when repeats are separated by a mutation: re-running the tests after an edit is
/// the loop working, not a duplicate.
#[test]
fn rerunning_tests_after_an_edit_is_not_a_duplicate() {
    let mut run = Run::new("1780000000000-b", "/w/web", 100);
    let failing = "FAIL src/a.test.ts\nTests: 2 failed, 5 passed";
    run.turn(10).shell("npm test", false, failing);
    run.turn(10)
        .edit("src/a.ts", "return x", "return x + 1", Ok("applied"));
    run.turn(10).shell("npm test", false, failing);
    run.turn(10)
        .edit("src/a.ts", "return x + 1", "return x + 2", Ok("applied"));
    run.turn(10)
        .shell("npm test", true, "Tests: 7 passed, 7 total");
    let replay = replay(&run);
    assert!(
        firings(&replay, GUARD).is_empty(),
        "{:#?}",
        firings(&replay, GUARD)
    );
    assert_eq!(metric(&replay, GUARD, "replayed"), 0);
}

/// Reads are calls too: re-reading an unchanged file returns what the first read did; a
/// write in between makes the next read new.
#[test]
fn rereading_an_unchanged_file_is_blocked_until_it_changes() {
    let mut run = Run::new("1780000000000-c", "/w/py", 100);
    run.turn(10)
        .read("app/models.py", "class User:\n    pass\n");
    run.turn(10)
        .read("app/models.py", "class User:\n    pass\n");
    run.turn(10)
        .write("app/models.py", "class User:\n    name: str\n");
    run.turn(10)
        .read("app/models.py", "class User:\n    name: str\n");
    run.turn(10).shell("pytest -q", true, "3 passed in 0.02s");
    let replay = replay(&run);
    let turns: Vec<u32> = firings(&replay, GUARD).iter().map(|f| f.turn).collect();
    assert_eq!(turns, vec![2]);
    // Nobody recorded this duplicate: the replay finds it alone.
    assert_eq!(metric(&replay, GUARD, "only_replayed"), 1);
    assert_eq!(metric(&replay, GUARD, "recorded"), 0);
}

/// The WO-8 root cause seen from the gate: an identical hash-guarded edit retried after
/// its rejection changes nothing and is blocked each time. An identical edit that *landed*
/// is never a duplicate of itself: its repeat runs against the file it changed.
#[test]
fn a_rejected_edit_retried_is_blocked_a_landed_one_is_not() {
    let mut run = Run::new("1780000000000-d", "/w/fw", 100);
    let args = json!({"path": "include/cfg.h", "old_string": "int id;", "new_string": "", "expected_hash": "9f2c41"});
    for _ in 0..3 {
        let id = run.turn(10).call("file_edit", args.clone());
        run.result(
            &id,
            false,
            "hash mismatch (expected_hash 9f2c41)",
            json!({"errorClass": "hash_mismatch"}),
        );
    }
    run.turn(10)
        .edit("src/pal.c", "kp = 1;", "kp = 2;", Ok("applied"));
    run.turn(10)
        .edit("src/pal.c", "kp = 1;", "kp = 2;", Ok("applied"));
    let replay = replay(&run);
    let turns: Vec<u32> = firings(&replay, GUARD).iter().map(|f| f.turn).collect();
    assert_eq!(turns, vec![2, 3]);
}

/// Canonical identity is exact: `go test ./... 2>&1` is not `go test ./...` (the recorded
/// arguments differ), so the gate lets it run even though the harness recorded a dedup for
/// it; that record counts as `only_recorded`.
#[test]
fn variants_are_not_duplicates_and_a_recorded_dedup_is_only_recorded() {
    let mut run = Run::new("1780000000000-e", "/w/svc", 100);
    let out = "--- FAIL: TestParse (0.00s)\nFAIL\texample.com/svc\t0.01s";
    run.turn(10).shell("go test ./...", false, out);
    run.turn(10).shell("go test ./... 2>&1", false, out);
    run.dedup("shell:go test ./...");
    run.turn(10).shell("go test ./a", false, out);
    let replay = replay(&run);
    assert!(firings(&replay, GUARD).is_empty());
    assert_eq!(metric(&replay, GUARD, "recorded"), 1);
    assert_eq!(metric(&replay, GUARD, "agree"), 0);
    assert_eq!(metric(&replay, GUARD, "only_recorded"), 1);
}

/// Per agent: a sub-agent running the main agent's command is not repeating itself.
#[test]
fn the_same_call_by_another_agent_is_not_a_duplicate() {
    let mut run = Run::new("1780000000000-f", "/w/web", 100);
    let out = "src/a.ts(3,7): error TS2322: Type 'string' is not assignable";
    run.turn(10).shell("npx tsc --noEmit", false, out);
    run.turn(10).shell("npx tsc --noEmit", false, out);
    let n = run.events.len();
    for e in &mut run.events[n - 2..] {
        e["agent"] = json!("reviewer");
    }
    let replay = replay(&run);
    assert!(firings(&replay, GUARD).is_empty());
}

/// A repeat whose recorded result differs from the earlier one (state changed outside any
/// recorded mutation) is what the gate, deciding before dispatch, would have blocked; that
/// block would have hidden the change, so it is reported as `harmful_block`, unpriced, and
/// counted in `outcome_differed`.
#[test]
fn a_differing_recorded_outcome_is_flagged() {
    let mut run = Run::new("1780000000000-g", "/w/c", 100);
    run.turn(10)
        .shell("make", false, "src/a.c:3:1: error: expected ';'");
    run.turn(10).shell("make", true, "cc -o app src/a.c");
    let replay = replay(&run);
    let f = firings(&replay, GUARD);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].action, "harmful_block");
    assert_eq!(f[0].effect, hindsight::guards::Effect::Advisory);
    assert_eq!(
        f[0].detail.as_deref(),
        Some(
            "repeat 1 of the call at turn 1; no mutation since; earlier result returned; \
             but the recorded repeat came out differently (tool_failed then success)"
        )
    );
    assert_eq!(metric(&replay, GUARD, "outcome_differed"), 1);
}

/// The working directory is part of the call: the same command in another package of a
/// monorepo runs different tests.
#[test]
fn the_same_command_in_another_directory_is_not_a_duplicate() {
    let mut run = Run::new("1780000000000-h", "/w/mono/api", 100);
    run.turn(10)
        .shell("pytest -q", false, "FAILED test_a.py::test_x\n1 failed");
    run.cwd = "/w/mono/worker".into();
    run.turn(10)
        .shell("pytest -q", false, "FAILED test_b.py::test_y\n1 failed");
    assert!(firings(&replay(&run), GUARD).is_empty());
}
