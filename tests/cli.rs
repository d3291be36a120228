//! The real binary: `hindsight replay` and `hindsight guards` as users call them.

mod common;

use common::{hindsight, stdout_of, synth};
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

fn json_report(args: &[&str]) -> serde_json::Value {
    common::json_report(&[args, &["--format", "json"]].concat())
}

/// A throwaway project with one run whose events are `lines`.
fn project(lines: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = dir.path().join("proj/.omnius/runs/1780000000000-x");
    fs::create_dir_all(&run).expect("mkdir");
    fs::write(run.join("events.jsonl"), lines).expect("write");
    let events = run.join("events.jsonl");
    (dir, events)
}

const GOOD: &str = r#"{"type":"tool_call","turn":1,"callId":"a","tool":"shell","args":{"command":"make"}}
{"type":"tool_result","turn":1,"callId":"a","success":false,"output":"x.c:1:1: error: boom"}
"#;

#[test]
fn replay_prints_the_breaker_turns_for_myactuator() {
    hindsight()
        .args(["replay", "corpora/", "--firings"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "corpora/myactuator/1783155600000-k3m9qa",
        ))
        .stdout(predicate::str::contains("stalled"))
        .stdout(predicate::str::contains("abandon"))
        .stdout(predicate::str::contains("12,340"));
}

#[test]
fn default_path_is_corpora() {
    let with = hindsight()
        .args(["replay", "corpora/"])
        .output()
        .expect("runs");
    let without = hindsight().arg("replay").output().expect("runs");
    assert_eq!(with.stdout, without.stdout);
}

#[test]
fn json_report_has_the_documented_shape() {
    let report = json_report(&["replay", "corpora/"]);
    let run = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["run_id"] == "1783159200000-p7x2vd")
        .expect("myactuator session 2");
    assert_eq!(run["format"], "omnius");
    for key in [
        "run_id",
        "project",
        "turns",
        "tokens_total",
        "ledger",
        "firings",
        "savings",
        "metrics",
        "input",
    ] {
        assert!(run.get(key).is_some(), "missing {key}");
    }
    let abandon = run["firings"]
        .as_array()
        .expect("firings")
        .iter()
        .find(|f| f["guard"] == "convergence_breaker" && f["action"] == "abandon")
        .expect("abandon");
    assert_eq!(abandon["turn"], 2);
    assert_eq!(abandon["work_order"], "WO-3");
    assert_eq!(abandon["tokens_saved"], 12340);
    assert_eq!(run["savings"]["cut_at_turn"], 2);
    assert_eq!(run["ledger"]["recorded"], "open");
    assert!(
        report["summary"]["tokens_saved_combined"]
            .as_u64()
            .expect("u64")
            > 0
    );
}

#[test]
fn output_is_identical_for_any_thread_count() {
    let run = |threads: &str| {
        hindsight()
            .args([
                "replay",
                "corpora/",
                "--format",
                "json",
                "--threads",
                threads,
            ])
            .output()
            .expect("runs")
            .stdout
    };
    let one = run("1");
    assert!(!one.is_empty());
    assert_eq!(one, run("2"));
    assert_eq!(one, run("8"));
    assert_eq!(one, run("8"));
}

