//! The ATIF importer (issue #30, item 2): one test per mapping rule, on fixtures written
//! for these tests (`tests/fixtures/formats/atif/`): `claude-code-fix.json` (a Claude Code
//! run converted to ATIF-v1.7: per-step metrics with cache writes in `metrics.extra`, one
//! step's own cost and the run's in `final_metrics`, a failure flagged by the converter,
//! a shell failure told by its wording), `delegated-compacted.json` (a Codex run: an
//! embedded sub-agent, copied context, a step standing for three model calls and one for
//! none, a `context_management` compaction, only the run's cost), and `harbor-job/`, a
//! Harbor job of two trials of one task (ATIF-v1.2, no metrics; rewards 1.0 and 0.0), the
//! first keeping the agent's native Claude Code log beside its trajectory.

mod common;

use common::hindsight;
use hindsight::ingest::discover::discover;
use hindsight::ingest::formats::{detect_file, import, Detected, InputFormat};
use hindsight::ingest::{Limits, LoadedRun, Policy, ProblemKind};
use hindsight::model::{Event, EventKind, Request, TokenSource, ToolCall, ToolResult, Usage};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/atif";
const CLAUDE: &str = "claude-code-fix.json";
const DELEGATED: &str = "delegated-compacted.json";
const JOB: &str = "harbor-job";
const PASSED: &str = "wordfreq__k3v9q2x";
const FAILED: &str = "wordfreq__p8m1t4z";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR).join(name)
}

fn load(name: &str) -> LoadedRun {
    import(&fixture(name), "t", InputFormat::Atif, Policy::Strict).expect("loads strictly")
}

fn requests(run: &LoadedRun) -> Vec<(&str, &Request)> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest(r) => Some((e.at.agent.as_str(), r)),
            _ => None,
        })
        .collect()
}

fn calls(run: &LoadedRun) -> Vec<(&Event, &ToolCall)> {
    run.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(c) => Some((e, c)),
            _ => None,
        })
        .collect()
}

fn result<'r>(run: &'r LoadedRun, id: &str) -> &'r ToolResult {
    run.events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolResult(r) if r.call_id == id => Some(r),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {id}"))
}

fn write(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(doc).unwrap()).unwrap();
    path
}

