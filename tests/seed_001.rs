//! Acceptance lines of seed 001 (`001_d7c440e7b9955800.txt`) that hindsight replays:
//! WO-TD-04 (evidence folding) and WO-TD-06 (ledger finalization); WO-TD-03's edit
//! families. Seed 002 (`002_527d73931b42d8b2.txt`) fix 4 is the same finalization rule.

mod common;

use common::{replay, replay_loaded};
use hindsight::config::Config;
use hindsight::guards::evidence::plan_frame;
use hindsight::model::{Frame, Message, Text};
use hindsight::normalize::RunState;
use hindsight::replay::RunReplay;
use hindsight::synth::Run;

fn finalized(run: &RunReplay) -> String {
    run.metrics["ledger_finalization"]["finalized"]
        .as_str()
        .expect("finalized")
        .to_string()
}

// ---------------------------------------------------------------- WO-TD-06

/// "A ledger with an unverified code mutation finalizes as incomplete_verification."
#[test]
fn td06_unverified_mutation_finalizes_incomplete() {
    let mut run = Run::new("1780000000000-a", "/w/api", 100);
    run.turn(10)
        .edit("src/handler.go", "return nil", "return err", Ok("applied"));
    let replay = replay(&run);
    assert_eq!(finalized(&replay), "incomplete_verification");
    let firing = replay
        .firings
        .iter()
        .find(|f| f.guard == "ledger_finalization")
        .expect("fires");
    assert_eq!(firing.action, "finalize_incomplete_verification");
    assert_eq!(
        firing.detail.as_deref(),
        Some("code mutation at turn 1 never verified")
    );
}

/// "A ledger with unresolved stale edit blocks finalizes as incomplete_verification."
#[test]
fn td06_unresolved_stale_edit_finalizes_incomplete() {
    let mut run = Run::new("1780000000000-b", "/w/site", 100);
    run.turn(10)
        .shell("npm test", true, "Tests: 8 passed, 8 total");
    run.turn(10).edit(
        "src/nav.tsx",
        "<Nav old/>",
        "<Nav/>",
        Err(("old_string_not_found", "old_string not found")),
    );
    let replay = replay(&run);
    assert_eq!(finalized(&replay), "incomplete_verification");
    let detail = replay
        .firings
        .iter()
        .find(|f| f.guard == "ledger_finalization")
        .and_then(|f| f.detail.clone());
    assert!(detail
        .unwrap_or_default()
        .contains("stale edit unresolved since turn 2"));
}

/// "A run that reaches terminal incomplete writes the ledger status before exit."
#[test]
fn td06_terminal_incomplete_is_unresolved_evidence() {
    let mut run = Run::new("1780000000000-c", "/w/lib", 100);
    run.turn(10).directive(
        "report_incomplete",
        "shell:cargo test",
        "terminal_incomplete",
    );
    assert_eq!(finalized(&replay(&run)), "incomplete_verification");
}

/// A mutation followed by a passing check, with a completed claim, is not held open.
#[test]
fn td06_verified_work_finalizes_completed() {
    let mut run = Run::new("1780000000000-d", "/w/lib", 100);
    run.turn(10)
        .edit("src/lib.rs", "a + b", "a.saturating_add(b)", Ok("applied"));
    run.turn(10)
        .shell("cargo test", true, "test result: ok. 3 passed; 0 failed");
    run.complete("completed", "done");
    assert_eq!(finalized(&replay(&run)), "completed");
    // A mutation after that last verification makes it incomplete again.
    run.turn(10)
        .edit("src/lib.rs", "fn x()", "fn y()", Ok("applied"));
    assert_eq!(finalized(&replay(&run)), "incomplete_verification");
}

/// A recorded `completed` ledger is reported, not rewritten.
#[test]
fn td06_only_open_ledgers_are_finalized() {
    let mut run = Run::new("1780000000000-e", "/w/lib", 100);
    run.turn(10).edit("README.md", "old", "new", Ok("applied"));
    run.ledger = Some("completed".into());
    let replay = replay(&run);
    assert_eq!(finalized(&replay), "completed");
    assert!(replay
        .firings
        .iter()
        .all(|f| f.guard != "ledger_finalization"));
}

// ---------------------------------------------------------------- WO-TD-03

/// "A repeated stale edit blocks only that edit family": the edits of other targets in
/// the same file are their own families; only the stale target escalates.
#[test]
fn td03_edit_families_are_target_specific() {
    let mut run = Run::new("1780000000000-f", "/w/robot", 100);
    let stale = Err(("old_string_not_found", "old_string not found"));
    for i in 0..2 {
        run.turn(10).edit(
            "model.xml",
            &format!("<joint name=\"hip_{i}\"/>"),
            "y",
            Ok("applied"),
        );
    }
    for _ in 0..3 {
        run.turn(10).edit(
            "model.xml",
            "<joint name=\"knee_l\" type=\"hinge\"/>",
            "x",
            stale,
        );
    }
    let replay = replay(&run);
    let stalled: Vec<_> = replay
        .firings
        .iter()
        .filter(|f| f.guard == "convergence_breaker" && f.action == "stalled")
        .collect();
    assert_eq!(stalled.len(), 1);
    assert_eq!(stalled[0].turn, 5);
    assert_eq!(
        stalled[0].family.as_deref(),
        Some("file_edit:model.xml:<joint name=\"knee_l\" type=\"hinge\"/>")
    );
}