#[test]
fn markdown_report_snapshot() {
    let out = hindsight()
        .args(["replay", "corpora/", "--format", "markdown"])
        .output()
        .expect("runs");
    insta::assert_snapshot!("corpora_markdown", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn table_report_snapshot() {
    let out = hindsight()
        .args(["replay", "corpora/"])
        .output()
        .expect("runs");
    insta::assert_snapshot!("corpora_table", String::from_utf8_lossy(&out.stdout));
}

/// Issue #31, item 2: the terminal tables fit `COLUMNS` (what a 100-column terminal sets),
/// wrapping their widest cells, on every command that prints tables; the default `replay`
/// table is the summary (runs, guards), `--firings` adds every firing; a relative path
/// given names no absolute path; `--wide` lifts the limit.
#[test]
fn tables_fit_the_terminal_width() {
    let cwd = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let absolute = cwd.canonicalize().expect("cwd").display().to_string();
    for args in [
        &["replay", "corpora/"][..],
        &["replay", "corpora/", "--firings"],
        &["gate", "corpora/", "--expect", "corpora/expectations.json"],
        &[
            "sweep",
            "corpora/",
            "--expect",
            "corpora/expectations.json",
            "--param",
            "breaker.abandon=3..5",
        ],
        &["guards"],
    ] {
        let out = hindsight()
            .args(args)
            .env("COLUMNS", "100")
            .output()
            .expect("runs");
        let text = String::from_utf8(out.stdout).expect("UTF-8");
        let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 100).collect();
        assert!(wide.is_empty(), "{args:?}: {wide:#?}");
        assert!(!text.contains(&absolute), "{args:?} names {absolute}");
    }
    let summary = hindsight()
        .args(["replay", "corpora/"])
        .env("COLUMNS", "100")
        .output()
        .expect("runs");
    let summary = String::from_utf8(summary.stdout).expect("UTF-8");
    assert!(summary.starts_with("Runs\n") && summary.contains("\nGuards over "));
    assert!(!summary.contains("\nFirings\n"));
    let wide = hindsight()
        .args(["replay", "corpora/", "--wide", "--firings"])
        .env("COLUMNS", "100")
        .output()
        .expect("runs");
    let wide = String::from_utf8(wide.stdout).expect("UTF-8");
    assert!(wide.contains("\nFirings\n"));
    assert!(
        wide.lines().any(|l| l.chars().count() > 100),
        "--wide keeps the content's width"
    );
}

#[test]
fn guards_lists_the_catalogue() {
    let out = hindsight()
        .args(["guards", "--json"])
        .output()
        .expect("runs");
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let ids: Vec<&str> = list
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|g| g["id"].as_str())
        .collect();
    // The catalogue's order is the one docs/GUARDS.md lists (its *Catalogue* table), so
    // adding a guard is written down in one place.
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/GUARDS.md"),
    )
    .expect("GUARDS.md");
    let catalogue = doc.split_once("## Catalogue").expect("catalogue").1;
    let documented: Vec<&str> = catalogue
        .lines()
        .skip_while(|l| !l.starts_with("| id |"))
        .skip(2)
        .take_while(|l| l.starts_with("| `"))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    assert_eq!(ids, documented);
    assert_eq!(ids.len(), hindsight::guards::registry().len());
    for guard in list.as_array().expect("array") {
        for key in ["work_order", "seed", "summary", "defaults"] {
            assert!(
                guard.get(key).is_some_and(|v| !v.is_null()),
                "{}: {key}",
                guard["id"]
            );
        }
    }
    let breaker = &list[1];
    assert_eq!(
        breaker["defaults"],
        serde_json::json!({"converging_warn": 2, "stalled": 3, "abandon": 5})
    );
    hindsight()
        .arg("guards")
        .assert()
        .success()
        .stdout(predicate::str::contains("WO-TD-06").and(predicate::str::contains("000 WO-3")));
}

