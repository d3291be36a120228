//! The Codex CLI rollout importer (issue #30, item 1): one test per mapping rule of
//! docs/FORMAT.md, *Codex CLI rollouts*. Fixtures: `tests/fixtures/formats/codex/`, written
//! for these tests in Codex's shapes with made-up content: a session (failing tests, a
//! patch, a plan, a missing file, a compaction, parallel calls), a fork of it that starts
//! with a copy of its first request, and a rollout in the envelope-less early form.

mod common;

use hindsight::ingest::formats::{detect, detect_file, import, Detected, InputFormat};
use hindsight::ingest::{Limits, LoadedRun, Policy, ProblemKind};
use hindsight::model::{EventKind, ToolCall};
use hindsight::normalize::{ErrorClass, ToolKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/codex";
const MAIN: &str =
    "2025/03/10/rollout-2025-03-10T09-00-00-0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a51.jsonl";
const FORK: &str =
    "2025/03/10/rollout-2025-03-10T10-15-00-0195a1c9-7d6e-7f10-9b2c-3d4e5f6a7b82.jsonl";
const OLD: &str =
    "2025/04/22/rollout-2025-04-22T16-05-11-4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e93.jsonl";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR).join(name)
}

fn load(name: &str) -> LoadedRun {
    import(&fixture(name), name, InputFormat::Codex, Policy::Strict).expect("loads strictly")
}

fn calls(run: &LoadedRun) -> Vec<(u32, &ToolCall)> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(c) => Some((e.at.turn, c)),
            _ => None,
        })
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

#[test]
fn detection_is_by_structure_with_a_look_alike_reason() {
    for name in [MAIN, FORK, OLD] {
        assert_eq!(detect(&fixture(name)), Some(InputFormat::Codex), "{name}");
    }
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture(MAIN)).unwrap();
    assert_eq!(
        detect(&write(dir.path(), "notes.jsonl", &text)),
        Some(InputFormat::Codex)
    );
    // Codex's envelope with payloads of no shape Codex writes: a look-alike, with a reason.
    let near = r#"{"timestamp":"2025-01-01T00:00:00Z","type":"event_msg","payload":{"kind":"ping"}}
{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"note"}}
"#;
    match detect_file(&write(dir.path(), "near.jsonl", near), &Limits::default()) {
        Ok(Detected::LookAlike { format, reason }) => {
            assert_eq!(format, InputFormat::Codex);
            assert!(reason.contains("session_meta"), "{reason}");
        }
        other => panic!("not a look-alike: {other:?}"),
    }
    // No other format's fixture is taken for a rollout.
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    for entry in std::fs::read_dir(formats).unwrap().flatten() {
        if entry.file_name() == "codex" {
            continue;
        }
        for file in std::fs::read_dir(entry.path()).unwrap().flatten() {
            if file.path().is_file() {
                assert_ne!(detect(&file.path()), Some(InputFormat::Codex), "{file:?}");
            }
        }
    }
}

#[test]
fn a_rollout_is_never_zero_runs_and_exit_0() {
    let report = common::json_report(&["replay", DIR, "--format", "json", "--strict"]);
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 3);
    assert!(runs.iter().all(|r| r["format"] == "codex"));
}

#[test]
fn shell_calls_carry_their_command_as_a_shell_line() {
    let run = load(MAIN);
    let commands: Vec<(&str, Option<&str>)> = calls(&run)
        .into_iter()
        .filter(|(_, c)| c.tool == "shell")
        .map(|(_, c)| (c.args["command"].as_str().unwrap(), c.cwd.as_deref()))
        .collect();
    assert_eq!(
        commands,
        [
            // `bash -lc <script>`: the script.
            ("cargo test --quiet", Some("/home/dev/ledger")),
            // An argv array: its words joined.
            ("cat templates/report.txt", Some("/home/dev/ledger")),
            // `shell_command`: a string, with its own `workdir`.
            ("ls templates", Some("/home/dev/ledger/docs")),
            ("cargo test --quiet", Some("/home/dev/ledger")),
        ]
    );
    // `local_shell_call` items are shell calls too.
    let fork = load(FORK);
    let (_, local) = calls(&fork)[0];
    assert_eq!(
        (local.tool.as_str(), local.args["command"].as_str()),
        ("shell", Some("cargo test rounds_half_up"))
    );
}

