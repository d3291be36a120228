//! The pi coding-agent session importer (issue #6): detection by structure, one turn per
//! assistant message, tool kinds and error classes after normalization, token totals,
//! compaction and todos, located problems, and guards firing on a replayed session.
//! Fixtures: `tests/fixtures/formats/pi/` (two sessions of one project, written for these
//! tests: a stale-edit and failing-test loop, then a healthier session with a compaction).

mod common;

use hindsight::config::Config;
use hindsight::ingest::formats::{detect, import, InputFormat};
use hindsight::ingest::{LoadedRun, Policy, ProblemKind};
use hindsight::model::EventKind;
use hindsight::normalize::{ErrorClass, RunState, Step, ToolKind};
use hindsight::replay::ProjectReplayer;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/pi";
const LOOP: &str = "2025-03-04T10-15-00-000Z_6c1e2f0a-4b7d-4e59-9a3c-2d8f1b7e5a10.jsonl";
const HEALTHY: &str = "2025-03-04T14-02-00-000Z_9e4b7c2d-0f31-4a8e-b6d5-71c3a9e0f2b4.jsonl";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR).join(name)
}

fn load(name: &str) -> LoadedRun {
    import(&fixture(name), name, InputFormat::Pi, Policy::Strict).expect("fixture loads strictly")
}

/// Outcomes by call id: success and error class.
type Outcomes = BTreeMap<String, (bool, Option<ErrorClass>)>;

/// Every call's kind and every result's outcome, by call id, after normalization.
fn normalized(run: &LoadedRun) -> (BTreeMap<String, ToolKind>, Outcomes) {
    let mut state = RunState::new();
    let (mut kinds, mut outcomes) = (BTreeMap::new(), BTreeMap::new());
    for event in &run.events {
        match state.step(event).step {
            Step::Call(call) => {
                kinds.insert(call.call_id.to_string(), call.kind);
            }
            Step::Result { call, outcome, .. } => {
                outcomes.insert(
                    call.call_id.to_string(),
                    (outcome.success, outcome.error_class),
                );
            }
            _ => {}
        }
    }
    (kinds, outcomes)
}

fn usage(run: &LoadedRun) -> (u32, u64, u64) {
    let mut turns = std::collections::BTreeSet::new();
    let (mut prompt, mut completion) = (0, 0);
    for e in &run.events {
        if let Some(u) = e.kind.usage() {
            turns.insert(e.at.turn);
            prompt += u.prompt();
            completion += u.output;
        }
    }
    (turns.len() as u32, prompt, completion)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

#[test]
fn detects_pi_sessions_by_structure_not_by_name() {
    for name in [LOOP, HEALTHY] {
        assert_eq!(detect(&fixture(name)), Some(InputFormat::Pi), "{name}");
    }
    // The same content under an unrelated name is still a pi session.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture(HEALTHY)).unwrap();
    assert_eq!(
        detect(&write(dir.path(), "notes.json", &text)),
        Some(InputFormat::Pi)
    );
    // A file cut before its header still shows pi's message shape.
    let body: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        detect(&write(dir.path(), "tail.jsonl", &body)),
        Some(InputFormat::Pi)
    );
}

#[test]
fn does_not_claim_other_formats() {
    let dir = tempfile::tempdir().unwrap();
    let others = [
        // Claude Code session lines.
        r#"{"type":"user","sessionId":"s1","uuid":"u1","parentUuid":null,"cwd":"/w","timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi"}}"#,
        // An omnius events.jsonl record.
        r#"{"type":"session_start","turn":0,"cwd":"/w"}"#,
        // pi-like words in another shape.
        r#"{"type":"session","name":"standup"}"#,
        r#"{"type":"message","message":{"role":"assistant","content":"plain"}}"#,
        r#"{"a":1}"#,
        // A trajectory document and an event array.
        r#"{"info":{"exit_status":"Submitted"},"messages":[{"role":"system","content":"x"}]}"#,
        r#"[{"id":1,"source":"agent","action":"run","args":{"command":"ls"}}]"#,
    ];
    for (i, text) in others.iter().enumerate() {
        let path = write(dir.path(), &format!("other{i}.jsonl"), &format!("{text}\n"));
        assert_ne!(detect(&path), Some(InputFormat::Pi), "{text}");
    }
    // Whatever fixtures the other importers have.
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    for entry in std::fs::read_dir(formats).unwrap().flatten() {
        if entry.file_name() == "pi" || !entry.path().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(entry.path()).unwrap().flatten() {
            if file.path().is_file() {
                assert_ne!(
                    detect(&file.path()),
                    Some(InputFormat::Pi),
                    "{}",
                    file.path().display()
                );
            }
        }
    }
}