#[test]
fn lenient_mode_skips_counts_and_locates_bad_records() {
    let lines = format!("{GOOD}{{\"type\":\"tool_call\",\"turn\":\"3\",\"callId\":\"b\",\"tool\":\"shell\"}}\nnot json\n{{\"type\":\"model_usage\",\"turn\":2,\"promptTokens\":5");
    let (dir, _) = project(&lines);
    let out = hindsight()
        .args(["replay", "--format", "json"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("events.jsonl: 3 bad record(s) skipped"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let input = &report["runs"][0]["input"];
    assert_eq!(input["skipped"], 3);
    assert_eq!(input["records"], 2);
    let problems: Vec<&str> = input["problems"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert!(
        problems[0].ends_with("events.jsonl:3: field `turn`: expected integer, found string"),
        "{problems:?}"
    );
    assert!(
        problems[1].contains("events.jsonl:4: invalid JSON"),
        "{problems:?}"
    );
    assert!(
        problems[2].contains("events.jsonl:5: truncated record"),
        "{problems:?}"
    );
}

#[test]
fn strict_mode_fails_with_exit_2_and_the_location() {
    let (dir, _) = project(&format!(
        "{GOOD}{{\"type\":\"tool_result\",\"turn\":2,\"callId\":\"a\"}}\n"
    ));
    hindsight()
        .args(["replay", "--strict"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "events.jsonl:3: field `success`: required field is missing",
        ));
}

#[test]
fn invalid_utf8_is_located_not_fatal() {
    let (dir, events) = project(GOOD);
    let mut bytes = fs::read(&events).expect("read");
    bytes.extend_from_slice(b"{\"type\":\"session_start\",\"cwd\":\"\xff\xfe\"}\n");
    fs::write(&events, bytes).expect("write");
    hindsight()
        .args(["replay", "--strict"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("events.jsonl:3: invalid UTF-8"));
    hindsight().arg("replay").arg(dir.path()).assert().success();
}

#[test]
fn missing_events_file_is_reported() {
    let (dir, events) = project(GOOD);
    fs::remove_file(&events).expect("rm");
    hindsight()
        .args(["replay", "--strict"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "events.jsonl: no such file or directory",
        ));
}

#[test]
fn missing_input_path_is_a_usage_error() {
    hindsight()
        .args(["replay", "no/such/dir"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no/such/dir: no such file or directory",
        ));
}

#[test]
fn unknown_setting_is_a_usage_error() {
    hindsight()
        .args([
            "replay",
            "corpora/",
            "--set",
            "convergence_breaker.abandn=3",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown field `abandn`"));
    hindsight()
        .args(["replay", "corpora/", "--set", "breakr.abandon=3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown guard `breakr`"));
}

#[test]
fn config_file_changes_thresholds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("guards.json");
    fs::write(&config, r#"{"convergence_breaker": {"abandon": 99, "stalled": 98}, "diagnostic_delta": {"abandon": 99, "stalled": 98}}"#).expect("write");
    let report = json_report(&[
        "replay",
        "corpora/myactuator",
        "--config",
        config.to_str().expect("utf8"),
    ]);
    let terminal = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .flat_map(|r| r["firings"].as_array().expect("firings").iter())
        .filter(|f| f["effect"] == "terminal")
        .count();
    assert_eq!(terminal, 0);
}

#[test]
fn refuses_to_write_inside_a_recorded_directory() {
    let (dir, events) = project(GOOD);
    let run_dir: &Path = events.parent().expect("run dir");
    let before: Vec<_> = fs::read_dir(run_dir)
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    hindsight()
        .arg("replay")
        .arg(dir.path())
        .arg("--out")
        .arg(run_dir.join("report.txt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "report.txt: refusing to write inside",
        ))
        .stderr(predicate::str::contains("which this command reads"));
    let after: Vec<_> = fs::read_dir(run_dir)
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before, after);
}

#[test]
fn help_has_examples_and_exit_codes() {
    hindsight()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Examples:").and(predicate::str::contains("Exit codes")));
    hindsight()
        .args(["replay", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--strict"));
}

#[test]
fn warning_counts_every_skipped_record_of_a_file() {
    let (dir, _) = project(&format!("{GOOD}{}", "oops\n".repeat(120)));
    hindsight()
        .arg("replay")
        .arg(dir.path())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "events.jsonl: 120 bad record(s) skipped; first:",
        ));
}

/// One project of many sessions: its runs are read ahead in parallel and replayed in
/// order (issue #13), so the report, and under `--strict` the error a bad record in a
/// middle session gives, are the same at any thread count.
#[test]
fn a_single_long_project_gives_the_same_output_at_any_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("c");
    synth(
        &corpus,
        &["--projects", "1", "--runs-per-project", "9", "--seed", "3"],
    )
    .success();
    let replay = |threads: &str, strict: bool| {
        let mut cmd = hindsight();
        cmd.arg("replay").arg(&corpus);
        cmd.args(["--format", "json", "--threads", threads]);
        if strict {
            cmd.arg("--strict");
        }
        cmd.output().expect("runs")
    };
    let one = replay("1", false);
    assert!(one.status.success());
    for threads in ["2", "3", "8"] {
        assert_eq!(
            one.stdout,
            replay(threads, false).stdout,
            "{threads} threads"
        );
    }
    let report: serde_json::Value = serde_json::from_slice(&one.stdout).expect("json");
    let sessions: Vec<u64> = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["session"].as_u64().expect("session"))
        .collect();
    assert_eq!(sessions, (1..=9).collect::<Vec<_>>());
    // A bad record in the sixth session: the same located error whatever the threads.
    let project = std::fs::read_dir(&corpus)
        .expect("corpus")
        .flatten()
        .next()
        .expect("the one project")
        .path();
    let mut runs: Vec<PathBuf> = std::fs::read_dir(project.join(".omnius/runs"))
        .expect("runs folder")
        .flatten()
        .map(|e| e.path())
        .collect();
    runs.sort();
    let events = runs[5].join("events.jsonl");
    let mut text = std::fs::read_to_string(&events).expect("events");
    text.push_str("{\"type\":\"tool_call\",\"turn\":\"x\"}\n");
    std::fs::write(&events, text).expect("write");
    let strict = replay("1", true);
    assert_eq!(strict.status.code(), Some(2));
    let message = String::from_utf8_lossy(&strict.stderr).into_owned();
    assert!(message.contains("events.jsonl"), "{message}");
    for threads in ["2", "8"] {
        let other = replay(threads, true);
        assert_eq!(other.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&other.stderr),
            message,
            "{threads} threads"
        );
    }
}

/// The JSON report is written while the replay runs; a replay stopped by a bad record
/// (`--strict`) leaves the file that was at `--out` as it was, and no partial file.
#[test]
fn a_strict_failure_leaves_the_previous_report_in_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = dir.path().join("corpus/p/.omnius/runs");
    for (id, events) in [
        (
            "1780000000000-a",
            "{\"type\":\"session_start\",\"turn\":0,\"seq\":1}\n",
        ),
        (
            "1780000000001-b",
            "{\"type\":\"tool_call\",\"turn\":\"x\"}\n",
        ),
    ] {
        std::fs::create_dir_all(runs.join(id)).expect("mkdir");
        std::fs::write(runs.join(id).join("events.jsonl"), events).expect("write");
    }
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    let report = out.join("report.json");
    std::fs::write(&report, "the previous report").expect("write");
    let replay = |strict: bool| {
        let mut cmd = hindsight();
        cmd.arg("replay").arg(dir.path().join("corpus"));
        cmd.args(["--format", "json", "--out"]).arg(&report);
        if strict {
            cmd.arg("--strict");
        }
        cmd.output().expect("runs")
    };
    assert_eq!(replay(true).status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(&report).expect("read"),
        "the previous report"
    );
    let left: Vec<_> = std::fs::read_dir(&out).expect("ls").flatten().collect();
    assert_eq!(left.len(), 1, "no partial file left beside it");
    assert!(replay(false).status.success());
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).expect("read")).expect("json");
    assert_eq!(written["summary"]["runs"], 2);
    assert_eq!(written["summary"]["skipped_records"], 1);
}

