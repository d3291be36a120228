//! `hindsight import` writes any input as `.omnius/` trees that replay to the same firings,
//! and `hindsight gate --labels` takes a SWE-bench results file (issue #6).

mod common;

use common::hindsight;
use predicates::prelude::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn firings(args: &[&str], cwd: &Path) -> BTreeSet<(String, String, String, u64, u64)> {
    let out = hindsight()
        .current_dir(cwd)
        .args(["replay", "--format", "json"])
        .args(args)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .flat_map(|run| {
            run["firings"]
                .as_array()
                .expect("firings")
                .iter()
                .map(move |f| {
                    (
                        run["run_id"].as_str().unwrap_or_default().to_string(),
                        f["guard"].as_str().unwrap_or_default().to_string(),
                        f["action"].as_str().unwrap_or_default().to_string(),
                        f["turn"].as_u64().unwrap_or_default(),
                        f["tokens_saved"].as_u64().unwrap_or_default(),
                    )
                })
        })
        .collect()
}

#[test]
fn an_imported_tree_replays_to_the_same_firings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    hindsight()
        .args([
            "import",
            "corpora/telegram-dropbear",
            "corpora/noclip-sidebar",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .stderr(predicate::str::contains("imported 2 runs of 2 projects"));
    let original = firings(
        &["corpora/telegram-dropbear", "corpora/noclip-sidebar"],
        root,
    );
    let imported = firings(&["."], dir.path());
    assert!(!original.is_empty());
    assert_eq!(original, imported);
}

#[test]
fn import_refuses_to_write_into_its_input() {
    hindsight()
        .args([
            "import",
            "corpora/healthy-go",
            "--out",
            "corpora/healthy-go/.omnius/x",
        ])
        .assert()
        .code(2);
}

#[test]
fn a_swe_bench_results_file_labels_runs_by_instance() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut failed = hindsight::synth::Run::new("astropy__astropy-12907", "/testbed", 1000);
    for v in [
        "pytest -x tests/",
        "pytest -x tests/ 2>&1",
        "pytest -x tests/ | tail -30",
        "pytest -x tests/",
        "pytest -x tests/ 2>&1",
    ] {
        failed.turn(100).shell(
            v,
            false,
            "FAILED tests/test_sep.py::test_nested\n1 failed, 20 passed",
        );
    }
    failed.write_to(&dir.path().join("astropy/.omnius"));
    let mut resolved = hindsight::synth::Run::new("django__django-11099", "/testbed", 1000);
    resolved.turn(100).shell(
        "python -m pytest tests/validators -q",
        true,
        "12 passed in 0.4s",
    );
    resolved.write_to(&dir.path().join("django/.omnius"));
    std::fs::write(
        dir.path().join("results.json"),
        r#"{"resolved_ids": ["django__django-11099", "sympy__sympy-20590"], "unresolved_ids": ["astropy__astropy-12907"]}"#,
    )
    .expect("write");
    let out = hindsight()
        .current_dir(dir.path())
        .args([
            "gate",
            "astropy",
            "django",
            "--labels",
            "results.json",
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let outcome: Value = serde_json::from_slice(&out.stdout).expect("json");
    let breaker = outcome["scores"]
        .as_array()
        .expect("scores")
        .iter()
        .find(|s| s["guard"] == "convergence_breaker")
        .expect("breaker");
    assert_eq!(breaker["failed_runs"], 1);
    assert_eq!(breaker["healthy_runs"], 1);
    assert_eq!(breaker["fired_on_failed"], 1);
    assert_eq!(breaker["false_terminal_on_healthy"], 0);
}
