//! Gemini CLI figures checked against counts taken in this file from the raw fixtures
//! (issue #30, item 3): requests, tool calls, failed calls, tokens by kind and agent threads
//! of every chat under `tests/fixtures/formats/gemini_cli/`. The counts below read the JSON
//! with serde_json directly, never through hindsight.

mod common;

use hindsight::ingest::formats::InputFormat;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const ROOT: &str = "tests/fixtures/formats/gemini_cli";

fn chats() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join(ROOT), &mut out);
    out.sort();
    assert_eq!(out.len(), 3, "{out:?}");
    out
}

use common::RunCounts as Counts;

/// The messages a file ends with, and whether it is a sub-agent's. The JSONL form is
/// replayed here with an id → message map and a list of ids in first-seen order: a
/// `$rewindTo` cuts the list at that id (all of it when absent).
fn messages(path: &Path) -> (Vec<Value>, bool) {
    let text = std::fs::read_to_string(path).expect("read");
    if let Ok(doc) = serde_json::from_str::<Value>(&text) {
        let sub = doc["kind"] == "subagent";
        return (doc["messages"].as_array().cloned().unwrap_or_default(), sub);
    }
    let (mut order, mut by_id) = (Vec::<String>::new(), HashMap::<String, Value>::new());
    let mut sub = false;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).expect("fixture line is JSON");
        if let Some(to) = v["$rewindTo"].as_str() {
            let cut = order.iter().position(|id| id == to).unwrap_or(0);
            order.truncate(cut);
        } else if let Some(id) = v["id"].as_str() {
            if !by_id.contains_key(id) || !order.iter().any(|o| o == id) {
                order.push(id.to_string());
            }
            by_id.insert(id.to_string(), v.clone());
        } else if v.get("sessionId").is_some() {
            sub = v["kind"] == "subagent";
        }
    }
    (order.iter().map(|id| by_id[id].clone()).collect(), sub)
}

/// Counted from the raw record: one request per `gemini` message, its `tokens` split into
/// fresh input (`input - cached + tool`), cache reads (`cached`) and output (`output +
/// thoughts`); a call per `toolCalls` entry, failed when its `status` is `error` or
/// `cancelled`, or when a `run_shell_command`'s output has `Exit Code: N`, N not 0.
fn counts(path: &Path) -> Counts {
    let (messages, sub) = messages(path);
    let mut c = Counts::default();
    for m in messages.iter().filter(|m| m["type"] == "gemini") {
        c.requests += 1;
        c.threads
            .insert(if sub { "subagent" } else { "main" }.to_string());
        let t = &m["tokens"];
        let n = |k: &str| t[k].as_u64().unwrap_or(0);
        c.tokens[0] += n("input") - n("cached") + n("tool");
        c.tokens[1] += n("cached");
        c.tokens[2] += n("output") + n("thoughts");
        for call in m["toolCalls"].as_array().into_iter().flatten() {
            c.calls += 1;
            let status = call["status"].as_str().unwrap_or("success");
            let raw = call["result"].to_string();
            let nonzero = call["name"] == "run_shell_command"
                && raw.contains("Exit Code: ")
                && !raw.contains("Exit Code: 0");
            if status == "error" || status == "cancelled" || nonzero {
                c.failed += 1;
            }
        }
    }
    c
}

#[test]
fn every_chat_matches_its_raw_counts() {
    common::assert_runs_match_raw_counts(&chats(), InputFormat::GeminiCli, counts);
}

#[test]
fn the_counts_are_the_expected_ones() {
    // A guard against a count function that agrees with a wrong importer by accident.
    let all: Vec<(u64, u64, u64, [u64; 3])> = chats()
        .iter()
        .map(|p| {
            let c = counts(p);
            (c.requests, c.calls, c.failed, c.tokens)
        })
        .collect();
    assert_eq!(
        all,
        [
            // The sub-agent's chat, then the conversation as JSON and as JSONL.
            (2, 2, 1, [1050, 850, 32]),
            (4, 8, 3, [1512, 4300, 165]),
            (4, 8, 3, [1512, 4300, 165]),
        ]
    );
}
