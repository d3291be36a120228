//! Claude Code `--output-format stream-json` (issue #30, item 5): one test per rule of
//! docs/FORMAT.md, *Claude Code stream-json*. Fixtures: `tests/fixtures/formats/
//! claude_code_stream/`, written for these tests in the stream's shape with made-up content:
//! a run that fixes a failing test with a `Task` sub-agent and ends in `success`
//! (`ci-fix-cart`), and one refused a write that ends in `error_max_turns` (`ci-max-turns`).

mod common;

use hindsight::ingest::formats::{detect, detect_file, import, Detected, InputFormat};
use hindsight::ingest::{Limits, LoadedRun, Policy, ProblemKind};
use hindsight::model::{EventKind, ToolCall};
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/claude_code_stream";
const FIX: &str = "ci-fix-cart.jsonl";
const MAX_TURNS: &str = "ci-max-turns.jsonl";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR).join(name)
}

fn load_path(path: &Path) -> LoadedRun {
    import(path, "s", InputFormat::ClaudeCodeStream, Policy::Strict).expect("loads strictly")
}

fn load(name: &str) -> LoadedRun {
    load_path(&fixture(name))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Calls with their agent.
fn calls(run: &LoadedRun) -> Vec<(&str, &ToolCall)> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(c) => Some((e.at.agent.as_str(), c)),
            _ => None,
        })
        .collect()
}

/// (agent, request cost) of every model request.
fn requests(run: &LoadedRun) -> Vec<(&str, Option<f64>)> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => Some((e.at.agent.as_str(), r.cost_usd)),
            _ => None,
        })
        .collect()
}

