//! OpenHands figures checked against counts taken in this file from the raw fixtures
//! (issue #12): turns, calls, failures, recorded tokens by kind, models and recorded cost
//! of every history, and of every instance of an evaluation's `output.jsonl` (one run per
//! line, named by its `instance_id`). The counts below read the JSON directly with
//! serde_json, never through hindsight; for an evaluation instance they are also held to
//! OpenHands' own record of the run (`metrics.token_usages`, `accumulated_token_usage`,
//! `accumulated_cost`).
//!
//! Fixtures: `tests/fixtures/formats/openhands/` — two histories (`stuck-stale-edit.json`,
//! an event array; `healthy-eval-output.json`, one `EvalOutput` with a delegate) and
//! `output.jsonl`: three instances (Anthropic usage with cache writes and parallel calls;
//! DeepSeek usage with cache reads, a stale edit and a tool call rejected before it ran; a
//! model OpenHands could not price, usage only in cumulative `llm_metrics`) around a line
//! cut off mid-write.

mod common;

use hindsight::ingest::formats::{import, openhands, InputFormat};
use hindsight::ingest::{Limits, LoadedRun, Policy};
use hindsight::model::EventKind;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/openhands";
const OUTPUT: &str = "output.jsonl";
/// The histories, one run per file.
const HISTORIES: [&str; 2] = ["stuck-stale-edit.json", "healthy-eval-output.json"];
/// The instances of `output.jsonl`, in file order; its line 3 is cut off.
const INSTANCES: [&str; 3] = ["acme__calc-7", "acme__semver-12", "slug__slugify-3"];
const CUT_LINE: usize = 3;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR).join(name)
}

/// Agent actions that are no model tool call and no reply.
const BOOKKEEPING: [&str; 12] = [
    "system",
    "condensation",
    "condensation_request",
    "summarize",
    "change_agent_state",
    "recall",
    "null",
    "pause",
    "resume",
    "stop",
    "start",
    "message",
];

/// What one history holds.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    /// Model responses: agent actions with a response id (or a new cumulative reading where
    /// they carry only `llm_metrics`), each response once.
    turns: u64,
    /// Agent actions other than bookkeeping and replies, plus agent `error` observations
    /// that answer no action (a call rejected before it ran).
    calls: u64,
    /// Observations answering a call that report failure (an `error`, a non-zero exit code,
    /// an editor result starting `ERROR:`), plus the rejected calls.
    failures: u64,
    /// Per response: its own usage, else the growth of the cumulative counter since the
    /// previous response's reading.
    prompt: u64,
    completion: u64,
    cache_read: u64,
    cache_write: u64,
    /// The models the responses name (else the cumulative counter's).
    models: BTreeSet<String>,
}

impl Counts {
    /// Fresh input: the prompt less its cached parts (OpenHands' `prompt_tokens` include
    /// them).
    fn input(&self) -> u64 {
        self.prompt - self.cache_read - self.cache_write
    }
}

