//! mini-swe-agent figures checked against counts taken in this file from the raw fixture
//! documents (issue #12): turns, calls, failures, recorded tokens by kind and recorded
//! cost of every trajectory in `tests/fixtures/formats/mini_swe_agent/`. The counts below
//! read the JSON directly with serde_json, never through hindsight.
//!
//! How each figure is counted from a trajectory's `messages`:
//!
//! - **Turns**: the model responses the trajectory records: assistant messages (`role:
//!   assistant`, or a Responses API item with `object: response`), plus the `user` messages
//!   marked `extra.interrupt_type: FormatError` that do not come right after an assistant
//!   message (2.x saves only the error of a response it could not parse; after an assistant
//!   message, that message was the response).
//! - **Calls**: the actions of those assistant messages: the `extra.actions` entries, else
//!   the `tool_calls`, else one for a text response with exactly one ```` ```bash ````
//!   block. An action whose command carries the submission marker ends the run, so it is a
//!   call only when a `tool` message answers it or another assistant message follows.
//! - **Failures**: `tool` messages whose `extra.returncode` is not 0; in the text-based
//!   layout, the `user` message right after a one-block response (not the submission)
//!   whose text has no `<returncode>0</returncode>`.
//! - **Tokens**: per turn, the usage object at `extra.response.usage` (else `usage`, else
//!   `extra.usage`). Cache reads are `prompt_tokens_details.cached_tokens`; cache writes
//!   `prompt_tokens_details.cache_creation_tokens` or `cache_creation_input_tokens`; fresh
//!   input is the rest of `prompt_tokens`; output is `completion_tokens`. Where DeepSeek also
//!   writes `prompt_cache_miss_tokens`, the fresh input must equal it.
//! - **Cost**: the `extra.cost` of those messages, where it is above 0 (a saved 0 is a
//!   harness that could not price the model).

mod common;

use hindsight::ingest::formats::{import, InputFormat};
use hindsight::ingest::{LoadedRun, Policy};
use hindsight::model::{EventKind, TokenSource};
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/mini_swe_agent";
const MARKERS: [&str; 2] = [
    "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    "MINI_SWE_AGENT_FINAL_OUTPUT",
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR)
}

/// Every trajectory of the fixture folder, by run id.
fn trajectories() -> Vec<(String, PathBuf)> {
    let out = common::fixture_files(DIR, ".traj.json");
    assert_eq!(out.len(), 4, "{out:?}");
    out
}

fn load(path: &Path) -> LoadedRun {
    import(path, "t", InputFormat::MiniSweAgent, Policy::Strict).expect("loads strictly")
}

#[derive(Debug, Default, PartialEq)]
struct Counts {
    turns: u64,
    calls: u64,
    failures: u64,
    /// Turns with a recorded usage.
    with_usage: u64,
    /// input, cache write, cache read, output.
    by_kind: [u64; 4],
    /// Turns with a recorded cost, and its sum in US dollars.
    costed: u64,
    cost_usd: f64,
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().or(p.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The commands of the ```` ```bash ```` blocks of a text response.
fn bash_blocks(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for fence in ["```bash\n", "```mswea_bash_command\n"] {
        for piece in content.split(fence).skip(1) {
            if let Some(end) = piece.find("\n```") {
                out.push(piece[..end].to_string());
            }
        }
    }
    out
}

fn counts(path: &Path) -> Counts {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let messages = doc["messages"].as_array().expect("messages");
    let mut c = Counts::default();
    let is_assistant = |m: &Value| m["role"] == "assistant" || m["object"] == "response";
    let answered: HashSet<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    let request = |m: &Value, c: &mut Counts| {
        c.turns += 1;
        let extra = &m["extra"];
        let usage = [&extra["response"]["usage"], &m["usage"], &extra["usage"]]
            .into_iter()
            .find(|u| u.is_object());
        if let Some(u) = usage {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            let prompt = n(&u["prompt_tokens"]);
            let read = n(&u["prompt_tokens_details"]["cached_tokens"]);
            let write = n(&u["prompt_tokens_details"]["cache_creation_tokens"])
                .max(n(&u["cache_creation_input_tokens"]));
            let input = prompt - read - write;
            if let Some(miss) = u["prompt_cache_miss_tokens"].as_u64() {
                assert_eq!(input, miss, "{}", path.display());
            }
            c.with_usage += 1;
            let kinds = [input, write, read, n(&u["completion_tokens"])];
            for (sum, k) in c.by_kind.iter_mut().zip(kinds) {
                *sum += k;
            }
        }
        if let Some(cost) = extra["cost"].as_f64().filter(|c| *c > 0.0) {
            c.costed += 1;
            c.cost_usd += cost;
        }
    };
    for (i, m) in messages.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| &messages[p]);
        let later_response = messages[i + 1..].iter().any(is_assistant);
        if is_assistant(m) {
            request(m, &mut c);
            let actions: Vec<(Option<&str>, String)> = match m["extra"]["actions"].as_array() {
                Some(list) => list
                    .iter()
                    .map(|a| (a["tool_call_id"].as_str(), text(&a["command"])))
                    .collect(),
                None => match m["tool_calls"].as_array() {
                    Some(calls) => calls
                        .iter()
                        .map(|t| (t["id"].as_str(), text(&t["function"]["arguments"])))
                        .collect(),
                    None => {
                        let blocks = bash_blocks(&text(&m["content"]));
                        if blocks.len() == 1 {
                            vec![(None, blocks[0].clone())]
                        } else {
                            Vec::new()
                        }
                    }
                },
            };
            for (id, command) in actions {
                let submit = MARKERS.iter().any(|k| command.contains(k));
                let ran = id.is_some_and(|id| answered.contains(id)) || later_response;
                if !submit || ran {
                    c.calls += 1;
                }
            }
        } else if m["role"] == "tool" {
            if m["extra"]["returncode"].as_i64() != Some(0) {
                c.failures += 1;
            }
        } else if m["role"] == "user" {
            let after_response = previous.is_some_and(is_assistant);
            if m["extra"]["interrupt_type"] == "FormatError" {
                if !after_response {
                    request(m, &mut c);
                }
                continue;
            }
            // The text-based layout: the observation of a one-block response.
            let Some(prev) = previous.filter(|p| p["role"] == "assistant") else {
                continue;
            };
            let blocks = bash_blocks(&text(&prev["content"]));
            let submit = blocks.len() == 1 && MARKERS.iter().any(|k| blocks[0].contains(k));
            if prev["tool_calls"].is_null()
                && prev["extra"]["actions"].is_null()
                && blocks.len() == 1
                && !submit
                && !text(&m["content"]).contains("<returncode>0</returncode>")
            {
                c.failures += 1;
            }
        }
    }
    c
}

