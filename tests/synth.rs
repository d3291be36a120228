//! `hindsight synth`: the benchmark corpus is deterministic, reads back cleanly under
//! `--strict`, exercises several guards, and never writes over someone else's folder.

mod common;

use common::{hindsight, synth};
use hindsight::synth::{write_corpus, SynthOptions};
use predicates::prelude::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn opts(projects: usize, runs_per_project: usize, seed: u64) -> SynthOptions {
    SynthOptions {
        projects,
        runs_per_project,
        seed,
        force: false,
    }
}

/// Every file under `dir` (symlinks not followed), by path relative to `dir`.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let meta = fs::symlink_metadata(&path).expect("metadata");
            if meta.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("inside").to_path_buf();
                out.insert(rel, fs::read(&path).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Compares two trees file by file, naming the first difference (not dumping megabytes).
fn assert_same_tree(a: &Path, b: &Path) {
    let (ta, tb) = (tree(a), tree(b));
    let names = |t: &BTreeMap<PathBuf, Vec<u8>>| t.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&ta), names(&tb), "the same files");
    for (path, bytes) in &ta {
        assert!(bytes == &tb[path], "{} differs", path.display());
    }
}

#[test]
fn the_same_options_give_byte_identical_trees() {
    let (lib, cli) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let summary = write_corpus(&opts(3, 2, 11), lib.path()).expect("writes");
    synth(
        cli.path(),
        &["--projects", "3", "--runs-per-project", "2", "--seed", "11"],
    )
    .success()
    .stderr(predicate::str::contains("3 projects x 2 runs"));
    assert_same_tree(lib.path(), cli.path());

    let files = tree(lib.path());
    assert_eq!((summary.projects, summary.runs), (3, 6));
    assert_eq!(summary.files, files.len() as u64);
    assert_eq!(
        summary.bytes,
        files.values().map(|b| b.len() as u64).sum::<u64>()
    );
    let frames = files
        .keys()
        .filter(|p| p.to_string_lossy().contains("/context/"));
    assert_eq!(summary.frames, frames.count() as u64);

    // Another seed is another corpus.
    let other = tempfile::tempdir().unwrap();
    write_corpus(&opts(1, 1, 12), other.path()).expect("writes");
    let first = tempfile::tempdir().unwrap();
    write_corpus(&opts(1, 1, 11), first.path()).expect("writes");
    assert_ne!(tree(other.path()), tree(first.path()));
}

#[test]
fn more_runs_per_project_extend_a_smaller_corpus() {
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_corpus(&opts(1, 1, 5), one.path()).expect("writes");
    write_corpus(&opts(1, 2, 5), two.path()).expect("writes");
    let (small, large) = (tree(one.path()), tree(two.path()));
    for (path, bytes) in &small {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        // The ledgers close the project, which ends one session later in the larger one.
        if !name.ends_with("ledger.json") {
            assert!(large.get(path) == Some(bytes), "{}", path.display());
        }
    }
    let runs =
        |t: &BTreeMap<PathBuf, Vec<u8>>| t.keys().filter(|p| p.ends_with("events.jsonl")).count();
    assert_eq!((runs(&small), runs(&large)), (1, 2));
}

#[test]
fn the_corpus_replays_strictly_with_firings_from_several_guards() {
    let dir = tempfile::tempdir().unwrap();
    write_corpus(&opts(4, 2, 7), dir.path()).expect("writes");
    let out = hindsight()
        .arg("replay")
        .arg(dir.path())
        .args(["--strict", "--format", "json"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.trim().is_empty(), "no warnings: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json report");
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 8);
    for run in runs {
        let input = &run["input"];
        assert_eq!(input["skipped"], 0, "{}", run["run_id"]);
        for key in ["problems", "unknown_types", "unknown_fields"] {
            assert!(
                input[key].as_array().is_some_and(Vec::is_empty)
                    || input[key].as_object().is_some_and(|m| m.is_empty()),
                "{} {key}: {}",
                run["run_id"],
                input[key]
            );
        }
        assert!(run["tokens_total"].as_u64().unwrap_or(0) > 0);
    }
    // Sessions of one project replay in order: session 1, then 2.
    let sessions: BTreeSet<u64> = runs.iter().filter_map(|r| r["session"].as_u64()).collect();
    assert!(
        sessions.len() >= 2,
        "several sessions per project: {sessions:?}"
    );

    let guards: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r["firings"].as_array().into_iter().flatten())
        .filter_map(|f| f["guard"].as_str())
        .collect();
    // The patterns the generator writes on purpose: cosmetic variants of one failing
    // build, fix loops whose diagnostics stall, stale edits, repeated evidence in frames.
    for guard in [
        "family_normalization",
        "convergence_breaker",
        "diagnostic_delta",
        "stale_edit_recovery",
        "evidence_folding",
    ] {
        assert!(guards.contains(guard), "{guard} fires: {guards:?}");
    }
    assert!(guards.len() >= 6, "several guards fire: {guards:?}");
}

#[test]
fn a_non_empty_out_is_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("notes.txt"), "keep me").unwrap();
    synth(dir.path(), &["--projects", "1", "--runs-per-project", "1"])
        .code(2)
        .stderr(predicate::str::contains("not empty"));
    assert_eq!(tree(dir.path()).len(), 1, "nothing written");

    // --force replaces the generated project folder and leaves the rest alone.
    let stale = dir.path().join("firmware-motor/.omnius/runs/1-stale");
    fs::create_dir_all(&stale).unwrap();
    fs::write(stale.join("events.jsonl"), "{}\n").unwrap();
    synth(
        dir.path(),
        &["--projects", "1", "--runs-per-project", "1", "--force"],
    )
    .success();
    assert!(!stale.exists());
    let notes = fs::read_to_string(dir.path().join("notes.txt")).unwrap();
    assert_eq!(notes, "keep me");
    let fresh = tempfile::tempdir().unwrap();
    write_corpus(&opts(1, 1, 7), fresh.path()).expect("writes");
    let mut written = tree(dir.path());
    written.remove(Path::new("notes.txt"));
    assert_eq!(written, tree(fresh.path()));
}

#[cfg(unix)]
#[test]
fn force_never_writes_through_a_symlink() {
    let (dir, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    fs::write(elsewhere.path().join("precious.txt"), "mine").unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("firmware-motor")).unwrap();
    synth(
        dir.path(),
        &["--projects", "1", "--runs-per-project", "1", "--force"],
    )
    .success();
    assert_eq!(tree(elsewhere.path()).len(), 1, "nothing written elsewhere");
    let project = fs::symlink_metadata(dir.path().join("firmware-motor")).unwrap();
    assert!(project.is_dir(), "the link is replaced by the project");
}

#[test]
fn mb_picks_the_runs_per_project() {
    assert_eq!(SynthOptions::runs_for_mb(100.0, 8), 3);
    let dir = tempfile::tempdir().unwrap();
    synth(dir.path(), &["--projects", "1", "--mb", "8"])
        .success()
        .stderr(predicate::str::contains("picked --runs-per-project 2"));
    let runs = fs::read_dir(dir.path().join("firmware-motor/.omnius/runs")).unwrap();
    assert_eq!(runs.count(), 2);

    let other = tempfile::tempdir().unwrap();
    for bad in [
        &["--mb", "0"][..],
        &["--mb", "nan"],
        &["--mb", "10", "--runs-per-project", "2"],
        &["--projects", "0"],
    ] {
        synth(other.path(), bad).code(2);
    }
    assert!(tree(other.path()).is_empty());
}