fn n(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The events of a history document: an array, or an object's `history` (older
/// `[action, observation]` pairs flattened).
fn events_of(doc: &Value) -> Vec<Value> {
    let events = match doc {
        Value::Array(events) => events,
        _ => doc["history"].as_array().expect("history"),
    };
    events
        .iter()
        .flat_map(|e| match e {
            Value::Array(pair) => pair.clone(),
            e => vec![e.clone()],
        })
        .collect()
}

fn counts(events: &[Value]) -> Counts {
    let mut c = Counts::default();
    let marked = events
        .iter()
        .any(|e| !e["tool_call_metadata"].is_null() || !e["llm_metrics"].is_null());
    let mut seen: HashSet<String> = HashSet::new();
    // The last cumulative (prompt, completion, read, write) seen on a response.
    let mut last = (0, 0, 0, 0);
    let mut calls: HashSet<i64> = HashSet::new();
    for e in events {
        let id = e["id"].as_i64().unwrap_or(-1);
        if e["source"] == "agent" {
            if let Some(action) = e["action"].as_str() {
                if !BOOKKEEPING.contains(&action) {
                    c.calls += 1;
                    calls.insert(id);
                }
                if BOOKKEEPING.contains(&action) && action != "message" {
                    continue;
                }
                let response = &e["tool_call_metadata"]["model_response"];
                let acc = &e["llm_metrics"]["accumulated_token_usage"];
                let reading = (
                    n(acc, "prompt_tokens"),
                    n(acc, "completion_tokens"),
                    n(acc, "cache_read_tokens"),
                    n(acc, "cache_write_tokens"),
                );
                let key = match (response["id"].as_str(), acc.is_object()) {
                    (Some(rid), _) => rid.to_string(),
                    (None, true) => format!("{reading:?}"),
                    (None, false) if !marked => format!("event {id}"),
                    (None, false) => continue,
                };
                if !seen.insert(key) {
                    continue;
                }
                c.turns += 1;
                let usage = &response["usage"];
                if usage.is_object() {
                    c.prompt += n(usage, "prompt_tokens");
                    c.completion += n(usage, "completion_tokens");
                    c.cache_read += n(&usage["prompt_tokens_details"], "cached_tokens");
                    c.cache_write += n(usage, "cache_creation_input_tokens");
                } else if acc.is_object() {
                    c.prompt += reading.0 - last.0;
                    c.completion += reading.1 - last.1;
                    c.cache_read += reading.2 - last.2;
                    c.cache_write += reading.3 - last.3;
                }
                if acc.is_object() {
                    last = reading;
                }
                let model = response["model"]
                    .as_str()
                    .or(acc["model"].as_str())
                    .filter(|m| *m != "default");
                c.models.extend(model.map(str::to_string));
                continue;
            }
        }
        let Some(observation) = e["observation"].as_str() else {
            continue;
        };
        let cause = e["cause"].as_i64();
        if cause.is_some_and(|cause| calls.contains(&cause)) {
            let content = e["content"].as_str().unwrap_or("");
            let extras = &e["extras"];
            let exit = extras["metadata"]["exit_code"]
                .as_i64()
                .or(extras["exit_code"].as_i64());
            let failed = match observation {
                "error" | "user_rejected" => true,
                "run" => exit.is_some_and(|code| code != 0),
                "edit" | "read" | "write" => content.trim_start().starts_with("ERROR:"),
                _ => e["success"] == false,
            };
            c.failures += u64::from(failed);
        } else if observation == "error" && e["source"] == "agent" {
            c.calls += 1;
            c.failures += 1;
        }
    }
    c
}

/// What hindsight imported.
struct Imported {
    counts: Counts,
    /// Fresh input tokens, as imported.
    input: u64,
    /// The recorded cost of its requests.
    cost: f64,
}

/// The same figures, and the fresh input and recorded cost, from what hindsight imported.
fn imported(run: &LoadedRun) -> Imported {
    let mut c = Counts::default();
    let (mut input, mut cost) = (0, 0.0);
    for event in &run.events {
        match &event.kind {
            EventKind::ModelRequest(request) => {
                c.turns += 1;
                let u = request.usage.unwrap_or_default();
                c.prompt += u.prompt();
                c.completion += u.output;
                c.cache_read += u.cache_read;
                c.cache_write += u.cache_write;
                input += u.input;
                c.models.extend(request.model.clone());
                cost += request.cost_usd.unwrap_or(0.0);
            }
            EventKind::ToolCall(_) => c.calls += 1,
            EventKind::ToolResult(r) if !r.success => c.failures += 1,
            _ => {}
        }
    }
    Imported {
        counts: c,
        input,
        cost,
    }
}

/// The last `accumulated_cost` an agent action records: what the run cost, by OpenHands.
fn last_accumulated_cost(events: &[Value]) -> f64 {
    events
        .iter()
        .rev()
        .find_map(|e| e["llm_metrics"]["accumulated_cost"].as_f64())
        .unwrap_or(0.0)
}

/// `output.jsonl`'s lines that parse, by instance id, and the numbers of those that do not.
fn raw_instances() -> (Vec<(String, Value)>, Vec<usize>) {
    let text = std::fs::read_to_string(fixture(OUTPUT)).expect("fixture");
    let (mut good, mut bad) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().enumerate() {
        match serde_json::from_str::<Value>(line) {
            Ok(doc) => good.push((doc["instance_id"].as_str().expect("id").to_string(), doc)),
            Err(_) => bad.push(i + 1),
        }
    }
    (good, bad)
}

/// hindsight's runs of `output.jsonl`, by instance id, read leniently.
fn imported_instances() -> (Vec<(String, LoadedRun)>, openhands::Instances) {
    let limits = Limits::default();
    let path = fixture(OUTPUT);
    let found = openhands::instances(&path, &limits)
        .expect("readable")
        .expect("an evaluation output");
    let runs = found
        .runs
        .iter()
        .map(|instance| {
            let run = openhands::import_line(&path, instance.at, Policy::Lenient, &limits)
                .expect("instance loads");
            (instance.id.clone(), run)
        })
        .collect();
    (runs, found)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// The JSON report gives dollars to the millionth.
fn close_to_report(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.5e-6 + 1e-12
}

#[test]
fn every_history_matches_the_counts_of_its_raw_events() {
    for name in HISTORIES {
        let path = fixture(name);
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let events = events_of(&doc);
        let run = import(&path, "x", InputFormat::Openhands, Policy::Strict).expect("loads");
        let got = imported(&run);
        let want = counts(&events);
        assert_eq!(got.counts, want, "{name}");
        assert_eq!(got.input, want.input(), "{name}: fresh input");
        let recorded = last_accumulated_cost(&events);
        assert!(close(got.cost, recorded), "{name}: {}", got.cost);
    }
}

#[test]
fn every_instance_of_an_evaluation_output_matches_its_line() {
    let (raw, bad) = raw_instances();
    assert_eq!(bad, [CUT_LINE]);
    let (runs, found) = imported_instances();
    let ids: Vec<&str> = runs.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, INSTANCES, "one run per line, named by instance_id");
    assert_eq!(raw.len(), runs.len());
    // The cut line is skipped and counted, located by file and line.
    assert_eq!(found.problems.len(), 1);
    assert_eq!(found.problems[0].line, Some(CUT_LINE as u64));
    assert!(found.problems[0].path.ends_with(OUTPUT));
    for ((id, doc), (run_id, run)) in raw.iter().zip(&runs) {
        assert_eq!(id, run_id);
        let events = events_of(doc);
        let want = counts(&events);
        let Imported {
            counts: got,
            input,
            cost,
        } = imported(run);
        assert_eq!(got, want, "{id}");
        assert_eq!(input, want.input(), "{id}: fresh input");
        assert_eq!(run.problems.count, 0, "{id}");

        // OpenHands' own record of the run agrees: one `token_usages` entry per request
        // (a rejected call's response has none), and its cumulative totals and cost.
        let metrics = &doc["metrics"];
        let usages = metrics["token_usages"].as_array().expect("token_usages");
        assert_eq!(usages.len() as u64, got.turns, "{id}");
        let sum = |key: &str| usages.iter().map(|u| n(u, key)).sum::<u64>();
        assert_eq!(
            (
                sum("prompt_tokens"),
                sum("completion_tokens"),
                sum("cache_read_tokens"),
                sum("cache_write_tokens")
            ),
            (got.prompt, got.completion, got.cache_read, got.cache_write),
            "{id}"
        );
        let total = &metrics["accumulated_token_usage"];
        assert_eq!(
            (n(total, "prompt_tokens"), n(total, "completion_tokens")),
            (got.prompt, got.completion),
            "{id}"
        );
        let recorded = metrics["accumulated_cost"].as_f64().expect("cost");
        assert!(close(cost, recorded), "{id}: {cost} against {recorded}");
    }
}

#[test]
fn the_fixture_holds_what_it_was_written_for() {
    let (raw, _) = raw_instances();
    let by_id: HashMap<&str, Counts> = raw
        .iter()
        .map(|(id, doc)| (id.as_str(), counts(&events_of(doc))))
        .collect();
    let calc = &by_id["acme__calc-7"];
    // Five responses, one of them with two parallel reads; the first test run failed.
    assert_eq!((calc.turns, calc.calls, calc.failures), (5, 6, 1));
    assert!(calc.cache_write > 0 && calc.cache_read > 0);
    let semver = &by_id["acme__semver-12"];
    // Six responses and the rejected one (no action, no usage): seven calls, three failed
    // (the stale edit, the rejected call, the last test run).
    assert_eq!((semver.turns, semver.calls, semver.failures), (6, 7, 3));
    assert_eq!(semver.cache_write, 0);
    let slug = &by_id["slug__slugify-3"];
    assert_eq!((slug.turns, slug.calls, slug.failures), (5, 5, 2));
    // Each instance names its own model.
    let models: Vec<&BTreeSet<String>> = INSTANCES.iter().map(|id| &by_id[id].models).collect();
    assert_eq!(
        models,
        [
            &BTreeSet::from(["claude-sonnet-4-20250514".to_string()]),
            &BTreeSet::from(["deepseek-chat".to_string()]),
            &BTreeSet::from(["openai/qwen2.5-coder-32b-instruct".to_string()]),
        ]
    );
    // The rejected call is named as such and failed.
    let (runs, _) = imported_instances();
    let semver = &runs[1].1;
    let rejected: Vec<bool> = semver
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(c) if c.tool == openhands::REJECTED => Some(c.call_id.clone()),
            _ => None,
        })
        .map(|id| {
            semver.events.iter().any(
                |e| matches!(&e.kind, EventKind::ToolResult(r) if r.call_id == id && !r.success),
            )
        })
        .collect();
    assert_eq!(rejected, [true]);
}