/// The same figures, from what hindsight imported.
fn imported(run: &LoadedRun) -> Counts {
    let mut c = Counts::default();
    for event in &run.events {
        match &event.kind {
            EventKind::ModelRequest(r) => {
                c.turns += 1;
                if let Some(u) = r.usage {
                    assert_eq!(u.source, TokenSource::Recorded);
                    c.with_usage += 1;
                    let kinds = [u.input, u.cache_write, u.cache_read, u.output];
                    for (sum, k) in c.by_kind.iter_mut().zip(kinds) {
                        *sum += k;
                    }
                }
                if let Some(cost) = r.cost_usd {
                    c.costed += 1;
                    c.cost_usd += cost;
                }
            }
            EventKind::ToolCall(_) => c.calls += 1,
            EventKind::ToolResult(r) if !r.success => c.failures += 1,
            _ => {}
        }
    }
    c
}

#[test]
fn every_trajectory_matches_the_counts_of_its_raw_document() {
    for (name, path) in trajectories() {
        let expected = counts(&path);
        assert_eq!(imported(&load(&path)), expected, "{name}");
        assert!(expected.turns > 0 && expected.calls > 0, "{name}");
    }
}

#[test]
fn the_fixtures_hold_what_they_were_written_for() {
    let of = |name: &str| counts(&dir().join(format!("{name}.traj.json")));
    let looping = of("acme__inventory-17");
    assert_eq!(
        (looping.turns, looping.calls, looping.failures),
        (12, 12, 6)
    );
    assert!(looping.by_kind[2] > 0, "DeepSeek's cache reads");
    let text = of("acme__ledger-8");
    assert_eq!((text.turns, text.calls, text.failures), (6, 4, 1));
    assert_eq!(text.costed, 0, "1.0 saved no cost per response");
    // Two format errors: one kept its response, one did not; one cost was saved as 0.
    let cached = of("acme__wallet-5");
    assert_eq!(
        (
            cached.turns,
            cached.with_usage,
            cached.calls,
            cached.failures
        ),
        (7, 6, 4, 1)
    );
    assert_eq!(cached.costed, 5);
    assert!(cached.by_kind[1] > 0 && cached.by_kind[2] > 0);
}

#[test]
fn the_report_gives_each_run_the_tokens_and_cost_of_its_raw_document() {
    let report = common::json_report(&["replay", DIR, "--format", "json", "--strict"]);
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), trajectories().len());
    for (name, path) in trajectories() {
        let run = runs
            .iter()
            .find(|r| r["run_id"] == name.as_str())
            .expect("a run per trajectory");
        let expected = counts(&path);
        assert_eq!(run["turns"], expected.turns, "{name}");
        let recorded: u64 = expected.by_kind.iter().sum();
        assert_eq!(run["tokens_recorded"], recorded, "{name}");
        let kinds = &run["tokens_by_kind"];
        let shown = ["input", "cache_write", "cache_read", "output"].map(|k| kinds[k].as_u64());
        assert_eq!(shown, expected.by_kind.map(Some), "{name}");
        // Every turn without usage is an estimate.
        let estimated = run["tokens_estimated"].as_u64().unwrap();
        assert_eq!(
            estimated > 0,
            expected.turns > expected.with_usage,
            "{name}"
        );
        // The report shows dollars to the micro-dollar.
        let cost = run["cost_recorded_usd"].as_f64().unwrap();
        assert!((cost - expected.cost_usd).abs() < 1e-6, "{name}: {cost}");
    }
}
