//! The real labelled corpus (`corpora/real/mini-swe-agent-dev/`: 23 SWE-bench runs of a
//! bash-only agent with the harness's own resolved/unresolved labels), held to what issue
//! #10 asks of verdicts on shell-driven agents. The figures themselves are in docs/GATE.md
//! ("A real labelled corpus") and CI gates the corpus with its labels.

use hindsight::config::Config;
use hindsight::guards::Effect;
use hindsight::ingest::{discover, Policy};
use hindsight::replay::{replay_all, RunReplay};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

const CORPUS: &str = "corpora/real/mini-swe-agent-dev";

fn corpus() -> Vec<RunReplay> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(CORPUS);
    let projects = discover(&[root]).expect("discover");
    replay_all(&projects, &Config::default(), Policy::Strict, &|| {}).expect("replay")
}

fn resolved() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(CORPUS)
        .join("labels.deepseek_chat_dev.json");
    let labels: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("labels"))
        .expect("labels parse");
    labels["resolved_ids"]
        .as_array()
        .expect("resolved_ids")
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn firings(run: &RunReplay, guard: &str) -> Vec<(u32, String)> {
    run.firings
        .iter()
        .filter(|f| f.guard == guard)
        .map(|f| (f.turn, f.action.clone()))
        .collect()
}

fn metric(run: &RunReplay, name: &str) -> Value {
    run.metrics["ledger_finalization"][name].clone()
}

#[test]
fn the_corpus_is_whole() {
    let runs = corpus();
    assert_eq!(runs.len(), 23);
    assert!(runs
        .iter()
        .all(|r| r.problems.count == 0 && r.turns.len() > 40));
    assert_eq!(resolved().len(), 8);
}

/// No resolved run is cut short by the convergence breaker (nor by any guard: the gate's
/// implicit expectation on healthy runs).
#[test]
fn no_terminal_firing_on_a_resolved_run() {
    let resolved = resolved();
    for run in corpus().iter().filter(|r| resolved.contains(&r.run_id)) {
        let terminal: Vec<_> = run
            .firings
            .iter()
            .filter(|f| f.effect == Effect::Terminal)
            .collect();
        assert!(terminal.is_empty(), "{}: {terminal:?}", run.run_id);
    }
}

/// WO-TD-06 on shell edits: `completed` only where the last code mutation was followed by
/// a passing check.
#[test]
fn completed_only_after_a_check_that_followed_the_last_mutation() {
    let runs = corpus();
    let completed: Vec<&RunReplay> = runs
        .iter()
        .filter(|r| metric(r, "finalized") == "completed")
        .collect();
    assert!(!completed.is_empty());
    for run in &completed {
        let mutation = metric(run, "last_mutation_turn").as_u64().unwrap_or(0);
        let verified = metric(run, "last_verified_turn").as_u64();
        assert!(
            verified.is_some_and(|v| v > mutation),
            "{}: mutation {mutation}, verified {verified:?}",
            run.run_id
        );
    }
    // The agent's edits are seen: every run has shell mutations, all inferred.
    for run in &runs {
        let mutations = metric(run, "mutations").as_u64().unwrap_or(0);
        assert!(mutations > 0, "{}", run.run_id);
        assert_eq!(metric(run, "inferred_mutations").as_u64(), Some(mutations));
    }
}

/// WO-3's mutation rule and the root refinement's signal rule give different verdicts
/// where the agent edits between failures that do not improve.
#[test]
fn the_two_breakers_differ_where_edits_do_not_help() {
    let differing: Vec<String> = corpus()
        .iter()
        .filter(|r| firings(r, "convergence_breaker") != firings(r, "diagnostic_delta"))
        .map(|r| r.run_id.clone())
        .collect();
    assert!(differing.len() >= 5, "{differing:?}");
}

/// Each run's tokens and dollars, counted here from the raw trajectories (every message's
/// `extra.response.usage` and `extra.cost`, whatever its role), agree with the report: the
/// harness recorded them all, so none is estimated and nothing is unpriced (issue #12).
#[test]
fn tokens_and_dollars_are_the_recorded_ones() {
    let prices = hindsight::cost::Prices::built_in();
    for run in corpus() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(CORPUS)
            .join(&run.run_id)
            .join(format!("{}.traj.json", run.run_id));
        let raw: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("parses");
        let (mut tokens, mut cache_read, mut usd) = (0u64, 0u64, 0f64);
        for m in raw["messages"].as_array().expect("messages") {
            let usage = &m["extra"]["response"]["usage"];
            if usage.is_object() {
                tokens += usage["prompt_tokens"].as_u64().unwrap_or(0)
                    + usage["completion_tokens"].as_u64().unwrap_or(0);
                cache_read += usage["prompt_tokens_details"]["cached_tokens"]
                    .as_u64()
                    .unwrap_or(0);
            }
            usd += m["extra"]["cost"].as_f64().unwrap_or(0.0);
        }
        let cost = hindsight::cost::cost(&run, &prices);
        let id = &run.run_id;
        assert_eq!(
            (cost.tokens_total, cost.tokens_estimated),
            (tokens, 0),
            "{id}"
        );
        assert_eq!(cost.by_kind.cache_read, cache_read, "{id}");
        assert!(
            (cost.spend.usd - usd).abs() < 1e-9,
            "{id}: {} != {usd}",
            cost.spend.usd
        );
        assert!((cost.spend.recorded_usd - usd).abs() < 1e-9, "{id}");
        assert_eq!(cost.spend.unpriced_tokens, 0, "{id}");
    }
}
