//! Acceptance of `loop_intervention_wording`: seed 002 (`002_527d73931b42d8b2.txt`) fix 2
//! "Replace Loop Escape Equals `task_complete`".

mod common;

use common::{firings, replay};
use hindsight::guards::Firing;
use hindsight::replay::RunReplay;
use hindsight::synth::Run;
use serde_json::json;

const GUARD: &str = "loop_intervention_wording";

fn flagged(replay: &RunReplay) -> Vec<&Firing> {
    firings(replay, GUARD)
}

/// A run that loops on a failing `npm test`, then gets one loop directive.
fn looping(required: &str, state: &str, text: &str) -> Run {
    let mut run = Run::new("1780000000000-li1", "/w/web", 1000);
    for _ in 0..3 {
        run.turn(200).shell(
            "npm test 2>&1 | tail -20",
            false,
            "FAIL src/a.test.js\n1 failed",
        );
    }
    let turn = run.turn;
    run.events.push(
        json!({"type": "directive", "turn": turn, "source": "loop_intervention",
        "requiredNextAction": required, "family": "shell:npm test", "state": state, "text": text}),
    );
    run
}

/// "Loop intervention text never says to call `task_complete` with whatever is available."
#[test]
fn fix2_text_telling_the_model_to_complete_is_flagged() {
    let run = looping(
        "stop_repeating",
        "loop_detected",
        "You are repeating shell:npm test. Call `task_complete` with whatever is available.",
    );
    let replay = replay(&run);
    let fired = flagged(&replay);
    assert_eq!(fired.len(), 1, "{fired:#?}");
    let f = fired[0];
    assert_eq!((f.turn, f.action.as_str()), (3, "completion_wording"));
    assert_eq!(f.family.as_deref(), Some("shell:npm test"));
    assert_eq!(f.detail.as_deref(), Some("text: \"call task_complete\""));
    let metrics = &replay.metrics["loop_intervention_wording"];
    assert_eq!(metrics["directives"], json!(1));
    assert_eq!(metrics["completion_worded"], json!(1));
}

/// Same line: a required next action that is the completion tool, and other completion
/// tool names of the harness vocabulary, are flagged just the same.
#[test]
fn fix2_required_completion_action_and_aliases_are_flagged() {
    let run = looping("task_complete", "loop_detected", "Loop detected.");
    let fired = flagged(&replay(&run))
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(
        fired[0].detail.as_deref(),
        Some("requiredNextAction=task_complete")
    );
    let run = looping(
        "stop_repeating",
        "loop_detected",
        "Repetition detected; now invoke the submit tool and stop.",
    );
    let fired = flagged(&replay(&run))
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(
        fired[0].detail.as_deref(),
        Some("text: \"invoke the submit\"")
    );
}

/// The fixed wording (fix 2, Implementation): stop repeating the family, verify, reread the
/// target once, ask the user, or report incomplete. Naming the completion tool in order to
/// forbid it, and `finish` as an ordinary English verb, are not instructions to call it.
#[test]
fn fix2_recovery_wording_is_quiet() {
    let text = "Stop repeating shell:npm test. Files changed, so run the verifier to finish \
                checking; for a stale edit, reread the exact target once; ask the user if \
                genuinely blocked, or report incomplete. Do not call task_complete.";
    let replay = replay(&looping("run_verification", "loop_detected", text));
    assert!(flagged(&replay).is_empty(), "{:#?}", flagged(&replay));
    assert_eq!(
        replay.metrics["loop_intervention_wording"]["directives"],
        json!(1)
    );
}

/// "Existing `ask_user` circuit-breaker remains the high-tier escape path."
#[test]
fn fix2_ask_user_escape_is_quiet() {
    let text = "Circuit breaker: ask the user how to proceed; never use task_complete here.";
    assert!(flagged(&replay(&looping("ask_user", "circuit_breaker", text))).is_empty());
}

/// Seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-02: "A reporting tool is allowed so the run
/// can end truthfully." In the terminal-incomplete state the completion tool is the
/// sanctioned incomplete report, so the directive is not flagged.
#[test]
fn terminal_incomplete_report_is_exempt() {
    let text = "Terminal incomplete: call task_complete with status incomplete and the blocker.";
    let run = looping("report_incomplete", "terminal_incomplete", text);
    assert!(flagged(&replay(&run)).is_empty());
}
