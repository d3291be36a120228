//! Acceptance of `todo_truth`: seed 002 (`002_527d73931b42d8b2.txt`) fix 9 "Truth-Reconcile
//! Active Todos From Tool Evidence" and fix 10 "First-Class Nested Todo Decomposition".
//!
//! The incident of fix 9 (a todo "Teach each object ..." completed although every call of
//! its family failed) is replayed with a generic command, never the incident's tool.

mod common;

use common::{firings, metric, replay};
use hindsight::synth::Run;
use serde_json::json;

const GUARD: &str = "todo_truth";

const IMPORT: &str = "Import each sample record into the local store";

/// A todo opened at turn 1, worked on by a family that fails at turns 2-4 with cosmetic
/// variations of one command.
fn import_attempts() -> Run {
    let mut run = Run::new("1780000000000-tt1", "/w/store", 1000);
    run.turn(200)
        .todos(json!([{"id": "1", "status": "in_progress", "content": IMPORT}]));
    for cmd in [
        "./bin/store import samples/ --all 2>&1 | tail -20",
        "./bin/store import samples/ --all",
        "cd /w/store && ./bin/store import samples/ --all | head -50",
    ] {
        run.turn(300).shell(
            cmd,
            false,
            "Traceback (most recent call last):\nValueError: bad row 3",
        );
    }
    run
}

/// Fix 9: "Downgrade completed todos to `blocked` when matching tool-family evidence failed
/// and no later same-family success exists."
#[test]
fn fix9_completed_over_failed_family_is_downgraded() {
    let mut run = import_attempts();
    run.turn(100)
        .todos(json!([{"id": "1", "status": "completed", "content": IMPORT}]));
    let replay = replay(&run);
    let fired = firings(&replay, GUARD);
    assert_eq!(fired.len(), 1, "{fired:#?}");
    let f = fired[0];
    assert_eq!((f.turn, f.action.as_str()), (5, "downgrade_to_blocked"));
    assert_eq!(
        f.family.as_deref(),
        Some("shell:./bin/store import samples/ --all")
    );
    let detail = f.detail.as_deref().unwrap_or_default();
    assert!(
        detail.starts_with("todo 1 \"Import each sample record"),
        "{detail}"
    );
    assert!(detail.contains("3 failed call(s)"), "{detail}");
    assert_eq!(metric(&replay, GUARD, "todos_completed"), 1);
    assert_eq!(metric(&replay, GUARD, "downgraded"), 1);
}

/// Fix 9, the other half of the same line: a later same-family success resolves it.
#[test]
fn fix9_later_same_family_success_keeps_completion() {
    let mut run = import_attempts();
    run.turn(100).shell(
        "./bin/store import samples/ --all",
        true,
        "imported 40 records",
    );
    run.turn(100)
        .todos(json!([{"id": "1", "status": "completed", "content": IMPORT}]));
    let replay = replay(&run);
    assert!(firings(&replay, GUARD).is_empty());
    assert_eq!(metric(&replay, GUARD, "todos_completed"), 1);
    assert_eq!(metric(&replay, GUARD, "downgraded"), 0);
}

/// Fix 9: the evidence is the todo's own window. A failure before the todo was opened,
/// or a success of a different family, changes nothing.
#[test]
fn fix9_window_starts_where_the_todo_was_opened() {
    let mut run = Run::new("1780000000000-tt2", "/w/api", 1000);
    run.turn(100)
        .shell("go vet ./...", false, "vet: main.go:3: unused");
    run.turn(100).todos(json!([
        {"id": "a", "status": "completed", "content": "lint"},
        {"id": "b", "status": "in_progress", "content": "parse config"}
    ]));
    run.turn(100).shell(
        "go test ./config/...",
        true,
        "ok  \texample.com/api/config\t0.02s",
    );
    run.turn(100).todos(json!([
        {"id": "a", "status": "completed", "content": "lint"},
        {"id": "b", "status": "completed", "content": "parse config"}
    ]));
    let replay = replay(&run);
    // `a` was first seen completed: its window is the run so far, and `go vet` failed.
    let fired = firings(&replay, GUARD);
    assert_eq!(fired.len(), 1, "{fired:#?}");
    assert_eq!(
        (fired[0].turn, fired[0].family.as_deref()),
        (2, Some("shell:go vet ./..."))
    );
    assert_eq!(metric(&replay, GUARD, "todos_completed"), 2);
}