#[test]
fn detection_is_by_structure_with_look_alikes_for_near_misses() {
    for name in [
        CLAUDE,
        DELEGATED,
        "harbor-job/wordfreq__k3v9q2x/agent/trajectory.json",
    ] {
        let detected = detect_file(&fixture(name), &Limits::default()).expect("readable");
        assert_eq!(detected, Detected::Format(InputFormat::Atif), "{name}");
    }
    let dir = tempfile::tempdir().unwrap();
    // Named like anything: the structure decides.
    let doc = json!({"schema_version": "ATIF-v1.4", "session_id": "s",
        "agent": {"name": "x", "version": "1"},
        "steps": [{"step_id": 1, "source": "user", "message": "hi"}]});
    let renamed = write(dir.path(), "notes.json", &doc);
    assert_eq!(
        detect_file(&renamed, &Limits::default()).unwrap(),
        Detected::Format(InputFormat::Atif)
    );
    // `agent` and `steps` with no ATIF version; an ATIF version whose steps are no array.
    let unversioned = json!({"agent": {"name": "x"}, "steps": [{"step_id": 1, "source": "user"}]});
    let no_steps =
        json!({"schema_version": "ATIF-v1.7", "agent": {"name": "x"}, "steps": {"a": 1}});
    for (name, doc, why) in [
        (
            "a.json",
            unversioned,
            "no `schema_version` starting `ATIF-`",
        ),
        ("b.json", no_steps, "`steps` is not an array of steps"),
    ] {
        let path = write(dir.path(), name, &doc);
        match detect_file(&path, &Limits::default()).unwrap() {
            Detected::LookAlike { format, reason } => {
                assert_eq!(format, InputFormat::Atif);
                assert!(reason.contains(why), "{reason}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // Another `schema_version` is no ATIF and nothing like it.
    let other = json!({"schema_version": "2.1", "steps": []});
    let path = write(dir.path(), "c.json", &other);
    assert_eq!(
        detect_file(&path, &Limits::default()).unwrap(),
        Detected::Other
    );
}

#[test]
fn steps_in_order_calls_answered_by_their_results() {
    let run = load(CLAUDE);
    let ids: Vec<&str> = calls(&run)
        .iter()
        .map(|(_, c)| c.call_id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "tc-read-1",
            "tc-edit-1",
            "tc-edit-2",
            "tc-bash-1",
            "tc-bash-2"
        ]
    );
    // Each call at its step's turn, its result right after it.
    let turns: Vec<u32> = calls(&run).iter().map(|(e, _)| e.at.turn).collect();
    assert_eq!(turns, [1, 2, 3, 4, 5]);
    for (i, e) in run.events.iter().enumerate() {
        if let EventKind::ToolCall(c) = &e.kind {
            match &run.events[i + 1].kind {
                EventKind::ToolResult(r) => assert_eq!(r.call_id, c.call_id),
                other => panic!("{other:?}"),
            }
        }
    }
    assert!(result(&run, "tc-read-1")
        .output
        .as_ref()
        .is_some_and(|o| o.contains("def count_lines")));
    // Six agent steps with metrics: six requests; the user step is history.
    assert_eq!(requests(&run).len(), 6);
}

#[test]
fn tool_names_map_by_the_writing_agents_table() {
    let run = load(CLAUDE);
    let tools: Vec<(&str, &str)> = calls(&run)
        .iter()
        .map(|(_, c)| (c.call_id.as_str(), c.tool.as_str()))
        .collect();
    assert_eq!(
        tools,
        [
            ("tc-read-1", "file_read"),
            ("tc-edit-1", "file_edit"),
            ("tc-edit-2", "file_edit"),
            ("tc-bash-1", "shell"),
            ("tc-bash-2", "shell"),
        ]
    );
    // Claude Code's `file_path` is renamed as its own importer renames it.
    let (_, read) = calls(&run)[0];
    assert_eq!(
        read.args.get("path"),
        Some(&json!("/work/tally/tally/core.py"))
    );
    // Codex's names are canonical already, or pass through to be judged by shape.
    let run = load(DELEGATED);
    let tools: Vec<&str> = calls(&run).iter().map(|(_, c)| c.tool.as_str()).collect();
    assert_eq!(
        tools,
        [
            "delegate",
            "shell",
            "shell",
            "shell",
            "shell",
            "apply_patch",
            "shell"
        ]
    );
}

#[test]
fn failures_come_from_converter_flags_else_from_shell_wording() {
    let run = load(CLAUDE);
    // Claude Code's converter keeps `is_error` as `tool_result_is_error`; the class comes
    // from Claude Code's own wordings.
    let flagged = result(&run, "tc-edit-1");
    assert!(!flagged.success);
    assert_eq!(flagged.error_class.as_deref(), Some("stale_edit"));
    assert!(result(&run, "tc-edit-2").success);
    // No flag: a shell call's output is read with the shared anchored wordings.
    let worded = result(&run, "tc-bash-1");
    assert!(!worded.success);
    assert_eq!(worded.error_class.as_deref(), Some("tool_failed"));
    assert!(result(&run, "tc-bash-2").success);
    // Any other call without a flag succeeded, whatever its text.
    assert!(result(&run, "tc-read-1").success);

    let run = load(DELEGATED);
    let missing = result(&run, "c-3");
    assert!(!missing.success);
    assert_eq!(missing.error_class.as_deref(), Some("not_found"));
    // `is_error: true` (Copilot's name) and `success: true` (its session events).
    assert!(!result(&run, "c-6").success);
    assert!(result(&run, "c-5").success);
    // The sub-agent's calls are judged alike.
    assert!(result(&run, "s-1").success);
}

#[test]
fn metrics_are_usage_by_kind_with_cached_tokens_inside_the_prompt() {
    let run = load(CLAUDE);
    let reqs = requests(&run);
    // prompt 5200 of which 4800 written to the cache: 400 fresh.
    assert_eq!(
        reqs[0].1.usage,
        Some(Usage {
            input: 400,
            cache_write: 4800,
            cache_write_1h: 0,
            cache_read: 0,
            output: 60,
            source: TokenSource::Recorded,
        })
    );
    // prompt 5900 of which 5230 read from the cache, no writes recorded.
    let u = reqs[3].1.usage.expect("usage");
    assert_eq!(
        (u.input, u.cache_write, u.cache_read, u.output),
        (670, 0, 5230, 70)
    );
    // The prompt as recorded is the sum of the three kinds.
    assert!(reqs.iter().all(|(_, r)| r.usage.is_some()));
    assert_eq!(reqs[1].1.usage.unwrap().prompt(), 5400);
    // The model: the step's, else the agent's.
    assert!(reqs
        .iter()
        .all(|(_, r)| r.model.as_deref() == Some("claude-sonnet-4-5")));
    let run = load(DELEGATED);
    let models: Vec<Option<&str>> = requests(&run)
        .iter()
        .map(|(_, r)| r.model.as_deref())
        .collect();
    assert_eq!(models[0], Some("gpt-5"));
    assert_eq!(
        models[1],
        Some("gpt-5-mini"),
        "the sub-agent's own agent model"
    );
}

#[test]
fn the_run_cost_fills_only_what_the_steps_do_not_record() {
    let run = load(CLAUDE);
    let costs: Vec<f64> = requests(&run)
        .iter()
        .map(|(_, r)| r.cost_usd.expect("every request costed"))
        .collect();
    // The step's own cost stands; the rest of `total_cost_usd` is spread over the others
    // in proportion to their tokens; the sum is the total, never more.
    assert!((costs[1] - 0.0042).abs() < 1e-12);
    let sum: f64 = costs.iter().sum();
    assert!((sum - 0.0391).abs() < 1e-9, "{sum}");
    assert!(costs[5] > costs[0], "more tokens, more of the spread");
    // Sub-agents' requests share the run's cost, which covers them.
    let run = load(DELEGATED);
    let sum: f64 = requests(&run).iter().filter_map(|(_, r)| r.cost_usd).sum();
    assert!((sum - 0.0612).abs() < 1e-9, "{sum}");
    assert!(requests(&run).iter().all(|(_, r)| r.cost_usd.is_some()));
}

#[test]
fn steps_without_metrics_record_no_tokens() {
    let path = fixture(&format!("{JOB}/{PASSED}/agent/trajectory.json"));
    let run = import(&path, "t", InputFormat::Atif, Policy::Strict).unwrap();
    let reqs = requests(&run);
    assert_eq!(reqs.len(), 3);
    assert!(reqs
        .iter()
        .all(|(_, r)| r.usage.is_none() && r.cost_usd.is_none()));
    assert!(
        reqs.iter().all(|(_, r)| r.model.is_none()),
        "ATIF-v1.2, no model named"
    );
}

#[test]
fn run_totals_are_spread_when_no_step_records_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let step = |id: u64| json!({"step_id": id, "source": "agent", "message": "m"});
    let doc = json!({"schema_version": "ATIF-v1.5", "agent": {"name": "x", "version": "1"},
        "steps": [step(1), step(2), step(3)],
        "final_metrics": {"total_prompt_tokens": 1000, "total_completion_tokens": 31,
                          "total_cached_tokens": 600, "total_cost_usd": 0.3}});
    let path = write(dir.path(), "t.json", &doc);
    let run = import(&path, "t", InputFormat::Atif, Policy::Strict).unwrap();
    let usages: Vec<Usage> = requests(&run)
        .iter()
        .map(|(_, r)| r.usage.unwrap())
        .collect();
    assert!(usages.iter().all(|u| u.source == TokenSource::Spread));
    let sum = usages.iter().fold(Usage::default(), |a, u| a.add(u));
    assert_eq!((sum.input, sum.cache_read, sum.output), (400, 600, 31));
    let cost: f64 = requests(&run).iter().filter_map(|(_, r)| r.cost_usd).sum();
    assert!((cost - 0.3).abs() < 1e-12);
}

#[test]
fn llm_call_count_zero_is_no_request_and_several_calls_are_one_turn() {
    let run = load(DELEGATED);
    // Main: steps 5, 6, 9, 10, 11 (step 8 is a dispatch with no model call); the
    // sub-agent: two.
    let agents: Vec<&str> = requests(&run).iter().map(|(a, _)| *a).collect();
    assert_eq!(
        agents,
        [
            "main",
            "subagent:scout-1",
            "subagent:scout-1",
            "main",
            "main",
            "main",
            "main"
        ]
    );
    // The step of three calls is one turn with its aggregated usage.
    let u = requests(&run)[3].1.usage.unwrap();
    assert_eq!(u.prompt(), 13500);
    assert_eq!((u.cache_write, u.cache_read), (1000, 8192));
    // The dispatch's call happens at the turn before it.
    let (e, c) = calls(&run)
        .into_iter()
        .find(|(_, c)| c.call_id == "c-4")
        .unwrap();
    assert_eq!(e.at.turn, 4, "{c:?}");
}

#[test]
fn an_embedded_sub_agent_is_a_thread_read_where_it_is_referred_to() {
    let run = load(DELEGATED);
    let order: Vec<(&str, &str)> = calls(&run)
        .iter()
        .map(|(e, c)| (e.at.agent.as_str(), c.call_id.as_str()))
        .collect();
    assert_eq!(order[0], ("main", "c-1"));
    assert_eq!(order[1], ("subagent:scout-1", "s-1"));
    assert_eq!(order[2], ("main", "c-2"));
    // Sub-agents make no frames, and their text stays out of the main history.
    assert!(run
        .frames
        .iter()
        .all(|f| f.messages.iter().all(|m| !m.content.contains("grep -rl"))));
}

#[test]
fn copied_context_seeds_the_history_and_is_no_request() {
    let run = load(DELEGATED);
    let copied = run.stats.copied.as_ref().expect("copied");
    assert_eq!((copied.entries, copied.turns, copied.tokens), (2, 1, 3100));
    assert_eq!(copied.from, "almanac-run-7");
    let first = &run.frames[0];
    assert!(first
        .messages
        .iter()
        .any(|m| m.content.contains("rejects leap days")));
}

#[test]
fn a_context_management_compaction_is_a_compaction() {
    let run = load(DELEGATED);
    let compactions: Vec<(u64, u64)> = run
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Compaction {
                before_tokens,
                after_tokens,
            } => Some((before_tokens, after_tokens)),
            _ => None,
        })
        .collect();
    // Before: the last main request's prompt; after: the summary's estimate.
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0].0, 13500);
    assert!(compactions[0].1 > 0 && compactions[0].1 < 100);
    // The next frame starts from the summary.
    let after = run.frames.iter().find(|f| f.turn == 5).expect("frame");
    assert!(after.messages[0].content.starts_with("Summary: days_in"));
}

