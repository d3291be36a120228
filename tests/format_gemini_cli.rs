//! The Gemini CLI chat record importer (issue #30, item 3): one test per mapping rule of
//! docs/FORMAT.md, *Gemini CLI chat records*. Fixtures: `tests/fixtures/formats/gemini_cli/`,
//! written for these tests in Gemini CLI's shapes with made-up content: one conversation as
//! a whole-file JSON record and again as the JSONL form (with a rewritten message, a rewound
//! branch and `$set` updates), and a sub-agent's chat filed under its parent session.

mod common;

use hindsight::ingest::formats::{detect, detect_file, import, Detected, InputFormat};
use hindsight::ingest::{Limits, LoadedRun, Policy, ProblemKind};
use hindsight::model::{EventKind, Usage};
use hindsight::normalize::{ErrorClass, ToolKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/gemini_cli";
const JSON: &str = "chats/session-2026-01-05T10-00-5e0c7a21.json";
const JSONL: &str = "chats/session-2026-01-06T09-00-9a8b7c6d.jsonl";
const SUB: &str =
    "chats/9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d/c0ffee00-1111-4222-8333-944445555666.jsonl";
const HASH: &str = "3c1a9e0b7d2f4a6c8e1b5d7f9a2c4e6b8d0f1a3c5e7b9d2f4a6c8e0b1d3f5a7c";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR).join(name)
}

fn load(name: &str) -> LoadedRun {
    load_path(&fixture(name))
}

fn load_path(path: &Path) -> LoadedRun {
    import(path, "r", InputFormat::GeminiCli, Policy::Strict).expect("loads strictly")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

fn requests(run: &LoadedRun) -> Vec<(Option<Usage>, Option<String>)> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => Some((r.usage, r.model.clone())),
            _ => None,
        })
        .collect()
}

fn usage(input: u64, cache_read: u64, output: u64) -> Option<Usage> {
    Some(Usage {
        input,
        cache_read,
        output,
        source: hindsight::model::TokenSource::Recorded,
        ..Usage::default()
    })
}

