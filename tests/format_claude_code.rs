//! Claude Code session logs (`src/ingest/formats/claude_code.rs`): detection, turns,
//! tool kinds, error classes, usage, sub-agents, compactions, todos, guards, the CLI.

mod common;

use hindsight::config::Config;
use hindsight::ingest::formats::{detect, import, InputFormat};
use hindsight::ingest::{LoadedRun, Policy, ProblemKind};
use hindsight::model::{Event, EventKind};
use hindsight::normalize::{ErrorClass, RunState, Step, ToolKind};
use hindsight::replay::ProjectReplayer;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/claude_code/-path-to-shop";
/// The stuck session: stale edits, a sub-agent, a compaction, failing tests.
const STUCK: &str = "3f2a9c4e-7b1d-4e8a-9c3f-5d6e7a8b9c01";
/// The later, healthy session (starts with a `summary` title line).
const HEALTHY: &str = "8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e04";

fn fixture(run: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(DIR)
        .join(format!("{run}.jsonl"))
}

fn load(run: &str) -> LoadedRun {
    import(&fixture(run), run, InputFormat::ClaudeCode, Policy::Strict)
        .expect("fixture loads strictly")
}

/// Each result's call id → (tool kind of its call, agent, outcome) after normalization.
fn outcomes(run: &LoadedRun) -> BTreeMap<String, (ToolKind, String, bool, Option<ErrorClass>)> {
    let mut state = RunState::new();
    let mut out = BTreeMap::new();
    for event in &run.events {
        if let Step::Result { call, outcome, .. } = state.step(event).step {
            let entry = (
                call.kind,
                call.agent.to_string(),
                outcome.success,
                outcome.error_class,
            );
            out.insert(call.call_id.to_string(), entry);
        }
    }
    out
}

fn usage(events: &[Event]) -> Vec<(u32, String, u64, u64)> {
    events
        .iter()
        .filter_map(|e| {
            let u = e.kind.usage()?;
            Some((e.at.turn, e.at.agent.clone(), u.prompt(), u.output))
        })
        .collect()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn detection_is_by_structure() {
    for run in [STUCK, HEALTHY] {
        assert_eq!(
            detect(&fixture(run)),
            Some(InputFormat::ClaudeCode),
            "{run}"
        );
    }
    // Other formats' fixtures (and the .omnius event streams) are not Claude Code.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut others = Vec::new();
    files_under(&root, &mut others);
    let others: Vec<_> = others
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("formats/claude_code"))
        // The Harbor trial fixture keeps its agent's native Claude Code log on purpose.
        .filter(|p| {
            !p.to_string_lossy()
                .contains("formats/atif/harbor-job/wordfreq__k3v9q2x/agent/sessions")
        })
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "jsonl" || e == "json" || e == "traj")
        })
        .collect();
    assert!(!others.is_empty());
    for path in &others {
        assert_ne!(
            detect(path),
            Some(InputFormat::ClaudeCode),
            "{}",
            path.display()
        );
    }
    // Chat-shaped JSON without Claude Code's session structure is not taken either.
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in [
        ("chat.jsonl", "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n"),
        ("pi.jsonl", "{\"type\":\"session\",\"id\":\"s1\",\"cwd\":\"/w\"}\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n"),
        ("doc.json", "{\"info\":{\"exit_status\":\"Submitted\"},\"messages\":[]}"),
        ("title.jsonl", "{\"type\":\"summary\",\"summary\":\"no leaf\"}\n"),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write");
        assert_ne!(detect(&path), Some(InputFormat::ClaudeCode), "{name}");
    }
}

#[test]
fn one_turn_per_assistant_message_with_usage_counted_once() {
    let run = load(STUCK);
    let usage = usage(&run.events);
    // 15 main responses and 3 of the sub-agent; responses split over several lines count once.
    assert_eq!(usage.len(), 18);
    let turns: Vec<u32> = usage.iter().map(|u| u.0).collect();
    assert_eq!(turns, (1..=18).collect::<Vec<_>>());
    assert_eq!(usage.iter().filter(|u| u.1 == "main").count(), 15);
    // The first response spans two lines; its last line holds the full output count.
    assert_eq!(usage[0], (1, "main".into(), 4 + 9120 + 4734, 164));
    // One frame per main request at most, never for the sub-agent.
    assert!(run.frames.iter().all(|f| f.agent == "main"));
    assert_eq!(run.frames.len(), 15);
}

