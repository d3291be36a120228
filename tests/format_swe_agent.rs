//! The SWE-agent `.traj` importer (issue #6): detection by structure (also on a cut head),
//! one turn per model call, tool kinds and error classes after normalization, token totals
//! spread from `info.model_stats`, the outcome, located problems, and guards firing.
//! Fixtures: `tests/fixtures/formats/swe_agent/` (written for these tests): `acme__calc-7`
//! (0.x shape: a failing script run twice with a cosmetic variant, then the edit linter
//! rejecting the same edit three times), `acme__semver-12` (a healthy 0.x run),
//! `slug__slugify-3` (1.x shape: `str_replace_editor` stale edits, `query`, an exit step)
//! and `acme__beacon-5` (1.x shape, a challenge solved with shell commands: a program's
//! "No such file" wording, then a successful step whose output opens with a terminal
//! warning and a Python warning before the flag; `replay_config` names the model), and
//! `acme__clib-4` (0.x shape, a C tool built from a vendored archive: programs' own failure
//! wordings, apt's `E: `, tar giving up, a shell error after a file window, `make: ***`,
//! bash's syntax errors, a traceback between other lines; beside near-misses that succeed,
//! apt's `W: `, tar's leading-slash note, a compiler warning, `make: Nothing to be done`, a
//! window whose file text holds failure wordings, a Python `UserWarning:`; and a reply with
//! no command, an empty action).

mod common;

use hindsight::config::Config;
use hindsight::ingest::formats::{detect, import, swe_agent, InputFormat};
use hindsight::ingest::{LoadedRun, Policy, ProblemKind};
use hindsight::model::{EventKind, TokenSource};
use hindsight::normalize::{ErrorClass, RunState, Step, ToolKind};
use hindsight::replay::ProjectReplayer;
use serde_json::Value;
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/swe_agent";
const LOOPING: &str = "acme__calc-7.traj";
const HEALTHY: &str = "acme__semver-12.traj";
const V1: &str = "slug__slugify-3.traj";
const WARNED: &str = "acme__beacon-5.traj";
const WORDED: &str = "acme__clib-4.traj";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR).join(name)
}

fn load(name: &str) -> LoadedRun {
    import(&fixture(name), name, InputFormat::SweAgent, Policy::Strict)
        .expect("fixture loads strictly")
}

/// Per call, in order: (kind, call, success, error class).
struct Normalized {
    kind: ToolKind,
    args: serde_json::Map<String, Value>,
    edit_target: Option<String>,
    success: bool,
    class: Option<ErrorClass>,
}

fn normalized(run: &LoadedRun) -> Vec<Normalized> {
    let mut state = RunState::new();
    let mut out: Vec<Normalized> = Vec::new();
    for event in &run.events {
        match state.step(event).step {
            Step::Call(call) => out.push(Normalized {
                kind: call.kind,
                args: (*call.args).clone(),
                edit_target: call.families.edit_target.clone(),
                success: false,
                class: None,
            }),
            Step::Result { outcome, .. } => {
                let last = out.last_mut().expect("a result follows its call");
                last.success = outcome.success;
                last.class = outcome.error_class;
            }
            _ => {}
        }
    }
    out
}

/// (turns, usage records, prompt tokens, completion tokens).
fn usage(run: &LoadedRun) -> (u32, usize, u64, u64) {
    let turns = run.events.iter().map(|e| e.at.turn).max().unwrap_or(0);
    let (mut n, mut prompt, mut completion) = (0, 0, 0);
    for e in &run.events {
        if let Some(u) = e.kind.usage() {
            n += 1;
            prompt += u.prompt();
            completion += u.output;
        }
    }
    (turns, n, prompt, completion)
}

fn firings(run: &LoadedRun) -> Vec<(String, String)> {
    let mut replayer = ProjectReplayer::new("p", &Config::default(), Vec::new()).expect("config");
    let replay = replayer.replay(run.clone());
    replay
        .firings
        .iter()
        .map(|f| (f.guard.to_string(), f.action.clone()))
        .collect()
}

#[test]
fn detects_trajectories_by_structure() {
    for name in [LOOPING, HEALTHY, V1, WARNED, WORDED] {
        assert_eq!(
            detect(&fixture(name)),
            Some(InputFormat::SweAgent),
            "{name}"
        );
    }
}

