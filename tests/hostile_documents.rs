//! Recordings whose size or layout once lost runs (issue #32): a trajectory over the
//! document cap (B) and documents whose telling structure lies past detection's first
//! 64 KiB (C). Each tree is built here from the importers' own fixtures
//! (`tests/fixtures/formats/`), grown where the defect needs it, and replayed by the real
//! binary under the watchdog of `common::watched`.

mod common;

use common::watched::{open_tempdir, run_watched};
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/formats");

/// 70 KiB of text: longer than detection's first read.
fn long_text() -> String {
    "All work and no play. ".repeat(70 * 1024 / 22 + 1)
}

fn fixture(path: &str) -> Value {
    let text = fs::read_to_string(format!("{FIXTURES}/{path}")).expect("fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

fn write_json(dir: &Path, path: &str, value: &Value) {
    let path = dir.join(path);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, serde_json::to_string_pretty(value).expect("JSON")).expect("write");
}

/// `replay . --format json` in `dir` with `extra`: its exit code, report and stderr.
fn replay(dir: &Path, extra: &[&str]) -> (Option<i32>, Value, String) {
    let mut args = vec!["replay", ".", "--format", "json"];
    args.extend(extra);
    let out = run_watched(dir, &args, false);
    assert!(!out.timed_out, "replay ended; stderr: {}", out.stderr);
    let report = if out.code == Some(0) {
        out.json()
    } else {
        Value::Null
    };
    (out.code, report, out.stderr)
}

/// The runs of `report` as `project/run` with their turns.
fn runs(report: &Value) -> Vec<(String, u64)> {
    report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            let name = format!(
                "{}/{}",
                r["project"].as_str().unwrap(),
                r["run_id"].as_str().unwrap()
            );
            (name, r["turns"].as_u64().expect("turns"))
        })
        .collect()
}

/// The problems listed for the run whose project is `project`.
fn problems_of(report: &Value, project: &str) -> Vec<String> {
    let run = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["project"] == project)
        .unwrap_or_else(|| panic!("a run of {project} in {report}"));
    run["input"]["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| p.as_str().expect("text").to_string())
        .collect()
}

/// B: a mini-swe-agent and a SWE-agent trajectory over `--max-document-mib 1` beside a
/// good project. Lenient: the good run is replayed, each big one is listed with its
/// problem (exit 0); strict: exit 2 naming it. Before, lenient was exit 2 with no report.
#[test]
fn one_oversized_trajectory_does_not_lose_the_corpus() {
    let dir = open_tempdir();
    let good = fixture("mini_swe_agent/acme__inventory-17.traj.json");
    write_json(dir.path(), "good/acme__inventory-17.traj.json", &good);
    let mut big = fixture("mini_swe_agent/acme__ledger-8.traj.json");
    big["messages"][0]["content"] = json!("x".repeat(2 * 1024 * 1024));
    write_json(dir.path(), "big/acme__ledger-8.traj.json", &big);
    let mut swe = fixture("swe_agent/acme__calc-7.traj");
    swe["trajectory"][0]["observation"] = json!("y".repeat(2 * 1024 * 1024));
    write_json(dir.path(), "swe/acme__calc-7.traj", &swe);

    let (code, report, stderr) = replay(dir.path(), &["--max-document-mib", "1"]);
    assert_eq!(code, Some(0), "lenient replay; stderr: {stderr}");
    let replayed = runs(&report);
    assert!(
        replayed.contains(&("good/acme__inventory-17/acme__inventory-17".into(), 12)),
        "the good run is replayed whole: {replayed:?}"
    );
    for (project, file) in [
        ("big/acme__ledger-8", "big/acme__ledger-8.traj.json"),
        ("swe/acme__calc-7", "swe/acme__calc-7.traj"),
    ] {
        assert_eq!(
            problems_of(&report, project),
            [format!(
                "{file}: file larger than the 1 MiB cap (--max-document-mib): not read"
            )],
            "the big trajectory is listed with why it was not read"
        );
        assert!(stderr.contains(file), "and warned about: {stderr}");
    }

    let (code, _, stderr) = replay(dir.path(), &["--max-document-mib", "1", "--strict"]);
    assert_eq!(code, Some(2), "strict: {stderr}");
    assert!(
        stderr.contains("file larger than the 1 MiB cap"),
        "strict names the cap: {stderr}"
    );
}

