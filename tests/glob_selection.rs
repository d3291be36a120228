//! Glob selection (issue #30, item 8): a PATH argument that does not exist and holds a glob
//! mark is a pattern hindsight expands itself (for shells and CI files that pass it quoted),
//! and `--include`/`--exclude PATTERN` keep or leave out runs by path or run id, on every
//! command that replays.

mod common;

use serde_json::Value;
use std::fs;
use std::path::Path;

/// `dir/runs/<group>/<id>.traj`: copies of the project's SWE-agent fixtures in three
/// groups, one of them named `lite`.
fn trajectories(dir: &Path) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats/swe_agent");
    for (group, id) in [
        ("full", "acme__calc-7"),
        ("lite", "acme__semver-12"),
        ("full", "slug__slugify-3"),
    ] {
        let folder = dir.join("runs").join(group);
        fs::create_dir_all(&folder).expect("mkdir");
        let name = format!("{id}.traj");
        fs::copy(fixtures.join(&name), folder.join(&name)).expect("copy");
    }
}

fn run_ids(dir: &Path, args: &[&str]) -> Vec<String> {
    let out = common::hindsight()
        .current_dir(dir)
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    let mut ids: Vec<String> = (report["runs"].as_array().expect("runs").iter())
        .map(|r| r["run_id"].as_str().expect("id").to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn a_quoted_pattern_is_expanded_and_exclude_leaves_runs_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    trajectories(dir.path());
    let all = run_ids(dir.path(), &["replay", "runs/**/*.traj"]);
    assert_eq!(all, ["acme__calc-7", "acme__semver-12", "slug__slugify-3"]);
    let some = run_ids(
        dir.path(),
        &["replay", "runs/**/*.traj", "--exclude", "*lite*"],
    );
    assert_eq!(some, ["acme__calc-7", "slug__slugify-3"]);
    // By run id as well as by path.
    let one = run_ids(dir.path(), &["replay", "runs/", "--include", "slug__*"]);
    assert_eq!(one, ["slug__slugify-3"]);
    // A pattern of one folder.
    let full = run_ids(dir.path(), &["replay", "runs/f*"]);
    assert_eq!(full, ["acme__calc-7", "slug__slugify-3"]);
}

#[test]
fn a_pattern_that_matches_nothing_is_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    trajectories(dir.path());
    let out = common::hindsight()
        .current_dir(dir.path())
        .args(["replay", "runs/**/*.jsonl"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("runs/**/*.jsonl: the pattern matches no file or folder"),
        "{stderr}"
    );
}

#[test]
fn the_selection_reaches_the_gate_and_the_sweep() {
    // The sweep scores only the runs selected: excluding the shipped corpora's healthy
    // projects leaves no healthy run.
    let sweep = common::json_report(&[
        "sweep",
        "corpora/",
        "--expect",
        "corpora/expectations.json",
        "--param",
        "breaker.abandon=4,5",
        "--exclude",
        "*healthy*",
        "--format",
        "json",
    ]);
    let point = &sweep["points"][0];
    assert!(point["failed_runs"].as_u64().expect("failed") > 0);
    assert_eq!(point["healthy_runs"], 0, "{point}");
    // The gate judges the runs selected: a labels file that names every run then finds
    // the others missing, and says so (it fails, exit 1, rather than pass on a subset).
    let out = common::hindsight()
        .args(["gate", "corpora/", "--expect", "corpora/expectations.json"])
        .args(["--include", "corpora/myactuator/*"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let missing = stdout
        .lines()
        .filter(|l| l.contains("labeled run not found in the replayed paths"))
        .count();
    assert_eq!(missing, 17, "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 of 20 runs selected"));
}