/// Several projects with bad records: under `--strict` the error is the first project's
/// in input order, whatever the thread count (later projects may have been under way).
#[test]
fn the_strict_error_is_the_first_projects_at_any_thread_count() {
    let dir = tempfile::tempdir().expect("tempdir");
    for p in 0..6 {
        let run = dir
            .path()
            .join(format!("p{p}/.omnius/runs/1780000000000-a"));
        std::fs::create_dir_all(&run).expect("mkdir");
        let bad = if p == 2 || p == 4 {
            "{\"type\":\"tool_call\",\"turn\":\"x\"}\n"
        } else {
            ""
        };
        let events = format!("{{\"type\":\"session_start\",\"turn\":0,\"seq\":1}}\n{bad}");
        std::fs::write(run.join("events.jsonl"), events).expect("write");
    }
    for threads in ["1", "2", "5"] {
        let out = hindsight()
            .arg("replay")
            .arg(dir.path())
            .args(["--strict", "--threads", threads])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        // With the separators: a temporary folder's random name may hold `p4` itself.
        assert!(stderr.contains("/p2/"), "{threads} threads: {stderr}");
        assert!(!stderr.contains("/p4/"), "{threads} threads: {stderr}");
    }
}

/// Projects longer than the runs allowed to wait for their turn (16 per thread): the
/// projects behind the first pause and resume as it moves (issue #13), and every run is
/// written once, in order, whatever the thread count.
#[test]
fn projects_that_pause_for_their_turn_lose_and_reorder_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("c");
    synth(&corpus, &["--tiny-runs", "240", "--projects", "3"]).success();
    let replay = |threads: &str| {
        let out = hindsight()
            .arg("replay")
            .arg(&corpus)
            .args(["--format", "json", "--threads", threads])
            .output()
            .expect("runs");
        assert!(out.status.success(), "{threads} threads");
        out.stdout
    };
    let one = replay("1");
    for threads in ["2", "3"] {
        assert_eq!(one, replay(threads), "{threads} threads");
    }
    let report: serde_json::Value = serde_json::from_slice(&one).expect("json");
    let runs: Vec<(String, u64)> = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            let project = r["project"].as_str().expect("project").to_string();
            (project, r["session"].as_u64().expect("session"))
        })
        .collect();
    assert_eq!(runs.len(), 240);
    let mut sorted = runs.clone();
    sorted.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    assert_eq!(
        runs, sorted,
        "projects in order, each project's sessions in order"
    );
    assert_eq!(report["summary"]["runs"], 240);
}