#[test]
fn sniff_reads_a_cut_head() {
    let text = std::fs::read_to_string(fixture(LOOPING)).unwrap();
    // Cut inside the first step's observation: its action is already seen.
    let at = text.find("\"observation\"").unwrap() + 20;
    assert!(swe_agent::sniff(&text[..at]));
    assert!(swe_agent::sniff(
        "{\"environment\": \"swe_main\", \"trajectory\": ["
    ));
    assert!(swe_agent::sniff(
        "{\"environment\": \"swe_main\", \"trajectory\": [{\"action\": \"ls\\n\", \"obs"
    ));
    let v1 = std::fs::read_to_string(fixture(V1)).unwrap();
    assert!(swe_agent::sniff(&v1[..v1.find("\"response\"").unwrap()]));
    // Any cut after the array opens, beside `environment`, is recognised; none panics.
    let open = text.find('[').unwrap() + 1;
    for at in (0..text.len()).step_by(97) {
        assert_eq!(swe_agent::sniff(&text[..at]), at >= open, "cut at {at}");
    }
    // A cut before any step key says nothing without `environment`.
    assert!(!swe_agent::sniff("{\"trajectory\": ["));
}

#[test]
fn other_json_is_not_detected() {
    let dir = tempfile::tempdir().unwrap();
    let others = [
        // A hindsight report.
        r#"{"format": 1, "runs": [{"project": "p", "run_id": "r", "turns": 3, "firings": []}], "summary": {}}"#,
        // A labels file.
        r#"{"version": 1, "runs": {"p/r": {"label": "failed", "expect": [{"guard": "convergence_breaker"}]}}}"#,
        // A mini-swe-agent trajectory.
        r#"{"info": {"exit_status": "Submitted", "submission": "", "model_stats": {"instance_cost": 0.1, "api_calls": 2}},
            "messages": [{"role": "system", "content": "x"}, {"role": "assistant", "content": "```bash\nls\n```"}],
            "trajectory_format": "mini-swe-agent-1.1"}"#,
        // A mini-swe-agent-like document that also carries a `trajectory` key.
        r#"{"trajectory_format": "mini-swe-agent-1.1", "trajectory": [{"action": "ls", "observation": ""}]}"#,
        // An OpenHands event list.
        r#"[{"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}}]"#,
        // A trajectory of something else.
        r#"{"trajectory": [{"x": 1.5, "y": 2.0}], "environment": "gym"}"#,
        r#"{"name": "t", "trajectory": [{"action": "left", "reward": 1}]}"#,
        // Session JSONL.
        "{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    ];
    for (i, text) in others.iter().enumerate() {
        let path = dir.path().join(format!("other-{i}.json"));
        std::fs::write(&path, text).unwrap();
        assert_ne!(detect(&path), Some(InputFormat::SweAgent), "{text}");
    }
    // The other formats' fixtures, whatever they hold.
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    let mut stack = vec![formats];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with("swe_agent") {
                stack.push(path);
            } else if path.is_file() {
                assert_ne!(
                    detect(&path),
                    Some(InputFormat::SweAgent),
                    "{}",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn one_turn_per_model_call() {
    assert_eq!(usage(&load(LOOPING)).0, 13);
    assert_eq!(usage(&load(LOOPING)).1, 13);
    assert_eq!(usage(&load(HEALTHY)).0, 5);
    // The `exit_cost` step is the harness ending the run: no turn, no call.
    let v1 = load(V1);
    assert_eq!((usage(&v1).0, usage(&v1).1), (5, 5));
    assert_eq!(normalized(&v1).len(), 5);
    assert_eq!(v1.stats.records, 6);
}

#[test]
fn tool_kinds_after_normalization() {
    use ToolKind::*;
    let calls = normalized(&load(LOOPING));
    let kinds: Vec<ToolKind> = calls.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [
            Write,
            Edit,
            Shell,
            Shell,
            Search,
            Read,
            Edit,
            Edit,
            Edit,
            Edit,
            Shell,
            Shell,
            TaskComplete
        ]
    );
    // An edit targets the open file (from `state`) and its line range.
    let edit = &calls[6];
    assert_eq!(edit.args["path"], "/acme__calc/calc/ops.py");
    assert_eq!(edit.edit_target.as_deref(), Some("startLine=23,endLine=25"));
    assert!(edit.args["new_string"]
        .as_str()
        .unwrap()
        .starts_with("    if b == 0\n"));
    assert_eq!(calls[5].args["path"], "calc/ops.py");
    assert_eq!(calls[4].args["pattern"], "ops.py");
    assert_eq!(calls[2].args["command"], "python reproduce.py");

    let v1 = normalized(&load(V1));
    let kinds: Vec<ToolKind> = v1.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [Read, Edit, Edit, Edit, Shell]);
    assert_eq!(v1[1].args["old_string"], "    return text.strip('-')");
    assert_eq!(v1[1].args["path"], "/testbed/slug/core.py");
    assert_eq!(v1[3].args["new_string"], "    return text.strip(\"-\")");
}

#[test]
fn error_classes_come_from_the_observation() {
    let calls = normalized(&load(LOOPING));
    let outcomes: Vec<(bool, Option<ErrorClass>)> =
        calls.iter().map(|c| (c.success, c.class)).collect();
    let failed = Some(ErrorClass::Failed);
    assert_eq!(outcomes[2], (false, failed), "a traceback");
    assert_eq!(outcomes[3], (false, failed));
    // The edit linter's rejection is a failure, not a stale edit.
    assert_eq!(outcomes[6..9], [(false, failed); 3], "linter rejections");
    let ok = |i: usize| outcomes[i] == (true, None);
    assert!(
        [0, 1, 4, 5, 9, 10, 11, 12].into_iter().all(ok),
        "{outcomes:?}"
    );

    let v1 = normalized(&load(V1));
    assert_eq!(
        (v1[1].success, v1[1].class),
        (false, Some(ErrorClass::StaleEdit))
    );
    assert_eq!(
        (v1[2].success, v1[2].class),
        (false, Some(ErrorClass::StaleEdit))
    );
    assert!(v1[3].success && v1[4].success);
    assert!(normalized(&load(HEALTHY)).iter().all(|c| c.success));
}

/// No step status is recorded, so the wording decides, anchored where failures put it: a
/// warning about the terminal on the step that printed the flag is no failure; a program's
/// `<program>: '<file>': No such file` is one, of class `not_found`.
#[test]
fn a_warning_line_is_no_failure_and_a_programs_missing_file_is() {
    let run = load(WARNED);
    let calls = normalized(&run);
    let outcomes: Vec<(bool, Option<ErrorClass>)> =
        calls.iter().map(|c| (c.success, c.class)).collect();
    assert_eq!(
        outcomes,
        [
            (true, None),
            (false, Some(ErrorClass::NotFound)),
            (true, None),
            (true, None),
            (true, None)
        ]
    );
    // The successful step's output is what the model saw, warnings and all.
    let output = run
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolResult(r) if r.call_id == "step-4" => r.output.clone(),
            _ => None,
        })
        .expect("step 4 result");
    assert!(output.starts_with("Warning: _curses.error: setupterm"));
    assert!(output.contains("flag{b34c0n_l1t}"));
    // The same wordings inside a file window, or after other words, do not count either.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.traj");
    let step = |action: &str, observation: &str| {
        serde_json::json!({"action": action, "observation": observation, "response": action,
            "thought": ""})
    };
    let doc = serde_json::json!({"environment": "x", "trajectory": [
        step("grep -c 'No such file' app.log", "2 lines mention No such file in app.log\nok"),
        step("open notes.txt", "[File: /w/notes.txt (2 lines total)]\n1:strings: 'a': No such file\n"),
        step("python run.py", "Warning: cannot import optional module\nTraceback (most recent call last):\n  File \"run.py\", line 1\nModuleNotFoundError: No module named 'x'"),
        step("ls missing", "ls: cannot access 'missing': No such file or directory"),
    ], "history": [], "info": {}});
    std::fs::write(&path, doc.to_string()).unwrap();
    let run = import(&path, "w", InputFormat::SweAgent, Policy::Strict).unwrap();
    let outcomes: Vec<(bool, Option<ErrorClass>)> = normalized(&run)
        .iter()
        .map(|c| (c.success, c.class))
        .collect();
    assert_eq!(
        outcomes,
        [
            (true, None),
            (true, None),
            (false, Some(ErrorClass::Failed)),
            (false, Some(ErrorClass::NotFound))
        ]
    );
}

