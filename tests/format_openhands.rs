//! OpenHands event histories (`src/ingest/formats/openhands.rs`): detection, turns, tool
//! kinds, error classes, usage, the delegated agent, compactions, todos, outcome, bad
//! input, guards, the CLI.

mod common;

use hindsight::config::Config;
use hindsight::ingest::formats::{detect, import, openhands, InputFormat};
use hindsight::ingest::{LoadedRun, Policy, ProblemKind};
use hindsight::model::{Event, EventKind, TokenSource, Usage};
use hindsight::normalize::{ErrorClass, RunState, Step, ToolKind};
use hindsight::replay::ProjectReplayer;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/openhands";
/// A plain event array: stale edits, a failing test re-run with cosmetic variants, a
/// missing file, parallel tool calls, a condensation, a stop by the user.
const STUCK: &str = "stuck-stale-edit";
/// An evaluation `EvalOutput` holding the history: task list, edits, a delegate, a
/// passing test run, `finish`; usage from `llm_metrics` only.
const HEALTHY: &str = "healthy-eval-output";

fn fixture(run: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(DIR)
        .join(format!("{run}.json"))
}

fn load(run: &str) -> LoadedRun {
    import(&fixture(run), run, InputFormat::Openhands, Policy::Strict)
        .expect("fixture loads strictly")
}

/// Each result's call id → (kind of its call, tool, agent, success, error class).
fn outcomes(
    run: &LoadedRun,
) -> BTreeMap<String, (ToolKind, String, String, bool, Option<ErrorClass>)> {
    let mut state = RunState::new();
    let mut out = BTreeMap::new();
    for event in &run.events {
        if let Step::Result { call, outcome, .. } = state.step(event).step {
            let entry = (
                call.kind,
                call.tool.clone(),
                call.agent.to_string(),
                outcome.success,
                outcome.error_class,
            );
            out.insert(call.call_id.to_string(), entry);
        }
    }
    out
}

