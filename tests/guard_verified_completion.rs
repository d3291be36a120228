//! Acceptance of `verified_completion`: seed 002 (`002_527d73931b42d8b2.txt`) fix 16
//! "Truth-Based Terminal Completion After Verified Todo Closure" and fix 17 "Keep
//! Verify-Command Evidence Separate From Artifact Evidence".

mod common;

use common::{firings, metric_value, replay};
use hindsight::guards::Firing;
use hindsight::replay::RunReplay;
use hindsight::synth::Run;
use serde_json::json;

const GUARD: &str = "verified_completion";

fn holds(replay: &RunReplay) -> Vec<&Firing> {
    firings(replay, GUARD)
}

/// The single hold of a run, with its turn and detail.
fn held(replay: &RunReplay) -> (u32, String) {
    let fired = holds(replay);
    assert_eq!(fired.len(), 1, "{fired:#?}");
    assert_eq!(fired[0].action, "hold_completion");
    (fired[0].turn, fired[0].detail.clone().unwrap_or_default())
}

/// One todo declaring `verify`, opened at turn 1, an edit at turn 2.
fn declared(id: &str, cwd: &str, verify: &str, path: &str) -> Run {
    let mut run = Run::new(id, cwd, 1000);
    run.turn(100).todos(json!([
        {"id": "1", "status": "in_progress", "content": "implement", "verifyCommand": verify}
    ]));
    run.turn(100)
        .edit(path, "todo!()", "parse(input)", Ok("applied"));
    run
}

fn close(run: &mut Run, verify: &str) {
    run.turn(100).todos(json!([
        {"id": "1", "status": "completed", "content": "implement", "verifyCommand": verify}
    ]));
    run.turn(100).complete("completed", "done");
}

// ---------------------------------------------------------------- fix 16

/// Fix 16: "Partial work, open children, stale validation, or unresolved verification
/// failures remain incomplete." Partial work and an open child:
#[test]
fn fix16_partial_work_and_open_children_are_held() {
    let mut run = Run::new("1780000000000-vc1", "/w/web", 1000);
    run.turn(100).todos(json!([
        {"id": "1", "status": "completed", "content": "page"},
        {"id": "1.1", "parentId": "1", "status": "pending", "content": "tests"},
        {"id": "2", "status": "in_progress", "content": "docs"}
    ]));
    run.turn(100).complete("completed", "page shipped");
    let (turn, detail) = held(&replay(&run));
    assert_eq!(turn, 2);
    assert_eq!(detail, "open todos: 1.1 (pending), 2 (in_progress)");
}

/// Fix 16, same line: stale validation (the verifier passed before the last mutation).
#[test]
fn fix16_stale_validation_is_held() {
    let mut run = declared("1780000000000-vc2", "/w/py", "pytest -q", "src/app.py");
    run.turn(100).shell("pytest -q", true, "12 passed in 0.4s");
    run.turn(100)
        .edit("src/app.py", "parse(input)", "parse(data)", Ok("applied"));
    close(&mut run, "pytest -q");
    let replay = replay(&run);
    let (turn, detail) = held(&replay);
    assert_eq!(turn, 6);
    assert_eq!(
        detail,
        "verifyCommand `pytest -q` (todo 1) stale: passed at turn 3, mutation at turn 4"
    );
    assert_eq!(metric_value(&replay, GUARD, "verifiers_met"), json!(0));
}

/// Fix 16, same line: an unresolved verification failure (a checker family that failed
/// and never passed again), even with every todo completed.
#[test]
fn fix16_unresolved_verification_failure_is_held() {
    let mut run = declared("1780000000000-vc3", "/w/ts", "npm test", "src/a.ts");
    run.turn(100).shell(
        "npx tsc --noEmit",
        false,
        "src/a.ts(3,7): error TS2322: Type 'string' is not assignable",
    );
    run.turn(100)
        .shell("npm test", true, "Tests: 9 passed, 9 total");
    close(&mut run, "npm test");
    let (_, detail) = held(&replay(&run));
    assert_eq!(
        detail,
        "unresolved verification failures: shell:npx tsc --noEmit (turn 3)"
    );
}