#[test]
fn detection_is_by_structure_with_a_look_alike_reason() {
    for name in [JSON, JSONL, SUB] {
        assert_eq!(
            detect(&fixture(name)),
            Some(InputFormat::GeminiCli),
            "{name}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    for name in [JSON, JSONL] {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let renamed = write(dir.path(), "notes.json", &text);
        assert_eq!(detect(&renamed), Some(InputFormat::GeminiCli), "{name}");
    }
    // A chatbot export with a `sessionId` and `messages` but no `projectHash`.
    let near = "{\n  \"sessionId\": \"abc\",\n  \"messages\": [{\"role\": \"user\"}]\n}\n";
    match detect_file(&write(dir.path(), "near.json", near), &Limits::default()) {
        Ok(Detected::LookAlike { format, reason }) => {
            assert_eq!(format, InputFormat::GeminiCli);
            assert!(reason.contains("projectHash"), "{reason}");
        }
        other => panic!("not a look-alike: {other:?}"),
    }
    // No other format's fixture is taken for a Gemini CLI record.
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    for entry in std::fs::read_dir(formats).unwrap().flatten() {
        if entry.file_name() == "gemini_cli" {
            continue;
        }
        for file in std::fs::read_dir(entry.path()).unwrap().flatten() {
            if file.path().is_file() {
                assert_ne!(
                    detect(&file.path()),
                    Some(InputFormat::GeminiCli),
                    "{file:?}"
                );
            }
        }
    }
}

#[test]
fn one_request_per_gemini_message_fresh_input_is_input_less_cached_output_adds_thoughts() {
    let run = load(JSON);
    let flash = Some("gemini-2.5-flash".to_string());
    assert_eq!(
        requests(&run),
        vec![
            // input 1200, cached 800, output 40, thoughts 25.
            (usage(400, 800, 65), Some("gemini-2.5-pro".into())),
            // input 2000, cached 1500, tool 12 (tool-use prompt, not in input), output 60.
            (usage(512, 1500, 60), flash.clone()),
            (usage(600, 2000, 40), flash.clone()),
            // `tokens: null`: a request without usage.
            (None, flash),
        ]
    );
    // info and error notices are no requests; turns are requests.
    let last_turn = run.events.iter().map(|e| e.at.turn).max();
    assert_eq!(last_turn, Some(4));
}

#[test]
fn tool_calls_map_to_canonical_kinds() {
    let kinds: BTreeMap<String, ToolKind> = common::normalized_by_call(&load(JSON))
        .into_iter()
        .map(|(id, (kind, _))| (id, kind))
        .collect();
    let expect = [
        ("run_shell_command-1", ToolKind::Shell),
        ("read_file-2", ToolKind::Read),
        ("replace-3", ToolKind::Edit),
        ("write_file-4", ToolKind::Write),
        ("run_shell_command-5", ToolKind::Shell),
        ("write_todos-6", ToolKind::TodoWrite),
        ("grep_search-7", ToolKind::Search),
        ("run_shell_command-8", ToolKind::Shell),
    ];
    assert_eq!(
        kinds,
        expect
            .map(|(id, k)| (id.to_string(), k))
            .into_iter()
            .collect()
    );
    let sub = common::normalized_by_call(&load(SUB));
    assert_eq!(sub["glob-1"].0, ToolKind::Search);
}

#[test]
fn a_call_fails_on_error_or_cancelled_status_and_a_shell_on_a_nonzero_exit_code() {
    let run = load(JSON);
    let outcome: BTreeMap<String, (bool, Option<ErrorClass>)> = common::normalized_by_call(&run)
        .into_iter()
        .map(|(id, (_, o))| (id, o.expect("answered")))
        .collect();
    // Status `success`, but the shell output says `Exit Code: 101`.
    assert_eq!(
        outcome["run_shell_command-1"],
        (false, Some(ErrorClass::Failed))
    );
    assert_eq!(outcome["run_shell_command-8"], (true, None));
    assert_eq!(outcome["replace-3"], (false, Some(ErrorClass::StaleEdit)));
    assert!(!outcome["run_shell_command-5"].0, "cancelled");
    assert!(outcome["write_file-4"].0 && outcome["read_file-2"].0);
    let sub = common::normalized_by_call(&load(SUB));
    assert_eq!(
        sub["read_file-2"].1,
        Some((false, Some(ErrorClass::NotFound)))
    );
}

#[test]
fn results_are_the_function_response_else_the_result_display() {
    let run = load(JSON);
    let r = common::tool_results(&run);
    let out = |id: &str| r[id].output.as_ref().map(|t| t.to_string());
    assert_eq!(
        out("read_file-2").as_deref(),
        Some("pub fn nested() -> usize { 0 }\n")
    );
    assert_eq!(
        out("replace-3").as_deref(),
        Some("Failed to edit, could not find the string to replace.")
    );
    // `result: null`: the display text.
    assert_eq!(out("grep_search-7").as_deref(), Some("Found 2 matches"));
}

#[test]
fn write_todos_becomes_a_todo_list() {
    let run = load(JSON);
    let todos = run
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::TodoWrite { todos } => Some(todos),
            _ => None,
        })
        .expect("a todo_write");
    let seen: Vec<(&str, &str, &str)> = todos
        .iter()
        .map(|t| (t.id.as_str(), t.status.as_str(), t.content.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            ("1", "in_progress", "Fix the nested test"),
            ("2", "pending", "Document the depth constant")
        ]
    );
}

#[test]
fn the_jsonl_form_gives_the_same_run_as_the_json_form() {
    let (json, jsonl) = (load(JSON), load(JSONL));
    let shown = |run: &LoadedRun| -> Vec<String> {
        run.events
            .iter()
            .map(|e| format!("{:?} {:?}", e.at, e.kind))
            .collect()
    };
    assert_eq!(shown(&json), shown(&jsonl));
    assert_eq!(json.frames.len(), jsonl.frames.len());
}

#[test]
fn a_rewind_drops_the_message_and_all_after_it_and_a_rewritten_id_keeps_its_last_write() {
    let run = load(JSONL);
    // The rewound branch's request (x2) and call are gone.
    assert!(common::tool_results(&run)
        .keys()
        .all(|id| *id != "run_shell_command-x"));
    assert_eq!(requests(&run).len(), 4);
    // m2 was written first while its call ran, then rewritten with its tokens and result.
    assert_eq!(requests(&run)[0].0, usage(400, 800, 65));
    assert!(common::tool_results(&run).contains_key("run_shell_command-1"));
    // A rewind to an id not in the record drops every message (as Gemini CLI's loader).
    let dir = tempfile::tempdir().unwrap();
    let text = [
        r#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z"}"#,
        r#"{"id":"a","timestamp":"2026-01-01T00:00:01Z","type":"gemini","content":"x","tokens":{"input":5,"output":1,"cached":0,"total":6}}"#,
        r#"{"$rewindTo":"nowhere"}"#,
        r#"{"id":"b","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"y","tokens":{"input":7,"output":2,"cached":0,"total":9}}"#,
    ]
    .join("\n");
    let run = load_path(&write(dir.path(), "r.jsonl", &text));
    assert_eq!(requests(&run), vec![(usage(7, 0, 2), None)]);
    // A `$set` with `messages` replaces them all.
    let text = [
        r#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z"}"#,
        r#"{"id":"a","timestamp":"2026-01-01T00:00:01Z","type":"gemini","content":"x","tokens":{"input":5,"output":1,"cached":0,"total":6}}"#,
        r#"{"$set":{"messages":[{"id":"c","timestamp":"t","type":"gemini","content":"z","tokens":{"input":3,"output":1,"cached":1,"total":4}}]}}"#,
    ]
    .join("\n");
    let run = load_path(&write(dir.path(), "s.jsonl", &text));
    assert_eq!(requests(&run), vec![(usage(2, 1, 1), None)]);
}

