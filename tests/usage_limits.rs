//! Usage errors that used to pass, panic or allocate without bound (issue #11, items 5-6
//! and settings): each is exit 2 with a message naming what is wrong, and nothing panics.
//! Hostile inputs are built here, in temporary directories.

mod common;

use common::hindsight;
use predicates::prelude::*;
use serde_json::json;

/// A labels file whose one expectation names `guard` with `rule` (e.g. `"never": true`).
fn labels_with(guard: &str, rule: serde_json::Value) -> tempfile::NamedTempFile {
    let mut expectation = json!({ "guard": guard });
    if let (Some(e), Some(r)) = (expectation.as_object_mut(), rule.as_object()) {
        e.extend(r.clone());
    }
    let labels = json!({
        "version": 1,
        "runs": {
            "corpora/myactuator/1783159200000-p7x2vd": { "label": "failed", "expect": [expectation] }
        }
    });
    let file = tempfile::Builder::new()
        .suffix(".json")
        .tempfile_in(env!("CARGO_MANIFEST_DIR"))
        .expect("temp labels");
    std::fs::write(file.path(), labels.to_string()).expect("write labels");
    file
}

/// An expectation about a guard that does not exist is a usage error, whatever its rule:
/// `never` used to hold trivially (exit 0) and `fires_at` to fail as a regression (exit 1).
#[test]
fn an_unknown_guard_in_the_labels_is_a_usage_error() {
    for rule in [
        json!({"never": true}),
        json!({"fires_at": 2}),
        json!({"no_later_than": 9}),
    ] {
        let labels = labels_with("convergence_brekaer", rule.clone());
        hindsight()
            .args(["gate", "corpora/myactuator", "--expect"])
            .arg(labels.path())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "unknown guard `convergence_brekaer`",
            ));
    }
    // The real id passes validation, and its expectation is judged: the breaker does fire
    // on that run, so `never` fails the gate.
    let labels = labels_with("convergence_breaker", json!({"never": true}));
    hindsight()
        .args(["gate", "corpora/myactuator", "--expect"])
        .arg(labels.path())
        .assert()
        .code(1)
        .stdout(predicate::str::contains("convergence_breaker never fires"));
}

/// `hindsight sweep` over the myactuator corpus with `params` (`guard.key=...` each).
fn sweep(params: &[&str]) -> assert_cmd::assert::Assert {
    let mut cmd = hindsight();
    cmd.args([
        "sweep",
        "corpora/myactuator",
        "--expect",
        "corpora/expectations.json",
        "--format",
        "json",
    ]);
    for p in params {
        cmd.args(["--param", p]);
    }
    cmd.assert()
}

/// Ranges are checked before anything is built: the widest `i64` range used to overflow
/// the range check and panic, and a 4000 x 4000 grid was built in full before the cap.
#[test]
fn sweep_ranges_and_grids_are_checked_before_they_are_built() {
    sweep(&["breaker.abandon=-9223372036854775807..9223372036854775807"])
        .code(2)
        .stderr(predicate::str::contains("more than 4096 settings"))
        .stderr(predicate::str::contains("panicked").not());
    sweep(&["breaker.abandon=-9223372036854775808..9223372036854775807"]).code(2);
    sweep(&["breaker.abandon=1..4000", "breaker.stalled=1..4000"])
        .code(2)
        .stderr(predicate::str::contains("more than 4096 settings"));
    let many = format!("breaker.abandon={}", vec!["5"; 5000].join(","));
    sweep(&[many.as_str()]).code(2);
}

/// Grid points a guard refuses are left out and said; a grid of nothing but refused points
/// is a usage error.
#[test]
fn sweep_leaves_out_refused_settings() {
    sweep(&["breaker.stalled=2..5", "breaker.abandon=3..4"])
        .success()
        .stderr(predicate::str::contains("3 of 8 settings left out"))
        .stderr(predicate::str::contains(
            "`stalled` (4) must not exceed `abandon` (3)",
        ));
    sweep(&["breaker.abandon=0,1", "breaker.stalled=3"])
        .code(2)
        .stderr(predicate::str::contains(
            "every setting of the grid is refused",
        ));
}

/// `--threads` is bounded: the largest `u64` used to panic starting the pool.
#[test]
fn threads_are_bounded() {
    for threads in ["18446744073709551615", "0", "1025", "-1"] {
        hindsight()
            .args([
                "replay",
                "corpora/myactuator",
                &format!("--threads={threads}"),
            ])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--threads"));
    }
    hindsight()
        .args(["replay", "corpora/myactuator", "--threads", "1024"])
        .assert()
        .success();
}

/// Settings a guard cannot mean are refused, naming the guard and the key, on several
/// guards; from `--set` and from `--config` alike.
#[test]
fn settings_out_of_range_are_refused_with_the_key() {
    for (set, message) in [
        (
            "breaker.stalled=9",
            "`stalled` (9) must not exceed `abandon` (5)",
        ),
        ("breaker.converging_warn=0", "`converging_warn` is 0"),
        (
            "diagnostic_delta.converging_warn=4",
            "`converging_warn` (4) must not exceed `stalled` (3)",
        ),
        ("diagnostic_delta.worsening_step=0", "`worsening_step` is 0"),
        (
            "directive_escalation.ignored_threshold=0",
            "`ignored_threshold` is 0",
        ),
        ("stale_edit_recovery.threshold=0", "`threshold` is 0"),
        (
            "adaptive_edit.switch_threshold=0",
            "`switch_threshold` is 0",
        ),
        ("artifact_packing.max_lines=0", "`max_lines` is 0"),
        (
            "coherence_gate.regen_threshold=1.5",
            "`regen_threshold` is 1.5",
        ),
        ("tool_selector.ewma_alpha=0", "`ewma_alpha` is 0"),
        ("tool_selector.lambda_risk=-1", "`lambda_risk` is -1"),
        ("breaker.abandon=-3", "invalid value: integer `-3`"),
    ] {
        hindsight()
            .args(["replay", "corpora/myactuator", "--set", set])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("settings.json");
    std::fs::write(
        &config,
        json!({"convergence_breaker": {"stalled": 6, "abandon": 4}}).to_string(),
    )
    .expect("write");
    hindsight()
        .args(["replay", "corpora/myactuator", "--config"])
        .arg(&config)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("convergence_breaker"))
        .stderr(predicate::str::contains(
            "`stalled` (6) must not exceed `abandon` (4)",
        ));
    // Equal tiers are allowed: `stalled` at 5 is `abandon` at once.
    hindsight()
        .args(["replay", "corpora/myactuator", "--set", "breaker.stalled=5"])
        .assert()
        .success();
}