/// Fix 16: "A fully verified todo tree can finish headless JSON without waiting on a final
/// model-generated `task_complete`." Quiet at the claim, and the tree was verified (the
/// harness could have finished) two turns before the model claimed.
#[test]
fn fix16_fully_verified_tree_finishes_without_the_model() {
    let mut run = declared("1780000000000-vc4", "/w/api", "go test ./...", "handler.go");
    run.turn(100).shell(
        "go test ./... 2>&1 | tail -5",
        true,
        "ok  \texample.com/api\t0.31s",
    );
    run.turn(100).todos(json!([
        {"id": "1", "status": "completed", "content": "implement", "verifyCommand": "go test ./..."}
    ]));
    run.turn(100).read("handler.go", "package api");
    run.turn(100)
        .complete("completed", "handler implemented; go test passes");
    let replay = replay(&run);
    assert!(holds(&replay).is_empty());
    assert_eq!(metric_value(&replay, GUARD, "verified_turn"), json!(4));
    assert_eq!(metric_value(&replay, GUARD, "claims"), json!(1));
    assert_eq!(metric_value(&replay, GUARD, "held"), json!(0));
    assert_eq!(metric_value(&replay, GUARD, "verifiers_met"), json!(1));
}

// ---------------------------------------------------------------- fix 17

/// Fix 17: "Accept exact verifier commands and reliable `verify && echo ...` suffixes."
#[test]
fn fix17_exact_and_echo_suffix_runs_are_accepted() {
    for run_as in [
        "make test",
        "make test && echo 'ALL PASSED'",
        "cd /w/c && make test",
    ] {
        let mut run = declared("1780000000000-vc5", "/w/c", "make test", "src/ring.c");
        run.turn(100).shell(run_as, true, "ran 14 tests: 0 errors");
        close(&mut run, "make test");
        let replay = replay(&run);
        assert!(
            holds(&replay).is_empty(),
            "`{run_as}`: {:#?}",
            holds(&replay)
        );
        assert_eq!(
            metric_value(&replay, GUARD, "verifiers_met"),
            json!(1),
            "`{run_as}`"
        );
    }
}

/// Fix 17: "Reject `verify && echo ok || echo failed` wrappers because they can mask
/// failure with exit 0."
#[test]
fn fix17_masking_wrapper_is_rejected() {
    let mut run = declared("1780000000000-vc6", "/w/web", "npm test", "src/a.js");
    run.turn(100).shell(
        "npm test && echo ok || echo failed",
        true,
        "FAIL src/a.test.js\nfailed",
    );
    close(&mut run, "npm test");
    let (_, detail) = held(&replay(&run));
    // Its own output reports a failure, so the masked exit 0 is a failing check too.
    assert_eq!(
        detail,
        "unresolved verification failures: shell:npm test && echo ok || echo failed (turn 3); \
         verifyCommand `npm test` (todo 1) only run behind `||` (exit status masked)"
    );
}

/// Fix 17: "Allow a conjunctive verifier to be satisfied by separately successful reliable
/// component commands."
#[test]
fn fix17_conjunctive_verifier_met_by_components() {
    let verify = "cargo build && cargo test";
    let mut run = declared("1780000000000-vc7", "/w/rs", verify, "src/lib.rs");
    run.turn(100)
        .shell("cargo build 2>&1 | tail -3", true, "Finished dev profile");
    run.turn(100)
        .shell("cargo test && echo done", true, "test result: ok. 8 passed");
    close(&mut run, verify);
    let met = replay(&run);
    assert!(holds(&met).is_empty(), "{:#?}", holds(&met));
    assert_eq!(metric_value(&met, GUARD, "verifiers_met"), json!(1));

    // A component run only behind a masking `||` is not reliable.
    let mut run = declared("1780000000000-vc8", "/w/rs", verify, "src/lib.rs");
    run.turn(100)
        .shell("cargo build", true, "Finished dev profile");
    run.turn(100)
        .shell("cargo test || true", true, "test result: FAILED. 1 failed");
    close(&mut run, verify);
    let (_, detail) = held(&replay(&run));
    assert_eq!(
        detail,
        "unresolved verification failures: shell:cargo test || true (turn 4); \
         verifyCommand `cargo build && cargo test` (todo 1) components not passed since \
         the last mutation: `cargo test`"
    );
}