#[test]
fn token_totals_are_input_plus_cache_and_output() {
    for (run, prompt, completion) in [(STUCK, 197_943, 1_947), (HEALTHY, 88_208, 623)] {
        let usage = usage(&load(run).events);
        assert_eq!(usage.iter().map(|u| u.2).sum::<u64>(), prompt, "{run}");
        assert_eq!(usage.iter().map(|u| u.3).sum::<u64>(), completion, "{run}");
    }
}

#[test]
fn tools_map_to_canonical_kinds_and_argument_keys() {
    let stuck = outcomes(&load(STUCK));
    let healthy = outcomes(&load(HEALTHY));
    let kind = |id: &str| stuck.get(id).or_else(|| healthy.get(id)).map(|o| o.0);
    for (id, expected) in [
        ("toolu_01Bs1", ToolKind::Shell),
        ("toolu_01Ed1", ToolKind::Edit),
        ("toolu_02Me1", ToolKind::Edit),
        ("toolu_01Wr1", ToolKind::Write),
        ("toolu_01Rd1", ToolKind::Read),
        ("toolu_01Gr1", ToolKind::Search),
        ("toolu_02Gl1", ToolKind::Search),
        ("toolu_01Td1", ToolKind::TodoWrite),
        ("toolu_01Tk1", ToolKind::Other),
    ] {
        assert_eq!(kind(id), Some(expected), "{id}");
    }
    for event in load(STUCK).events {
        if let EventKind::ToolCall(call) = event.kind {
            assert!(!call.args.contains_key("file_path"), "{}", call.call_id);
            if call.tool.starts_with("file_") {
                assert!(call.args["path"]
                    .as_str()
                    .is_some_and(|p| p.starts_with("/path/to/shop/")));
            }
        }
    }
}

#[test]
fn results_keep_the_harness_signal_and_error_classes() {
    let stuck = outcomes(&load(STUCK));
    let class = |id: &str| {
        let (_, _, success, class) = &stuck[id];
        (*success, *class)
    };
    assert_eq!(class("toolu_01Ed1"), (false, Some(ErrorClass::StaleEdit)));
    assert_eq!(class("toolu_01Ed3"), (false, Some(ErrorClass::StaleEdit)));
    assert_eq!(
        class("toolu_01Ed5"),
        (false, Some(ErrorClass::HashMismatch))
    );
    assert_eq!(class("toolu_01Rd4"), (false, Some(ErrorClass::NotFound)));
    assert_eq!(class("toolu_01Wr1"), (false, Some(ErrorClass::Blocked)));
    assert_eq!(class("toolu_01Bs1"), (false, Some(ErrorClass::Failed)));
    assert_eq!(class("toolu_01Ed4"), (true, None));
    assert!(outcomes(&load(HEALTHY))["toolu_02Bs1"].2);
}

#[test]
fn a_bash_exit_code_fails_the_result_even_without_is_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let base = r#""sessionId":"s","cwd":"/path/to/p","isSidechain":false"#;
    let text = [
        format!(r#"{{"type":"assistant",{base},"uuid":"a1","message":{{"id":"m1","role":"assistant","content":[{{"type":"tool_use","id":"t1","name":"Bash","input":{{"command":"make"}}}}],"usage":{{"input_tokens":10,"output_tokens":5}}}}}}"#),
        format!(r#"{{"type":"user",{base},"uuid":"u1","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":"Exit code 2\nmake: *** No rule to make target 'all'."}}]}}}}"#),
    ]
    .join("\n");
    std::fs::write(&path, text).expect("write");
    let run = import(&path, "s", InputFormat::ClaudeCode, Policy::Strict).expect("loads");
    let (_, _, success, class) = outcomes(&run)["t1"];
    assert!(!success);
    assert_eq!(class, Some(ErrorClass::Failed));
}

/// The sub-agent's lines name no `agentId`: its thread is named by the `Task` call whose
/// prompt its first line holds (tests/format_claude_code_counts.rs has two at once).
#[test]
fn sidechain_work_is_another_agent() {
    let run = load(STUCK);
    let stuck = outcomes(&run);
    for id in ["toolu_01Gr1", "toolu_01Rd2"] {
        assert_eq!(stuck[id].1, "sidechain:toolu_01Tk1", "{id}");
    }
    assert_eq!(stuck["toolu_01Tk1"].1, "main");
    let side_turns = usage(&run.events)
        .iter()
        .filter(|u| u.1 == "sidechain:toolu_01Tk1")
        .count();
    assert_eq!(side_turns, 3);
}

#[test]
fn a_compaction_restarts_the_context_from_its_summary() {
    let run = load(STUCK);
    let position = |id: &str| {
        run.events
            .iter()
            .position(|e| matches!(&e.kind, EventKind::ToolCall(c) if c.call_id == id))
            .expect(id)
    };
    let compactions: Vec<(usize, u64, u64)> = run
        .events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e.kind {
            EventKind::Compaction {
                before_tokens,
                after_tokens,
            } => Some((i, before_tokens, after_tokens)),
            _ => None,
        })
        .collect();
    assert_eq!(compactions.len(), 1);
    let (at, before, after) = compactions[0];
    assert_eq!(before, 152_340);
    assert!(after > 0 && after < 1000, "{after}");
    assert!(position("toolu_01Bs2") < at && at < position("toolu_01Bs3"));
    // The first frame after it starts from the summary, the session carries on.
    let turn = run.events[at].at.turn;
    let next = run
        .frames
        .iter()
        .find(|f| f.turn > turn)
        .expect("a frame after the compaction");
    assert!(next.messages[0]
        .content
        .starts_with("This session is being continued"));
    // A `summary` title line is not a compaction.
    let healthy = load(HEALTHY);
    assert!(!healthy
        .events
        .iter()
        .any(|e| matches!(e.kind, EventKind::Compaction { .. })));
    assert_eq!(healthy.stats.records, 16);
}