/// Programs' own failure wordings are failures wherever they stand in the observation:
/// apt's `E: `, tar giving up, a shell error after a file window, `make: ***`, bash's syntax
/// errors, a traceback between other lines. Their near-misses succeed: apt's `W: `, tar's
/// leading-slash note, a compiler warning, `make: Nothing to be done`, a window whose file
/// text holds the same wordings, a `not found` and a `UserWarning:` between other lines.
#[test]
fn programs_failure_wordings_anywhere_and_their_near_misses() {
    let run = load(WORDED);
    let calls = normalized(&run);
    let outcomes: Vec<(bool, Option<ErrorClass>)> =
        calls.iter().map(|c| (c.success, c.class)).collect();
    let (ok, failed) = ((true, None), (false, Some(ErrorClass::Failed)));
    assert_eq!(
        outcomes,
        [
            ok,     // ls
            failed, // apt: `E: Unable to locate package`
            ok,     // apt: `W: ... failed to download`
            failed, // tar: `Error is not recoverable`
            ok,     // tar: `Removing leading '/'`
            failed, // a file window, then `/bin/bash: line 1: cclint: command not found`
            ok,     // a file window whose text holds `E: `, `make: ***`, `fatal:`
            failed, // `make: *** [Makefile:4: app] Error 1`
            ok,     // a compiler `warning:`
            ok,     // `make: Nothing to be done`
            failed, // bash: `unexpected EOF`, `syntax error: unexpected end of file`
            failed, // a traceback between `ls` output and `done`
            ok,     // `header foo.h not found, using ...` mid-output, a `UserWarning:`
            ok,     // submit
        ]
    );
    // What the importer recorded, before normalization.
    let recorded: Vec<Option<String>> = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult(r) => Some(r.error_class.clone()),
            _ => None,
        })
        .collect();
    let failed_at = [1, 3, 5, 7, 10, 11];
    for (i, class) in recorded.iter().enumerate() {
        let want = failed_at.contains(&i).then(|| "tool_failed".to_string());
        assert_eq!(class, &want, "call {i}");
    }
}