#[test]
fn a_harbor_trial_is_one_run_named_after_the_trial_and_its_native_log_is_not_replayed() {
    let projects = discover(&[fixture(JOB)]).expect("discovers");
    let runs: Vec<(String, &str, InputFormat)> = projects
        .iter()
        .flat_map(|p| {
            p.runs
                .iter()
                .map(move |r| (p.name.clone(), r.run_id.as_str(), r.format))
        })
        .collect();
    let job = format!("{}/{JOB}", fixture("").display()).replace("//", "/");
    assert_eq!(
        runs,
        [
            (format!("{job}/{PASSED}"), PASSED, InputFormat::Atif),
            (format!("{job}/{FAILED}"), FAILED, InputFormat::Atif),
        ]
    );
    // The native log alone is a Claude Code session; beside the trajectory it is not a run.
    let native = fixture(&format!("{JOB}/{PASSED}/agent/sessions"));
    let alone = discover(&[native]).expect("discovers");
    assert_eq!(alone.len(), 1);
    assert_eq!(alone[0].format, InputFormat::ClaudeCode);
}

/// A trial's native log in a format hindsight does not read (`native-agent.jsonl` in the
/// failed trial) is the run its trajectory already is: not listed as unrecognised, so
/// `--strict` does not stop on it; alone, it is unrecognised as any such file.
#[test]
fn a_native_log_hindsight_cannot_read_beside_a_trials_trajectory_is_no_problem() {
    let job = format!("{DIR}/{JOB}");
    let out = hindsight()
        .args(["replay", &job, "--strict", "--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        report["input"].get("unrecognised").is_none(),
        "{}",
        report["input"]
    );
    let alone = format!("{job}/{FAILED}/agent/native-agent.jsonl");
    let out = hindsight().args(["replay", &alone]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: unrecognised"));
}

#[test]
fn gate_on_a_harbor_job_with_no_labels_takes_the_trials_rewards() {
    let out = hindsight()
        .args(["gate", &format!("{DIR}/{JOB}"), "--format", "json"])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("note: no --labels: the Harbor trials' rewards in"),
        "{err}"
    );
    let outcome: Value = serde_json::from_slice(&out.stdout).expect("json");
    let score = &outcome["scores"][0];
    assert_eq!(score["failed_runs"], 1);
    assert_eq!(score["healthy_runs"], 1);
    // --reward-threshold as with --labels: at 0, both trials are healthy.
    let out = hindsight()
        .args(["gate", &format!("{DIR}/{JOB}"), "--format", "json"])
        .args(["--reward-threshold", "0"])
        .output()
        .expect("runs");
    let outcome: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(outcome["scores"][0]["healthy_runs"], 2);
    // A folder of no trials still has nothing to judge.
    let out = hindsight()
        .args(["gate", &format!("{DIR}/{CLAUDE}")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to judge"));
}

#[test]
fn bad_steps_are_skipped_and_counted_leniently_and_stop_strict() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({"schema_version": "ATIF-v1.7", "agent": {"name": "x", "version": "1"},
    "steps": [
        {"step_id": 1, "source": "user", "message": "go"},
        "not a step",
        {"step_id": 3, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "a", "arguments": {}},
                        {"tool_call_id": "b", "function_name": "shell", "arguments": {"command": "ls"}}],
         "observation": {"results": [{"source_call_id": "b", "content": "x"}]},
         "metrics": {"prompt_tokens": -4, "completion_tokens": 2}},
        {"step_id": 4, "source": "robot", "message": "?"}
    ]});
    let path = write(dir.path(), "bad.json", &doc);
    let run = import(&path, "bad", InputFormat::Atif, Policy::Lenient).expect("lenient");
    let fields: Vec<&str> = run
        .problems
        .listed
        .iter()
        .map(|p| p.field.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(
        fields,
        [
            "steps[2].metrics.prompt_tokens",
            "steps[1]",
            "steps[2].tool_calls[0].function_name",
            "steps[3].source",
        ]
    );
    assert_eq!(run.problems.count, 4);
    assert!(run
        .problems
        .listed
        .iter()
        .all(|p| p.path.ends_with("bad.json")));
    // The rest is read: the good call, and the request without its bad usage.
    assert_eq!(calls(&run).len(), 1);
    assert_eq!(requests(&run).len(), 1);
    assert!(requests(&run)[0].1.usage.is_none());
    let strict = import(&path, "bad", InputFormat::Atif, Policy::Strict).expect_err("strict");
    assert_eq!(
        strict.field.as_deref(),
        Some("steps[2].metrics.prompt_tokens")
    );
    assert!(matches!(strict.kind, ProblemKind::BadValue(_)));
}