#[test]
fn todo_writes_and_session_start() {
    let run = load(HEALTHY);
    let writes: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TodoWrite { todos } => Some(todos.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(writes.len(), 2);
    assert_eq!(writes[0].len(), 2);
    assert_eq!(writes[0][0].id, "Add a test for an unknown discount code");
    assert_eq!(writes[0][0].status, "in_progress");
    assert!(writes[1].iter().all(|t| t.status == "completed"));
    assert!(
        matches!(&run.events[0].kind, EventKind::SessionStart { cwd: Some(c) } if c == "/path/to/shop")
    );
}

#[test]
fn guards_fire_on_the_stale_edit_loop_and_the_failing_tests() {
    let mut replayer =
        ProjectReplayer::new("shop", &Config::default(), Vec::new()).expect("config");
    let stuck = replayer.replay(load(STUCK));
    let fired = |guard: &str, action: &str| {
        stuck
            .firings
            .iter()
            .any(|f| f.guard == guard && f.action == action)
    };
    assert!(fired("stale_edit_recovery", "read_authoritative_target"));
    assert!(fired("adaptive_edit", "rewrite"));
    assert!(stuck.firings.iter().any(
        |f| f.guard == "convergence_breaker" && f.family.as_deref() == Some("shell:cargo test")
    ));
    assert!(stuck
        .firings
        .iter()
        .all(|f| f.agent == "main" || f.agent == "sidechain:toolu_01Tk1"));
    let healthy = replayer.replay(load(HEALTHY));
    assert!(!healthy
        .firings
        .iter()
        .any(|f| f.guard == "stale_edit_recovery" || f.guard == "convergence_breaker"));
}

#[test]
fn bad_lines_are_located_problems() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.jsonl");
    let good = r#"{"type":"user","sessionId":"s","uuid":"u1","cwd":"/path/to/p","message":{"role":"user","content":"go"}}"#;
    let lines = [
        good,
        "{not json",
        r#"{"sessionId":"s","uuid":"u2"}"#,
        r#"{"type":"assistant","sessionId":"s","uuid":"a1","message":{"id":"m1","content":[{"type":"tool_use","name":"Bash","input":{}}]}}"#,
        r#"{"type":"assistant","sessionId":"s","uuid":"a2","message":{"id":"m2","content":[],"usage":{"input_tokens":-3}}}"#,
        "[1,2]",
        r#"{"type":"user","sessionId":"s","uuid":"u3","message":{"content":[{"type":"tool_result""#,
    ];
    std::fs::write(&path, lines.join("\n")).expect("write");
    let run =
        import(&path, "bad", InputFormat::ClaudeCode, Policy::Lenient).expect("lenient loads");
    let found: Vec<_> = run
        .problems
        .listed
        .iter()
        .map(|p| (p.line, p.field.clone(), p.kind.clone()))
        .collect();
    assert_eq!(found.len(), 6, "{found:?}");
    assert!(matches!(
        found[0],
        (Some(2), None, ProblemKind::InvalidJson(_))
    ));
    assert_eq!(
        found[1],
        (Some(3), Some("type".into()), ProblemKind::MissingField)
    );
    assert_eq!(
        found[2],
        (
            Some(4),
            Some("message.content[0].id".into()),
            ProblemKind::MissingField
        )
    );
    assert!(
        matches!(&found[3], (Some(5), Some(f), ProblemKind::BadValue(_)) if f == "message.usage.input_tokens")
    );
    assert_eq!(found[4], (Some(6), None, ProblemKind::NotAnObject));
    assert_eq!(found[5], (Some(7), None, ProblemKind::Truncated));
    assert_eq!(run.stats.records, 1);
    let strict =
        import(&path, "bad", InputFormat::ClaudeCode, Policy::Strict).expect_err("strict fails");
    assert_eq!(strict.line, Some(2));
}