#[test]
fn a_non_zero_exit_code_is_a_failed_call() {
    let run = load(MAIN);
    let kinds = common::normalized_by_call(&run);
    let outcome = |id: &str| kinds[id].1.expect("answered");
    // `metadata.exit_code` in the output's JSON string.
    assert_eq!(outcome("call_t1"), (false, Some(ErrorClass::Failed)));
    // A failure worded as a missing file, through the shared shell error table.
    assert_eq!(outcome("call_t2"), (false, Some(ErrorClass::NotFound)));
    // `Exit code: 0` in a plain-text output; exit 0 in JSON.
    assert_eq!(outcome("call_t3"), (true, None));
    assert_eq!(outcome("call_t5"), (true, None));
    let failed = common::tool_results(&run)
        .values()
        .filter(|r| !r.success)
        .count();
    assert_eq!(failed, 2);
}

#[test]
fn apply_patch_is_an_edit_of_the_files_it_names() {
    let run = load(MAIN);
    let edits: Vec<(&str, Vec<&str>)> = calls(&run)
        .into_iter()
        .filter(|(_, c)| c.tool == "file_edit")
        .map(|(_, c)| {
            let paths = c.args["paths"].as_array().unwrap();
            (
                c.call_id.as_str(),
                paths.iter().filter_map(Value::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        edits,
        [
            // A `custom_tool_call` named `apply_patch`.
            ("call_p1", vec!["src/totals.rs"]),
            // `apply_patch <<'EOF'` inside a shell command.
            (
                "call_t4",
                vec!["docs/templates/report.md", "docs/templates/NOTES.md"]
            ),
        ]
    );
    let kinds = common::normalized_by_call(&run);
    assert_eq!(kinds["call_p1"].0, ToolKind::Edit);
    assert_eq!(kinds["call_t4"].0, ToolKind::Edit);
}

#[test]
fn update_plan_is_a_todo_list() {
    let run = load(MAIN);
    let todos: Vec<(String, String)> = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TodoWrite { todos } => Some(todos),
            _ => None,
        })
        .flatten()
        .map(|t| (t.status.clone(), t.content.clone()))
        .collect();
    assert_eq!(
        todos,
        [
            ("completed".into(), "Fix rounding in totals".into()),
            ("in_progress".into(), "Check the report template".into()),
        ]
    );
}

#[test]
fn a_request_counts_only_when_the_total_moves() {
    // 7 token_count rows move the total; the repeated rows and the empty first one do not
    // count. Parallel calls (call_t4, call_t5) are one request's.
    let run = load(MAIN);
    let requests = run
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ModelRequest(_)))
        .count();
    assert_eq!(requests, 7);
    let turn_of: BTreeMap<&str, u32> = calls(&run)
        .into_iter()
        .map(|(t, c)| (c.call_id.as_str(), t))
        .collect();
    assert_eq!(turn_of["call_t4"], turn_of["call_t5"]);
    // Each call follows its request, whichever Codex wrote first.
    assert_eq!(turn_of["call_t1"], 1);
    assert_eq!(turn_of["call_t3"], 5);
}

#[test]
fn cached_input_and_reasoning_are_not_counted_twice() {
    let run = load(MAIN);
    let usages: Vec<_> = run.events.iter().filter_map(|e| e.kind.usage()).collect();
    // The second request: input 5100 of which 4096 cached, output 260 of which 200 reasoning.
    let second = usages[1];
    assert_eq!(
        (
            second.input,
            second.cache_read,
            second.cache_write,
            second.output
        ),
        (1004, 4096, 0, 260)
    );
    assert_eq!(second.prompt(), 5100);
}

#[test]
fn the_model_comes_from_turn_context_per_request() {
    let run = load(MAIN);
    let models: Vec<Option<&str>> = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => Some(r.model.as_deref()),
            _ => None,
        })
        .collect();
    let mut want = vec![Some("gpt-5-codex"); 4];
    want.extend([Some("gpt-5.1-codex"); 3]);
    assert_eq!(models, want);
}

#[test]
fn compacted_and_context_compacted_are_one_compaction() {
    let run = load(MAIN);
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
    // After the fourth request, whose prompt was 5900 tokens; the summary's chars / 4.
    assert_eq!(compactions, [(4, 5900, 24)]);
}

#[test]
fn a_fork_does_not_count_its_parents_history_again() {
    let fork = load(FORK);
    let requests = fork
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ModelRequest(_)))
        .count();
    assert_eq!(requests, 1);
    let ids: Vec<&str> = calls(&fork)
        .iter()
        .map(|(_, c)| c.call_id.as_str())
        .collect();
    assert_eq!(ids, ["call_f1"]);
    let copied = fork.stats.copied.as_ref().expect("copied");
    assert_eq!(copied.from, "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a51");
    assert_eq!((copied.entries, copied.turns, copied.tokens), (7, 1, 4380));
    // Its own request's usage is its own row's, not the copied totals.
    let usage = fork.events.iter().find_map(|e| e.kind.usage()).unwrap();
    assert_eq!(
        (usage.input, usage.cache_read, usage.output),
        (704, 4096, 300)
    );
}