/// Fix 17: "Artifact existence cannot clear a missing `verifyCommand`."
#[test]
fn fix17_artifact_existence_does_not_clear_verifier() {
    let verify = "make && ./build/selftest";
    let mut run = declared("1780000000000-vc9", "/w/fw", verify, "src/main.c");
    run.turn(100)
        .shell("make", true, "cc -o build/fw src/main.c");
    run.turn(100).read("build/selftest", "\u{7f}ELF");
    run.turn(100).shell(
        "ls -la build/selftest",
        true,
        "-rwxr-xr-x 1 dev dev 8192 build/selftest",
    );
    close(&mut run, verify);
    let (_, detail) = held(&replay(&run));
    assert_eq!(
        detail,
        "verifyCommand `make && ./build/selftest` (todo 1) components not passed since the \
         last mutation: `./build/selftest`"
    );
}

/// Fix 17: "A `task_complete` call is held when the todo tree still has unresolved
/// verification evidence." The call and its `task_complete` record are one claim.
#[test]
fn fix17_task_complete_call_is_held() {
    let mut run = declared("1780000000000-vca", "/w/py", "pytest -q", "src/app.py");
    run.turn(100).shell(
        "pytest -q",
        false,
        "FAILED tests/test_app.py::test_parse\n1 failed, 3 passed",
    );
    run.turn(100).todos(json!([
        {"id": "1", "status": "completed", "content": "implement", "verifyCommand": "pytest -q"}
    ]));
    run.turn(100);
    let id = run.call("task_complete", json!({"summary": "done"}));
    run.result(&id, true, "ok", json!({}));
    run.complete("completed", "done");
    let replay = replay(&run);
    let (turn, detail) = held(&replay);
    assert_eq!(turn, 5);
    assert_eq!(
        detail,
        "unresolved verification failures: shell:pytest -q (turn 3); verifyCommand \
         `pytest -q` (todo 1) last run failed (turn 3)"
    );
    assert_eq!(metric_value(&replay, GUARD, "claims"), json!(1));
}

/// An honest incomplete report is not a completion claim.
#[test]
fn incomplete_report_is_not_a_claim() {
    let mut run = declared("1780000000000-vcb", "/w/py", "pytest -q", "src/app.py");
    run.turn(100).complete("incomplete", "pytest still fails");
    let replay = replay(&run);
    assert!(holds(&replay).is_empty());
    assert_eq!(metric_value(&replay, GUARD, "claims"), json!(0));
}

/// Fix 17's masking concern applies to pipelines too: `verify 2>&1 | tail` exits with
/// `tail`'s status, so a "successful" run whose own output reports failures is not a pass
/// (and does not resolve the earlier failure).
#[test]
fn filtered_pass_with_failures_in_its_output_is_not_a_pass() {
    let mut run = declared("1780000000000-vcc", "/w/web", "npm test", "src/a.js");
    run.turn(100).shell(
        "npm test",
        false,
        "FAIL src/a.test.js\nTests: 2 failed, 6 passed",
    );
    run.turn(100).shell(
        "npm test 2>&1 | tail -5",
        true,
        "FAIL src/a.test.js\nTests: 2 failed, 6 passed",
    );
    close(&mut run, "npm test");
    let (_, detail) = held(&replay(&run));
    assert_eq!(
        detail,
        "unresolved verification failures: shell:npm test (turn 4); verifyCommand `npm test` \
         (todo 1) last run failed (turn 4)"
    );
}
