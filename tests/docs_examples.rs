//! The worked examples of the docs, replayed: docs/FORMAT.md's example run (its events and
//! its frame, read out of the document itself) gives every figure docs/COUNTERFACTUAL.md
//! derives from it by hand; and one run priced from a `--prices` file matches the dollars
//! worked out here from that file (issue #12: "a test checks one run's cost by hand from the
//! price file").

mod common;

use assert_cmd::Command;
use common::doc_block;
use serde_json::Value;
use std::path::Path;

/// An omnius project with one run holding `events`, a frame and an open ledger.
fn omnius_run(dir: &Path, events: &str, frame: Option<&str>) {
    let run = dir.join("p/.omnius/runs/1783200000000-ab12cd");
    std::fs::create_dir_all(run.join("context")).unwrap();
    std::fs::write(run.join("events.jsonl"), events).unwrap();
    if let Some(frame) = frame {
        std::fs::write(run.join("context/frame-0003.json"), frame).unwrap();
    }
    std::fs::write(run.join("completion-ledger.json"), r#"{"status":"open"}"#).unwrap();
}

fn replay(dir: &Path, extra: &[&str]) -> Value {
    let out = Command::cargo_bin("hindsight")
        .unwrap()
        .arg("replay")
        .arg(dir)
        .args(["--format", "json"])
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

fn close(actual: &Value, expected: f64) {
    let actual = actual.as_f64().expect("a dollar figure");
    assert!(
        (actual - expected).abs() < 1e-9,
        "{actual} != {expected} (dollars)"
    );
}

#[test]
fn the_format_example_costs_what_counterfactual_md_works_out() {
    let format = std::fs::read_to_string("docs/FORMAT.md").unwrap();
    let dir = tempfile::tempdir().unwrap();
    omnius_run(
        dir.path(),
        doc_block(&format, "### Example\n", "jsonl"),
        Some(doc_block(&format, "### Example frame\n", "json")),
    );
    let report = replay(dir.path(), &[]);
    let run = &report["runs"][0];
    // docs/COUNTERFACTUAL.md, *What a request cost*: turn 0 is no request; 1280 recorded,
    // 39 estimated from 153 carried characters, 1420 recorded (the frame not used).
    assert_eq!(run["turns"], 3);
    assert_eq!(run["tokens_total"], 2739);
    assert_eq!(run["tokens_recorded"], 2700);
    assert_eq!(run["tokens_estimated"], 39);
    let kinds = &run["tokens_by_kind"];
    assert_eq!(
        [
            &kinds["input"],
            &kinds["cache_write"],
            &kinds["cache_read"],
            &kinds["output"],
            &kinds["unknown"]
        ],
        [1580, 0, 1000, 120, 39]
    );
    // *Money*: 4,800 + 117 + 2,040 micro-dollars at the built-in Sonnet prices.
    close(&run["cost_usd"], 0.006957);
    assert_eq!(run["cost_unpriced_tokens"], 0);
    // *Worked example*: the fold saves 126 tokens at 1,440 µ$ / 1,380 prompt tokens.
    assert_eq!(run["savings"]["combined"], 126);
    assert_eq!(run["savings"]["by_guard"]["evidence_folding"], 126);
    close(&run["savings"]["cost_saved_usd"]["combined"], 0.000131);
    assert_eq!(run["savings"]["cut_at_turn"], Value::Null);
}

/// A run of two models, one priced only by the file, one overridden by it, one estimated
/// request and one with a recorded cost: every rule of *Money* in one run.
const PRICED_RUN: &str = r#"{"type":"session_start","turn":0,"seq":1,"cwd":"/w"}
{"type":"model_usage","turn":1,"seq":2,"promptTokens":10000,"cacheReadTokens":8000,"cacheWriteTokens":1000,"completionTokens":500,"model":"acme/coder-large"}
{"type":"tool_call","turn":1,"seq":3,"callId":"a","tool":"shell","args":{"command":"ls"}}
{"type":"tool_result","turn":1,"seq":4,"callId":"a","success":true,"output":"src"}
{"type":"model_usage","turn":2,"seq":5,"promptTokens":4000,"completionTokens":100,"model":"claude-sonnet-4-5"}
{"type":"model_usage","turn":3,"seq":6,"promptTokens":2000,"completionTokens":50,"model":"coder-large","costUsd":0.5}
{"type":"model_usage","turn":4,"seq":7,"promptTokens":1000,"completionTokens":10,"model":"mystery-model"}
"#;

const PRICES: &str = r#"{
  "sample_spec": {"max_tokens": "set to max output tokens"},
  "coder-large": {"input_cost_per_token": 2e-6, "output_cost_per_token": 8e-6,
                  "cache_creation_input_token_cost": 2.5e-6, "cache_read_input_token_cost": 2e-7},
  "claude-sonnet-4-5": {"input_cost_per_token": 1e-6, "output_cost_per_token": 5e-6}
}"#;

#[test]
fn one_runs_cost_worked_out_by_hand_from_the_price_file() {
    let dir = tempfile::tempdir().unwrap();
    omnius_run(dir.path(), PRICED_RUN, None);
    let prices = dir.path().join("prices.json");
    std::fs::write(&prices, PRICES).unwrap();
    let report = replay(dir.path(), &["--prices", prices.to_str().unwrap()]);
    let run = &report["runs"][0];
    // Turn 1, `acme/coder-large` found without its prefix: 1,000 fresh input at $2/M,
    // 1,000 cache writes at $2.5/M, 8,000 cache reads at $0.2/M, 500 output at $8/M.
    let turn1 = 1000.0 * 2e-6 + 1000.0 * 2.5e-6 + 8000.0 * 2e-7 + 500.0 * 8e-6;
    // Turn 2: the file's Sonnet price replaces the built-in one; no cache price given, so
    // none is used (all 4,000 prompt tokens are fresh input here anyway).
    let turn2 = 4000.0 * 1e-6 + 100.0 * 5e-6;
    // Turn 3: the recorded cost wins over the table.
    let turn3 = 0.5;
    // Turn 4: no price anywhere: unpriced, not free.
    close(&run["cost_usd"], turn1 + turn2 + turn3);
    close(&run["cost_recorded_usd"], 0.5);
    assert_eq!(run["cost_unpriced_tokens"], 1010);
    assert_eq!(run["unpriced_models"], serde_json::json!(["mystery-model"]));
    assert_eq!(run["tokens_total"], 10500 + 4100 + 2050 + 1010);
    assert_eq!(run["tokens_by_kind"]["cache_read"], 8000);
    assert_eq!(run["tokens_by_kind"]["cache_write"], 1000);
    assert_eq!(run["tokens_by_kind"]["input"], 1000 + 4000 + 2000 + 1000);
    // Without the file, `coder-large` has no price: its requests are unpriced, the
    // recorded cost still counts, Sonnet is priced at the built-in list price.
    let built_in = replay(dir.path(), &[]);
    let run = &built_in["runs"][0];
    close(&run["cost_usd"], 0.5 + 4000.0 * 3e-6 + 100.0 * 15e-6);
    assert_eq!(run["cost_unpriced_tokens"], 10500 + 1010);
    assert_eq!(
        run["unpriced_models"],
        serde_json::json!(["acme/coder-large", "mystery-model"])
    );
}

#[test]
fn a_price_file_with_a_bad_price_names_the_file_model_and_field() {
    let dir = tempfile::tempdir().unwrap();
    omnius_run(dir.path(), PRICED_RUN, None);
    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"coder-large": {"input_cost_per_token": "cheap", "output_cost_per_token": 1e-6}}"#,
    )
    .unwrap();
    let out = Command::cargo_bin("hindsight")
        .unwrap()
        .arg("replay")
        .arg(dir.path())
        .args(["--prices", prices.to_str().unwrap()])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8_lossy(&out);
    assert!(stderr.contains("prices.json"), "{stderr}");
    assert!(stderr.contains("coder-large"), "{stderr}");
    assert!(stderr.contains("input_cost_per_token"), "{stderr}");
}
