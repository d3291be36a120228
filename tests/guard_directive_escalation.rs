//! Acceptance lines of seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-02 "Directive
//! Escalation Must Terminate Cleanly After Repeated Ignoring", replayed by
//! `directive_escalation`. The seed gives no threshold; hindsight's default is 3.

mod common;

use common::{firings, metric, replay, replay_with};
use hindsight::config::Config;
use hindsight::cost::{cost, Prices};
use hindsight::guards::Effect;
use hindsight::synth::Run;
use serde_json::json;

const GUARD: &str = "directive_escalation";

/// A call the recorded harness refused: it never satisfies a directive.
fn refused_edit(run: &mut Run, path: &str) {
    let id = run.call(
        "file_edit",
        json!({"path": path, "old_string": "a", "new_string": "b"}),
    );
    run.result(
        &id,
        false,
        "[FOCUS] blocked: required_next_action=read_authoritative_target",
        json!({"errorClass": "focus_blocked"}),
    );
}

/// Four directives with only refused calls and a non-verifying shell between them: the
/// first three were ignored.
fn ignoring_run(id: &str) -> Run {
    let mut run = Run::new(id, "/w/pipeline", 5000);
    run.turn(500).directive(
        "read_authoritative_target",
        "file_edit:config/stages.xml",
        "active",
    );
    for _ in 0..3 {
        run.turn(500);
        refused_edit(&mut run, "config/stages.xml");
        run.shell("echo retrying", true, "retrying");
        run.directive(
            "read_authoritative_target",
            "file_edit:config/stages.xml",
            "active",
        );
    }
    run
}

/// "Repeatedly ignoring a recovery directive transitions to `terminal_incomplete`."
#[test]
fn ignored_directives_transition_to_terminal_incomplete() {
    let mut run = ignoring_run("1780000000000-a");
    run.turn(500).shell("echo more", true, "more");
    run.turn(500).shell("echo more", true, "more");
    let replay = replay(&run);
    let fired = firings(&replay, GUARD);
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].action, "terminal_incomplete");
    assert_eq!(fired[0].turn, 4);
    assert_eq!(fired[0].effect, Effect::Terminal);
    assert_eq!(
        fired[0].detail.as_deref(),
        Some("3 directives ignored; report_incomplete")
    );
    assert_eq!(
        fired[0].family.as_deref(),
        Some("file_edit:config/stages.xml")
    );
    assert_eq!(metric(&replay, GUARD, "directives"), 4);
    assert_eq!(metric(&replay, GUARD, "ignored"), 3);
    assert_eq!(metric(&replay, GUARD, "satisfied"), 0);
    assert_eq!(metric(&replay, GUARD, "terminal_turn"), 4);
    // Turns 5 and 6 (prompts 7500 and 8000, + 180 completion each) are saved whole.
    assert_eq!(
        cost(&replay, &Prices::none()).by_guard[GUARD].tokens,
        7680 + 8180
    );
}

/// "After terminal incomplete, edit/read/shell variants are blocked."
#[test]
fn edit_read_and_shell_are_blocked_after_terminal() {
    let mut run = ignoring_run("1780000000000-b");
    run.turn(500).edit(
        "config/stages.xml",
        "<stage/>",
        "<stage id=\"x\"/>",
        Ok("applied"),
    );
    run.read("config/stages.xml", "<stage id=\"x\"/>");
    run.shell("xmllint --noout config/stages.xml", true, "");
    let id = run.call(
        "file_patch",
        json!({"path": "config/stages.xml", "offset": 4}),
    );
    run.result(&id, true, "patched", json!({}));
    run.directive("update_todos", "file_edit:config/stages.xml", "active");
    let replay = replay(&run);
    assert_eq!(metric(&replay, GUARD, "blocked_after_terminal"), 4);
    assert_eq!(metric(&replay, GUARD, "directives"), 5);
    // Satisfying actions after the terminal state change nothing; it fires once.
    assert_eq!(firings(&replay, GUARD).len(), 1);
    assert_eq!(metric(&replay, GUARD, "satisfied"), 0);
}

/// "A reporting tool is allowed so the run can end truthfully."
#[test]
fn a_report_is_allowed_after_terminal() {
    let mut run = ignoring_run("1780000000000-c");
    run.turn(500);
    let id = run.call(
        "task_complete",
        json!({"status": "incomplete", "summary": "stale target; blocked"}),
    );
    run.result(&id, true, "reported", json!({}));
    run.complete("incomplete", "stale target; blocked");
    let replay = replay(&run);
    assert_eq!(metric(&replay, GUARD, "reports_allowed"), 1);
    assert_eq!(metric(&replay, GUARD, "blocked_after_terminal"), 0);
}