/// What `hindsight replay PATH --format FORMAT` prints, once it succeeded.
fn printed(path: &Path, format: &str) -> String {
    let args = [
        "replay".as_ref(),
        "--format".as_ref(),
        format.as_ref(),
        path.as_os_str(),
    ];
    String::from_utf8(stdout_of::<&std::ffi::OsStr>(&args)).expect("UTF-8")
}

/// Saved tokens are the cost model's answer, not a count read from the recording
/// (docs/COUNTERFACTUAL.md), so a report that shows any says they are estimates, and one
/// where nothing fired does not.
#[test]
fn saved_figures_are_marked_as_estimates_when_a_guard_fired() {
    let note = "tokens and $ saved are estimates, not measurements";
    let quiet = r#"{"type":"tool_call","turn":1,"callId":"a","tool":"shell","args":{"command":"ls"}}
{"type":"tool_result","turn":1,"callId":"a","success":true,"output":"README"}
"#;
    let (dir, _) = project(quiet);
    for format in ["table", "markdown"] {
        let nothing_fired = printed(dir.path(), format);
        assert!(nothing_fired.contains("~6") && !nothing_fired.contains(note));
        assert!(printed(Path::new("corpora/"), format).contains(note));
    }
}

/// A cost hindsight priced from token counts is not the cost a log recorded: the notes say
/// how much of it hindsight priced, and say nothing when the logs recorded it all.
#[test]
fn a_cost_priced_at_list_prices_is_marked_and_a_recorded_one_is_not() {
    let note = "of the cost is priced by hindsight from token counts";
    let usage = |cost: &str| {
        format!(
            "{{\"type\":\"model_usage\",\"turn\":1,\"promptTokens\":1000000,\"completionTokens\":0,\"model\":\"claude-sonnet-4-5\"{cost}}}\n{GOOD}"
        )
    };
    let (priced, _) = project(&usage(""));
    let (recorded, _) = project(&usage(",\"costUsd\":2.5"));
    for format in ["table", "markdown"] {
        assert!(printed(priced.path(), format).contains(&format!("$3.00 {note}")));
        let as_recorded = printed(recorded.path(), format);
        assert!(as_recorded.contains("$2.50") && !as_recorded.contains(note));
    }
    let explained = "$3.00 of it priced by hindsight from token counts";
    hindsight()
        .args(["explain", "--format", "markdown"])
        .arg(priced.path())
        .assert()
        .success()
        .stdout(predicate::str::contains(explained));
    hindsight()
        .args(["explain", "--format", "markdown"])
        .arg(recorded.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("priced by hindsight").not());
}

