//! ATIF figures checked against counts taken in this file from the raw fixture documents
//! (issue #30, item 2): requests, tool calls, failed calls, tokens by kind, recorded cost
//! and threads of every trajectory in `tests/fixtures/formats/atif/`. The counts below
//! read the JSON directly with serde_json, never through hindsight.
//!
//! How each figure is counted from a trajectory (and each embedded sub-agent trajectory):
//!
//! - **Requests**: the `agent` steps that are not `is_copied_context` and whose
//!   `llm_call_count` is not 0.
//! - **Calls**: every `tool_calls` entry of the steps that are not copied.
//! - **Failures**: a result whose `extra` says so (`is_error` or `tool_result_is_error`
//!   true, `success` false); without a flag, a call whose function is `Bash` or `shell` and
//!   whose output has a line starting `Traceback` or ending `command not found` or `No such
//!   file or directory`.
//! - **Tokens**: from each request's `metrics`: cache reads `cached_tokens`, cache writes
//!   the `metrics.extra` count (`cache_creation_input_tokens`, `cache_write_input_tokens`),
//!   fresh input the rest of `prompt_tokens`, output `completion_tokens`.
//! - **Cost**: the root's `final_metrics.total_cost_usd`, else the sum of the steps'
//!   `cost_usd`; 0 when neither is recorded.
//! - **Threads**: the main agent and one per embedded sub-agent trajectory.

use hindsight::ingest::formats::{import, InputFormat};
use hindsight::ingest::Policy;
use hindsight::model::EventKind;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/atif";

/// Every ATIF trajectory of the fixture folder.
fn trajectories() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR);
    let job = root.join("harbor-job");
    let mut out = vec![
        root.join("claude-code-fix.json"),
        root.join("delegated-compacted.json"),
    ];
    for trial in std::fs::read_dir(&job).expect("job").flatten() {
        out.push(trial.path().join("agent/trajectory.json"));
    }
    out.sort();
    assert_eq!(out.len(), 4);
    out
}

#[derive(Debug, Default, PartialEq)]
struct Counts {
    requests: u64,
    calls: u64,
    failures: u64,
    /// input, cache write, cache read, output.
    by_kind: [u64; 4],
    cost_micro_usd: u64,
    threads: u64,
}

fn flag(result: &Value) -> Option<bool> {
    let extra = result.get("extra")?;
    let b = |k: &str| extra.get(k).and_then(Value::as_bool);
    b("is_error")
        .or_else(|| b("tool_result_is_error"))
        .or_else(|| b("success").map(|ok| !ok))
}

fn worded_failure(output: &str) -> bool {
    output.lines().any(|l| {
        l.starts_with("Traceback")
            || l.ends_with("command not found")
            || l.ends_with("No such file or directory")
    })
}

fn count_into(doc: &Value, c: &mut Counts) {
    c.threads += 1;
    for step in doc["steps"].as_array().expect("steps") {
        if step["is_copied_context"] == Value::Bool(true) {
            continue;
        }
        let agent = step["source"] == "agent";
        if agent && step["llm_call_count"] != 0 {
            c.requests += 1;
            if let Some(m) = step.get("metrics") {
                let n = |v: &Value| v.as_u64().unwrap_or(0);
                let extra = &m["extra"];
                let writes = n(&extra["cache_creation_input_tokens"])
                    + n(&extra["cache_write_input_tokens"]);
                let cached = n(&m["cached_tokens"]);
                c.by_kind[0] += n(&m["prompt_tokens"]) - cached - writes;
                c.by_kind[1] += writes;
                c.by_kind[2] += cached;
                c.by_kind[3] += n(&m["completion_tokens"]);
            }
        }
        let calls = step["tool_calls"].as_array().cloned().unwrap_or_default();
        let results = step["observation"]["results"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for call in &calls {
            c.calls += 1;
            let id = &call["tool_call_id"];
            let Some(result) = results.iter().find(|r| &r["source_call_id"] == id) else {
                continue;
            };
            let shell = matches!(call["function_name"].as_str(), Some("Bash" | "shell"));
            let output = result["content"].as_str().unwrap_or("");
            let failed = flag(result).unwrap_or(shell && worded_failure(output));
            c.failures += u64::from(failed);
        }
    }
    for sub in doc["subagent_trajectories"]
        .as_array()
        .into_iter()
        .flatten()
    {
        count_into(sub, c);
    }
}

fn counted(path: &Path) -> Counts {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut c = Counts::default();
    count_into(&doc, &mut c);
    let steps_cost: f64 = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["metrics"]["cost_usd"].as_f64())
        .sum();
    let cost = doc["final_metrics"]["total_cost_usd"]
        .as_f64()
        .unwrap_or(steps_cost);
    c.cost_micro_usd = (cost * 1e6).round() as u64;
    c
}

fn imported(path: &Path) -> Counts {
    let run = import(path, "x", InputFormat::Atif, Policy::Strict).expect("loads");
    let mut c = Counts::default();
    let mut cost = 0.0;
    let mut agents = BTreeSet::new();
    for e in &run.events {
        agents.insert(e.at.agent.clone());
        match &e.kind {
            EventKind::ModelRequest(r) => {
                c.requests += 1;
                if let Some(u) = r.usage {
                    c.by_kind[0] += u.input;
                    c.by_kind[1] += u.cache_write;
                    c.by_kind[2] += u.cache_read;
                    c.by_kind[3] += u.output;
                }
                cost += r.cost_usd.unwrap_or(0.0);
            }
            EventKind::ToolCall(_) => c.calls += 1,
            EventKind::ToolResult(r) => c.failures += u64::from(!r.success),
            _ => {}
        }
    }
    c.cost_micro_usd = (cost * 1e6).round() as u64;
    c.threads = agents.len() as u64;
    c
}

#[test]
fn every_fixture_matches_its_independent_count() {
    for path in trajectories() {
        assert_eq!(imported(&path), counted(&path), "{}", path.display());
    }
}

#[test]
fn the_fixtures_exercise_every_figure() {
    let all: Vec<Counts> = trajectories().iter().map(|p| counted(p)).collect();
    assert!(all.iter().any(|c| c.by_kind[1] > 0), "cache writes");
    assert!(all.iter().any(|c| c.cost_micro_usd > 0), "a recorded cost");
    assert!(all.iter().any(|c| c.threads > 1), "a sub-agent");
    assert!(all.iter().any(|c| c.failures > 0));
    assert!(all.iter().any(|c| c.by_kind == [0; 4]), "no metrics at all");
}