#[test]
fn cli_replays_the_fixtures_strictly() {
    let report = common::json_report(&[
        "replay",
        "tests/fixtures/formats/claude_code",
        "--format",
        "json",
        "--strict",
    ]);
    let runs: Vec<&serde_json::Value> = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter(|r| r["project"] == DIR)
        .collect();
    let ids: Vec<&str> = runs
        .iter()
        .map(|r| r["run_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, [STUCK, HEALTHY], "sessions ordered by first timestamp");
    for run in runs {
        assert_eq!(
            run["project"],
            "tests/fixtures/formats/claude_code/-path-to-shop"
        );
        assert!(run["turns"].as_u64().unwrap_or(0) > 0);
        assert!(run["tokens_total"].as_u64().unwrap_or(0) > 0);
    }
}

/// A call runs in its line's working directory (issue #10, WO-9 non-merge table): `make`
/// after the session moved to `svc-a` is `cd svc-a && make`, and `make` in `svc-b` is
/// another family.
#[test]
fn a_lines_working_directory_is_part_of_its_shell_family() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let call = |n: u32, cwd: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s","uuid":"a{n}","cwd":"{cwd}","message":{{"id":"m{n}","content":[{{"type":"tool_use","id":"t{n}","name":"Bash","input":{{"command":"make"}}}}]}}}}"#
        )
    };
    let lines = [
        r#"{"type":"user","sessionId":"s","uuid":"u0","cwd":"/w/app","message":{"role":"user","content":"build"}}"#.to_string(),
        call(1, "/w/app"),
        call(2, "/w/app/svc-a"),
        call(3, "/w/app/svc-b"),
    ];
    std::fs::write(&path, lines.join("\n")).expect("write");
    let run = import(&path, "s", InputFormat::ClaudeCode, Policy::Strict).expect("loads");
    let mut state = RunState::new();
    let families: Vec<String> = run
        .events
        .iter()
        .filter_map(|e| match state.step(e).step {
            Step::Call(call) => Some(call.families.action.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        families,
        [
            "shell:make",
            "shell:cd svc-a && make",
            "shell:cd svc-b && make"
        ]
    );
}

/// One assistant line of session `s`, response `id`, with `usage` and the line's extra
/// top-level fields `extra` (a JSON object's members, or empty).
fn assistant_line(n: u32, id: &str, usage: &str, extra: &str) -> String {
    format!(
        r#"{{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"s","type":"assistant","message":{{"id":"{id}","role":"assistant","model":"claude-sonnet-4-20250514","content":[{{"type":"text","text":"ok"}}],"usage":{usage}}},"uuid":"u{n}"{extra}}}"#
    )
}

#[test]
fn each_request_keeps_its_kinds_its_model_and_a_recorded_cost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let usage = r#"{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":40}"#;
    let lines = [
        // One response over two lines: the cost on its second line is its cost.
        assistant_line(1, "m1", usage, ""),
        assistant_line(2, "m1", usage, r#","costUSD":0.0125"#),
        assistant_line(3, "m2", usage, ""),
    ];
    std::fs::write(&path, lines.join("\n")).expect("write");
    let run = import(&path, "s", InputFormat::ClaudeCode, Policy::Strict).expect("loads");
    let requests: Vec<&hindsight::model::Request> = run
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(requests.len(), 2);
    let u = requests[0].usage.expect("usage");
    assert_eq!(
        (u.input, u.cache_write, u.cache_read, u.output),
        (10, 200, 3000, 40)
    );
    assert_eq!(
        requests[0].model.as_deref(),
        Some("claude-sonnet-4-20250514")
    );
    assert_eq!(requests[0].cost_usd, Some(0.0125));
    assert_eq!(
        requests[1].cost_usd, None,
        "no costUSD: priced from the table"
    );
}

#[test]
fn a_cost_that_is_no_amount_is_a_located_problem() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let usage = r#"{"input_tokens":1,"output_tokens":1}"#;
    std::fs::write(&path, assistant_line(1, "m1", usage, r#","costUSD":-1"#)).expect("write");
    let err = import(&path, "s", InputFormat::ClaudeCode, Policy::Strict).expect_err("strict");
    assert_eq!((err.line, err.field.as_deref()), (Some(1), Some("costUSD")));
}

/// Issue #30, item 6: a write to the 1-hour cache (`cache_creation.ephemeral_1h_input_tokens`)
/// is priced at its own rate (twice the input rate), the rest of the writes at the 5-minute
/// one; a log that splits nothing is priced as before.
#[test]
fn a_one_hour_cache_write_is_priced_at_its_own_rate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let split = r#"{"input_tokens":1000,"cache_creation_input_tokens":2000,"cache_creation":{"ephemeral_5m_input_tokens":500,"ephemeral_1h_input_tokens":1500},"cache_read_input_tokens":0,"output_tokens":100}"#;
    let unsplit = r#"{"input_tokens":1000,"cache_creation_input_tokens":2000,"cache_read_input_tokens":0,"output_tokens":100}"#;
    let lines = [
        assistant_line(1, "m1", split, ""),
        assistant_line(2, "m2", unsplit, ""),
    ];
    std::fs::write(&path, lines.join("\n")).expect("write");
    let run = import(&path, "s", InputFormat::ClaudeCode, Policy::Strict).expect("loads");
    let hours: Vec<u64> = (run.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => r.usage.map(|u| u.cache_write_1h),
            _ => None,
        })
        .collect();
    assert_eq!(hours, [1500, 0]);
    let path = path.to_str().expect("UTF-8");
    let report = common::json_report(&["replay", path, "--format", "json"]);
    // Sonnet 4: $3 input, $3.75 5-minute writes, $6 1-hour writes, $15 output per million.
    let split_cost = (1000.0 * 3.0 + 500.0 * 3.75 + 1500.0 * 6.0 + 100.0 * 15.0) / 1e6;
    let unsplit_cost = (1000.0 * 3.0 + 2000.0 * 3.75 + 100.0 * 15.0) / 1e6;
    let cost = report["runs"][0]["cost_usd"].as_f64().expect("priced");
    assert!((cost - (split_cost + unsplit_cost)).abs() < 1e-9, "{cost}");
}