#[test]
fn the_report_names_each_instance_and_gives_its_own_figures() {
    let out = common::hindsight()
        .args(["replay", &format!("{DIR}/{OUTPUT}"), "--format", "json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{OUTPUT}:{CUT_LINE}")), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["input"]["skipped"], 1);
    let problems = report["input"]["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0]
            .as_str()
            .unwrap()
            .contains(&format!("{DIR}/{OUTPUT}:{CUT_LINE}: invalid JSON")),
        "{problems:?}"
    );
    let runs = report["runs"].as_array().expect("runs");
    let (raw, _) = raw_instances();
    assert_eq!(runs.len(), raw.len());
    for (id, doc) in &raw {
        let run = runs
            .iter()
            .find(|r| r["run_id"] == id.as_str())
            .unwrap_or_else(|| panic!("{id} replayed"));
        assert_eq!(run["project"], format!("{DIR}/output/{id}"));
        let want = counts(&events_of(doc));
        assert_eq!(run["turns"], want.turns, "{id}");
        assert_eq!(run["tokens_total"], want.prompt + want.completion, "{id}");
        assert_eq!(run["tokens_estimated"], 0, "{id}");
        let kinds = &run["tokens_by_kind"];
        assert_eq!(
            [
                &kinds["input"],
                &kinds["cache_write"],
                &kinds["cache_read"],
                &kinds["output"],
                &kinds["unknown"]
            ],
            [
                want.input(),
                want.cache_write,
                want.cache_read,
                want.completion,
                0
            ],
            "{id}"
        );
        // A recorded cost is the run's cost; a model OpenHands could not price (cost 0)
        // is unpriced, not free.
        let recorded = doc["metrics"]["accumulated_cost"].as_f64().unwrap();
        if recorded > 0.0 {
            let usd = run["cost_usd"].as_f64().expect("cost");
            assert!(
                close_to_report(usd, recorded),
                "{id}: {usd} against {recorded}"
            );
            let logged = run["cost_recorded_usd"].as_f64().unwrap();
            assert!(close_to_report(logged, recorded), "{id}: {logged}");
        } else {
            assert_eq!(run["cost_usd"], Value::Null, "{id}");
            assert_eq!(
                run["unpriced_models"],
                serde_json::json!(want.models),
                "{id}"
            );
        }
    }
}

#[test]
fn a_cut_line_is_an_error_under_strict() {
    let out = common::hindsight()
        .args([
            "replay",
            &format!("{DIR}/{OUTPUT}"),
            "--format",
            "json",
            "--strict",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{DIR}/{OUTPUT}:{CUT_LINE}: invalid JSON")),
        "{stderr}"
    );
}
