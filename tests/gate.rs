//! `hindsight gate` and `hindsight sweep` against the real binary (issue #4), on small
//! labeled corpora written by each test.

mod common;

use assert_cmd::Command;
use common::hindsight;
use hindsight::synth::Run;
use predicates::prelude::*;
use serde_json::json;
use std::fs;
use std::path::Path;

/// The line under every table of savings.
const SAVINGS_ARE_ESTIMATES: &str = "tokens and $ saved are estimates, not measurements";

/// A temporary labeled corpus: a failed run (five varied failures of one build, no
/// progress), a healthy run whose test suite flakes twice in a row before it passes, and
/// their `expectations.json`.
fn labeled_corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let mut failed = Run::new("1780000000000-fail01", "/w/api", 1000);
    for v in [
        "npm test",
        "npm test 2>&1",
        "npm test | tail -40",
        "npm test 2>&1 | tail",
        "npm test",
    ] {
        failed
            .turn(100)
            .shell(v, false, "Tests: 3 failed, 10 passed, 13 total");
    }
    failed.write_to(&root.join("api/.omnius"));
    let mut healthy = Run::new("1780000000000-ok0001", "/w/svc", 1000);
    healthy.turn(100).shell(
        "go test ./...",
        false,
        "--- FAIL: TestDial (0.00s)\ndial tcp: i/o timeout\nFAIL\tsvc\t0.31s",
    );
    healthy.turn(100).shell(
        "go test ./...",
        false,
        "--- FAIL: TestDial (0.00s)\ndial tcp: i/o timeout\nFAIL\tsvc\t0.30s",
    );
    healthy
        .turn(100)
        .shell("go test ./...", true, "ok  \tsvc\t0.12s");
    healthy.complete("completed", "tests pass");
    healthy.ledger = Some("completed".into());
    healthy.write_to(&root.join("svc/.omnius"));
    let labels = json!({"version": 1, "runs": {
        "api/1780000000000-fail01": {"label": "failed", "expect": [
            {"guard": "convergence_breaker", "action": "stalled", "fires_at": 3},
            {"guard": "convergence_breaker", "action": "abandon", "no_later_than": 5},
            {"guard": "evidence_folding", "never": true}
        ]},
        "svc/1780000000000-ok0001": {"label": "healthy"}
    }});
    fs::write(root.join("expectations.json"), labels.to_string()).expect("labels");
    dir
}

fn gate(root: &Path) -> Command {
    let mut cmd = hindsight();
    cmd.current_dir(root)
        .args(["gate", ".", "--expect", "expectations.json"]);
    cmd
}

#[test]
fn a_clean_corpus_passes() {
    let dir = labeled_corpus();
    gate(dir.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "Gate: 4 of 4 expectations hold; 0 baseline regressions: PASS",
        ));
}