/// An empty action beside a model `response` is the model replying with no command: a
/// model call with its share of the usage, no tool call. With no response, or a harness
/// exit, the step is no model call.
#[test]
fn an_empty_action_with_a_reply_is_a_model_call_without_a_tool_call() {
    let run = load(WORDED);
    let (turns, with_usage, sent, received) = usage(&run);
    assert_eq!((turns, with_usage), (15, 15));
    assert_eq!((sent, received), (61877, 1342));
    assert_eq!(normalized(&run).len(), 14);
    // Turn 12 is the reply: a request, no call, no result.
    let at_12: Vec<&EventKind> = run
        .events
        .iter()
        .filter(|e| e.at.turn == 12)
        .map(|e| &e.kind)
        .collect();
    assert!(matches!(at_12.as_slice(), [EventKind::ModelRequest(r)] if r.usage.is_some()));
    // Its text is in the history the next request carries.
    let next = run.frames.iter().find(|f| f.turn == 13).expect("frame 13");
    assert!(next
        .messages
        .iter()
        .any(|m| m.content.contains("linked statically")));
    // One assistant message per reply in `history`: the prompt sizes come from it, so later
    // calls carry more than earlier ones.
    let prompts: Vec<u64> = run
        .events
        .iter()
        .filter_map(|e| e.kind.usage().map(|u| u.prompt()))
        .collect();
    assert!(prompts.windows(2).all(|w| w[0] < w[1]), "{prompts:?}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quiet.traj");
    let doc = serde_json::json!({"environment": "x", "trajectory": [
        {"action": "ls\n", "observation": "a.py\n", "response": "ls", "thought": ""},
        {"action": "", "observation": "", "response": "Let me think first.", "thought": ""},
        {"action": "  \n", "observation": "", "response": "", "thought": ""},
        {"action": "exit_cost", "observation": "Exited", "response": "exit_cost", "thought": ""},
    ], "history": [], "info": {"model_stats": {"tokens_sent": 90, "tokens_received": 30}}});
    std::fs::write(&path, doc.to_string()).unwrap();
    let run = import(&path, "quiet", InputFormat::SweAgent, Policy::Strict).unwrap();
    assert_eq!(usage(&run), (2, 2, 90, 30));
    assert_eq!(normalized(&run).len(), 1);
    assert_eq!(run.stats.records, 4);
}