/// Every call's (call id, kind, agent, turn) after normalization.
fn calls(run: &LoadedRun) -> Vec<(String, ToolKind, String, u32)> {
    let mut state = RunState::new();
    run.events
        .iter()
        .filter_map(|e| match state.step(e).step {
            Step::Call(c) => Some((c.call_id.to_string(), c.kind, c.agent.to_string(), c.turn)),
            _ => None,
        })
        .collect()
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

fn totals(run: &LoadedRun) -> (u64, u64) {
    usage(&run.events)
        .iter()
        .fold((0, 0), |(p, c), u| (p + u.2, c + u.3))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn detection_is_by_structure() {
    for run in [STUCK, HEALTHY] {
        assert_eq!(detect(&fixture(run)), Some(InputFormat::Openhands), "{run}");
    }
    // Other formats' fixtures are not OpenHands histories.
    let formats = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    let mut others = Vec::new();
    for entry in std::fs::read_dir(&formats).expect("fixtures").flatten() {
        if entry.file_name() != "openhands" {
            files_under(&entry.path(), &mut others);
        }
    }
    for path in others {
        assert_ne!(
            detect(&path),
            Some(InputFormat::Openhands),
            "{}",
            path.display()
        );
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        files_under(&entry.path(), out);
    }
}

#[test]
fn other_json_is_not_detected() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in [
        // SWE-agent: steps with action and observation, but no source or id.
        ("swe.traj", r#"{"trajectory":[{"action":"ls","observation":"a.py","response":"ls","thought":"look","state":"{}"}],"history":[{"role":"system","content":"You are"}],"info":{}}"#),
        ("mini.json", r#"{"info":{"exit_status":"Submitted"},"messages":[{"role":"user","content":"fix it"}]}"#),
        ("report.json", r#"{"runs":[{"run_id":"a","turns":3,"firings":[]}],"summary":{"tokens_saved_combined":0}}"#),
        ("labels.json", r#"[{"instance_id":"calc__calc-7","resolved":true}]"#),
        ("chat.json", r#"[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]"#),
        ("numbers.json", "[1, 2, 3]"),
        ("empty.json", "[]"),
        // One event of OpenHands' per-event store is not a history.
        ("0.json", r#"{"id":0,"timestamp":"2026-01-01T10:00:00","source":"user","action":"message","args":{"content":"hi"}}"#),
        // Source outside OpenHands' vocabulary.
        ("odd.json", r#"[{"id":0,"timestamp":"2026-01-01T10:00:00","source":"bot","action":"message","args":{}}]"#),
        ("claude.jsonl", "{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":\"u\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n"),
    ] {
        let path = write(dir.path(), name, text);
        assert_ne!(detect(&path), Some(InputFormat::Openhands), "{name}");
    }
}

#[test]
fn sniff_reads_a_head_cut_mid_document() {
    for run in [STUCK, HEALTHY] {
        let text = std::fs::read_to_string(fixture(run)).expect("fixture");
        // The head stops inside the first event, past its `action` key.
        let cut = text.find("\"args\"").expect("args") + 12;
        assert!(openhands::sniff(&text[..cut]), "{run} cut at {cut}");
    }
    // The evaluation harness's older `[action, observation]` pairs.
    let pairs = r#"{"instance_id":"x","history":[[{"id":1,"timestamp":"t","source":"agent","action":"run","args":{"command":"ls"}},{"id":2,"source":"agent","observation":"run","cause":1}]]}"#;
    assert!(openhands::sniff(pairs));
}

#[test]
fn one_turn_per_model_request() {
    // Stuck: seven tool-call responses (the sixth with two parallel calls) and a plain reply.
    let stuck = load(STUCK);
    let turns: Vec<u32> = usage(&stuck.events).iter().map(|u| u.0).collect();
    assert_eq!(turns, (1..=8).collect::<Vec<_>>());
    let parallel: Vec<_> = calls(&stuck)
        .into_iter()
        .filter(|c| c.0 == "toolu_06" || c.0 == "toolu_07")
        .collect();
    assert!(parallel.iter().all(|c| c.3 == 6), "{parallel:?}");
    // Healthy: nine actions with a new cumulative reading, two of them the delegate's.
    let healthy = load(HEALTHY);
    assert_eq!(usage(&healthy.events).len(), 9);
}

#[test]
fn tool_kinds_after_normalization() {
    let stuck = load(STUCK);
    let kinds: BTreeMap<String, ToolKind> = calls(&stuck).into_iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(kinds["toolu_01"], ToolKind::Shell);
    assert_eq!(kinds["toolu_02"], ToolKind::Read);
    assert_eq!(kinds["toolu_03"], ToolKind::Edit);
    assert_eq!(kinds["toolu_07"], ToolKind::Shell);
    let healthy = load(HEALTHY);
    let kinds: BTreeMap<String, (ToolKind, String)> = calls(&healthy)
        .into_iter()
        .map(|c| (c.0, (c.1, c.2)))
        .collect();
    assert_eq!(kinds["call_h1"].0, ToolKind::TodoWrite);
    assert_eq!(kinds["call_h2"].0, ToolKind::Edit);
    assert_eq!(kinds["call_h3"].0, ToolKind::Edit, "insert is an edit");
    assert_eq!(kinds["call_h5"].0, ToolKind::Shell);
    assert_eq!(kinds["call_h6"].0, ToolKind::TodoWrite);
    assert_eq!(kinds["call_h7"].0, ToolKind::TaskComplete);
    // Canonical argument keys.
    let edit = stuck
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolCall(c) if c.call_id == "toolu_03" => Some(c.clone()),
            _ => None,
        })
        .expect("edit");
    assert_eq!(edit.tool, "file_edit");
    let keys: Vec<&str> = edit.args.keys().map(String::as_str).collect();
    assert_eq!(keys, ["new_string", "old_string", "path"]);
}

#[test]
fn error_classes() {
    let out = outcomes(&load(STUCK));
    for stale in ["toolu_03", "toolu_04", "toolu_06"] {
        assert_eq!(out[stale].4, Some(ErrorClass::StaleEdit), "{stale}");
    }
    for failed in ["toolu_01", "toolu_05", "toolu_07"] {
        assert!(!out[failed].3);
        assert_eq!(out[failed].4, Some(ErrorClass::Failed), "{failed}");
    }
    assert_eq!(out["toolu_08"].4, Some(ErrorClass::NotFound));
    assert!(out["toolu_02"].3, "the read succeeded");
    let healthy = outcomes(&load(HEALTHY));
    assert!(healthy.values().all(|o| o.3), "{healthy:?}");
}

#[test]
fn token_totals() {
    // Stuck: the responses' own usage, then the reply's cumulative difference (which
    // includes the condenser's call).
    let stuck = load(STUCK);
    assert_eq!(usage(&stuck.events)[7], (8, "main".into(), 3650, 250));
    assert_eq!(totals(&stuck), (17000, 600));
    // Healthy: cumulative differences only; the delegate continues its parent's counter.
    let healthy = load(HEALTHY);
    assert_eq!(totals(&healthy), (7400, 640));
    let delegate: Vec<_> = usage(&healthy.events)
        .into_iter()
        .filter(|u| u.1 != "main")
        .collect();
    assert_eq!(
        delegate,
        [
            (5, "delegate:BrowsingAgent".into(), 600, 40),
            (6, "delegate:BrowsingAgent".into(), 700, 50)
        ]
    );
}

#[test]
fn delegate_compaction_todos_and_outcome() {
    let healthy = load(HEALTHY);
    let out = outcomes(&healthy);
    assert_eq!(
        out["call_h4"].2, "main",
        "the delegate call is the parent's"
    );
    assert!(
        out["oh-8"].2.starts_with("delegate:"),
        "the browsing is the delegate's"
    );
    let writes: Vec<Vec<&str>> = healthy
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TodoWrite { todos } => {
                Some(todos.iter().map(|t| t.status.as_str()).collect())
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        writes,
        [["in_progress", "pending"], ["completed", "completed"]]
    );
    let complete: Vec<_> = healthy
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::TaskComplete { status, .. } => Some((status.clone(), e.at.agent.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(complete, [("completed".to_string(), "main".to_string())]);

    let stuck = load(STUCK);
    let kinds: Vec<&EventKind> = stuck.events.iter().map(|e| &e.kind).collect();
    assert!(kinds.iter().any(|k| matches!(
        k,
        EventKind::Compaction {
            before_tokens: 2500,
            ..
        }
    )));
    assert!(kinds
        .iter()
        .any(|k| matches!(k, EventKind::TaskComplete { status, .. } if status == "stopped")));
    assert!(matches!(kinds[0], EventKind::SessionStart { cwd: Some(c) } if c == "/workspace/calc"));
}

#[test]
fn guards_fire_on_the_stuck_history() {
    let mut replayer = ProjectReplayer::new("t", &Config::default(), Vec::new()).expect("config");
    let replay = replayer.replay(load(STUCK));
    let fired: Vec<(&str, &str, u32)> = replay
        .firings
        .iter()
        .map(|f| (f.guard, f.action.as_str(), f.turn))
        .collect();
    assert!(
        fired.contains(&("stale_edit_recovery", "read_authoritative_target", 4)),
        "{fired:?}"
    );
    assert!(
        fired.contains(&("stale_edit_recovery", "block_stale_retry", 6)),
        "{fired:?}"
    );
    assert!(
        fired.contains(&("convergence_breaker", "stalled", 6)),
        "{fired:?}"
    );
    let mut replayer = ProjectReplayer::new("t", &Config::default(), Vec::new()).expect("config");
    let healthy = replayer.replay(load(HEALTHY));
    assert!(!healthy
        .firings
        .iter()
        .any(|f| f.guard == "convergence_breaker" || f.guard == "stale_edit_recovery"));
}

#[test]
fn bad_input_is_located() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = r#"[{"id":0,"timestamp":"t","source":"user","action":"message","args":{"content":"go"}},
        7,
        {"id":2,"timestamp":"t","source":"agent","action":"run","args":"ls"},
        {"id":3,"timestamp":"t","source":"agent","action":"run","args":{"command":"ls"}},
        {"id":4,"timestamp":"t","source":"agent","observation":"run","cause":3,"content":"a.py","extras":{"metadata":{"exit_code":0}}}]"#;
    let path = write(dir.path(), "bad.json", text);
    let lenient = import(&path, "bad", InputFormat::Openhands, Policy::Lenient).expect("lenient");
    assert_eq!(lenient.problems.count, 2);
    let fields: Vec<_> = lenient
        .problems
        .listed
        .iter()
        .map(|p| (p.field.clone(), p.kind.clone()))
        .collect();
    assert_eq!(fields[0], (Some("[1]".into()), ProblemKind::NotAnObject));
    assert_eq!(fields[1].0.as_deref(), Some("[2].args"));
    assert_eq!(outcomes(&lenient).len(), 1, "the good call is kept");
    let strict = import(&path, "bad", InputFormat::Openhands, Policy::Strict).expect_err("strict");
    assert_eq!(strict.field.as_deref(), Some("[1]"));
    // Truncated JSON and a wrapper without a history never panic.
    for (name, text) in [
        (
            "cut.json",
            "[{\"id\":0,\"source\":\"user\",\"action\":\"mess",
        ),
        ("nohistory.json", "{\"instance_id\":\"x\"}"),
    ] {
        let path = write(dir.path(), name, text);
        assert!(
            import(&path, "x", InputFormat::Openhands, Policy::Strict).is_err(),
            "{name}"
        );
        let run = import(&path, "x", InputFormat::Openhands, Policy::Lenient).expect("lenient");
        assert_eq!(run.problems.count, 1, "{name}");
    }
}

#[test]
fn older_pairs_and_histories_without_metadata() {
    // `EvalOutput.history` as [action, observation] pairs, no LLM metadata at all: every
    // agent action is a request.
    let dir = tempfile::tempdir().expect("tempdir");
    let text = r#"{"instance_id":"x","history":[
        [{"id":0,"timestamp":"t","source":"user","action":"message","args":{"content":"go"}},{"id":-1,"source":"user","observation":"null","content":""}],
        [{"id":1,"timestamp":"t","source":"agent","action":"run","args":{"command":"make","thought":"build"}},{"id":2,"source":"agent","observation":"run","cause":1,"content":"make: *** No rule to make target","extras":{"command":"make","exit_code":2}}],
        [{"id":3,"timestamp":"t","source":"agent","action":"write","args":{"path":"Makefile","content":"all:\n"}},{"id":4,"source":"agent","observation":"write","cause":3,"content":"","extras":{"path":"Makefile"}}]
    ],"error":null}"#;
    let path = write(dir.path(), "old.json", text);
    assert_eq!(detect(&path), Some(InputFormat::Openhands));
    let run = import(&path, "old", InputFormat::Openhands, Policy::Strict).expect("loads");
    let out = outcomes(&run);
    assert_eq!(out["oh-1"].0, ToolKind::Shell);
    assert!(!out["oh-1"].3, "exit code 2");
    assert_eq!(out["oh-3"].0, ToolKind::Write);
    assert!(out["oh-3"].3);
    assert_eq!(calls(&run).iter().map(|c| c.3).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn cli_replays_the_fixtures_strictly() {
    // The histories; the evaluation output beside them has a cut line on purpose
    // (tests/format_openhands_counts.rs).
    let (stuck, healthy) = (fixture(STUCK), fixture(HEALTHY));
    let (stuck, healthy) = (
        stuck.to_str().expect("utf-8"),
        healthy.to_str().expect("utf-8"),
    );
    let report = common::json_report(&["replay", "--format", "json", "--strict", stuck, healthy]);
    let runs = report["runs"].as_array().expect("runs");
    let ids: Vec<&str> = runs.iter().filter_map(|r| r["run_id"].as_str()).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    for run in runs {
        assert!(run["turns"].as_u64().expect("turns") > 0, "{run}");
        assert!(run["tokens_total"].as_u64().expect("tokens") > 0, "{run}");
    }
}

#[test]
fn truncated_documents_never_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    for run in [STUCK, HEALTHY] {
        let text = std::fs::read(fixture(run)).expect("fixture");
        for cut in (1..text.len()).step_by(211) {
            let head = String::from_utf8_lossy(&text[..cut]);
            let _ = openhands::sniff(&head);
            let path = write(dir.path(), "cut.json", &head);
            let loaded =
                import(&path, "cut", InputFormat::Openhands, Policy::Lenient).expect("lenient");
            assert_eq!(loaded.problems.count, 1, "{run} cut at {cut}");
        }
    }
}

/// Each request's (turn, usage by kind, model, recorded cost).
fn requests(run: &LoadedRun) -> Vec<(u32, Usage, Option<String>, Option<f64>)> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => Some((
                e.at.turn,
                r.usage.unwrap_or_default(),
                r.model.clone(),
                r.cost_usd,
            )),
            _ => None,
        })
        .collect()
}

fn kinds(input: u64, cache_write: u64, cache_read: u64, output: u64) -> Usage {
    Usage {
        input,
        cache_write,
        cache_write_1h: 0,
        cache_read,
        output,
        source: TokenSource::Recorded,
    }
}

#[test]
fn usage_by_kind_model_and_cost() {
    // The response's usage: `prompt_tokens` 1200 hold 800 read from and 300 written to
    // the cache; the cost is the growth of `accumulated_cost`.
    let stuck = requests(&load(STUCK));
    let (turn, usage, model, cost) = &stuck[0];
    assert_eq!(
        (*turn, *usage, model.as_deref()),
        (
            1,
            kinds(100, 300, 800, 40),
            Some("claude-sonnet-4-20250514")
        )
    );
    assert!((cost.unwrap() - 0.0042).abs() < 1e-12);
    let (_, _, _, cost) = &stuck[1];
    assert!((cost.unwrap() - 0.0049).abs() < 1e-12, "{cost:?}");
    // The reply after the condensation: the counter's growth, the condenser's call included.
    let (turn, usage, _, cost) = &stuck[7];
    assert_eq!((*turn, *usage), (8, kinds(3650, 0, 0, 250)));
    assert!((cost.unwrap() - (0.0633 - 0.0459)).abs() < 1e-12);
    // Cumulative readings only: the model is the counter's.
    let healthy = requests(&load(HEALTHY));
    assert!(healthy
        .iter()
        .all(|r| r.2.as_deref() == Some("gpt-4o-2024-08-06")));

    // A response without usage in its event takes the evaluation's `token_usages` entry
    // for its id; a prompt too small to hold its cache writes did not include them.
    let dir = tempfile::tempdir().expect("tempdir");
    let action = |id: u32, response: &str| {
        format!(
            r#"{{"id":{id},"timestamp":"t","source":"agent","action":"run","tool_call_metadata":{{"tool_call_id":"c{id}","model_response":{response}}},"args":{{"command":"ls"}}}}"#
        )
    };
    let listed = action(1, r#"{"id":"r1","model":"claude-sonnet-4-20250514"}"#);
    let own = action(
        2,
        r#"{"id":"r2","model":"claude-sonnet-4-20250514","usage":{"prompt_tokens":1000,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":900},"cache_creation_input_tokens":400}}"#,
    );
    let text = format!(
        r#"{{"instance_id":"i","history":[{listed},{own}],"metrics":{{"token_usages":[{{"model":"anthropic/claude-sonnet-4-20250514","prompt_tokens":500,"completion_tokens":20,"cache_read_tokens":300,"cache_write_tokens":150,"response_id":"r1"}}]}}}}"#
    );
    let path = write(dir.path(), "i.json", &text);
    let run = requests(&import(&path, "i", InputFormat::Openhands, Policy::Strict).expect("loads"));
    assert_eq!(
        run.iter().map(|r| (r.1, r.3)).collect::<Vec<_>>(),
        [
            (kinds(50, 150, 300, 20), None),
            (kinds(100, 400, 900, 9), None)
        ]
    );
}
