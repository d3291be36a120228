//! External guards (issue #15): a harness's own guard code replayed through `--guard`
//! over the event stream, as docs/EVENTS.md "Protocol" specifies.
//!
//! The reference guards in examples/guards/ re-implement seed 000 WO-3's breaker against
//! the protocol; over the shipped corpora they must fire exactly where the built-in
//! `convergence_breaker` does, with the same savings. Each failure mode (a guard that
//! crashes, hangs, writes garbage, fires on a turn the run does not have) is a located
//! error, or with `--lenient-guards` a problem listed under the run's `input.problems`.

mod common;

use common::{hindsight, json_report};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// The Rust reference guard's binary, built if `cargo test` did not build it already.
fn rust_breaker() -> PathBuf {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_hindsight"));
    let path = exe
        .parent()
        .expect("target dir")
        .join("examples")
        .join(format!("breaker{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--example", "breaker"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "the reference guard builds");
    }
    path
}

fn python3() -> Option<&'static str> {
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    found.then_some("python3")
}

/// What the comparison holds equal, per firing.
type Seen = (u32, String, String, String, String, u64);

/// Each run's firings of `guard`: turn, agent, action, family, effect, tokens saved; and
/// the guard's saving on the run.
fn fired(report: &Value, guard: &str) -> Vec<(String, Vec<Seen>, Value)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|run| {
            let firings = run["firings"]
                .as_array()
                .expect("firings")
                .iter()
                .filter(|f| f["guard"] == guard)
                .map(|f| {
                    let turn = f["turn"].as_u64().expect("turn") as u32;
                    let saved = f["tokens_saved"].as_u64().expect("tokens_saved");
                    let family = text(&f["family"]);
                    (
                        turn,
                        text(&f["agent"]),
                        text(&f["action"]),
                        family,
                        text(&f["effect"]),
                        saved,
                    )
                })
                .collect();
            let id = format!("{}/{}", text(&run["project"]), text(&run["run_id"]));
            (id, firings, run["savings"]["by_guard"][guard].clone())
        })
        .collect()
}

/// Replays corpora/ with the reference guard `command` as `wo3` and checks it fires as
/// the built-in breaker does, run by run.
fn fires_as_the_built_in_breaker(command: &str) {
    let guard = format!("wo3={command}");
    let report = json_report(&["replay", "corpora/", "--format", "json", "--guard", &guard]);
    let built_in = fired(&report, "convergence_breaker");
    let external = fired(&report, "wo3");
    assert_eq!(
        built_in, external,
        "{command}: firings and savings, run by run"
    );
    let count: usize = built_in.iter().map(|(_, f, _)| f.len()).sum();
    let terminal = built_in
        .iter()
        .flat_map(|(_, f, _)| f)
        .filter(|f| f.4 == "terminal")
        .count();
    // Not a vacuous equality: the corpora make the breaker stall and abandon, across
    // sessions (myactuator's resumed session) and in a sub-agent.
    assert!(
        count >= 15 && terminal >= 3,
        "{count} firings, {terminal} terminal"
    );
    let saved = built_in
        .iter()
        .filter(|(_, _, s)| s.as_u64() > Some(0))
        .count();
    assert!(saved >= 3, "{saved} runs with tokens saved");
}

#[test]
fn the_rust_reference_guard_fires_as_the_built_in_breaker() {
    fires_as_the_built_in_breaker(&rust_breaker().display().to_string());
}

#[test]
fn the_python_reference_guard_fires_as_the_built_in_breaker() {
    let Some(python) = python3() else {
        eprintln!("python3 is not on PATH: the Python reference guard was not run");
        return;
    };
    fires_as_the_built_in_breaker(&format!("{python} examples/guards/breaker.py"));
}

#[test]
fn an_external_guard_takes_its_settings_from_set_and_the_config_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("guards.json");
    let declared = serde_json::json!({
        "external": {"wo3": {
            "command": rust_breaker().display().to_string(),
            "work_order": "WO-3",
            "settings": {"stalled": 3, "abandon": 4},
        }},
        "convergence_breaker": {"abandon": 4},
    });
    std::fs::write(&config, declared.to_string()).expect("write config");
    let config = config.display().to_string();
    let report = json_report(&[
        "replay", "corpora/", "--format", "json", "--config", &config,
    ]);
    assert_eq!(fired(&report, "wo3"), fired(&report, "convergence_breaker"));
    let work_orders: Vec<&Value> = report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .flat_map(|r| r["firings"].as_array().expect("firings"))
        .filter(|f| f["guard"] == "wo3")
        .map(|f| &f["work_order"])
        .collect();
    assert!(!work_orders.is_empty() && work_orders.iter().all(|w| *w == "WO-3"));
    // A --set over the declared settings moves the external guard like the built-in one.
    let report = json_report(&[
        "replay",
        "corpora/",
        "--format",
        "json",
        "--config",
        &config,
        "--set",
        "wo3.abandon=6",
        "--set",
        "convergence_breaker.abandon=6",
    ]);
    assert_eq!(fired(&report, "wo3"), fired(&report, "convergence_breaker"));
    let abandons = |r: &Value| -> usize {
        fired(r, "wo3")
            .iter()
            .flat_map(|(_, f, _)| f)
            .filter(|f| f.2 == "abandon")
            .count()
    };
    let default = json_report(&[
        "replay", "corpora/", "--format", "json", "--config", &config,
    ]);
    assert!(
        abandons(&report) < abandons(&default),
        "abandon at 6 fires less than at 4"
    );
}