/// A read, a mutation or a verification attempt (even a failing one) answers a directive;
/// refused calls and terminal-state directives do not count.
#[test]
fn satisfied_directives_never_escalate() {
    let mut run = Run::new("1780000000000-d", "/w/api", 5000);
    let directive =
        |run: &mut Run| run.directive("run_verification", "shell:go test ./...", "active");
    run.turn(100);
    directive(&mut run);
    run.turn(100).read("internal/api/handler.go", "package api");
    directive(&mut run);
    run.turn(100).edit(
        "internal/api/handler.go",
        "return nil",
        "return err",
        Ok("applied"),
    );
    directive(&mut run);
    run.turn(100).shell(
        "go test ./...",
        false,
        "--- FAIL: TestHandler (0.00s)\nFAIL\texample.com/api\t0.01s",
    );
    directive(&mut run);
    run.turn(100).directive(
        "report_incomplete",
        "shell:go test ./...",
        "terminal_incomplete",
    );
    run.turn(100).directive(
        "report_incomplete",
        "shell:go test ./...",
        "terminal_incomplete",
    );
    let replay = replay(&run);
    assert!(firings(&replay, GUARD).is_empty());
    assert_eq!(metric(&replay, GUARD, "directives"), 4);
    assert_eq!(metric(&replay, GUARD, "satisfied"), 3);
    assert_eq!(metric(&replay, GUARD, "ignored"), 0);
}

/// The threshold is a setting; a sub-agent's terminal state does not end the run.
#[test]
fn threshold_setting_and_sub_agents() {
    let mut config = Config::default();
    config
        .set("directive_escalation.ignored_threshold=4")
        .expect("setting");
    assert!(firings(
        &replay_with(&ignoring_run("1780000000000-e"), &config),
        GUARD
    )
    .is_empty());

    let mut run = ignoring_run("1780000000000-f");
    for e in &mut run.events {
        e["agent"] = json!("reviewer");
    }
    let replay = replay(&run);
    let fired = firings(&replay, GUARD);
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].agent, "reviewer");
    assert_eq!(fired[0].effect, Effect::Advisory);
    assert!(!replay.metrics[GUARD].contains_key("terminal_turn"));
}

// ------------------------------------------- what the model saw (issue #10, item 4)

/// Several directives recorded in one turn (one per blocked call of one response) are
/// one directive: the model sees them together in its next request. Four at turn 1 do not
/// cut the run at turn 1, in any ecosystem.
#[test]
fn directives_of_one_turn_count_once() {
    for (cwd, family) in [
        ("/w/shop", "shell:npm test"),
        ("/w/crate", "shell:cargo test"),
        ("/w/api", "shell:pytest -q"),
    ] {
        let mut run = Run::new("1780000000000-one-turn", cwd, 4000);
        run.turn(300);
        for _ in 0..4 {
            refused_edit(&mut run, "src/main");
            run.directive("read_authoritative_target", family, "active");
        }
        run.turn(300).shell("echo done", true, "done");
        let replay = replay(&run);
        assert!(firings(&replay, GUARD).is_empty(), "{family}");
        assert_eq!(metric(&replay, GUARD, "directive_records"), 4);
        assert_eq!(metric(&replay, GUARD, "directives"), 1);
        assert_eq!(metric(&replay, GUARD, "ignored"), 0);
    }
}

/// A directive is ignored only when a later model request passed it by: directives at four
/// turns with nothing answering them reach the threshold at the fourth.
#[test]
fn directives_passed_by_at_later_turns_are_ignored() {
    for (cwd, family) in [
        ("/w/fw", "shell:make"),
        ("/w/svc", "shell:go test ./..."),
        ("/w/web", "shell:npx tsc --noEmit"),
    ] {
        let mut run = Run::new("1780000000000-passed-by", cwd, 4000);
        for _ in 0..4 {
            run.turn(300);
            refused_edit(&mut run, "src/main");
            refused_edit(&mut run, "src/other");
            run.directive("read_authoritative_target", family, "active");
            run.directive("read_authoritative_target", family, "active");
        }
        let replay = replay(&run);
        let fired = firings(&replay, GUARD);
        assert_eq!(fired.len(), 1, "{family}");
        assert_eq!((fired[0].turn, fired[0].effect), (4, Effect::Terminal));
        assert_eq!(metric(&replay, GUARD, "ignored"), 3);
    }
}

/// A call of the response that drew the directive never saw it, so it does not answer it;
/// the same read one turn later does.
#[test]
fn only_calls_after_the_directive_answer_it() {
    let directive = |run: &mut Run| {
        refused_edit(run, "src/lib.rs");
        run.directive(
            "read_authoritative_target",
            "file_edit:src/lib.rs",
            "active",
        );
    };
    // The read shares the directive's turn each time: every directive is ignored.
    let mut same_turn = Run::new("1780000000000-same-turn", "/w/crate", 4000);
    for _ in 0..4 {
        same_turn.turn(300);
        directive(&mut same_turn);
        same_turn.read("src/lib.rs", "pub fn f() {}");
    }
    assert_eq!(firings(&replay(&same_turn), GUARD).len(), 1);
    // The read comes at the next turn: each directive is answered.
    let mut next_turn = Run::new("1780000000000-next-turn", "/w/crate", 4000);
    for _ in 0..4 {
        next_turn.turn(300);
        directive(&mut next_turn);
        next_turn.turn(300).read("src/lib.rs", "pub fn f() {}");
    }
    let replay = replay(&next_turn);
    assert!(firings(&replay, GUARD).is_empty());
    assert_eq!(metric(&replay, GUARD, "satisfied"), 4);
}