/// Per-call usage is the run's recorded totals spread over the calls: marked as such, with
/// the recorded cost spread the same way and the model `replay_config` names.
#[test]
fn the_spread_is_marked_and_carries_the_recorded_cost() {
    let run = load(WARNED);
    let requests: Vec<&hindsight::model::Request> = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(requests.len(), 5);
    for r in &requests {
        let usage = r.usage.expect("spread usage");
        assert_eq!(usage.source, TokenSource::Spread);
        assert_eq!((usage.cache_read, usage.cache_write), (0, 0));
        assert_eq!(r.model.as_deref(), Some("claude-3-5-sonnet-20241022"));
        assert!(r.cost_usd.expect("a share of the cost") > 0.0);
    }
    let cost: f64 = requests.iter().filter_map(|r| r.cost_usd).sum();
    assert!((cost - 0.0442).abs() < 1e-12, "{cost}");
    // A larger share of the tokens carries a larger share of the cost.
    let last = requests[4];
    assert!(last.usage.unwrap().total() > requests[0].usage.unwrap().total());
    assert!(last.cost_usd > requests[0].cost_usd);
    // 0.x names no model.
    let old = load(LOOPING);
    assert!(old
        .events
        .iter()
        .all(|e| !matches!(&e.kind, EventKind::ModelRequest(r) if r.model.is_some())));

    // A recorded cost of 0 beside tokens is SWE-agent failing to price the model: no cost.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("free.traj");
    std::fs::write(
        &path,
        r#"{"environment": "x", "trajectory": [
            {"action": "ls\n", "observation": "a.py\n", "response": "ls", "thought": ""},
            {"action": "pwd\n", "observation": "/w\n", "response": "pwd", "thought": ""}
        ], "history": [], "info": {"model_stats": {"instance_cost": 0, "tokens_sent": 900, "tokens_received": 30, "api_calls": 2}}}"#,
    )
    .unwrap();
    let run = import(&path, "free", InputFormat::SweAgent, Policy::Strict).unwrap();
    let costs: Vec<Option<f64>> = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => Some(r.cost_usd),
            _ => None,
        })
        .collect();
    assert_eq!(costs, [None, None]);
    assert_eq!(usage(&run), (2, 2, 900, 30));
}

#[test]
fn token_totals_match_model_stats() {
    for (name, sent, received) in [
        (LOOPING, 58213, 1487),
        (HEALTHY, 21904, 402),
        (V1, 30117, 655),
    ] {
        let (_, _, prompt, completion) = usage(&load(name));
        assert_eq!((prompt, completion), (sent, received), "{name}");
    }
    // Spread by prompt size: later calls carry more history than the first.
    let run = load(LOOPING);
    let prompts: Vec<u64> = run
        .events
        .iter()
        .filter_map(|e| e.kind.usage().map(|u| u.prompt()))
        .collect();
    assert!(prompts.windows(2).all(|w| w[0] <= w[1]), "{prompts:?}");
    assert!(prompts[12] > prompts[0]);
    // Deterministic.
    assert_eq!(load(LOOPING).events, run.events);
}

#[test]
fn outcome_comes_from_info() {
    let complete = |run: &LoadedRun| {
        run.events.iter().find_map(|e| match &e.kind {
            EventKind::TaskComplete { status, summary } => {
                Some((status.clone(), summary.clone(), e.at.turn))
            }
            _ => None,
        })
    };
    let (status, summary, turn) = complete(&load(LOOPING)).expect("completion");
    assert_eq!((status.as_str(), turn), ("completed", 13));
    assert!(summary.contains("diff --git a/calc/ops.py"));
    let (status, _, _) = complete(&load(V1)).expect("completion");
    assert_eq!(status, "submitted (exit_cost)");
}