fn outcome(run: &LoadedRun) -> Vec<(&str, &str)> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TaskComplete { status, summary } => {
                Some((status.as_str(), summary.as_str()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn requests_calls_and_results_map_as_in_session_logs() {
    let run = load(FIX);
    // Nine message ids; msg_01A is written over two lines with the same usage each time.
    assert_eq!(requests(&run).len(), 9);
    let first = run.events.iter().find_map(|e| e.kind.usage()).unwrap();
    assert_eq!(
        (first.input, first.cache_write, first.cache_write_1h),
        (3, 2400, 2000)
    );
    assert_eq!((first.cache_read, first.output), (11000, 12));
    let tools: Vec<(&str, &str)> = calls(&run)
        .iter()
        .map(|(_, c)| (c.call_id.as_str(), c.tool.as_str()))
        .collect();
    assert_eq!(
        tools,
        [
            ("toolu_01", "file_read"),
            ("toolu_02", "shell"),
            ("toolu_03", "file_edit"),
            ("toolu_04", "Task"),
            ("toolu_S1", "grep"),
            ("toolu_05", "file_edit"),
            ("toolu_06", "shell"),
        ]
    );
    // `file_path` is `path`, as in the session logs.
    assert!(calls(&run)[0].1.args.contains_key("path"));
    let got = common::tool_results(&run);
    let judged = |id: &str| (got[id].success, got[id].error_class.as_deref());
    assert_eq!(judged("toolu_01"), (true, None));
    assert_eq!(judged("toolu_02"), (false, None)); // Exit code 101: generic rules
    assert_eq!(judged("toolu_03"), (false, Some("stale_edit")));
    assert_eq!(judged("toolu_06"), (true, None));
    let other = load(MAX_TURNS);
    let got = common::tool_results(&other);
    assert_eq!(got["toolu_11"].error_class.as_deref(), Some("blocked"));
    assert_eq!(got["toolu_12"].error_class.as_deref(), Some("not_found"));
    // msg_12 over two lines, output growing: one request, its largest output.
    let usage: Vec<u64> = other
        .events
        .iter()
        .filter_map(|e| e.kind.usage())
        .map(|u| u.output)
        .collect();
    assert_eq!(usage, [60, 51]);
}

#[test]
fn sub_agent_messages_are_another_agent_thread() {
    let run = load(FIX);
    let agents: Vec<&str> = requests(&run).iter().map(|(a, _)| *a).collect();
    assert_eq!(
        agents,
        [
            "main",
            "main",
            "main",
            "main",
            "sidechain:toolu_04",
            "sidechain:toolu_04",
            "main",
            "main",
            "main"
        ]
    );
    let grep = calls(&run)
        .into_iter()
        .find(|(_, c)| c.call_id == "toolu_S1")
        .unwrap();
    assert_eq!(grep.0, "sidechain:toolu_04");
    // The sub-agent's tool output stays out of the main history; its answer, the `Task`
    // call's result, is in it.
    let last = run.frames.last().unwrap();
    let seen = |text: &str| last.messages.iter().any(|m| m.content.contains(text));
    assert!(!seen("pub discount: u64"));
    assert!(seen("Discounts are `Item::discount`"));
}

#[test]
fn the_result_cost_is_a_run_total_spread_over_the_requests() {
    for (name, total) in [(FIX, 0.187341), (MAX_TURNS, 0.031207)] {
        let run = load(name);
        let costs: Vec<f64> = requests(&run).iter().map(|(_, c)| c.unwrap()).collect();
        let sum: f64 = costs.iter().sum();
        assert!((sum - total).abs() < 1e-12, "{name}: {sum} != {total}");
        assert!(costs.iter().all(|c| *c > 0.0), "{costs:?}");
    }
    // A message line's own `costUSD` is replaced by the share, never added to the total.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture(MAX_TURNS))
        .unwrap()
        .replace(
            r#""session_id": "2b9e"#,
            r#""costUSD": 5.0, "session_id": "2b9e"#,
        );
    assert!(text.contains("costUSD"));
    let run = load_path(&write(dir.path(), "priced.jsonl", &text));
    let sum: f64 = requests(&run).iter().map(|(_, c)| c.unwrap()).sum();
    assert!((sum - 0.031207).abs() < 1e-12, "{sum}");
    // The result's `usage` adds no tokens: the messages' usage is the count.
    let tokens: u64 = run
        .events
        .iter()
        .filter_map(|e| e.kind.usage())
        .map(|u| u.total())
        .sum();
    assert_eq!(tokens, 6 + 2000 + 19800 + 111);
}

#[test]
fn the_result_line_gives_the_outcome() {
    assert_eq!(
        outcome(&load(FIX)),
        [(
            "completed",
            "Fixed: `total` now subtracts each item's discount; the cart tests pass."
        )]
    );
    assert_eq!(outcome(&load(MAX_TURNS)), [("error_max_turns", "")]);
    // The outcome comes after the last request's calls.
    let run = load(FIX);
    assert!(matches!(
        run.events.last().unwrap().kind,
        EventKind::TaskComplete { .. }
    ));
}

#[test]
fn detection_is_strict_with_a_look_alike_reason() {
    for name in [FIX, MAX_TURNS] {
        assert_eq!(
            detect(&fixture(name)),
            Some(InputFormat::ClaudeCodeStream),
            "{name}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let init =
        r#"{"type":"system","subtype":"init","session_id":"s","cwd":"/w","tools":[],"model":"m"}"#;
    let message = r#"{"type":"assistant","message":{"id":"m1","content":[]},"session_id":"s","parent_tool_use_id":null}"#;
    for (name, text) in [("init.jsonl", init), ("message.jsonl", message)] {
        let got = detect_file(&write(dir.path(), name, text), &Limits::default()).unwrap();
        assert_eq!(
            got,
            Detected::Format(InputFormat::ClaudeCodeStream),
            "{name}"
        );
    }
    // Near misses: a message line with no `parent_tool_use_id`, one with a session log's
    // tree keys, an init line without `tools`, a `--output-format json` result alone.
    let near = [
        r#"{"type":"assistant","message":{"content":[]},"session_id":"s"}"#.to_string(),
        message.replace("\"session_id\"", "\"parentUuid\":null,\"session_id\""),
        init.replace(r#""tools":[],"#, ""),
        r#"{"type":"result","subtype":"success","session_id":"s","total_cost_usd":0.1}"#
            .to_string(),
    ];
    for (i, text) in near.iter().enumerate() {
        let path = write(dir.path(), &format!("near-{i}.jsonl"), text);
        match detect_file(&path, &Limits::default()).unwrap() {
            Detected::LookAlike { format, reason } => {
                assert_eq!(format, InputFormat::ClaudeCodeStream, "{text}");
                assert!(reason.contains("parent_tool_use_id"), "{reason}");
            }
            other => panic!("{text}: not a look-alike: {other:?}"),
        }
    }
    // Session logs stay session logs; no stream is a session look-alike.
    let sessions = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats/claude_code");
    let mut checked = 0;
    for project in std::fs::read_dir(sessions).unwrap().flatten() {
        for file in std::fs::read_dir(project.path()).unwrap().flatten() {
            assert_eq!(
                detect(&file.path()),
                Some(InputFormat::ClaudeCode),
                "{file:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 3);
}

#[test]
fn each_stream_file_is_a_run_of_its_own_project() {
    let report = common::json_report(&["replay", DIR, "--format", "json", "--strict"]);
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r["format"] == "claude-code-stream"));
    let projects: std::collections::BTreeSet<&str> = runs
        .iter()
        .map(|r| r["project"].as_str().expect("project"))
        .collect();
    assert_eq!(projects.len(), 2, "{projects:?}");
    assert_eq!(report["input"]["skipped_files"], serde_json::json!([]));
}

#[test]
fn bad_lines_are_located_problems_and_strict_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let text = [
        r#"{"type":"system","subtype":"init","session_id":"s","cwd":"/w","tools":[]}"#,
        "{not json",
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","name":"Bash"}],"usage":{"input_tokens":1}},"session_id":"s","parent_tool_use_id":null}"#,
        r#"{"type":"assistant","message":{"id":"m2","content":[],"usage":{"input_tokens":10,"output_tokens":2}},"session_id":"s","parent_tool_use_id":null}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s","total_cost_usd":"free"}"#,
    ]
    .join("\n");
    let path = write(dir.path(), "bad.jsonl", &text);
    let run =
        import(&path, "bad", InputFormat::ClaudeCodeStream, Policy::Lenient).expect("lenient");
    let found: Vec<(Option<u64>, Option<&str>, &ProblemKind)> = run
        .problems
        .listed
        .iter()
        .map(|p| (p.line, p.field.as_deref(), &p.kind))
        .collect();
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(matches!(
        found[0],
        (Some(2), None, ProblemKind::InvalidJson(_))
    ));
    assert_eq!(
        (found[1].0, found[1].1, found[1].2),
        (
            Some(3),
            Some("message.content[0].id"),
            &ProblemKind::MissingField
        )
    );
    assert_eq!((found[2].0, found[2].1), (Some(5), Some("total_cost_usd")));
    // The good request still counts.
    let usage = run.events.iter().find_map(|e| e.kind.usage()).unwrap();
    assert_eq!((usage.input, usage.output), (10, 2));
    let strict =
        import(&path, "bad", InputFormat::ClaudeCodeStream, Policy::Strict).expect_err("strict");
    assert_eq!(strict.line, Some(2));
    let out = common::hindsight()
        .args(["replay", dir.path().to_str().unwrap(), "--strict"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_stream_compaction_boundary_and_several_results_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let text = [
        r#"{"type":"system","subtype":"init","session_id":"s","cwd":"/w","tools":[]}"#,
        r#"{"type":"assistant","message":{"id":"m1","content":[],"usage":{"input_tokens":30,"output_tokens":10}},"session_id":"s","parent_tool_use_id":null}"#,
        r#"{"type":"result","subtype":"success","is_error":true,"session_id":"s","total_cost_usd":0.25}"#,
        r#"{"type":"system","subtype":"compact_boundary","session_id":"s","compact_metadata":{"trigger":"auto","pre_tokens":1234}}"#,
        r#"{"type":"assistant","message":{"id":"m2","content":[],"usage":{"input_tokens":10,"output_tokens":10}},"session_id":"s","parent_tool_use_id":null}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s","total_cost_usd":0.5}"#,
    ]
    .join("\n");
    let run = load_path(&write(dir.path(), "two.jsonl", &text));
    let before = run.events.iter().find_map(|e| match &e.kind {
        EventKind::Compaction { before_tokens, .. } => Some(*before_tokens),
        _ => None,
    });
    assert_eq!(before, Some(1234));
    assert_eq!(outcome(&run), [("error", ""), ("completed", "")]);
    // 0.75 in all, in proportion to the tokens: 40 and 20.
    let costs: Vec<f64> = requests(&run).iter().map(|(_, c)| c.unwrap()).collect();
    assert!(
        (costs[0] - 0.5).abs() < 1e-12 && (costs[1] - 0.25).abs() < 1e-12,
        "{costs:?}"
    );
}