/// Issue #31, item 5: with no PATH outside the repository there is nothing to read, a usage
/// error that says so (not `corpora: no such file`); an explicit empty folder is exit 2
/// with "no recorded run found", never empty tables and exit 0.
#[test]
fn empty_and_missing_input_are_exit_2() {
    let dir = tempfile::tempdir().expect("temp");
    let out = hindsight()
        .current_dir(dir.path())
        .arg("replay")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no PATH given, and no corpora/ here"),
        "{stderr}"
    );
    std::fs::create_dir(dir.path().join("empty")).expect("dir");
    for command in [&["replay"][..], &["explain"], &["events"]] {
        let out = hindsight()
            .current_dir(dir.path())
            .args(command)
            .arg("empty")
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("empty: no recorded run found there"),
            "{command:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{command:?} printed a report");
    }
}

/// Issue #31, item 2: tables and pages name a run without saying its id twice: a
/// trajectory filed in a folder of its own name (`x/x.traj.json`) is `…/x`, not `…/x/x/x`.
#[test]
fn run_names_say_the_instance_once() {
    let dir = tempfile::tempdir().expect("temp");
    let instance = dir.path().join("runs/acme__inventory-17");
    std::fs::create_dir_all(&instance).expect("dir");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/formats/mini_swe_agent/acme__inventory-17.traj.json");
    std::fs::copy(fixture, instance.join("acme__inventory-17.traj.json")).expect("copy");
    for args in [&["replay", "--firings"][..], &["explain"]] {
        let out = hindsight()
            .current_dir(dir.path())
            .args(args)
            .arg("runs")
            .output()
            .expect("runs");
        let text = String::from_utf8(out.stdout).expect("UTF-8");
        assert!(text.contains("runs/acme__inventory-17"), "{args:?}: {text}");
        assert!(
            !text.contains("acme__inventory-17/acme__inventory-17"),
            "{args:?}: {text}"
        );
    }
}

/// Issue #31, item 6: `--help` is for people, not rustdoc: no intra-doc link
/// (``[`name`]``) leaks into any command's help.
#[test]
fn help_has_no_rustdoc_links() {
    for command in [
        "replay", "guards", "gate", "sweep", "report", "explain", "events", "import", "merge",
        "synth",
    ] {
        let out = hindsight()
            .args([command, "--help"])
            .output()
            .expect("runs");
        let help = String::from_utf8(out.stdout).expect("UTF-8");
        // A link ends in "`]"; a literal "`[`" (the glob mark) does not.
        assert!(!help.contains("`]"), "{command} --help: {help}");
    }
}