/// C: an OpenHands history whose first event's `message` is 70 KiB, a mini-swe-agent
/// trajectory whose `info.config` (before `exit_status`, as mini-swe-agent writes it) is
/// 70 KiB, and a pi session whose first prompt is 70 KiB are each read as their format,
/// under `--strict` too. Before, the first two yielded no run and no word, and the pi
/// session was called a look-alike.
#[test]
fn structure_past_the_first_64_kib_is_found() {
    let dir = open_tempdir();
    let mut history = fixture("openhands/stuck-stale-edit.json");
    history[0]["message"] = json!(long_text());
    write_json(dir.path(), "oh/stuck.json", &history);

    let mut mini = fixture("mini_swe_agent/acme__ledger-8.traj.json");
    let info = mini["info"].as_object().expect("info").clone();
    let mut reordered = serde_json::Map::new();
    reordered.insert("model_stats".into(), info["model_stats"].clone());
    reordered.insert(
        "config".into(),
        json!({"agent": {"system_template": long_text()}}),
    );
    for key in ["mini_version", "exit_status", "submission"] {
        reordered.insert(key.into(), info[key].clone());
    }
    mini["info"] = Value::Object(reordered);
    write_json(dir.path(), "mini/acme__ledger-8.traj.json", &mini);

    let session = "2025-03-04T10-15-00-000Z_6c1e2f0a-4b7d-4e59-9a3c-2d8f1b7e5a10.jsonl";
    let text = fs::read_to_string(format!("{FIXTURES}/pi/{session}")).expect("pi fixture");
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    let prompt = lines
        .iter()
        .position(|l| l["type"] == "message")
        .expect("a message");
    lines[prompt]["message"]["content"][0]["text"] = json!(long_text());
    // The prompt right after the session header: the header is the head's only whole line.
    let moved = lines.remove(prompt);
    lines.insert(1, moved);
    let pi: Vec<String> = lines.iter().map(Value::to_string).collect();
    fs::create_dir_all(dir.path().join("pi")).expect("mkdir");
    fs::write(dir.path().join("pi").join(session), pi.join("\n") + "\n").expect("write");

    let expected = {
        let whole = open_tempdir();
        for (from, to) in [
            ("openhands/stuck-stale-edit.json", "oh/stuck.json"),
            (
                "mini_swe_agent/acme__ledger-8.traj.json",
                "mini/acme__ledger-8.traj.json",
            ),
        ] {
            write_json(whole.path(), to, &fixture(from));
        }
        let (code, report, stderr) = replay(whole.path(), &[]);
        assert_eq!(code, Some(0), "{stderr}");
        runs(&report)
    };
    for extra in [&[][..], &["--strict"][..]] {
        let (code, report, stderr) = replay(dir.path(), extra);
        assert_eq!(code, Some(0), "replay {extra:?}; stderr: {stderr}");
        let replayed = runs(&report);
        for run in &expected {
            assert!(
                replayed.contains(run),
                "{run:?} read as with a short first value: {replayed:?}"
            );
        }
        assert!(
            replayed
                .iter()
                .any(|(name, turns)| name.starts_with("pi/") && *turns > 0),
            "the pi session is read: {replayed:?}"
        );
        assert_eq!(
            report["input"]["skipped_files"],
            json!([]),
            "nothing called a look-alike"
        );
    }
}

/// C, the other half: a document no format claims and whose structure is larger than
/// detection reads is listed as unjudged, never passed over in silence.
#[test]
fn a_document_too_large_to_judge_is_listed() {
    let dir = open_tempdir();
    let keys: serde_json::Map<String, Value> = (0..120_000)
        .map(|i| (format!("key{i:06}"), json!(i)))
        .collect();
    write_json(dir.path(), "data/huge.json", &json!({"table": keys}));
    let mini = fixture("mini_swe_agent/acme__inventory-17.traj.json");
    write_json(dir.path(), "good/acme__inventory-17.traj.json", &mini);
    let (code, report, stderr) = replay(dir.path(), &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let unread: Vec<String> = report["input"]["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    assert_eq!(unread.len(), 1, "{unread:?}");
    assert!(
        unread[0].starts_with("data/huge.json: its structure is larger than the 1 MiB"),
        "{unread:?}"
    );
    assert!(stderr.contains("data/huge.json"), "{stderr}");
}
