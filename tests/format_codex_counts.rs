//! Codex figures checked against counts taken in this file from the raw fixture lines
//! (issue #30, item 1): requests after de-duplication, tool calls, failed calls, tokens by
//! kind and agent threads of every rollout under `tests/fixtures/formats/codex/`. The
//! counts below read the JSON with serde_json directly, never through hindsight.

mod common;

use hindsight::ingest::formats::InputFormat;
use serde_json::Value;

use std::path::{Path, PathBuf};

const ROOT: &str = "tests/fixtures/formats/codex";

fn rollouts() -> Vec<PathBuf> {
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

/// Counted from the raw lines: in a file with `token_count` rows, one request per row
/// whose `total_token_usage` differs from the previous row's, its `last_token_usage`
/// split into fresh input (`input - cached`), cache reads and output; without rows (the
/// envelope-less form), one request per assistant turn (a run of model output items
/// ended by a tool output). Lines written with a copied parent `session_meta` (within a
/// second of it) are the parent's and count nothing. A call is a `function_call`,
/// `custom_tool_call` or `local_shell_call`; it failed when its output's
/// `metadata.exit_code` (or a first line `Exit code: N`) is not 0.
fn counts(path: &Path) -> Counts {
    let text = std::fs::read_to_string(path).expect("read");
    let rows: Vec<Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("fixture line is JSON"))
        .collect();
    let own = rows[0]["payload"]["id"].as_str().map(str::to_string);
    let seconds = |t: &str| -> i64 {
        // Same day in every fixture: seconds of the day are enough here.
        let n = |r: std::ops::Range<usize>| t[r].parse::<i64>().unwrap();
        n(11..13) * 3600 + n(14..16) * 60 + n(17..19)
    };
    let mut c = Counts::default();
    let mut copy_until: Option<i64> = None;
    let mut previous: Option<Value> = None;
    let with_rows = rows.iter().any(|r| r["payload"]["type"] == "token_count");
    let mut answered = true;
    for row in &rows {
        let (p, kind) = match row.get("payload") {
            Some(p) => (p, row["type"].as_str().unwrap()),
            None => (row, "response_item"),
        };
        if let Some(t) = row["timestamp"].as_str() {
            if row["type"] == "session_meta" && p["id"].as_str().map(str::to_string) != own {
                copy_until = Some(seconds(t) + 1);
            } else if copy_until.is_some_and(|until| seconds(t) > until) {
                copy_until = None;
            }
        }
        let copied = copy_until.is_some();
        if kind == "event_msg" && p["type"] == "token_count" && !p["info"].is_null() {
            let total = p["info"]["total_token_usage"].clone();
            if previous.as_ref() != Some(&total) && !copied {
                let last = &p["info"]["last_token_usage"];
                let n = |k: &str| last[k].as_u64().unwrap_or(0);
                c.requests += 1;
                c.tokens[0] += n("input_tokens") - n("cached_input_tokens");
                c.tokens[1] += n("cached_input_tokens");
                c.tokens[2] += n("output_tokens");
            }
            previous = Some(total);
        }
        if kind != "response_item" || copied {
            continue;
        }
        let item = p["type"].as_str().unwrap_or("");
        let output = [
            "reasoning",
            "function_call",
            "custom_tool_call",
            "local_shell_call",
        ]
        .contains(&item)
            || (item == "message" && p["role"] == "assistant");
        if output && !with_rows && answered {
            c.requests += 1;
            c.threads.insert("main".into());
        }
        if output {
            answered = false;
        }
        if ["function_call", "custom_tool_call", "local_shell_call"].contains(&item) {
            c.calls += 1;
        }
        if item.ends_with("_output") {
            answered = true;
            let out = p["output"].as_str().unwrap_or("");
            let code = match serde_json::from_str::<Value>(out) {
                Ok(v) if v.get("metadata").is_some() => v["metadata"]["exit_code"].as_i64(),
                _ => out
                    .lines()
                    .next()
                    .and_then(|l| l.strip_prefix("Exit code: "))
                    .and_then(|c| c.parse().ok()),
            };
            if code.is_some_and(|c| c != 0) {
                c.failed += 1;
            }
        }
    }
    if c.requests > 0 {
        c.threads.insert("main".into());
    }
    c
}

#[test]
fn every_rollout_matches_its_raw_counts() {
    common::assert_runs_match_raw_counts(&rollouts(), InputFormat::Codex, counts);
}

#[test]
fn the_counts_are_the_expected_ones() {
    // A guard against a count function that agrees with a wrong importer by accident.
    let all: Vec<(u64, u64, u64, [u64; 3])> = rollouts()
        .iter()
        .map(|p| {
            let c = counts(p);
            (c.requests, c.calls, c.failed, c.tokens)
        })
        .collect();
    assert_eq!(
        all,
        [
            (7, 7, 2, [8484, 18816, 1130]),
            (1, 1, 1, [704, 4096, 300]),
            (2, 1, 1, [0, 0, 0]),
        ]
    );
}