/// Issue #32, J: a setting that does not read is named by its key, from `--set` and
/// `--config` alike (was `invalid type: string "5", expected u32`, no key).
#[test]
fn a_bad_setting_is_named_by_its_key() {
    let dir = tempfile::tempdir().expect("temp");
    let config = dir.path().join("config.json");
    std::fs::write(&config, r#"{"convergence_breaker": {"abandon": "5"}}"#).expect("write");
    for args in [
        vec![
            "replay",
            "corpora/healthy-go",
            "--set",
            "convergence_breaker.stalled=-1",
        ],
        vec![
            "replay",
            "corpora/healthy-go",
            "--config",
            config.to_str().expect("path"),
        ],
    ] {
        let out = hindsight().args(&args).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let key = if args.contains(&"--set") {
            "`stalled`"
        } else {
            "`abandon`"
        };
        assert!(
            stderr.contains(&format!("guard `convergence_breaker`: {key}: invalid")),
            "{args:?}: {stderr}"
        );
    }
}

/// Issue #32, J: the small JSON files a user hands a command are read as recordings are:
/// a byte order mark is no error, a key named twice is one, named by its path, in
/// `--config`, `--prices` and labels alike (a run labelled twice was judged under one
/// label).
#[test]
fn user_files_take_a_bom_and_refuse_a_key_named_twice() {
    let dir = tempfile::tempdir().expect("temp");
    let file = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        path.to_str().expect("path").to_string()
    };
    let bom = file(
        "bom.json",
        b"\xEF\xBB\xBF{\"convergence_breaker\": {\"stalled\": 3}}",
    );
    stdout_of(&["replay", "corpora/healthy-go", "--config", &bom]);
    let config = file(
        "c.json",
        br#"{"convergence_breaker": {"stalled": 3, "stalled": 4}}"#,
    );
    let prices = file(
        "p.json",
        br#"{"m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "output_cost_per_token": 3e-6}}"#,
    );
    let labels = file(
        "l.json",
        br#"{"resolved_ids": ["acme__inventory-21"], "unresolved_ids": ["acme__inventory-17"], "resolved_ids": []}"#,
    );
    for (args, key) in [
        (
            vec!["replay", "corpora/healthy-go", "--config", &config],
            "`convergence_breaker.stalled`",
        ),
        (
            vec!["replay", "corpora/healthy-go", "--prices", &prices],
            "`m.output_cost_per_token`",
        ),
        (
            vec![
                "gate",
                "tests/fixtures/formats/mini_swe_agent",
                "--labels",
                &labels,
            ],
            "`resolved_ids`",
        ),
    ] {
        let out = hindsight().args(&args).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("{key}: duplicate key")),
            "{args:?}: {stderr}"
        );
    }
}

/// Issue #32, J: a setting's bounds are said in words (`above 0 and at most 1`), not as
/// the 300-digit decimal of the smallest positive number.
#[test]
fn a_setting_out_of_range_says_its_bounds_in_words() {
    let out = hindsight()
        .args([
            "replay",
            "corpora/healthy-go",
            "--set",
            "tool_selector.ewma_alpha=2",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`ewma_alpha` is 2; it must be a finite number above 0 and at most 1"),
        "{stderr}"
    );
    assert!(stderr.len() < 200, "{stderr}");
}

/// A run folder given as the path is that run, as `explain` and `events` read it (issue
/// #32, L): its entry in the report is byte for byte its entry in the replay of the whole
/// project, the resumed session's breaker carrying the rounds of the session before it
/// (the abandon at turn 2), and no other run is reported. Before, `replay` read no run there.
#[test]
fn a_run_folder_is_replayed_as_that_run_with_what_it_carries() {
    let folder = "corpora/myactuator/.omnius/runs/1783159200000-p7x2vd";
    for command in ["replay", "gate"] {
        let mut args = vec![command, folder, "--format", "json"];
        if command == "gate" {
            args.extend(["--expect", "corpora/expectations.json"]);
        }
        let out = hindsight().args(&args).output().expect("runs");
        assert!(
            out.status.code().is_some_and(|c| c < 2),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let one = json_report(&["replay", folder]);
    let whole = json_report(&["replay", "corpora/myactuator"]);
    let runs = one["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "the run folder's run alone");
    let same = whole["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["run_id"] == "1783159200000-p7x2vd")
        .expect("in the whole replay");
    assert_eq!(&runs[0], same);
    let breaker: Vec<(u64, &str)> = runs[0]["firings"]
        .as_array()
        .expect("firings")
        .iter()
        .filter(|f| f["guard"] == "convergence_breaker")
        .map(|f| (f["turn"].as_u64().unwrap(), f["action"].as_str().unwrap()))
        .collect();
    assert_eq!(breaker[0], (2, "abandon"), "carried from the first session");
    assert_eq!(one["summary"]["runs"], 1);
}
