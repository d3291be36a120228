//! The shipped corpora reproduce the seeds' incidents and keep the healthy controls whole.
//!
//! Each project's `expected.json` lists the firings its story was written to produce
//! (examples/corpora/, derived from the seeds' thresholds by hand): each must occur. The
//! complete replay of each project is snapshotted, so any other change shows up in review.
//! Seeds: 000 WO-1..WO-9 and the root refinement (myactuator), 001 WO-TD-01..07 (telegram
//! dropbear), 002 fixes 2-4, 9, 10, 16, 17 (noclip sidebar, visual memory), 003 work units
//! 3-4 (toolkit logs).

use hindsight::config::Config;
use hindsight::guards::{registry, Effect};
use hindsight::ingest::{discover, Policy};
use hindsight::replay::{replay_project, RunReplay};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora")
}

/// Every project directory under `corpora/`, sorted.
fn projects() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpora())
        .expect("corpora/")
        .filter_map(Result::ok)
        .filter(|e| e.path().join(".omnius").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn replay(project: &str) -> Vec<RunReplay> {
    let found = discover(&[corpora().join(project)]).expect("discover");
    assert_eq!(found.len(), 1, "{project}");
    replay_project(&found[0], &Config::default(), Policy::Strict, &|| {})
        .expect("corpus replays strictly")
}

fn cost_of(run: &RunReplay) -> hindsight::cost::RunCost {
    hindsight::cost::cost(run, &hindsight::cost::Prices::built_in())
}

/// Every firing a project's `expected.json` names occurs (guard, action, turn, and the
/// family where one is given).
#[test]
fn every_expected_firing_occurs() {
    for project in projects() {
        let path = corpora().join(&project).join("expected.json");
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("expected.json"))
                .expect("expected.json parses");
        let runs = replay(&project);
        for (run_id, wants) in expected["runs"].as_object().expect("runs") {
            let run = runs
                .iter()
                .find(|r| &r.run_id == run_id)
                .unwrap_or_else(|| panic!("{project}: no run {run_id}"));
            for want in wants.as_array().expect("list") {
                let found = run.firings.iter().any(|f| {
                    f.guard == want["guard"]
                        && f.action == want["action"]
                        && Some(u64::from(f.turn)) == want["turn"].as_u64()
                        && want["family"]
                            .as_str()
                            .is_none_or(|w| f.family.as_deref() == Some(w))
                });
                assert!(
                    found,
                    "{project}/{run_id}: expected firing {want} not found"
                );
            }
        }
    }
}

/// The complete replay of every project, for review.
#[test]
fn corpora_replays_match_snapshots() {
    for project in projects() {
        let mut text = String::new();
        for run in replay(&project) {
            let cost = cost_of(&run);
            let ledger = run
                .metrics
                .get("ledger_finalization")
                .and_then(|m| m.get("finalized"));
            writeln!(
                text,
                "run {} session {}: {} turns, {} tokens, combined saving {}, cut at {:?}, ledger {:?} -> {}",
                run.run_id,
                run.session_index + 1,
                cost.requests,
                cost.tokens_total,
                cost.combined.tokens,
                cost.cut_at,
                run.ledger_recorded.map(|l| l.as_str()),
                ledger.map_or("-".into(), ToString::to_string),
            )
            .expect("write");
            for (f, saved) in run.firings.iter().zip(&cost.per_firing) {
                writeln!(
                    text,
                    "  {:>3} {} {} [{}] {:?} saved {} | {}",
                    f.turn,
                    f.guard,
                    f.action,
                    f.family.as_deref().unwrap_or("-"),
                    f.effect,
                    saved,
                    f.detail.as_deref().unwrap_or("")
                )
                .expect("write");
            }
        }
        insta::assert_snapshot!(project.as_str(), text);
    }
}