// ---------------------------------------------------------------- WO-TD-04

fn message(role: &str, content: &str, call: Option<&str>) -> Message {
    Message {
        role: hindsight::model::role(role),
        content: content.into(),
        tool_call_id: call.map(Text::from),
    }
}

fn frame(messages: Vec<Message>) -> Frame {
    Frame {
        turn: 9,
        agent: "main".into(),
        estimated_tokens: None,
        system_prompt_chars: None,
        messages,
        signal_to_noise: None,
        source: "test".into(),
    }
}

/// "Repeated identical focus blocks render as one summary with a repeat count" and
/// "Evidence diagnostics report retained and dropped/folded counts."
#[test]
fn td04_repeated_focus_blocks_collapse_to_one_counted_summary() {
    let block = |turn: u32| {
        format!("[FOCUS] turn {turn}: family shell:make failed; required_next_action=update_todos")
    };
    let mut messages = vec![
        message("system", "system prompt", None),
        message("user", "task", None),
    ];
    messages.extend((1..=6).map(|t| message("system", &block(t), None)));
    let plan = plan_frame(&frame(messages), &RunState::new(), "[RUN EVIDENCE]");
    assert_eq!(plan.retained, 1);
    assert_eq!(plan.folded, 5);
    assert_eq!(plan.repeats, 5);
    assert_eq!(plan.summaries, 1);
}

/// "Large early discovery listings do not stay as repeated high-authority system evidence
/// once more specific evidence exists": within one family only the latest success, the
/// latest mutation/verification and the first and last unresolved failure stay.
#[test]
fn td04_evidence_folds_by_family() {
    let mut run = Run::new("1780000000000-g", "/w/app", 100);
    let listing = "src/a.py\n".repeat(400);
    run.turn(10).shell("find . -name '*.py'", true, &listing);
    run.turn(10).shell("find . -name '*.py'", true, &listing);
    for _ in 0..4 {
        run.turn(10).shell(
            "pytest -q",
            false,
            "FAILED tests/test_a.py::t\n1 failed in 0.1s",
        );
    }
    let loaded = run.to_loaded();
    let mut state = RunState::new();
    for e in &loaded.events {
        state.step(e);
    }
    let mut messages = vec![message("system", "system prompt", None)];
    for i in 1..=6 {
        let id = format!("call_{i:03}");
        let content = state.outcome(&id).map(|_| {
            if i <= 2 {
                listing.clone()
            } else {
                "1 failed".into()
            }
        });
        messages.push(message("tool", &content.unwrap_or_default(), Some(&id)));
    }
    let plan = plan_frame(&frame(messages), &state, "[RUN EVIDENCE]");
    // Listing family: the older listing folds. pytest family: first and last failure stay.
    assert_eq!(plan.retained, 3);
    assert_eq!(plan.folded, 3);
    assert!(plan.folded_chars >= listing.len() as u64);

    let mut with_frame = loaded.clone();
    with_frame.frames.push(frame(
        (1..=6)
            .map(|i| {
                message(
                    "tool",
                    if i <= 2 { &listing } else { "1 failed" },
                    Some(&format!("call_{i:03}")),
                )
            })
            .collect(),
    ));
    let replay = replay_loaded(&with_frame, &Config::default());
    let fold = replay
        .firings
        .iter()
        .find(|f| f.guard == "evidence_folding")
        .expect("fold fires");
    assert_eq!(fold.turn, 9);
    assert_eq!(
        fold.detail.as_deref(),
        Some("retained 3, folded 3 (repeated blocks: 0)")
    );
    let metrics = &replay.metrics["evidence_folding"];
    assert_eq!(
        (metrics["retained"].as_u64(), metrics["folded"].as_u64()),
        (Some(3), Some(3))
    );
}

/// A frame with nothing repeated is left alone.
#[test]
fn td04_distinct_evidence_is_not_folded() {
    let messages = vec![
        message("system", "system prompt", None),
        message("system", "[RUN EVIDENCE] go test ./... ok", None),
        message("system", "[RUN EVIDENCE] go vet ./... ok", None),
    ];
    let plan = plan_frame(&frame(messages), &RunState::new(), "[RUN EVIDENCE]");
    assert_eq!((plan.retained, plan.folded), (2, 0));
}