#[test]
fn the_envelope_less_form_is_read_alike() {
    let run = load(OLD);
    let ids: Vec<(&str, &str)> = calls(&run)
        .iter()
        .map(|(_, c)| (c.call_id.as_str(), c.args["command"].as_str().unwrap()))
        .collect();
    assert_eq!(ids, [("call_o1", "make -C parser")]);
    assert!(!common::tool_results(&run)["call_o1"].success);
    // No token_count in this form: each model response is a request without usage.
    let requests: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => Some(r.usage),
            _ => None,
        })
        .collect();
    assert_eq!(requests, [None, None]);
}

#[test]
fn rollouts_group_into_projects_by_recorded_cwd() {
    let report = common::json_report(&["replay", DIR, "--format", "json", "--strict"]);
    let seen: Vec<(&str, u64, u64)> = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["project"].as_str().unwrap(),
                r["session"].as_u64().unwrap(),
                r["turns"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("codex:/home/dev/ledger", 1, 7),
            ("codex:/home/dev/ledger", 2, 1),
            // No `cwd` recorded: the folder, as for other session logs.
            ("tests/fixtures/formats/codex/2025/04/22", 1, 2),
        ]
    );
}

#[test]
fn bad_lines_are_located_problems() {
    let dir = tempfile::tempdir().unwrap();
    let meta = r#"{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#;
    let text = [
        meta,
        "{not json",
        r#"{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}"}}"#,
        r#"{"timestamp":"2025-01-01T00:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-4}}}}"#,
        "[1,2]",
        r#"{"timestamp":"2025-01-01T00:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"output_tokens":2},"last_token_usage":{"input_tokens":10,"output_tokens":2}}}}"#,
        r#"{"timestamp":"2025-01-01T00:00:04Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":"#,
    ]
    .join("\n");
    let path = write(dir.path(), "bad.jsonl", &text);
    let run = import(&path, "bad", InputFormat::Codex, Policy::Lenient).expect("lenient");
    let found: Vec<(Option<u64>, Option<&str>, &ProblemKind)> = run
        .problems
        .listed
        .iter()
        .map(|p| (p.line, p.field.as_deref(), &p.kind))
        .collect();
    assert_eq!(found.len(), 5, "{found:?}");
    assert!(matches!(
        found[0],
        (Some(2), None, ProblemKind::InvalidJson(_))
    ));
    assert_eq!(
        (found[1].0, found[1].1, found[1].2),
        (Some(3), Some("payload.call_id"), &ProblemKind::MissingField)
    );
    assert_eq!(
        (found[2].0, found[2].1),
        (Some(4), Some("payload.info.total_token_usage.input_tokens"))
    );
    assert_eq!(
        (found[3].0, found[3].2),
        (Some(5), &ProblemKind::NotAnObject)
    );
    assert_eq!((found[4].0, found[4].2), (Some(7), &ProblemKind::Truncated));
    // The good request still counts.
    let usage = run.events.iter().find_map(|e| e.kind.usage()).unwrap();
    assert_eq!((usage.input, usage.output), (10, 2));
    let strict = import(&path, "bad", InputFormat::Codex, Policy::Strict).expect_err("strict");
    assert_eq!(strict.line, Some(2));
    // The command line exits 2 under --strict.
    let out = common::hindsight()
        .args(["replay", dir.path().to_str().unwrap(), "--strict"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

/// A command's own output may be JSON with an `output` or `metadata` member (`cat
/// result.json`): unless its members have the types of Codex's wrapper (a string `output`,
/// an integer `metadata.exit_code`), it is the command's text as recorded, read under
/// `--strict` with no problem, not a wrapper of the wrong type.
#[test]
fn a_commands_own_json_output_is_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(fixture(MAIN)).expect("fixture");
    let own = r#"{\"output\": [1, 2], \"metadata\": \"made by the tool\"}"#;
    let wrapped = r#"{\"output\": \"running 12 tests\\ntest result: ok. 12 passed; 0 failed\", \"metadata\": {\"exit_code\": 0, \"duration_seconds\": 0.4}}"#;
    assert!(text.contains(wrapped), "the fixture's wrapped output");
    let path = write(dir.path(), "own.jsonl", &text.replace(wrapped, own));
    let run = import(&path, "own", InputFormat::Codex, Policy::Strict).expect("reads strictly");
    let result = &common::tool_results(&run)["call_t5"];
    assert_eq!(
        result.output.as_deref(),
        Some(r#"{"output": [1, 2], "metadata": "made by the tool"}"#)
    );
    assert!(result.success, "no exit code stated: not a failure");
}
