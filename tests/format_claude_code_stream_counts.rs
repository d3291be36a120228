//! Claude Code stream-json figures (issue #30, item 5) checked against counts taken in this
//! file from the raw fixture lines with serde_json, never through hindsight: requests, tool
//! calls per thread, failed calls, tokens by kind and the recorded cost.

use hindsight::ingest::formats::{import, InputFormat};
use hindsight::ingest::{LoadedRun, Policy};
use hindsight::model::EventKind;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/claude_code_stream";

fn streams() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR);
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixture folder")
        .flatten()
        .map(|e| e.path())
        .collect();
    out.sort();
    assert!(out.len() >= 2, "{out:?}");
    out
}

/// What a stream holds.
#[derive(Debug, PartialEq)]
struct Counts {
    /// Distinct `message.id`s of assistant lines.
    requests: usize,
    /// `tool_use` items per thread: `main`, or the `parent_tool_use_id`.
    calls: BTreeMap<String, usize>,
    /// `tool_result` items with `is_error: true`, or answering a `Bash` call with an
    /// `Exit code N` first line, N not 0.
    failed: usize,
    /// Per message id, the largest of each usage field over its lines; summed: input,
    /// cache write, of it the 1-hour tier, cache read, output.
    tokens: [u64; 5],
    /// `total_cost_usd` of the `result` lines.
    cost: f64,
}

const FIELDS: [&str; 5] = [
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_creation.ephemeral_1h_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
];

fn field(usage: &Value, path: &str) -> u64 {
    path.split('.')
        .try_fold(usage, |v, k| v.get(k))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

fn raw_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture line"))
        .collect()
}

fn counts(path: &Path) -> Counts {
    let mut usage: HashMap<String, [u64; 5]> = HashMap::new();
    let mut calls: BTreeMap<String, usize> = BTreeMap::new();
    let (mut bash, mut failed, mut cost) = (HashSet::new(), 0, 0.0);
    for line in raw_lines(path) {
        let thread = line["parent_tool_use_id"]
            .as_str()
            .unwrap_or("main")
            .to_string();
        let items = line["message"]["content"].as_array().cloned();
        match line["type"].as_str() {
            Some("assistant") => {
                let id = line["message"]["id"].as_str().unwrap().to_string();
                let seen = usage.entry(id).or_default();
                for (i, f) in FIELDS.iter().enumerate() {
                    seen[i] = seen[i].max(field(&line["message"]["usage"], f));
                }
                for item in items.unwrap_or_default() {
                    if item["type"] == "tool_use" {
                        *calls.entry(thread.clone()).or_default() += 1;
                        if item["name"] == "Bash" {
                            bash.insert(item["id"].as_str().unwrap().to_string());
                        }
                    }
                }
            }
            Some("user") => {
                for item in items.unwrap_or_default() {
                    let text = item["content"].as_str().unwrap_or("");
                    let exit = text
                        .strip_prefix("Exit code ")
                        .and_then(|t| t.lines().next())
                        .is_some_and(|n| n.trim() != "0");
                    let is_bash = item["tool_use_id"]
                        .as_str()
                        .is_some_and(|i| bash.contains(i));
                    if item["type"] == "tool_result"
                        && (item["is_error"] == true || (is_bash && exit))
                    {
                        failed += 1;
                    }
                }
            }
            Some("result") => cost += line["total_cost_usd"].as_f64().unwrap_or(0.0),
            _ => {}
        }
    }
    let mut tokens = [0; 5];
    for u in usage.values() {
        for i in 0..5 {
            tokens[i] += u[i];
        }
    }
    Counts {
        requests: usage.len(),
        calls,
        failed,
        tokens,
        cost,
    }
}

fn imported(run: &LoadedRun) -> Counts {
    let mut calls: BTreeMap<String, usize> = BTreeMap::new();
    let (mut requests, mut failed, mut tokens, mut cost) = (0, 0, [0; 5], 0.0);
    for event in &run.events {
        match &event.kind {
            EventKind::ModelRequest(r) => {
                requests += 1;
                cost += r.cost_usd.unwrap_or(0.0);
                if let Some(u) = r.usage {
                    let kinds = [
                        u.input,
                        u.cache_write,
                        u.cache_write_1h,
                        u.cache_read,
                        u.output,
                    ];
                    for (total, n) in tokens.iter_mut().zip(kinds) {
                        *total += n;
                    }
                }
            }
            EventKind::ToolCall(_) => {
                let thread = match event.at.agent.strip_prefix("sidechain:") {
                    Some(call) => call.to_string(),
                    None => event.at.agent.clone(),
                };
                *calls.entry(thread).or_default() += 1;
            }
            EventKind::ToolResult(r) if !r.success => failed += 1,
            _ => {}
        }
    }
    Counts {
        requests,
        calls,
        failed,
        tokens,
        cost,
    }
}

#[test]
fn stream_figures_equal_counts_from_the_raw_lines() {
    for path in streams() {
        let run = import(&path, "s", InputFormat::ClaudeCodeStream, Policy::Strict)
            .expect("loads strictly");
        let (mut got, mut want) = (imported(&run), counts(&path));
        assert!((got.cost - want.cost).abs() < 1e-12, "{path:?}");
        (got.cost, want.cost) = (0.0, 0.0);
        assert_eq!(got, want, "{path:?}");
    }
}

#[test]
fn the_result_usage_cross_checks_the_message_usage() {
    // The `result` line's usage is the harness's sum of the messages' (sub-agents
    // included): in these fixtures it equals the count, which is what hindsight reads.
    for path in streams() {
        let result = raw_lines(&path)
            .into_iter()
            .find(|l| l["type"] == "result")
            .expect("a result line");
        let want = counts(&path).tokens;
        let listed = [0, 1, 3, 4].map(|i| field(&result["usage"], FIELDS[i]));
        assert_eq!(listed, [want[0], want[1], want[3], want[4]], "{path:?}");
    }
}