/// Fix 10: "a parent cannot be completed while any child is pending, in progress, or
/// blocked."
#[test]
fn fix10_parent_over_open_children_is_downgraded() {
    let mut run = Run::new("1780000000000-tt3", "/w/web", 1000);
    let tree = |parent: &str| {
        json!([
            {"id": "1", "status": parent, "content": "Ship the settings page"},
            {"id": "1.1", "parentId": "1", "status": "completed", "content": "form"},
            {"id": "1.2", "parentId": "1", "status": "pending", "content": "validation"},
            {"id": "1.3", "parentId": "1", "status": "in_progress", "content": "api call"},
            {"id": "1.4", "parentId": "1", "status": "blocked", "content": "e2e"}
        ])
    };
    run.turn(100).todos(tree("in_progress"));
    run.turn(100)
        .shell("npx jest settings", true, "Tests: 4 passed, 4 total");
    run.turn(100).todos(tree("completed"));
    let replay = replay(&run);
    let fired = firings(&replay, GUARD);
    assert_eq!(fired.len(), 1, "{fired:#?}");
    assert_eq!(
        (fired[0].turn, fired[0].action.as_str()),
        (3, "parent_over_open_child")
    );
    assert_eq!(
        fired[0].detail.as_deref(),
        Some(
            "todo 1 \"Ship the settings page\" completed with open children: \
             1.2 (pending), 1.3 (in_progress), 1.4 (blocked)"
        )
    );
    assert_eq!(metric(&replay, GUARD, "parents_downgraded"), 1);
}

/// Fix 10, quiet side: a parent completed after every child is completed.
#[test]
fn fix10_parent_after_all_children_is_truthful() {
    let mut run = Run::new("1780000000000-tt4", "/w/crate", 1000);
    run.turn(100).todos(json!([
        {"id": 1, "status": "in_progress", "content": "parser"},
        {"id": 2, "parentId": 1, "status": "in_progress", "content": "lexer"}
    ]));
    run.turn(100)
        .shell("cargo test lexer", true, "test result: ok. 6 passed");
    run.turn(100).todos(json!([
        {"id": 1, "status": "in_progress", "content": "parser"},
        {"id": 2, "parentId": 1, "status": "completed", "content": "lexer"}
    ]));
    run.turn(100).todos(json!([
        {"id": 1, "status": "completed", "content": "parser"},
        {"id": 2, "parentId": 1, "status": "completed", "content": "lexer"}
    ]));
    let replay = replay(&run);
    assert!(firings(&replay, GUARD).is_empty());
    assert_eq!(metric(&replay, GUARD, "todos_completed"), 2);
}

/// Only the main agent's todo tree and calls count: a sub-agent's failures are its own.
#[test]
fn sub_agent_failures_are_not_main_evidence() {
    let mut run = Run::new("1780000000000-tt5", "/w/py", 1000);
    run.turn(100)
        .todos(json!([{"id": "t", "status": "in_progress", "content": "fix tests"}]));
    let id = run.call("shell", json!({"command": "pytest -q"}));
    run.result(&id, false, "1 failed", json!({}));
    for e in run.events.iter_mut().rev().take(2) {
        e["agent"] = json!("explorer");
    }
    run.turn(100)
        .todos(json!([{"id": "t", "status": "completed", "content": "fix tests"}]));
    assert!(firings(&replay(&run), GUARD).is_empty());
}
