//! Never silent (issue #30, item 7): a JSON Lines file under the given paths that no format
//! claims is named on stderr and listed under `input.unrecognised` with the nearest format
//! (`none` here) and why; `--strict` stops on it (exit 2); and a path given that yields no
//! run is exit 2 whatever the policy, since "0 runs" would read as a healthy agent. JSON
//! documents that are no run (labels, reports, configuration) stay quiet.

mod common;

use serde_json::Value;
use std::fs;
use std::path::Path;

/// Records of a made-up agent's log: objects one per line, of no format hindsight reads.
const UNKNOWN_LOG: &str = "{\"kind\":\"step\",\"seq\":1,\"note\":\"plan\"}\n\
                           {\"kind\":\"step\",\"seq\":2,\"note\":\"act\"}\n\
                           {\"kind\":\"done\",\"seq\":3}\n";

/// `dir/logs/agent.jsonl` (unknown), a labels-like JSON document and a one-line JSON file
/// beside a copy of a shipped project.
fn folder(dir: &Path) {
    let logs = dir.join("logs");
    fs::create_dir_all(&logs).expect("mkdir");
    fs::write(logs.join("agent.jsonl"), UNKNOWN_LOG).expect("write");
    fs::write(
        logs.join("labels.json"),
        "{\n  \"resolved\": [],\n  \"note\": \"not a run\"\n}\n",
    )
    .expect("write");
    fs::write(logs.join("settings.json"), "{\"threads\":2}\n").expect("write");
    let traj = "acme__calc-7.traj";
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats/swe_agent");
    fs::copy(fixture.join(traj), dir.join(traj)).expect("copy");
}

fn replay(dir: &Path, args: &[&str]) -> std::process::Output {
    common::hindsight()
        .current_dir(dir)
        .arg("replay")
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn an_unknown_jsonl_file_is_named_listed_and_warned_about() {
    let dir = tempfile::tempdir().expect("tempdir");
    folder(dir.path());
    let out = replay(dir.path(), &[".", "--format", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["runs"].as_array().expect("runs").len(), 1);
    let unrecognised = report["input"]["unrecognised"].as_array().expect("listed");
    assert_eq!(
        unrecognised.len(),
        1,
        "only the JSON Lines file: {unrecognised:?}"
    );
    assert_eq!(unrecognised[0]["path"], "logs/agent.jsonl");
    assert_eq!(unrecognised[0]["format"], "none");
    let reason = unrecognised[0]["reason"].as_str().expect("reason");
    assert!(reason.contains("kind, note, seq"), "{reason}");
    let warned: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("agent.jsonl"))
        .collect();
    assert_eq!(warned.len(), 1, "{stderr}");
    assert!(
        warned[0].starts_with("warning: unrecognised logs/agent.jsonl: not read"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("labels.json") && !stderr.contains("settings.json"),
        "{stderr}"
    );
}

#[test]
fn strict_stops_on_an_unknown_jsonl_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    folder(dir.path());
    let out = replay(dir.path(), &[".", "--strict", "--format", "json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no report");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: logs/agent.jsonl: not read: JSON Lines"),
        "{stderr}"
    );
}

#[test]
fn a_path_that_yields_no_run_is_exit_2_in_either_mode() {
    let dir = tempfile::tempdir().expect("tempdir");
    folder(dir.path());
    fs::create_dir_all(dir.path().join("empty")).expect("mkdir");
    for (path, why) in [
        ("logs/agent.jsonl", "1 file(s) under it passed over"),
        ("logs", "1 file(s) under it passed over"),
        ("empty", "nothing under it is a recorded run"),
    ] {
        for strict in [false, true] {
            let mut args = vec![path];
            if strict {
                args.push("--strict");
            }
            let out = replay(dir.path(), &args);
            assert_eq!(out.status.code(), Some(2), "{path} strict={strict}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            if !strict || path == "empty" {
                assert!(
                    stderr.contains(&format!(
                        "error: {path}: no recorded run found there: {why}"
                    )),
                    "{path}: {stderr}"
                );
            }
        }
    }
    // Beside a path that yields runs, still an error: each path is judged.
    let out = replay(dir.path(), &["acme__calc-7.traj", "empty"]);
    assert_eq!(out.status.code(), Some(2));
}