#[test]
fn external_guard_output_is_the_same_at_any_thread_count() {
    let guard = format!("wo3={}", rust_breaker().display());
    let run = |threads: &str| {
        hindsight()
            .args(["replay", "corpora/", "--format", "json", "--guard", &guard])
            .args(["--threads", threads])
            .output()
            .expect("runs")
            .stdout
    };
    let one = run("1");
    assert!(!one.is_empty());
    assert_eq!(one, run("2"));
}

#[test]
fn guards_lists_external_guards_beside_the_built_in_ones() {
    let out = hindsight()
        .args(["guards", "--json", "--guard", "mine=python3 my_guard.py"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let list: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let list = list.as_array().expect("list");
    assert!(list.iter().any(|g| g["id"] == "convergence_breaker"));
    let mine = list.iter().find(|g| g["id"] == "mine").expect("listed");
    assert_eq!(mine["command"], "python3 my_guard.py");
    assert_eq!(mine["work_order"], "external");
    let refused = hindsight()
        .args(["guards", "--guard", "convergence_breaker=true"])
        .output()
        .expect("runs");
    assert_eq!(refused.status.code(), Some(2), "a built-in id is refused");
}

/// One run of the corpus, with `command` as the external guard `bad`.
const ONE_RUN: &str = "corpora/telegram-dropbear";

fn with_bad_guard(command: &str, extra: &[&str]) -> std::process::Output {
    hindsight()
        .args([
            "replay",
            ONE_RUN,
            "--format",
            "json",
            "--guard-timeout",
            "2",
        ])
        .arg("--guard")
        .arg(format!("bad={command}"))
        .args(extra)
        .output()
        .expect("runs")
}

/// The failure is a located error: exit 2, naming the guard, the run, and `what`.
fn fails_located(command: &str, what: &str) {
    let out = with_bad_guard(command, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    assert!(stderr.contains("external guard `bad`"), "{stderr}");
    assert!(stderr.contains(ONE_RUN), "names the run: {stderr}");
    assert!(stderr.contains(what), "says {what:?}: {stderr}");
    // Lenient: the run keeps every other guard's results and lists the problem.
    let out = with_bad_guard(command, &["--lenient-guards"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let run = &report["runs"][0];
    let firings = run["firings"].as_array().expect("firings");
    assert!(firings.iter().all(|f| f["guard"] != "bad"));
    assert!(firings.iter().any(|f| f["guard"] == "convergence_breaker"));
    let problems = run["input"]["problems"].as_array().expect("problems");
    assert!(
        problems
            .iter()
            .any(|p| p.as_str().is_some_and(|p| p.contains(what))),
        "{problems:?}"
    );
}

/// Answers each run's end with `replies`, after reading it.
fn answering(replies: &str) -> String {
    format!(
        "while read -r line; do case \"$line\" in *'\"type\":\"run_end\"'*) printf '%s\\n' {replies};; esac; done"
    )
}

#[test]
fn a_guard_that_crashes_is_a_located_error() {
    fails_located("read -r hello; exit 3", "no done marker: the guard");
}

#[test]
fn a_guard_that_hangs_is_a_located_error_after_its_timeout() {
    let started = std::time::Instant::now();
    fails_located("sleep 600", "silent for 2 s");
    // Killed, not waited for: two replays, each well short of the sleep.
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
}

#[test]
fn a_guard_that_writes_garbage_is_a_located_error_at_its_line() {
    let replies = r#"'{"type":"point","series":"rounds","turn":1,"value":1}' 'compiling...'"#;
    fails_located(&answering(replies), "reply line 2: not a reply");
}

#[test]
fn a_guard_that_fires_on_a_turn_the_run_does_not_have_is_a_located_error() {
    let firing =
        r#"'{"type":"firing","turn":99999,"action":"x","effect":"advisory"}' '{"type":"done"}'"#;
    fails_located(
        &answering(firing),
        "reply line 1: turn 99999 is not a turn of the run",
    );
}

#[test]
fn an_external_guard_s_settings_can_be_swept() {
    let guard = format!("wo3={}", rust_breaker().display());
    let sweep = json_report(&[
        "sweep",
        "corpora/",
        "--expect",
        "corpora/expectations.json",
        "--format",
        "json",
        "--guard",
        &guard,
        "--param",
        "wo3.abandon=4,5",
    ]);
    let points = sweep["points"].as_array().expect("points");
    let settings: Vec<&Value> = points.iter().map(|p| &p["setting"][0]).collect();
    assert_eq!(
        settings,
        [
            &serde_json::json!(["wo3.abandon", 4]),
            &serde_json::json!(["wo3.abandon", 5])
        ]
    );
    // The swept setting reaches the guard: abandoning a round earlier cuts the failed runs
    // sooner, saving more on them.
    let saved = |p: &Value| p["tokens_saved_on_failed"].as_u64().expect("tokens");
    assert!(saved(&points[0]) > saved(&points[1]), "{points:?}");
}

/// The gate judges an external guard's firings: labels may name it (seed 000 WO-3's
/// expectations of the breaker, given to the reference guard), and a guard that fails is
/// exit 2, not a regression (docs/GATE.md, "Gating your own guard code").
#[test]
fn the_gate_judges_an_external_guard_against_labels_naming_it() {
    let text = std::fs::read_to_string("corpora/expectations.json").expect("labels");
    let mut file: Value = serde_json::from_str(&text).expect("JSON");
    // Runs are named relative to the labels file, which is written elsewhere.
    let runs = file["runs"].as_object().expect("runs").clone();
    file["runs"] = runs
        .into_iter()
        .map(|(run, label)| (format!("corpora/{run}"), label))
        .collect();
    let renamed = file
        .to_string()
        .replace("\"guard\":\"convergence_breaker\"", "\"guard\":\"wo3\"");
    assert!(
        renamed.contains("\"guard\":\"wo3\""),
        "the labels name the breaker"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let labels = dir.path().join("labels.json");
    std::fs::write(&labels, renamed).expect("write labels");
    let guard = format!("wo3={}", rust_breaker().display());
    let gate = |guard: &str| {
        hindsight()
            .args(["gate", "corpora/", "--expect"])
            .arg(&labels)
            .args(["--guard", guard, "--format", "json"])
            .output()
            .expect("runs")
    };
    let out = gate(&guard);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdict: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let judged = verdict["verdicts"]
        .as_array()
        .expect("verdicts")
        .iter()
        .filter(|v| v.to_string().contains("wo3"))
        .count();
    assert!(judged >= 4, "the expectations of wo3 were judged: {judged}");
    // Without the guard, the labels name a guard nobody knows: a usage error.
    let unknown = hindsight()
        .args(["gate", "corpora/", "--expect"])
        .arg(&labels)
        .output()
        .expect("runs");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("unknown guard `wo3`"));
    // A guard that crashes is a broken run, not a regression.
    assert_eq!(gate("wo3=exit 1").status.code(), Some(2));
}

/// Shards replayed with an external guard merge into the unsharded report, byte for byte,
/// though `merge` itself is not told of the guard: the shards' summaries name it.
#[test]
fn shards_replayed_with_an_external_guard_merge_without_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guard = format!("wo3={}", rust_breaker().display());
    let replay = |out: &std::path::Path, shard: Option<&str>| {
        let mut cmd = hindsight();
        cmd.args([
            "replay", "corpora/", "--format", "json", "--guard", &guard, "--out",
        ])
        .arg(out);
        if let Some(shard) = shard {
            cmd.args(["--shard", shard]);
        }
        assert!(cmd.output().expect("runs").status.success());
    };
    let whole = dir.path().join("whole.json");
    replay(&whole, None);
    let shards: Vec<std::path::PathBuf> = ["1/3", "2/3", "3/3"]
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let out = dir.path().join(format!("shard-{i}.json"));
            replay(&out, Some(k));
            out
        })
        .collect();
    let merged = dir.path().join("merged.json");
    let status = hindsight()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(&merged)
        .output()
        .expect("runs")
        .status;
    assert!(status.success());
    let whole = std::fs::read(&whole).expect("whole");
    let text = String::from_utf8_lossy(&whole);
    assert!(
        text.contains("\"wo3\""),
        "the report covers the external guard"
    );
    assert_eq!(whole, std::fs::read(&merged).expect("merged"));
}