/// Issue #30, item 6: Claude Code 2.1 writes a session's sub-agents under
/// `<session>/subagents/` beside `<session>.jsonl`; they belong to the session's project
/// (named `<session>/<agent>`), so the project's tokens and cost include them, instead of
/// making a project of their own.
#[test]
fn a_sessions_subagents_folder_belongs_to_its_project() {
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().join("shop");
    let subagents = project.join("s").join("subagents");
    std::fs::create_dir_all(&subagents).expect("mkdir");
    let usage = r#"{"input_tokens":1000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":100}"#;
    std::fs::write(project.join("s.jsonl"), assistant_line(1, "m1", usage, "")).expect("write");
    let sub = assistant_line(2, "m2", usage, r#","agentId":"a1""#)
        .replace(r#""isSidechain":false"#, r#""isSidechain":true"#);
    std::fs::write(subagents.join("agent-a1.jsonl"), sub).expect("write");
    let path = project.to_str().expect("UTF-8");
    let report = common::json_report(&["replay", path, "--format", "json"]);
    let runs: Vec<(&str, &str, u64)> = (report["runs"].as_array().expect("runs").iter())
        .map(|r| {
            (
                r["project"].as_str().expect("project"),
                r["run_id"].as_str().expect("id"),
                r["tokens_total"].as_u64().expect("tokens"),
            )
        })
        .collect();
    assert_eq!(runs, [(path, "s", 1100), (path, "s/agent-a1", 1100)]);
    assert_eq!(report["summary"]["projects"], 1);
    assert_eq!(report["summary"]["tokens_total"], 2200);
}