#[test]
fn a_subagent_chat_is_its_own_agent_thread_without_frames() {
    let run = load(SUB);
    assert!(run
        .events
        .iter()
        .filter(|e| !matches!(e.kind, EventKind::SessionStart { .. }))
        .all(|e| e.at.agent == "subagent"));
    assert!(run.frames.is_empty());
    assert_eq!(requests(&run).len(), 2);
}

#[test]
fn chats_of_one_project_hash_are_one_project_ordered_by_start_time() {
    let report = common::json_report(&["replay", DIR, "--format", "json", "--strict"]);
    let runs = report["runs"].as_array().expect("runs");
    let seen: Vec<(&str, &str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["project"].as_str().unwrap(),
                r["run_id"].as_str().unwrap(),
                r["format"].as_str().unwrap(),
            )
        })
        .collect();
    let project = format!("gemini-cli:{HASH}");
    assert_eq!(
        seen,
        [
            (
                project.as_str(),
                "session-2026-01-05T10-00-5e0c7a21",
                "gemini-cli"
            ),
            (
                project.as_str(),
                "session-2026-01-06T09-00-9a8b7c6d",
                "gemini-cli"
            ),
            (
                project.as_str(),
                "c0ffee00-1111-4222-8333-944445555666",
                "gemini-cli"
            ),
        ]
    );
}

#[test]
fn bad_input_is_skipped_and_located_leniently_and_fails_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let text = [
        r#"{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z"}"#,
        "{not json",
        r#"{"id":"a","timestamp":"t","type":"gemini","content":"","tokens":{"input":"many"}}"#,
        r#"{"id":"b","timestamp":"t","type":"gemini","content":"","toolCalls":{"id":"c"}}"#,
        r#"{"$rewindTo":3}"#,
        r#"{"id":"d","timestamp":"t","type":"gemini","content":"","tokens":{"input":10,"output":2,"cached":4},"toolCalls":[{"id":"e","args":{}}]}"#,
    ]
    .join("\n");
    let path = write(dir.path(), "bad.jsonl", &text);
    let run = import(&path, "bad", InputFormat::GeminiCli, Policy::Lenient).expect("lenient");
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
    assert_eq!((found[1].0, found[1].1), (Some(5), Some("$rewindTo")));
    assert_eq!((found[2].0, found[2].1), (Some(3), Some("tokens.input")));
    assert_eq!((found[3].0, found[3].1), (Some(4), Some("toolCalls")));
    assert_eq!(
        (found[4].0, found[4].1, found[4].2),
        (
            Some(6),
            Some("toolCalls[0].name"),
            &ProblemKind::MissingField
        )
    );
    // The good request still counts.
    assert!(requests(&run).contains(&(usage(6, 4, 2), None)));
    let strict = import(&path, "bad", InputFormat::GeminiCli, Policy::Strict).expect_err("strict");
    assert_eq!(strict.line, Some(2));
    // The whole-file form locates by field path.
    let doc = r#"{"sessionId":"s","projectHash":"h","messages":[{"id":"a","type":"user","content":"hi"},{"id":"b","type":"gemini","content":"","tokens":{"input":-1}}]}"#;
    let path = write(dir.path(), "doc.json", doc);
    let err = import(&path, "doc", InputFormat::GeminiCli, Policy::Strict).expect_err("strict");
    assert_eq!(err.field.as_deref(), Some("messages[1].tokens.input"));
    // The command line exits 2 under --strict.
    let out = common::hindsight()
        .args(["replay", dir.path().to_str().unwrap(), "--strict"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}
