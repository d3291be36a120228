//! The shipped corpora reproduce the seeds' incidents: each project's `expected.json`
//! (written from the story, see examples/corpora.rs) must match the replay exactly.
//! Seeds: 000 WO-3/WO-8/WO-9/root refinement (myactuator), 001 WO-TD-01..06 (dropbear).

use hindsight::config::Config;
use hindsight::ingest::{discover, Policy};
use hindsight::replay::{replay_project, RunReplay};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn corpora() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora")
}

type Key = (String, String, String, u32, Option<String>);

fn replay(project: &str) -> Vec<RunReplay> {
    let projects = discover(&[corpora().join(project)]).expect("discover");
    assert_eq!(projects.len(), 1, "{project}");
    replay_project(&projects[0], &Config::default(), Policy::Strict, &|| {})
        .expect("corpus replays strictly")
}

fn check(project: &str) {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(corpora().join(project).join("expected.json"))
            .expect("expected.json"),
    )
    .expect("expected.json parses");
    let runs = replay(project);
    let mut want: BTreeSet<Key> = BTreeSet::new();
    for (run, firings) in expected["runs"].as_object().expect("runs") {
        for f in firings.as_array().expect("firings") {
            want.insert((
                run.clone(),
                f["guard"].as_str().expect("guard").into(),
                f["action"].as_str().expect("action").into(),
                f["turn"].as_u64().expect("turn") as u32,
                f["family"].as_str().map(String::from),
            ));
        }
    }
    let got: BTreeSet<Key> = runs
        .iter()
        .flat_map(|r| {
            r.firings
                .iter()
                .filter(|f| f.guard != "evidence_folding")
                .map(|f| {
                    // Families are checked where the expectation names one.
                    let family = if f.guard == "ledger_finalization" {
                        None
                    } else {
                        f.family.clone()
                    };
                    (
                        r.run_id.clone(),
                        f.guard.to_string(),
                        f.action.clone(),
                        f.turn,
                        family,
                    )
                })
        })
        .collect();
    assert_eq!(got, want, "{project}: firings differ from expected.json");
    for (run, count) in expected["folded_frames"]
        .as_object()
        .expect("folded_frames")
    {
        let replay = runs
            .iter()
            .find(|r| &r.run_id == run)
            .expect("run replayed");
        let folds = replay
            .firings
            .iter()
            .filter(|f| f.guard == "evidence_folding")
            .count();
        assert_eq!(
            folds as u64,
            count.as_u64().expect("count"),
            "{project}/{run}: folded frames"
        );
    }
}

#[test]
fn myactuator_reproduces_seed_000() {
    check("myactuator");
}

#[test]
fn telegram_dropbear_reproduces_seed_001() {
    check("telegram-dropbear");
}

#[test]
fn healthy_cargo() {
    check("healthy-cargo");
}

#[test]
fn healthy_npm() {
    check("healthy-npm");
}

#[test]
fn healthy_pytest_make() {
    check("healthy-pytest-make");
}

#[test]
fn healthy_go() {
    check("healthy-go");
}

#[test]
fn no_healthy_run_is_cut_short() {
    for project in [
        "healthy-cargo",
        "healthy-npm",
        "healthy-pytest-make",
        "healthy-go",
    ] {
        for run in replay(project) {
            let terminal: Vec<_> = run
                .firings
                .iter()
                .filter(|f| f.effect == hindsight::guards::Effect::Terminal)
                .collect();
            assert!(
                terminal.is_empty(),
                "{project}: terminal firing on a healthy run: {terminal:?}"
            );
        }
    }
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