#[test]
fn one_turn_per_assistant_message_with_its_usage() {
    // 13 assistant messages, one of them aborted with zero usage and one failed mid-stream.
    let run = load(LOOP);
    assert_eq!(usage(&run), (13, 80_349, 716));
    assert_eq!(run.events.iter().map(|e| e.at.turn).max(), Some(13));
    // prompt = input + cacheRead + cacheWrite of every request.
    assert_eq!(usage(&load(HEALTHY)), (11, 43_770, 634));
    assert_eq!(run.stats.records, 28);
    assert!(run.stats.unknown_types.is_empty() && run.stats.unknown_fields.is_empty());
    assert!(run.events.iter().all(|e| e.at.agent == "main"));
}

#[test]
fn tool_names_and_arguments_become_canonical() {
    let (kinds, _) = normalized(&load(LOOP));
    assert_eq!(kinds["toolu_01A"], ToolKind::Read);
    assert_eq!(kinds["toolu_01B"], ToolKind::Edit);
    assert_eq!(kinds["toolu_01C"], ToolKind::Shell);
    // The call of the request that failed mid-stream never ran and is not a call.
    assert!(!kinds.contains_key("toolu_01I"));
    let (kinds, _) = normalized(&load(HEALTHY));
    assert_eq!(kinds["toolu_02A"], ToolKind::TodoWrite);
    assert_eq!(kinds["toolu_02C"], ToolKind::Search);
    assert_eq!(kinds["toolu_02J"], ToolKind::Search);
    assert_eq!(kinds["toolu_02K"], ToolKind::Search);
    assert_eq!(kinds["toolu_02F"], ToolKind::Write);
    let run = load(LOOP);
    let edit = run.events.iter().find_map(|e| match &e.kind {
        EventKind::ToolCall(c) if c.call_id == "toolu_01D" => Some(c),
        _ => None,
    });
    let edit = edit.expect("edit call");
    assert_eq!(edit.tool, "file_edit");
    let keys: Vec<&str> = edit.args.keys().map(String::as_str).collect();
    assert_eq!(keys, ["new_string", "old_string", "path"]);
}

#[test]
fn results_keep_pi_success_and_error_classes() {
    let (_, outcomes) = normalized(&load(LOOP));
    for id in ["toolu_01D", "toolu_01E", "toolu_01F"] {
        assert_eq!(outcomes[id], (false, Some(ErrorClass::StaleEdit)), "{id}");
    }
    // A failing command: its exit code is in the text, the failure in `isError`.
    assert_eq!(outcomes["toolu_01C"], (false, Some(ErrorClass::Failed)));
    assert_eq!(outcomes["toolu_01B"], (true, None));
    let (_, outcomes) = normalized(&load(HEALTHY));
    assert_eq!(outcomes["toolu_02K"], (false, Some(ErrorClass::NotFound)));
    assert_eq!(outcomes["toolu_02G"], (true, None));
    let run = load(LOOP);
    let recorded = run.events.iter().find_map(|e| match &e.kind {
        EventKind::ToolResult(r) if r.call_id == "toolu_01D" => r.error_class.clone(),
        _ => None,
    });
    assert_eq!(recorded.as_deref(), Some("stale_edit"));
}

#[test]
fn compaction_and_todos_are_kept() {
    let run = load(HEALTHY);
    let compactions: Vec<(u32, u64, u64)> = run
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Compaction {
                before_tokens,
                after_tokens,
            } => Some((e.at.turn, before_tokens, after_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(compactions.len(), 1);
    let (turn, before, after) = compactions[0];
    assert_eq!(before, 6_309);
    assert!(after > 0 && after < before, "{after}");
    // The next request's frame holds the summary and the kept messages, not the start.
    let frame = run
        .frames
        .iter()
        .find(|f| f.turn > turn)
        .expect("frame after compaction");
    let text: Vec<&str> = frame.messages.iter().map(|m| &*m.content).collect();
    assert!(text[0].starts_with("The user asked for a formatPrice test"));
    assert!(text.contains(&"also make sure the build still works"));
    assert!(!text.iter().any(|t| t.starts_with("Add a formatPrice test")));
    let todos: Vec<Vec<(String, String)>> = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TodoWrite { todos } => Some(
                todos
                    .iter()
                    .map(|t| (t.id.clone(), t.status.clone()))
                    .collect(),
            ),
            _ => None,
        })
        .collect();
    let one = |s: &str| vec![("1".to_string(), s.to_string())];
    assert_eq!(todos, [one("pending"), one("completed")]);
}