#[test]
fn lowering_abandon_to_2_cuts_the_healthy_run_short() {
    let dir = labeled_corpus();
    gate(dir.path())
        .args(["--set", "breaker.stalled=2", "--set", "breaker.abandon=2"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("svc/1780000000000-ok0001"))
        .stdout(predicate::str::contains(
            "cut the healthy run short at turn 2",
        ));
}

#[test]
fn json_and_junit_outputs() {
    let dir = labeled_corpus();
    // Outside the corpus: nothing is written inside a directory being read.
    let junit = tempfile::tempdir().expect("tempdir");
    let out = gate(dir.path())
        .args([
            "--set",
            "convergence_breaker.stalled=4",
            "--format",
            "json",
            "--junit",
        ])
        .arg(junit.path().join("gate.xml"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(outcome["pass"], false);
    let failing: Vec<&serde_json::Value> = outcome["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .filter(|v| v["pass"] == false)
        .collect();
    assert_eq!(failing.len(), 1);
    assert_eq!(
        failing[0]["case"],
        "convergence_breaker stalled fires at turn 3"
    );
    assert_eq!(failing[0]["message"], "first fired at turn 4");
    let scores = outcome["scores"].as_array().expect("scores");
    let breaker = scores
        .iter()
        .find(|s| s["guard"] == "convergence_breaker")
        .expect("breaker");
    assert_eq!(breaker["fired_on_failed"], 1);
    assert_eq!(breaker["false_terminal_on_healthy"], 0);
    let xml = fs::read_to_string(junit.path().join("gate.xml")).expect("junit");
    assert!(
        xml.contains(r#"<testsuites name="hindsight gate" tests="4" failures="1">"#),
        "{xml}"
    );
    assert!(
        xml.contains(
            "<failure message=\"first fired at turn 4\">run: api/1780000000000-fail01 \
             (labelled failed)\nexpected: convergence_breaker stalled fires at turn 3\n\
             got: first fired at turn 4</failure>"
        ),
        "{xml}"
    );
}

/// Replays the corpus's two projects by name (the names `.` gives them) and saves the
/// report beside them: nothing is written inside a directory being read.
fn save_baseline(root: &Path, name: &str, extra: &[&str]) {
    hindsight()
        .current_dir(root)
        .args(["replay", "api", "svc", "--format", "json", "--out", name])
        .args(extra)
        .assert()
        .success();
}

#[test]
fn baseline_catches_a_firing_that_moved_later() {
    let dir = labeled_corpus();
    save_baseline(dir.path(), "baseline.json", &[]);
    hindsight()
        .current_dir(dir.path())
        .args([
            "gate",
            ".",
            "--baseline",
            "baseline.json",
            "--set",
            "convergence_breaker.stalled=4",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("convergence_breaker stalled"))
        .stdout(predicate::str::contains("moved later: turn 3 -> turn 4"));
}

#[test]
fn baseline_catches_a_firing_that_disappeared() {
    let dir = labeled_corpus();
    save_baseline(dir.path(), "baseline.json", &[]);
    hindsight()
        .current_dir(dir.path())
        .args(["gate", ".", "--baseline", "baseline.json"])
        .args([
            "--set",
            "convergence_breaker.stalled=9",
            "--set",
            "convergence_breaker.abandon=10",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "fired at turn 5 in the baseline, no longer fires",
        ));
    // Against itself the baseline is clean.
    hindsight()
        .current_dir(dir.path())
        .args(["gate", ".", "--baseline", "baseline.json"])
        .assert()
        .code(0);
}

#[test]
fn baseline_flags_a_new_terminal_firing_on_a_healthy_run_and_a_savings_drop() {
    let dir = labeled_corpus();
    save_baseline(dir.path(), "baseline.json", &[]);
    let out = hindsight()
        .current_dir(dir.path())
        .args([
            "gate",
            ".",
            "--baseline",
            "baseline.json",
            "--expect",
            "expectations.json",
        ])
        .args(["--set", "breaker.stalled=2", "--set", "breaker.abandon=2"])
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let messages: Vec<&str> = outcome["regressions"]
        .as_array()
        .expect("regressions")
        .iter()
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert!(
        messages.contains(&"new terminal firing on a healthy run at turn 2"),
        "{messages:?}"
    );

    save_baseline(
        dir.path(),
        "generous.json",
        &["--set", "breaker.stalled=2", "--set", "breaker.abandon=2"],
    );
    hindsight()
        .current_dir(dir.path())
        .args([
            "gate",
            ".",
            "--baseline",
            "generous.json",
            "--tolerance",
            "0.01",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("tokens saved (combined)"));
}

#[test]
fn gate_needs_something_to_judge_and_valid_labels() {
    let dir = labeled_corpus();
    hindsight()
        .current_dir(dir.path())
        .args(["gate", "."])
        .assert()
        .code(2);
    fs::write(
        dir.path().join("bad.json"),
        r#"{"version": 1, "runs": {"a/b": {"label": "failed", "expect": [{"guard": "dedup_gate", "fires_at": 1, "never": true}]}}}"#,
    )
    .expect("write");
    hindsight()
        .current_dir(dir.path())
        .args(["gate", ".", "--expect", "bad.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "give exactly one of fires_at, no_later_than, never",
        ));
}

#[test]
fn a_labeled_run_that_is_missing_fails_the_gate() {
    let dir = labeled_corpus();
    fs::remove_dir_all(dir.path().join("svc")).expect("rm");
    gate(dir.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "labeled run not found in the replayed paths",
        ));
}

#[test]
fn sweep_reports_the_trade_off_with_the_default_marked() {
    let dir = labeled_corpus();
    let out = hindsight()
        .current_dir(dir.path())
        .args([
            "sweep",
            ".",
            "--expect",
            "expectations.json",
            "--param",
            "breaker.abandon=2..5",
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sweep: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows: Vec<(i64, u64, bool)> = sweep["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|p| {
            (
                p["setting"][0][1].as_i64().expect("value"),
                p["false_terminal_on_healthy"].as_u64().expect("count"),
                p["is_default"].as_bool().expect("bool"),
            )
        })
        .collect();
    // abandon=2 under the default stalled=3 is refused and left out.
    assert_eq!(rows, vec![(3, 0, false), (4, 0, false), (5, 0, true)]);
    hindsight()
        .current_dir(dir.path())
        .args([
            "sweep",
            ".",
            "--expect",
            "expectations.json",
            "--param",
            "breaker.stalled=2,3",
            "--param",
            "breaker.abandon=4..5",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("convergence_breaker.abandon"))
        .stdout(predicate::str::contains("false terminal (healthy)"))
        .stdout(predicate::str::contains(SAVINGS_ARE_ESTIMATES));
}

/// Issue #4, "Done when": the shipped corpus passes its gate, and lowering the breaker's
/// abandon threshold to 2 (with `stalled`, which may not exceed it) fails it, naming the
/// healthy run cut short and the turn.
#[test]
fn the_shipped_corpus_passes_and_abandon_at_2_fails_it() {
    let root = env!("CARGO_MANIFEST_DIR");
    hindsight()
        .current_dir(root)
        .args(["gate", "corpora/", "--expect", "corpora/expectations.json"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(": PASS"));
    hindsight()
        .current_dir(root)
        .args(["gate", "corpora/", "--expect", "corpora/expectations.json"])
        .args(["--set", "convergence_breaker.stalled=2"])
        .args(["--set", "convergence_breaker.abandon=2"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "healthy-flaky-go/1783400000000-h5flky",
        ))
        .stdout(predicate::str::contains(
            "convergence_breaker `abandon` cut the healthy run short at turn 2",
        ));
}

/// The default thresholds have no false terminal firing on the shipped healthy runs, and
/// the sweep over the breaker's thresholds shows the trade-off.
#[test]
fn the_shipped_sweep_marks_defaults_without_false_terminal_firings() {
    let out = shipped_sweep(&["--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sweep: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let points = sweep["points"].as_array().expect("points");
    // 15 points, less the 3 with `stalled` above `abandon`.
    assert_eq!(points.len(), 12);
    let defaults: Vec<&serde_json::Value> =
        points.iter().filter(|p| p["is_default"] == true).collect();
    assert_eq!(defaults.len(), 1);
    assert_eq!(defaults[0]["false_terminal_on_healthy"], 0);
    let aggressive = points
        .iter()
        .find(|p| p["setting"][1][1] == 2)
        .expect("abandon=2 point");
    assert!(aggressive["false_terminal_on_healthy"].as_u64().expect("n") > 0);
    // Issue #29: the aggressive point against the defaults, paired on the same runs: it
    // cuts a larger share of the healthy runs, and the difference's interval holds it.
    assert_eq!(defaults[0]["versus_default"], json!(null));
    let versus = &aggressive["versus_default"];
    let cut_healthy = versus["cut_on_healthy_permille"]
        .as_i64()
        .expect("difference");
    let healthy = aggressive["healthy_runs"].as_i64().expect("runs");
    let cut = aggressive["false_terminal_on_healthy"]
        .as_i64()
        .expect("runs");
    assert_eq!(cut_healthy, cut * 1000 / healthy, "{versus}");
    let bounds = &versus["cut_on_healthy_interval"];
    assert!(bounds[0].as_i64() <= Some(cut_healthy) && Some(cut_healthy) <= bounds[1].as_i64());
    // Every point carries its intervals and the runs a swept guard only advised on.
    for p in points {
        assert!(p["intervals"]["resamples"] == 1000, "{p}");
        assert!(p["advised_on_failed"].as_u64().is_some(), "{p}");
        assert!(p["tokens_lost_on_healthy"].as_u64().is_some(), "{p}");
    }
    assert!(aggressive["tokens_lost_on_healthy"].as_u64() > Some(0));
}

/// An OpenHands evaluation output gated with its SWE-bench summary: each instance of
/// `output.jsonl` is a run named by its `instance_id`, so the summary's ids label them with
/// no hand work (issue #12). Ids the file does not hold are not judged.
#[test]
fn swe_bench_labels_match_openhands_instances_by_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats/openhands/output.jsonl");
    fs::copy(&fixture, dir.path().join("output.jsonl")).expect("copy");
    let summary = |resolved: &[&str], unresolved: &[&str]| {
        let text = json!({
            "total_instances": 500,
            "submitted_instances": 4,
            "resolved_instances": resolved.len(),
            "resolved_ids": resolved,
            "unresolved_ids": unresolved,
            "error_ids": [],
        });
        fs::write(dir.path().join("results.json"), text.to_string()).expect("write");
    };
    let gate = |extra: &[&str]| {
        hindsight()
            .current_dir(dir.path())
            .args(["gate", "output.jsonl", "--labels", "results.json"])
            .args(extra)
            .output()
            .expect("runs")
    };

    summary(
        &["acme__calc-7", "django__django-11099"],
        &["acme__semver-12", "slug__slugify-3"],
    );
    let out = gate(&["--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let runs: Vec<&str> = outcome["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|v| v["run"].as_str().expect("run"))
        .collect();
    assert_eq!(runs, ["acme__calc-7"], "the one healthy instance is judged");
    for score in outcome["scores"].as_array().expect("scores") {
        assert_eq!(
            (&score["failed_runs"], &score["healthy_runs"]),
            (&json!(2), &json!(1)),
            "{score}"
        );
    }
    let ledger = outcome["scores"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["guard"] == "ledger_finalization")
        .expect("ledger");
    assert_eq!(ledger["fired_on_failed"], 2);

    // Labelled healthy, the instance that repeats its failing test run is cut short by a
    // breaker set to abandon after two: the gate fails, naming the instance.
    summary(&["acme__calc-7", "slug__slugify-3"], &["acme__semver-12"]);
    let out = gate(&["--set", "breaker.abandon=2", "--set", "breaker.stalled=2"]);
    assert_eq!(out.status.code(), Some(1));
    let table = String::from_utf8_lossy(&out.stdout);
    let failure = table
        .lines()
        .find(|l| l.contains("cut the healthy run short"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(failure.contains("slug__slugify-3"), "{failure}");
    assert!(failure.contains("convergence_breaker"), "{failure}");
    // Its annotation points at the instance's line of output.jsonl.
    let out = gate(&[
        "--set",
        "breaker.abandon=2",
        "--set",
        "breaker.stalled=2",
        "--format",
        "github",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let annotation = text
        .lines()
        .find(|l| l.contains("slug__slugify-3"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        annotation.starts_with("::error file=output.jsonl,line=4,title="),
        "{annotation}"
    );
}

/// The scores' savings are the cost model's answer, not counts read from the recordings
/// (docs/COUNTERFACTUAL.md): the table says so under them (the sweep's table too, checked
/// above).
#[test]
fn the_gate_table_marks_savings_as_estimates() {
    gate(labeled_corpus().path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("saved (failed)"))
        .stdout(predicate::str::contains("lost (healthy cut)"))
        .stdout(predicate::str::contains(SAVINGS_ARE_ESTIMATES));
}

/// Copies the project's mini-swe-agent fixtures into `dir/trajs/<id>/<id>.traj.json`, the
/// layout SWE-bench runs are written in; gives the instance ids.
fn trajectories(dir: &Path) -> Vec<String> {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats/mini_swe_agent");
    let mut ids = Vec::new();
    for entry in fs::read_dir(&fixtures).expect("fixtures") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(id) = name.strip_suffix(".traj.json") else {
            continue;
        };
        let folder = dir.join("trajs").join(id);
        fs::create_dir_all(&folder).expect("mkdir");
        fs::copy(&path, folder.join(&name)).expect("copy");
        ids.push(id.to_string());
    }
    ids.sort();
    ids
}

/// Issue #29: SWE-bench-java and other harnesses write their summary as `resolved` and
/// `unresolved` lists, not `resolved_ids`; both shapes label the runs by instance id.
#[test]
fn a_resolved_unresolved_summary_labels_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ids = trajectories(dir.path());
    let text = json!({
        "total": 4,
        "resolved": [ids[0]],
        "unresolved": [ids[1], ids[2]],
        "error": [],
    });
    fs::write(dir.path().join("results.json"), text.to_string()).expect("write");
    let outcome = gate_json(dir.path(), &["trajs", "--labels", "results.json"]);
    for score in outcome["scores"].as_array().expect("scores") {
        assert_eq!(
            (&score["failed_runs"], &score["healthy_runs"]),
            (&json!(2), &json!(1)),
            "{score}"
        );
    }
}

/// Issue #29: labels that match no replayed run would judge nothing and pass; they are an
/// error (exit 2) that names the file and shows three names from each side. An empty
/// summary labels nothing, and is the same error.
#[test]
fn labels_that_match_no_run_are_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ids = trajectories(dir.path());
    let other = json!({"resolved_ids": ["other__repo-1", "other__repo-2"], "unresolved_ids": []});
    fs::write(dir.path().join("other.json"), other.to_string()).expect("write");
    fs::write(
        dir.path().join("empty.json"),
        json!({"resolved": [], "unresolved": []}).to_string(),
    )
    .expect("write");
    for command in [
        &["gate", "trajs"][..],
        &[
            "sweep",
            "trajs",
            "--param",
            "convergence_breaker.abandon=4,5",
        ],
    ] {
        let out = hindsight()
            .current_dir(dir.path())
            .args(command)
            .args(["--labels", "other.json"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("other.json"), "{err}");
        assert!(err.contains("match none of the 4 replayed runs"), "{err}");
        assert!(err.contains("other__repo-1, other__repo-2"), "{err}");
        assert!(err.contains(&ids[..3].join(", ")), "{err}");
    }
    let out = hindsight()
        .current_dir(dir.path())
        .args(["gate", "trajs", "--labels", "empty.json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("labels no run healthy and no run failed")
    );
}

/// Issue #29: run names are relative to the labels file's folder, as docs/GATE.md says,
/// also for trajectories (whose project is the file's path without its extension, which
/// does not exist), whatever the working directory.
#[test]
fn run_names_are_relative_to_the_labels_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ids = trajectories(dir.path());
    let runs: serde_json::Map<String, serde_json::Value> = ids
        .iter()
        .map(|id| (format!("{id}/{id}/{id}"), json!({"label": "failed"})))
        .collect();
    let labels = json!({"version": 1, "runs": runs});
    fs::write(dir.path().join("trajs/labels.json"), labels.to_string()).expect("write");
    for (cwd, corpus, file) in [
        (dir.path().to_path_buf(), "trajs", "trajs/labels.json"),
        (dir.path().join("trajs"), ".", "labels.json"),
    ] {
        let outcome = gate_json(&cwd, &[corpus, "--labels", file]);
        assert_eq!(
            outcome["scores"][0]["failed_runs"],
            json!(ids.len()),
            "{cwd:?}"
        );
    }
}

/// Issue #29: every score is a count a reader can make from the report JSON. Recounted
/// here from `replay --format json` and the labels, on the shipped corpora at the defaults
/// and with a breaker set to cut early (so healthy runs are cut and work is lost).
#[test]
fn scores_are_counts_from_the_report() {
    let labels: serde_json::Value =
        serde_json::from_str(&fs::read_to_string("corpora/expectations.json").expect("labels"))
            .expect("json");
    let label_of = |run: &serde_json::Value| -> Option<String> {
        let project = run["project"].as_str()?.strip_prefix("corpora/")?;
        let key = format!("{project}/{}", run["run_id"].as_str()?);
        Some(labels["runs"][key]["label"].as_str()?.to_string())
    };
    let early = [
        "--set",
        "convergence_breaker.abandon=2",
        "--set",
        "convergence_breaker.stalled=2",
    ];
    for settings in [&[][..], &early[..]] {
        let replay = hindsight()
            .args(["replay", "corpora/", "--format", "json"])
            .args(settings)
            .output()
            .expect("replay");
        let report: serde_json::Value = serde_json::from_slice(&replay.stdout).expect("json");
        let gate = hindsight()
            .args([
                "gate",
                "corpora/",
                "--expect",
                "corpora/expectations.json",
                "--format",
                "json",
            ])
            .args(settings)
            .output()
            .expect("gate");
        let outcome: serde_json::Value = serde_json::from_slice(&gate.stdout).expect("json");
        let labelled: Vec<(&serde_json::Value, String)> = report["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .filter_map(|r| label_of(r).map(|l| (r, l)))
            .collect();
        let mut healthy_cut_somewhere = false;
        for score in outcome["scores"].as_array().expect("scores") {
            let guard = score["guard"].as_str().expect("guard");
            let fired = |r: &serde_json::Value| {
                r["firings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["guard"] == guard)
            };
            let cut = |r: &serde_json::Value| {
                r["firings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["guard"] == guard && f["effect"] == "terminal")
            };
            let count = |label: &str, on: &dyn Fn(&serde_json::Value) -> bool| {
                labelled.iter().filter(|(r, l)| l == label && on(r)).count()
            };
            let runs = |label: &str| labelled.iter().filter(|(_, l)| l == label).count();
            let advised = |r: &serde_json::Value| fired(r) && !cut(r);
            let lost: u64 = labelled
                .iter()
                .filter(|(r, l)| l == "healthy" && cut(r))
                .map(|(r, _)| r["savings"]["by_guard"][guard].as_u64().unwrap_or(0))
                .sum();
            let share = |part: usize, whole: usize| {
                (whole > 0)
                    .then(|| json!(part * 1000 / whole))
                    .unwrap_or(json!(null))
            };
            let (fired_failed, fired_healthy) = (count("failed", &fired), count("healthy", &fired));
            let not_fired = runs("failed") + runs("healthy") - fired_failed - fired_healthy;
            assert_eq!(score["cut_on_failed"], count("failed", &cut), "{guard}");
            assert_eq!(
                score["false_terminal_on_healthy"],
                count("healthy", &cut),
                "{guard}"
            );
            assert_eq!(
                score["advisory_on_failed"],
                count("failed", &advised),
                "{guard}"
            );
            assert_eq!(
                score["advisory_on_healthy"],
                count("healthy", &advised),
                "{guard}"
            );
            assert_eq!(score["tokens_lost_on_healthy"], lost, "{guard}");
            assert_eq!(
                score["failed_if_fired_permille"],
                share(fired_failed, fired_failed + fired_healthy),
                "{guard}"
            );
            assert_eq!(
                score["failed_if_not_fired_permille"],
                share(runs("failed") - fired_failed, not_fired),
                "{guard}"
            );
            // `no` exactly when it fires on no larger a share of the failed runs; `yes` or
            // `unclear` otherwise (the intervals decide which); nothing when it never fired.
            let larger = fired_failed * runs("healthy") > fired_healthy * runs("failed");
            match (fired_failed + fired_healthy, larger) {
                (0, _) => assert_eq!(score["discriminates"], json!(null), "{guard}"),
                (_, false) => assert_eq!(score["discriminates"], "no", "{guard}"),
                (_, true) => assert!(
                    score["discriminates"] == "yes" || score["discriminates"] == "unclear",
                    "{guard}: {}",
                    score["discriminates"]
                ),
            }
            // Each rate's interval holds the rate.
            for (interval, part, whole) in [
                (
                    "cut_on_failed_permille",
                    count("failed", &cut),
                    runs("failed"),
                ),
                (
                    "cut_on_healthy_permille",
                    count("healthy", &cut),
                    runs("healthy"),
                ),
                ("fired_on_failed_permille", fired_failed, runs("failed")),
                ("fired_on_healthy_permille", fired_healthy, runs("healthy")),
            ] {
                let rate = (part * 1000 / whole) as u64;
                let bounds = &score["intervals"][interval];
                let (lo, hi) = (bounds[0].as_u64().unwrap(), bounds[1].as_u64().unwrap());
                assert!(
                    lo <= rate && rate <= hi,
                    "{guard} {interval}: {rate} not in {bounds}"
                );
            }
            healthy_cut_somewhere |= lost > 0;
        }
        // With the early breaker, some healthy run is cut and its work counted as lost.
        assert_eq!(healthy_cut_somewhere, !settings.is_empty());
    }
}

/// Runs `hindsight gate ARGS --format json` in `cwd`, which must pass (exit 0), and gives
/// its outcome.
fn gate_json(cwd: &Path, args: &[&str]) -> serde_json::Value {
    let out = hindsight()
        .current_dir(cwd)
        .arg("gate")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// Issue #29: a folder holding several evaluation sets of the same instance ids is labelled
/// by one summary per set, `--labels DIR=FILE` (repeatable); a run under DIR is named
/// `DIR:runId` and labelled by that summary only.
#[test]
fn summaries_scoped_to_folders_label_each_set() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ids = trajectories(dir.path());
    for set in ["set_a", "set_b"] {
        fs::rename(dir.path().join("trajs"), dir.path().join(set)).expect("move");
        trajectories(dir.path());
    }
    // The same instance resolved in one set, unresolved in the other.
    let summary = |resolved: &[&String], unresolved: &[&String]| {
        json!({"resolved_ids": resolved, "unresolved_ids": unresolved}).to_string()
    };
    fs::write(
        dir.path().join("set_a/results.json"),
        summary(&[&ids[0]], &[&ids[1]]),
    )
    .expect("write");
    fs::write(
        dir.path().join("set_b/results.json"),
        summary(&[&ids[1]], &[&ids[0], &ids[2]]),
    )
    .expect("write");
    let outcome = gate_json(
        dir.path(),
        &[
            "set_a",
            "set_b",
            "--labels",
            "set_a=set_a/results.json",
            "--labels",
            "set_b=set_b/results.json",
        ],
    );
    let score = &outcome["scores"][0];
    assert_eq!(
        (&score["failed_runs"], &score["healthy_runs"]),
        (&json!(3), &json!(2)),
        "{score}"
    );
    let judged: Vec<&str> = outcome["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .map(|v| v["run"].as_str().expect("run"))
        .collect();
    assert_eq!(
        judged,
        [format!("set_a:{}", ids[0]), format!("set_b:{}", ids[1])],
        "the healthy run of each set is judged, by its own summary"
    );
    // Each source must be scoped, and scoped sources must be summaries.
    fs::write(
        dir.path().join("expectations.json"),
        json!({"version": 1, "runs": {}}).to_string(),
    )
    .expect("write");
    for labels in [
        &["set_a=set_a/results.json", "set_b/results.json"][..],
        &["set_a=expectations.json"][..],
        &["set_a=set_a/results.json", "set_a=set_b/results.json"][..],
    ] {
        let mut cmd = hindsight();
        cmd.current_dir(dir.path()).args(["gate", "set_a", "set_b"]);
        for l in labels {
            cmd.args(["--labels", l]);
        }
        cmd.assert().code(2);
    }
}

/// Issue #29: one corpus of mini-swe-agent and SWE-agent runs gives the pooled scores and a
/// row per harness (the format each run was read from); the harnesses' runs add up to the
/// pooled ones.
#[test]
fn scores_per_harness_add_up_to_the_pooled_ones() {
    let dir = mixed_corpus();
    let outcome = gate_json(dir.path(), &["trajs", "--labels", "results.json"]);
    let harnesses = outcome["scores_by_harness"].as_array().expect("by harness");
    let names: Vec<&str> = harnesses
        .iter()
        .map(|h| h["harness"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mini-swe-agent", "swe-agent"]);
    for (i, pooled) in outcome["scores"]
        .as_array()
        .expect("scores")
        .iter()
        .enumerate()
    {
        for field in [
            "failed_runs",
            "healthy_runs",
            "cut_on_failed",
            "advisory_on_failed",
            "advisory_on_healthy",
            "tokens_saved_on_failed",
        ] {
            let sum: u64 = harnesses
                .iter()
                .map(|h| h["scores"][i][field].as_u64().expect("count"))
                .sum();
            assert_eq!(
                Some(sum),
                pooled[field].as_u64(),
                "{} {field}",
                pooled["guard"]
            );
        }
    }
    assert_eq!(harnesses[0]["scores"][0]["failed_runs"], 2);
    assert_eq!(harnesses[1]["scores"][0]["healthy_runs"], 1);
    let table = hindsight()
        .current_dir(dir.path())
        .args(["gate", "trajs", "--labels", "results.json"])
        .output()
        .expect("runs");
    assert!(String::from_utf8_lossy(&table.stdout).contains("Scores by harness"));
}

/// Issue #29, item 4: `sweep --select` chooses on part of the projects and scores the
/// choice on the rest, beside the defaults; when no setting meets the constraints it says
/// so and exits 1.
#[test]
fn sweep_select_chooses_on_some_projects_and_scores_on_the_others() {
    let sweep =
        |select: &str, format: &str| shipped_sweep(&["--select", select, "--format", format]);
    let out = sweep("false_cut_rate<=0", "json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let both: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let choice = &both["choice"];
    let projects = fs::read_dir("corpora")
        .expect("corpora")
        .filter(|e| e.as_ref().is_ok_and(|e| e.path().is_dir()))
        .count() as u64;
    let (train, test) = (
        choice["training_projects"].as_u64().unwrap(),
        choice["held_out_projects"].as_u64().unwrap(),
    );
    assert_eq!(train + test, projects);
    assert!(test > 0 && train > 0);
    assert!(choice["chosen"]["setting"].is_array(), "{choice}");
    assert_eq!(choice["defaults"]["setting"][1][1], 5, "{choice}");
    assert!(both["points"].as_array().is_some_and(|p| p.len() == 12));
    // The same choice every time.
    assert_eq!(sweep("false_cut_rate<=0", "json").stdout, out.stdout);

    let none = sweep("failed_cut_rate>=2", "table");
    assert_eq!(none.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&none.stdout).contains("No setting meets the constraints"));
    let bad = sweep("false_cut<=0", "table");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown score `false_cut`"));
}

/// The breaker's sweep over the shipped corpora (`stalled` 2-4, `abandon` 2-6), with
/// `extra` arguments.
fn shipped_sweep(extra: &[&str]) -> std::process::Output {
    hindsight()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["sweep", "corpora/", "--expect", "corpora/expectations.json"])
        .args([
            "--param",
            "breaker.stalled=2..4",
            "--param",
            "breaker.abandon=2..6",
        ])
        .args(extra)
        .output()
        .expect("runs")
}

/// Issue #29: on a corpus mixing two harnesses, `--select` reports the held-out figures
/// pooled and per harness.
#[test]
fn sweep_select_reports_each_harness_held_out() {
    let dir = mixed_corpus();
    let sweep = |format: &str| {
        hindsight()
            .current_dir(dir.path())
            .args(["sweep", "trajs", "--labels", "results.json"])
            .args(["--param", "breaker.abandon=4,5", "--holdout", "0.99"])
            .args(["--select", "tokens_saved_on_failed>=0", "--format", format])
            .output()
            .expect("runs")
    };
    let out = sweep("json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let both: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let chosen = &both["choice"]["chosen"];
    let harnesses: Vec<&str> = chosen["by_harness"]
        .as_array()
        .expect("by harness")
        .iter()
        .map(|h| h["harness"].as_str().unwrap())
        .collect();
    assert_eq!(harnesses, ["mini-swe-agent", "swe-agent"], "{chosen}");
    for field in ["failed_runs", "healthy_runs", "tokens_saved_on_failed"] {
        let sum: u64 = chosen["by_harness"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h[field].as_u64().unwrap())
            .sum();
        assert_eq!(Some(sum), chosen[field].as_u64(), "{field}");
    }
    let table = String::from_utf8_lossy(&sweep("table").stdout).into_owned();
    assert!(table.contains("  swe-agent: saved (failed)"), "{table}");
}

/// Issue #29, item 7: the one-pass sweep (each run read once, the swept guards run once
/// per setting) leaves each labelled run, at each setting, as a replay at that setting
/// does: the same combined savings, cut, dollars, and firings of the swept guards.
#[test]
fn a_one_pass_sweep_gives_each_run_what_a_replay_at_each_setting_gives() {
    let sweep = common::json_report(&[
        "sweep",
        "corpora/",
        "--expect",
        "corpora/expectations.json",
        "--param",
        "breaker.abandon=3,5",
        "--param",
        "delta.worsening_step=1,2",
        "--format",
        "json",
    ]);
    let points = sweep["points"].as_array().expect("points");
    let runs = sweep["runs"].as_array().expect("runs");
    assert_eq!(points.len(), 4);
    assert!(runs.len() >= 20, "{}", runs.len());
    let swept = ["convergence_breaker", "diagnostic_delta"];
    let mut cut_somewhere = 0;
    for (k, point) in points.iter().enumerate() {
        let sets: Vec<String> = point["setting"]
            .as_array()
            .expect("setting")
            .iter()
            .map(|s| format!("{}={}", s[0].as_str().expect("name"), s[1]))
            .collect();
        let mut args = vec!["replay", "corpora/", "--format", "json"];
        for set in &sets {
            args.extend(["--set", set]);
        }
        let report = common::json_report(&args);
        for run in runs {
            let name = (&run["project"], &run["run_id"]);
            let replayed = report["runs"]
                .as_array()
                .expect("runs")
                .iter()
                .find(|r| (&r["project"], &r["run_id"]) == name)
                .unwrap_or_else(|| panic!("{name:?} replayed"));
            let savings = &replayed["savings"];
            let at = format!("{name:?} at {sets:?}");
            assert_eq!(run["saved"][k], savings["combined"], "{at}");
            assert_eq!(run["cut"][k], !savings["cut_at_turn"].is_null(), "{at}");
            match savings["cost_saved_usd"].get("combined") {
                Some(usd) => assert_eq!(&run["usd"][k], usd, "{at}"),
                None => assert!(run["usd"].is_null(), "{at}"),
            }
            let fired = replayed["firings"]
                .as_array()
                .expect("firings")
                .iter()
                .any(|f| swept.contains(&f["guard"].as_str().expect("guard")));
            assert_eq!(run["fired"][k], fired, "{at}");
            cut_somewhere += usize::from(run["cut"][k] == true);
        }
    }
    assert!(cut_somewhere > 0, "a grid that cuts nothing proves little");
}

/// A Harbor job folder `dir/JOB`: the project's mini-swe-agent trajectories (as
/// [`trajectories`] writes them), one per trial folder `JOB/<id>__trial/agent/`, beside
/// the trial's `result.json` with the reward given (`None`: the verifier did not finish),
/// `config.json` and `verifier/`. Gives the trial folders as given on the command line.
fn harbor_job(dir: &Path, job: &str, rewards: &[Option<f64>]) -> Vec<String> {
    let ids = trajectories(dir);
    let mut trials = Vec::new();
    for (id, reward) in ids.iter().zip(rewards) {
        let trial = format!("{job}/{id}__trial");
        let folder = dir.join(&trial);
        fs::create_dir_all(folder.join("verifier")).expect("mkdir");
        fs::rename(dir.join("trajs").join(id), folder.join("agent")).expect("move");
        let verifier = reward.map(|r| json!({"rewards": {"reward": r}}));
        let result = json!({
            "task_name": id,
            "trial_name": format!("{id}__trial"),
            "verifier_result": verifier,
            "exception_info": if reward.is_some() { json!(null) } else { json!({"exception_type": "made-up"}) },
        });
        fs::write(folder.join("result.json"), result.to_string()).expect("write");
        fs::write(
            folder.join("config.json"),
            json!({"trial_name": id}).to_string(),
        )
        .expect("write");
        trials.push(trial);
    }
    fs::remove_dir_all(dir.join("trajs")).expect("clean");
    trials
}

/// `gate ARGS --format json` in `dir`, which must pass: its first score's (failed runs,
/// healthy runs), and its stderr.
fn labelled_counts(dir: &Path, args: &[&str]) -> ((u64, u64), String) {
    let out = hindsight()
        .current_dir(dir)
        .arg("gate")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let score = &outcome["scores"][0];
    let count = |key: &str| score[key].as_u64().expect("count");
    ((count("failed_runs"), count("healthy_runs")), err)
}

/// Issue #29, item 5: a Harbor job folder labels every run under a trial folder by the
/// trial's reward: healthy from --reward-threshold (default 1.0) up, failed below; a trial
/// with no reward is not labelled, and stderr says so.
#[test]
fn a_harbor_job_folder_labels_the_runs_under_its_trials() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trials = harbor_job(dir.path(), "job", &[Some(1.0), Some(0.5), Some(0.0), None]);
    let (counts, err) = labelled_counts(dir.path(), &["job", "--labels", "job"]);
    assert_eq!(counts, (2, 1), "{err}");
    assert!(
        err.contains(&format!(
            "note: job: 1 trial(s) with no numeric verifier_result.rewards.reward are not \
             labelled; first: {}",
            trials[3]
        )),
        "{err}"
    );
    let (counts, _) = labelled_counts(
        dir.path(),
        &["job", "--labels", "job", "--reward-threshold", "0.5"],
    );
    assert_eq!(counts, (1, 2), "the 0.5 trial is healthy at 0.5");
    // One trial folder given alone labels its own runs only.
    let (counts, _) = labelled_counts(dir.path(), &["job", "--labels", &trials[0]]);
    assert_eq!(counts, (0, 1));
}

/// Issue #29, item 5: a Harbor job folder whose trials hold none of the replayed runs is
/// an error (exit 2) naming the folder, with three names from each side.
#[test]
fn a_harbor_job_that_matches_no_run_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let trials = harbor_job(dir.path(), "other_job", &[Some(1.0), Some(0.0), Some(1.0)]);
    let ids = trajectories(dir.path());
    for command in [
        &["gate", "trajs"][..],
        &[
            "sweep",
            "trajs",
            "--param",
            "convergence_breaker.abandon=4,5",
        ],
    ] {
        let out = hindsight()
            .current_dir(dir.path())
            .args(command)
            .args(["--labels", "other_job", "--reward-threshold", "0.5"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("error: other_job: the labels match none of the 4"),
            "{err}"
        );
        assert!(err.contains(&trials.join(", ")), "{err}");
        assert!(
            err.contains(&format!("(outside every trial):{}", ids[0])),
            "{err}"
        );
    }
    // A folder with no trial in it labels nothing.
    let out = hindsight()
        .current_dir(dir.path())
        .args(["gate", "trajs", "--labels", "trajs"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Harbor trial here"));
}

/// Issue #29, item 5: a Terminal-Bench `results.json` labels runs by trial name and by
/// task id; a trial with no verdict (`is_resolved` null) is not labelled, and stderr says
/// so. Made-up ids that name no replayed run are an error, as for any summary.
#[test]
fn a_terminal_bench_results_file_labels_runs_by_task_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ids = trajectories(dir.path());
    let results = |tasks: &[String]| {
        let verdicts = [json!(true), json!(false), json!(false), json!(null)];
        let trials: Vec<_> = tasks
            .iter()
            .zip(verdicts)
            .map(|(task, v)| {
                json!({
                    "trial_name": format!("{task}.1-of-1.made-up-run"),
                    "task_id": task,
                    "is_resolved": v,
                    "failure_mode": "unset",
                })
            })
            .collect();
        json!({"id": "made-up", "results": trials, "accuracy": 0.25}).to_string()
    };
    fs::write(dir.path().join("results.json"), results(&ids)).expect("write");
    let (counts, err) = labelled_counts(dir.path(), &["trajs", "--labels", "results.json"]);
    assert_eq!(counts, (2, 1), "{err}");
    let undecided = format!(
        "note: results.json: 1 trial(s) with is_resolved null are not labelled; first: \
         {}.1-of-1.made-up-run",
        ids[3]
    );
    assert!(err.contains(&undecided), "{err}");
    let made_up: Vec<String> = ["tb-x", "tb-y", "tb-z"].map(String::from).to_vec();
    fs::write(dir.path().join("other.json"), results(&made_up)).expect("write");
    let out = hindsight()
        .current_dir(dir.path())
        .args(["gate", "trajs", "--labels", "other.json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("other.json: the labels match none"), "{err}");
    assert!(err.contains(&ids[..3].join(", ")), "{err}");
}

/// `trajs/` holding the project's mini-swe-agent fixtures (which name two models) and three
/// of its SWE-agent fixtures, labelled by `results.json` (a SWE-bench summary).
fn mixed_corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mini = trajectories(dir.path());
    let swe_fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats/swe_agent");
    for id in ["acme__calc-7", "acme__semver-12", "slug__slugify-3"] {
        let folder = dir.path().join("trajs").join(id);
        fs::create_dir_all(&folder).expect("mkdir");
        fs::copy(
            swe_fixtures.join(format!("{id}.traj")),
            folder.join(format!("{id}.traj")),
        )
        .expect("copy");
    }
    let summary = json!({
        "resolved_ids": ["acme__calc-7", mini[0]],
        "unresolved_ids": ["acme__semver-12", "slug__slugify-3", mini[1], mini[2]],
    });
    fs::write(dir.path().join("results.json"), summary.to_string()).expect("write");
    dir
}

/// Issue #29, item 3: a corpus of two harnesses and several models gives the gate's scores
/// and the sweep's points per harness and per model, each group adding up to the pooled
/// figures.
#[test]
fn scores_and_sweep_points_are_broken_out_by_harness_and_model() {
    let dir = mixed_corpus();
    let run = |args: &[&str]| -> serde_json::Value {
        let out = hindsight()
            .current_dir(dir.path())
            .args(args)
            .output()
            .expect("runs");
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let gate = run(&[
        "gate",
        "trajs",
        "--labels",
        "results.json",
        "--format",
        "json",
    ]);
    let models: Vec<&str> = gate["scores_by_model"]
        .as_array()
        .expect("by model")
        .iter()
        .map(|m| m["model"].as_str().expect("name"))
        .collect();
    assert!(models.len() >= 2, "{models:?}");
    for (i, pooled) in gate["scores"]
        .as_array()
        .expect("scores")
        .iter()
        .enumerate()
    {
        for (groups, key) in [
            ("scores_by_model", "model"),
            ("scores_by_harness", "harness"),
        ] {
            for field in ["failed_runs", "healthy_runs", "tokens_saved_on_failed"] {
                let sum: u64 = gate[groups]
                    .as_array()
                    .expect("groups")
                    .iter()
                    .map(|g| g["scores"][i][field].as_u64().expect(key))
                    .sum();
                assert_eq!(Some(sum), pooled[field].as_u64(), "{groups} {field}");
            }
        }
    }
    let sweep = run(&[
        "sweep",
        "trajs",
        "--labels",
        "results.json",
        "--param",
        "breaker.abandon=3..5",
        "--format",
        "json",
    ]);
    let harnesses: Vec<&str> = sweep["by_harness"]
        .as_array()
        .expect("by harness")
        .iter()
        .map(|h| h["name"].as_str().expect("name"))
        .collect();
    assert_eq!(harnesses, ["mini-swe-agent", "swe-agent"]);
    for groups in ["by_harness", "by_model"] {
        for (k, pooled) in sweep["points"]
            .as_array()
            .expect("points")
            .iter()
            .enumerate()
        {
            for field in [
                "failed_runs",
                "healthy_runs",
                "failed_cut",
                "tokens_saved_on_failed",
            ] {
                let sum: u64 = sweep[groups]
                    .as_array()
                    .expect("groups")
                    .iter()
                    .map(|g| g["points"][k][field].as_u64().expect("figure"))
                    .sum();
                assert_eq!(Some(sum), pooled[field].as_u64(), "{groups} {field}");
            }
        }
    }
    let table = hindsight()
        .current_dir(dir.path())
        .args([
            "sweep",
            "trajs",
            "--labels",
            "results.json",
            "--param",
            "breaker.abandon=3..5",
        ])
        .output()
        .expect("runs");
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("The swe-agent runs alone (harness)"),
        "{table}"
    );
}

/// Issue #29, item 6: with labels, the review opens with the decision table, one row per
/// guard ending in one of the four verdict words, the rules under it, and the rows in
/// decision.json; the breaker, which the default --param grid names, is chosen among its
/// settings.
#[test]
fn the_review_opens_with_a_decision_per_guard() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("review");
    hindsight()
        .args([
            "report",
            "corpora/",
            "--expect",
            "corpora/expectations.json",
            "--per-run",
            "1",
        ])
        .arg("--out-dir")
        .arg(&out)
        .assert()
        .success();
    let md = fs::read_to_string(out.join("report.md")).expect("report.md");
    let first = md.find("\n## ").map(|i| &md[i..]).expect("a section");
    assert!(
        first.starts_with("\n## Decision: is each guard worth shipping?"),
        "{md}"
    );
    for rule in [
        "- too few runs:",
        "- not discriminating:",
        "- hold:",
        "- ship:",
    ] {
        assert!(md.contains(rule), "{rule}");
    }
    let decisions: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("decision.json")).expect("json"))
            .expect("decisions");
    let guards = hindsight()
        .args(["guards", "--json"])
        .output()
        .expect("runs");
    let catalogue: serde_json::Value = serde_json::from_slice(&guards.stdout).expect("json");
    let rows = decisions.as_array().expect("rows");
    assert_eq!(rows.len(), catalogue.as_array().expect("guards").len());
    for row in rows {
        let verdict = row["verdict"].as_str().expect("verdict");
        assert!(
            ["ship", "hold", "not_discriminating", "too_few_runs"].contains(&verdict),
            "{row}"
        );
    }
    let breaker = rows
        .iter()
        .find(|r| r["guard"] == "convergence_breaker")
        .expect("breaker");
    let chosen = &breaker["choice"]["chosen"]["setting"];
    let names: Vec<&str> = chosen
        .as_array()
        .map(|s| s.iter().filter_map(|p| p[0].as_str()).collect())
        .unwrap_or_default();
    assert!(
        breaker["choice"]["chosen"].is_null()
            || names == ["convergence_breaker.stalled", "convergence_breaker.abandon"],
        "{breaker}"
    );
}

/// Issue #29, item 4: `--folds K` holds every project out once: each fold's setting is
/// chosen on the others, and the pooled held-out figures are the folds' added up; sharded,
/// it merges into the unsharded sweep.
#[test]
fn sweep_select_with_folds_holds_every_project_out_once() {
    let out = shipped_sweep(&[
        "--select",
        "false_cut_rate<=0.2",
        "--folds",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sweep: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let folds = &sweep["folds"];
    let per_fold = folds["per_fold"].as_array().expect("folds");
    assert_eq!(per_fold.len(), 3);
    let projects: std::collections::BTreeSet<&str> = sweep["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["project"].as_str().expect("project"))
        .collect();
    let held: u64 = per_fold
        .iter()
        .map(|c| c["held_out_projects"].as_u64().unwrap())
        .sum();
    assert_eq!(held, projects.len() as u64);
    for field in [
        "failed_runs",
        "healthy_runs",
        "failed_cut",
        "false_terminal_on_healthy",
    ] {
        let sum: u64 = per_fold
            .iter()
            .filter(|c| !c["chosen"].is_null())
            .map(|c| c["chosen"][field].as_u64().expect(field))
            .sum();
        assert_eq!(Some(sum), folds["pooled"][field].as_u64(), "{field}");
    }
    assert!(
        sweep["choice"].is_null(),
        "folds replace the single holdout"
    );

    let table = shipped_sweep(&["--select", "false_cut_rate<=0.2", "--folds", "3"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("in 3 folds") && text.contains("  fold 3 ("),
        "{text}"
    );
    let none = shipped_sweep(&["--select", "failed_cut_rate>=2", "--folds", "3"]);
    assert_eq!(none.status.code(), Some(1));
    let both = shipped_sweep(&[
        "--select",
        "false_cut_rate<=0.2",
        "--folds",
        "3",
        "--holdout",
        "0.5",
    ]);
    assert_eq!(both.status.code(), Some(2));

    let dir = tempfile::tempdir().expect("tempdir");
    let files: Vec<String> = (1..=2)
        .map(|k| {
            let shard = format!("{k}/2");
            let part = shipped_sweep(&[
                "--select",
                "false_cut_rate<=0.2",
                "--folds",
                "3",
                "--format",
                "json",
                "--shard",
                &shard,
            ]);
            assert_eq!(
                part.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&part.stderr)
            );
            let file = dir.path().join(format!("part-{k}.json"));
            fs::write(&file, &part.stdout).expect("write");
            file.to_str().expect("UTF-8").to_string()
        })
        .collect();
    let merged = hindsight()
        .args(["merge", &files[0], &files[1]])
        .output()
        .expect("runs");
    assert!(
        merged.stdout == out.stdout,
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
}

// CI output (issue #31, item 4): GitHub annotations and JUnit XML that point at each failing
// run's log and say what failed.

/// `gate . --expect expectations.json` on [`labeled_corpus`] with the breaker's `stalled`
/// at 4, against a baseline replayed with `stalled` and `abandon` at 2: the failed run's
/// stall comes a turn late (a failed expectation), its firings moved later and the healthy
/// run's cut is gone (regressions on two runs), and the corpus saves less (a regression of
/// no run).
fn failing_gate(root: &Path, extra: &[&str]) -> std::process::Output {
    save_baseline(
        root,
        "generous.json",
        &["--set", "breaker.stalled=2", "--set", "breaker.abandon=2"],
    );
    let out = gate(root)
        .args(["--baseline", "generous.json"])
        .args(["--set", "convergence_breaker.stalled=4"])
        .args(extra)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn github_annotations_point_at_each_failing_runs_log() {
    let dir = labeled_corpus();
    let out = failing_gate(dir.path(), &["--format", "github"]);
    let text = String::from_utf8(out.stdout).expect("utf-8");
    insta::assert_snapshot!("github_annotations", text);
    let lines: Vec<&str> = text.lines().collect();
    let (summary, annotations) = lines.split_last().expect("output");
    assert!(
        summary.starts_with("Gate: 3 of 4 expectations hold;"),
        "{summary}"
    );
    assert!(summary.ends_with(": FAIL"), "{summary}");
    assert!(
        annotations.iter().all(|l| l.starts_with("::error ")),
        "{text}"
    );
    // The failed expectation, on the failed run's events.jsonl, relative as `.` was given.
    assert_eq!(
        annotations[0],
        "::error file=api/.omnius/runs/1780000000000-fail01/events.jsonl,title=hindsight \
         gate%3A convergence_breaker stalled fires at turn 3::run: api/1780000000000-fail01 \
         (labelled failed)%0Aexpected: convergence_breaker stalled fires at turn 3%0Agot: \
         first fired at turn 4"
    );
    let on = |file: &str| annotations.iter().filter(|l| l.contains(file)).count();
    assert!(on("file=api/.omnius/runs/1780000000000-fail01/events.jsonl") > 1);
    assert!(on("file=svc/.omnius/runs/1780000000000-ok0001/events.jsonl") > 0);
    // The corpus's savings are no run's: that annotation has no file.
    let corpus = annotations
        .iter()
        .find(|l| l.contains("tokens saved (combined)"))
        .expect("the savings regression");
    assert!(corpus.starts_with("::error title="), "{corpus}");
    // Passing, nothing is annotated.
    let out = gate(dir.path())
        .args(["--format", "github"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Gate: 4 of 4 expectations hold; 0 baseline regressions: PASS\n"
    );
}

/// What `cmd` prints with `--format github`; the gate must fail (exit 1).
fn github(cmd: &mut Command) -> String {
    let out = cmd.args(["--format", "github"]).output().expect("runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// [`gate`] on [`labeled_corpus`] with the breaker's `stalled` at 4: one failed expectation.
fn late_stall(root: &Path) -> String {
    github(gate(root).args(["--set", "convergence_breaker.stalled=4"]))
}

/// A property ends at `,` and its name at `:`, so a log path holding them (and `%`, the
/// escape itself) is escaped in `file=`; the message escapes only `%` and line breaks.
#[test]
fn github_annotations_escape_what_the_runner_would_misread() {
    let dir = labeled_corpus();
    let odd = "a,b:c 100%";
    fs::rename(dir.path().join("api"), dir.path().join(odd)).expect("rename");
    let labels = fs::read_to_string(dir.path().join("expectations.json")).expect("labels");
    let labels = labels.replace("\"api/", &format!("\"{odd}/"));
    fs::write(dir.path().join("expectations.json"), labels).expect("labels");
    let text = late_stall(dir.path());
    assert!(
        text.starts_with(
            "::error file=a%2Cb%3Ac 100%25/.omnius/runs/1780000000000-fail01/events.jsonl,title="
        ),
        "{text}"
    );
    assert!(
        text.contains("::run: a,b:c 100%25/1780000000000-fail01 (labelled failed)%0A"),
        "{text}"
    );
}

/// The log path is the one discovery found: absolute for an absolute path given; and a
/// saved report (`--from`) records no log, so its annotations name none.
#[test]
fn github_annotations_name_the_log_as_the_path_was_given() {
    let dir = labeled_corpus();
    let root = dir.path();
    let text = github(
        hindsight()
            .arg("gate")
            .arg(root)
            .arg("--expect")
            .arg(root.join("expectations.json"))
            .args(["--set", "convergence_breaker.stalled=4"]),
    );
    let file = format!(
        "::error file={}/api/.omnius/runs/1780000000000-fail01/events.jsonl,",
        root.display()
    );
    assert!(text.starts_with(&file), "{text}");

    let set = ["--set", "convergence_breaker.stalled=4"];
    save_baseline(root, "stalled4.json", &set);
    let text = github(hindsight().current_dir(root).args([
        "gate",
        "--from",
        "stalled4.json",
        "--expect",
        "expectations.json",
    ]));
    assert!(
        text.starts_with("::error title=hindsight gate%3A convergence_breaker stalled"),
        "{text}"
    );
}

/// JUnit: every case has the run's log as `file` and `time="0"`, every failure a body that
/// says what was expected and what happened; the XML is the same bytes whatever the thread
/// count (no clock in it).
#[test]
fn junit_cases_name_the_log_and_failures_say_what_failed() {
    let dir = labeled_corpus();
    let out = tempfile::tempdir().expect("tempdir");
    let junit = |name: &str, threads: &str| {
        let path = out.path().join(name);
        let arg = path.display().to_string();
        failing_gate(dir.path(), &["--threads", threads, "--junit", &arg]);
        fs::read_to_string(path).expect("junit")
    };
    let xml = junit("one.xml", "1");
    assert_eq!(xml, junit("three.xml", "3"), "the same bytes");
    insta::assert_snapshot!("junit", xml);
    let cases: Vec<&str> = xml.lines().filter(|l| l.contains("<testcase ")).collect();
    assert!(cases.iter().all(|c| c.contains(r#" time="0""#)), "{xml}");
    let with_file = |run: &str| {
        let file = format!(r#" file="{run}/.omnius/runs/"#);
        cases.iter().filter(|c| c.contains(&file)).count()
    };
    // 4 expectations on the two runs, and the regressions on each.
    assert_eq!(
        with_file("api") + with_file("svc") + 1,
        cases.len(),
        "{xml}"
    );
    assert!(!xml.contains("/>\n      <failure"), "{xml}");
    assert!(
        xml.contains(r#"<testcase classname="(corpus)" name="tokens saved (combined)" time="0">"#),
        "{xml}"
    );
    assert!(
        xml.contains(
            "expected: convergence_breaker abandon as in the baseline\n\
             got: moved later: turn 2 -&gt; turn 5</failure>"
        ),
        "{xml}"
    );
}

/// docs/GATE.md's annotation example is what the gate prints for it: the labelled corpus
/// with the breaker's `stalled` at 4.
#[test]
fn the_gate_docs_annotation_example_is_what_gate_prints() {
    let dir = labeled_corpus();
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/GATE.md"))
        .expect("docs/GATE.md");
    let heading = "### CI output: GitHub annotations and JUnit\n";
    let example = common::doc_block(&doc, heading, "text");
    assert_eq!(late_stall(dir.path()), example);
}

/// Issue #32, E: a malformed SWE-bench summary is an error that names its field (exit 2),
/// never a gate that judges nothing and passes: a list that is not one, an id that is not
/// a string (even beside good ones), and a summary that labels no run. A count in place of
/// `resolved` (SWE-bench-java's) is still no list and not read.
#[test]
fn a_malformed_swe_bench_summary_is_an_error_naming_its_field() {
    let dir = tempfile::tempdir().expect("temp");
    let labels = dir.path().join("results.json");
    for (summary, said) in [
        (
            r#"{"resolved_ids": "x", "unresolved_ids": []}"#,
            "resolved_ids: expected a list of instance ids, found string",
        ),
        (
            r#"{"resolved_ids": [{"id": 1}], "unresolved_ids": ["acme__inventory-17"]}"#,
            "resolved_ids[0]: expected an instance id (a string), found object",
        ),
        (
            r#"{"resolved_ids": [], "unresolved_ids": [], "bogus": 1}"#,
            "labels no run",
        ),
    ] {
        std::fs::write(&labels, summary).expect("write");
        let out = hindsight()
            .args(["gate", "tests/fixtures/formats/mini_swe_agent", "--labels"])
            .arg(&labels)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{summary}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(said), "{summary}: {stderr}");
    }
    std::fs::write(
        &labels,
        r#"{"resolved": 3, "unresolved_ids": ["acme__inventory-17"]}"#,
    )
    .expect("write");
    let out = hindsight()
        .args(["gate", "tests/fixtures/formats/mini_swe_agent", "--labels"])
        .arg(&labels)
        .output()
        .expect("runs");
    assert!(out.status.code().is_some_and(|c| c < 2), "{:?}", out.status);
}

/// Issue #32, E: a Harbor trial whose reward is there but is no number is an error naming
/// the trial's file and the field, never a trial passed over as "no verdict" while the
/// gate judges the rest. A trial with no verdict (null) is still only noted.
#[test]
fn a_harbor_reward_of_another_type_is_an_error_naming_its_field() {
    for (verifier, said) in [
        (
            json!({"rewards": {"reward": "1.0"}}),
            "verifier_result.rewards.reward: expected a number, found string",
        ),
        (
            json!({"rewards": [1.0]}),
            "verifier_result.rewards: expected an object, found array",
        ),
        (
            json!("passed"),
            "verifier_result: expected an object, found string",
        ),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let trials = harbor_job(dir.path(), "job", &[Some(1.0), Some(0.0), Some(1.0)]);
        let result = dir.path().join(&trials[2]).join("result.json");
        let mut value: serde_json::Value =
            serde_json::from_slice(&fs::read(&result).expect("read")).expect("json");
        value["verifier_result"] = verifier.clone();
        fs::write(&result, value.to_string()).expect("write");
        let out = hindsight()
            .current_dir(dir.path())
            .args(["gate", "job", "--labels", "job"])
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{verifier}: {stderr}");
        assert!(
            stderr.contains(&format!("{}/result.json: {said}", trials[2])),
            "{verifier}: {stderr}"
        );
    }
}