#[test]
fn frames_are_reconstructed_from_history() {
    let run = load(LOOPING);
    assert_eq!(run.frames.len(), 13);
    let first = &run.frames[0];
    assert_eq!(
        first.messages.len(),
        3,
        "system prompt, demonstration, issue"
    );
    assert!(first.messages[2].content.contains("if b = 0"));
    let last = run.frames.last().unwrap();
    assert!(last
        .messages
        .iter()
        .any(|m| m.content.contains("Your proposed edit has introduced")));
}

#[test]
fn guards_fire_on_the_replayed_runs() {
    let looping = firings(&load(LOOPING));
    let has = |f: &[(String, String)], guard: &str, action: &str| {
        f.iter().any(|(g, a)| g == guard && a == action)
    };
    assert!(
        has(&looping, "convergence_breaker", "stalled"),
        "{looping:?}"
    );
    assert!(
        has(&looping, "family_normalization", "merge"),
        "{looping:?}"
    );
    assert!(
        has(&looping, "dedup_gate", "block_duplicate"),
        "{looping:?}"
    );
    let v1 = firings(&load(V1));
    assert!(has(&v1, "adaptive_edit", "rewrite"), "{v1:?}");
    let healthy = firings(&load(HEALTHY));
    assert!(
        !healthy
            .iter()
            .any(|(g, _)| g == "convergence_breaker" || g == "adaptive_edit"),
        "{healthy:?}"
    );
}

#[test]
fn bad_documents_are_located_problems() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.traj");
    let text = std::fs::read_to_string(fixture(HEALTHY)).unwrap();
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let run = import(&cut, "cut", InputFormat::SweAgent, Policy::Lenient).unwrap();
    assert_eq!(run.problems.count, 1);
    assert_eq!(run.problems.listed[0].kind, ProblemKind::Truncated);
    assert!(import(&cut, "cut", InputFormat::SweAgent, Policy::Strict).is_err());

    let bad = dir.path().join("bad.traj");
    std::fs::write(
        &bad,
        r#"{"environment": "swe_main", "trajectory": [
            {"action": 7, "observation": "", "response": "", "thought": ""},
            "not a step",
            {"action": "ls\n", "observation": "a.py\n", "response": "```\nls\n```", "thought": ""}
        ], "history": [], "info": {"model_stats": {"tokens_sent": 10, "tokens_received": 3, "api_calls": 1}}}"#,
    )
    .unwrap();
    let run = import(&bad, "bad", InputFormat::SweAgent, Policy::Lenient).unwrap();
    assert_eq!(run.problems.count, 2);
    assert_eq!(
        run.problems.listed[0].field.as_deref(),
        Some("trajectory[0].action")
    );
    assert_eq!(
        run.problems.listed[1].field.as_deref(),
        Some("trajectory[1]")
    );
    assert_eq!(usage(&run), (1, 1, 10, 3));
    let err = import(&bad, "bad", InputFormat::SweAgent, Policy::Strict).unwrap_err();
    assert!(matches!(
        err.kind,
        ProblemKind::WrongType {
            expected: "string",
            ..
        }
    ));

    let no_steps = dir.path().join("none.traj");
    std::fs::write(
        &no_steps,
        r#"{"environment": "swe_main", "trajectory": {"a": 1}}"#,
    )
    .unwrap();
    let run = import(&no_steps, "none", InputFormat::SweAgent, Policy::Lenient).unwrap();
    assert_eq!(run.problems.listed[0].field.as_deref(), Some("trajectory"));
}

#[test]
fn cli_replays_the_fixtures_strictly() {
    let report = common::json_report(&["replay", DIR, "--format", "json", "--strict"]);
    let runs = report["runs"].as_array().expect("runs");
    let ids: Vec<&str> = runs.iter().filter_map(|r| r["run_id"].as_str()).collect();
    assert_eq!(
        ids,
        [
            "acme__beacon-5",
            "acme__calc-7",
            "acme__clib-4",
            "acme__semver-12",
            "slug__slugify-3"
        ]
    );
    for run in runs {
        assert!(run["turns"].as_u64().unwrap() > 0, "{run}");
        assert!(run["tokens_total"].as_u64().unwrap() > 0, "{run}");
    }
}