#[test]
fn guards_fire_when_the_sessions_are_replayed() {
    let mut replayer = ProjectReplayer::new("pi", &Config::default(), Vec::new()).expect("config");
    let looped = replayer.replay(load(LOOP));
    let fired = |guard: &str, action: &str| {
        looped
            .firings
            .iter()
            .any(|f| f.guard == guard && f.action == action)
    };
    assert!(
        fired("convergence_breaker", "abandon"),
        "{:?}",
        looped.firings
    );
    assert!(fired("adaptive_edit", "rewrite"));
    assert!(fired("stale_edit_recovery", "read_authoritative_target"));
    let healthy = replayer.replay(load(HEALTHY));
    assert!(!healthy
        .firings
        .iter()
        .any(|f| f.guard == "convergence_breaker"));
    assert_eq!(healthy.session_index, 1);
}

#[test]
fn bad_lines_are_located_problems() {
    let dir = tempfile::tempdir().unwrap();
    let header = r#"{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let text = [
        header,
        "{not json",
        r#"{"type":"message","message":{"role":"toolResult","toolCallId":"c1","content":[]}}"#,
        r#"{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":-3}}}"#,
        r#"[1,2]"#,
        r#"{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":1,"output":2}}}"#,
        r#"{"type":"message","message":{"role":"assis"#,
    ]
    .join("\n");
    let path = write(dir.path(), "bad.jsonl", &text);
    let run = import(&path, "bad", InputFormat::Pi, Policy::Lenient).expect("lenient");
    let found: Vec<(Option<u64>, Option<&str>, &ProblemKind)> = run
        .problems
        .listed
        .iter()
        .map(|p| (p.line, p.field.as_deref(), &p.kind))
        .collect();
    assert_eq!(found.len(), 5, "{found:?}");
    assert_eq!(found[0].0, Some(2));
    assert!(matches!(found[0].2, ProblemKind::InvalidJson(_)));
    assert_eq!((found[1].0, found[1].1), (Some(3), Some("message.isError")));
    assert_eq!(
        (found[2].0, found[2].1),
        (Some(4), Some("message.usage.input"))
    );
    assert_eq!(
        (found[3].0, found[3].2),
        (Some(5), &ProblemKind::NotAnObject)
    );
    assert_eq!((found[4].0, found[4].2), (Some(7), &ProblemKind::Truncated));
    // The good request still counts.
    assert_eq!(usage(&run), (1, 1, 2));
    let strict = import(&path, "bad", InputFormat::Pi, Policy::Strict).expect_err("strict");
    assert_eq!(strict.line, Some(2));
    let missing = import(
        &dir.path().join("gone.jsonl"),
        "gone",
        InputFormat::Pi,
        Policy::Lenient,
    );
    assert_eq!(missing.expect_err("missing").kind, ProblemKind::MissingFile);
}

#[test]
fn cli_replays_the_fixture_folder_strictly() {
    let report = common::json_report(&["replay", DIR, "--format", "json", "--strict"]);
    // The folder's own sessions; `branched/` and `tree/` are projects of their own
    // (tests/format_pi_counts.rs).
    let runs: Vec<&Value> = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter(|r| r["project"] == DIR)
        .collect();
    let seen: Vec<(&str, u64, u64, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["run_id"].as_str().unwrap_or(""),
                r["session"].as_u64().unwrap_or(0),
                r["turns"].as_u64().unwrap_or(0),
                r["tokens_total"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    // One project, its sessions in the order of their first timestamp.
    assert_eq!(
        seen,
        [
            (LOOP.trim_end_matches(".jsonl"), 1, 13, 81_065),
            (HEALTHY.trim_end_matches(".jsonl"), 2, 11, 44_404),
        ]
    );
}