#[test]
fn no_healthy_run_is_cut_short() {
    for project in projects().into_iter().filter(|p| p.starts_with("healthy-")) {
        for run in replay(&project) {
            let terminal: Vec<_> = run
                .firings
                .iter()
                .filter(|f| f.effect == Effect::Terminal)
                .collect();
            assert!(
                terminal.is_empty(),
                "{project}: terminal firing on a healthy run: {terminal:?}"
            );
        }
    }
}

/// Every guard of the catalogue fires on at least one failed run of the corpora.
#[test]
fn every_guard_fires_on_the_failed_corpora() {
    let mut fired = BTreeSet::new();
    for project in projects()
        .into_iter()
        .filter(|p| !p.starts_with("healthy-"))
    {
        for run in replay(&project) {
            fired.extend(run.firings.iter().map(|f| f.guard));
        }
    }
    let missing: Vec<&str> = registry()
        .iter()
        .map(|e| e.info.id)
        .filter(|id| !fired.contains(id))
        .collect();
    assert!(
        missing.is_empty(),
        "guards that never fire on the failed corpora: {missing:?}"
    );
}

#[test]
fn myactuator_carry_crosses_the_session_boundary() {
    let runs = replay("myactuator");
    // Session 2 abandons on its second build: rounds 3 carried from session 1, +2.
    let abandon = runs[1]
        .firings
        .iter()
        .find(|f| f.guard == "convergence_breaker" && f.action == "abandon")
        .expect("abandon in session 2");
    assert_eq!(abandon.turn, 2);
    assert_eq!(
        abandon.detail.as_deref(),
        Some("5 rounds; terminal_incomplete + report_incomplete")
    );
    let metrics = &runs[0].metrics["family_normalization"];
    assert_eq!(metrics["recorded_ledger_families"], 3);
    assert_eq!(metrics["recorded_ledger_canonical"], 1);
}

#[test]
fn dropbear_ledger_finalizes_as_incomplete_verification() {
    let runs = replay("telegram-dropbear");
    let finalized = &runs[0].metrics["ledger_finalization"]["finalized"];
    assert_eq!(finalized, "incomplete_verification");
}

/// Issue #3: the dropbear run shows `stale_edit_recovery` at the 2nd stale failure and
/// `directive_escalation` reaching `terminal_incomplete`, each with its savings, and the
/// combined counterfactual truncates at the earliest terminal firing.
#[test]
fn dropbear_stale_recovery_and_directive_escalation() {
    let run = &replay("telegram-dropbear")[0];
    let cost = cost_of(run);
    let first = |guard: &str, action: &str| {
        run.firings
            .iter()
            .position(|f| f.guard == guard && f.action == action)
            .unwrap_or_else(|| panic!("{guard} {action}"))
    };
    // Stale failures at turns 4 and 5: the directive comes with the second.
    let directive = &run.firings[first("stale_edit_recovery", "read_authoritative_target")];
    assert_eq!(directive.turn, 5);
    assert!(cost.by_guard["stale_edit_recovery"].tokens > 0);
    let terminal = first("directive_escalation", "terminal_incomplete");
    assert_eq!(run.firings[terminal].turn, 8);
    assert!(cost.by_guard["directive_escalation"].tokens > 0);
    let earliest = run
        .firings
        .iter()
        .filter(|f| f.effect == Effect::Terminal)
        .map(|f| f.turn)
        .min();
    assert_eq!(cost.cut_at, earliest);
    let sum: u64 = cost.by_guard.values().map(|s| s.tokens).sum();
    assert!(
        cost.combined.tokens < sum,
        "combined {} is not below the sum {sum}",
        cost.combined.tokens
    );
}

/// At least 12 failed runs and 8 healthy runs (issue #4), the healthy ones from several
/// ecosystems.
#[test]
fn corpora_are_large_enough_to_gate_on() {
    let mut failed = 0;
    let mut healthy = 0;
    for project in projects() {
        let n = replay(&project).len();
        if project.starts_with("healthy-") {
            healthy += n;
        } else {
            failed += n;
        }
    }
    assert!(failed >= 12, "{failed} failed runs");
    assert!(healthy >= 8, "{healthy} healthy runs");
}
