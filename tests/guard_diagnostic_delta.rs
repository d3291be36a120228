//! `diagnostic_delta` (seed 000 `000_053cae7e53b598d3.txt`, "Root refinement"): the seed's
//! signal exactly, and the named variants of its progress rule (issue #28), each shown on
//! several ecosystems. The seed's own acceptance lines are in tests/seed_000.rs; here, what
//! the settings `progress`, `count_exceptions` and `install_is_progress` change.

mod common;

use common::{firings, replay_with};
use hindsight::config::Config;
use hindsight::replay::RunReplay;
use hindsight::synth::Run;

const ABS: &str = "/home/dev/proj";

fn config(settings: &[&str]) -> Config {
    let mut config = Config::default();
    for s in settings {
        config
            .set(&format!("diagnostic_delta.{s}"))
            .expect("setting");
    }
    config.build().expect("settings accepted");
    config
}

fn turns(run: &RunReplay, action: &str) -> Vec<u32> {
    firings(run, "diagnostic_delta")
        .iter()
        .filter(|f| f.action == action)
        .map(|f| f.turn)
        .collect()
}

/// `check` fails with each of `outputs` in turn; before every failure but the first, the
/// agent runs `between` (an install, an edit), which succeeds.
fn loop_with(check: &str, outputs: &[String], between: Between) -> Run {
    let mut run = Run::new("1780000000000-d", ABS, 100);
    for (i, out) in outputs.iter().enumerate() {
        if i > 0 {
            match between {
                Between::Install(cmd) => {
                    run.turn(10).shell(&format!("{cmd}{i}"), true, "installed");
                }
                Between::Edit => {
                    run.turn(10).edit(
                        "src/app",
                        &format!("old {i}"),
                        &format!("new {i}"),
                        Ok("applied"),
                    );
                }
                Between::Nothing => {}
            }
        }
        run.turn(10).shell(check, false, out);
    }
    run
}

#[derive(Clone, Copy)]
enum Between {
    Install(&'static str),
    Edit,
    Nothing,
}

/// A script that cannot start, a different missing dependency each time, with an install
/// between: Python, Node, Go and Rust.
fn missing_dependencies() -> Vec<(&'static str, Vec<String>, &'static str)> {
    let five = |f: &dyn Fn(usize) -> String| (0..5).map(f).collect::<Vec<_>>();
    vec![
        (
            "python repro.py",
            five(&|i| {
                format!("Traceback (most recent call last):\n  File \"repro.py\", line 1, in <module>\nModuleNotFoundError: No module named 'dep{i}'\n")
            }),
            "pip install dep",
        ),
        (
            "node repro.js",
            five(&|i| {
                format!("node:internal/modules/cjs/loader:1080\nError: Cannot find module 'dep{i}'\nRequire stack:\n- /home/dev/proj/repro.js\n")
            }),
            "npm install dep",
        ),
        (
            "cargo run --bin repro",
            five(&|i| {
                format!("error[E0432]: unresolved import `dep{i}`\n --> src/main.rs:1:5\nerror: could not compile `repro` due to 1 previous error\n")
            }),
            "cargo add dep",
        ),
        (
            "go run ./cmd/repro",
            five(&|i| {
                format!("cmd/repro/main.go:4:2: no required module provides package example.com/dep{i}; to add it:\n\tgo get example.com/dep{i}\n")
            }),
            "go get example.com/dep",
        ),
    ]
}

/// The seed's signal is the seed's list: an uncaught exception's last line is not in it,
/// so a Python or Node script failing on a different missing module after each install
/// falls back to the mutation rule, where an install is a change: nothing fires at the
/// defaults. With `count_exceptions` the count reads 1 every time, and the count rule
/// calls the installs futile.
#[test]
fn an_uncaught_exception_is_not_in_the_seeds_signal() {
    for (check, outputs, install) in missing_dependencies().into_iter().take(2) {
        let run = loop_with(check, &outputs, Between::Install(install));
        let quiet = replay_with(&run, &Config::default());
        assert!(
            firings(&quiet, "diagnostic_delta").is_empty(),
            "{check}: {:?}",
            quiet.firings
        );
        let wide = replay_with(&run, &config(&["count_exceptions=true"]));
        assert_eq!(turns(&wide, "abandon"), vec![9], "{check}");
    }
}

/// `install_is_progress = false`: in the count rule's fallback an install is no change, so
/// the same script failing after each install escalates like any repetition.
#[test]
fn installs_need_not_be_progress() {
    for (check, outputs, install) in missing_dependencies().into_iter().take(2) {
        let run = loop_with(check, &outputs, Between::Install(install));
        let strict = replay_with(&run, &config(&["install_is_progress=false"]));
        assert_eq!(turns(&strict, "stalled"), vec![5], "{check}");
        assert_eq!(turns(&strict, "abandon"), vec![9], "{check}");
    }
}

/// `progress = "fingerprint"`: a new diagnostic after each install or fix holds the count,
/// in every ecosystem, where the seed's count rule sees the same count (one error) and
/// escalates whenever the signal is one the seed lists (cargo's `error[`).
#[test]
fn fingerprint_a_new_diagnostic_each_time_is_not_a_stall() {
    for (check, outputs, install) in missing_dependencies() {
        let run = loop_with(check, &outputs, Between::Install(install));
        let by_fingerprint = replay_with(&run, &config(&["progress=fingerprint"]));
        assert!(
            firings(&by_fingerprint, "diagnostic_delta").is_empty(),
            "{check}: {:?}",
            by_fingerprint.firings
        );
        let both = replay_with(
            &run,
            &config(&["progress=fingerprint", "count_exceptions=true"]),
        );
        assert!(firings(&both, "diagnostic_delta").is_empty(), "{check}");
    }
    let (check, outputs, install) = missing_dependencies().remove(2);
    let by_count = replay_with(
        &loop_with(check, &outputs, Between::Install(install)),
        &Config::default(),
    );
    assert_eq!(turns(&by_count, "abandon"), vec![9], "{check}");
}

fn tsc(n: usize) -> String {
    (0..n)
        .map(|i| format!("src/lib.ts({i},1): error TS2322: Type 'string' is not assignable\n"))
        .collect()
}

fn pytest(failed: usize) -> String {
    (0..failed)
        .map(|i| format!("FAILED tests/test_api.py::test_{i} - AssertionError\n"))
        .chain([format!("{failed} failed, 9 passed in 0.{failed}1s\n")])
        .collect()
}

fn gcc(n: usize) -> String {
    (0..n)
        .map(|i| format!("src/io.c:{i}:5: error: unknown type name 'buf_t'\n"))
        .collect::<String>()
        + "make: *** [Makefile:4: all] Error 1\n"
}

fn go_test(failing: usize) -> String {
    (0..failing)
        .map(|i| format!("--- FAIL: TestCase{i} (0.0{i}s)\n"))
        .chain(["FAIL\texample.com/p\t0.012s\n".to_string()])
        .collect()
}

fn cargo(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "error[E0308]: mismatched types\n --> src/lib.rs:{}:9\n",
                10 + i
            )
        })
        .collect::<String>()
        + "error: could not compile `app` due to previous errors\n"
}

/// A check command and the output it prints for a given number of errors.
type Case = (&'static str, fn(usize) -> String);

/// The seed's cases hold under the fingerprint rule in every ecosystem: the compile loop
/// with identical errors after each edit still abandons (the same diagnostic, seen before,
/// adds a round whatever was edited), and a converging build still resets.
#[test]
fn fingerprint_keeps_the_seeds_cases() {
    let fingerprint = config(&["progress=fingerprint"]);
    let cases: [Case; 5] = [
        ("npx tsc --noEmit", tsc),
        ("pytest -q", pytest),
        ("make", gcc),
        ("go test ./...", go_test),
        ("cargo build", cargo),
    ];
    for (check, output) in cases {
        let same: Vec<String> = (0..5).map(|_| output(3)).collect();
        let run = replay_with(&loop_with(check, &same, Between::Edit), &fingerprint);
        assert_eq!(turns(&run, "stalled"), vec![5], "{check}");
        assert_eq!(turns(&run, "abandon"), vec![9], "{check}");
        let falling: Vec<String> = [6, 5, 4, 3, 2, 1].map(output).to_vec();
        let run = replay_with(&loop_with(check, &falling, Between::Edit), &fingerprint);
        assert!(
            firings(&run, "diagnostic_delta").is_empty(),
            "{check}: {:?}",
            run.firings
        );
    }
}

/// An A/B/A/B oscillation escalates under the fingerprint rule: each diagnostic comes
/// back, so from the third failure on every failure is a round.
#[test]
fn fingerprint_an_oscillation_escalates() {
    let fingerprint = config(&["progress=fingerprint"]);
    let a = "src/a.c:3:1: error: conflicting types for 'init'\n".to_string();
    let b = "src/a.c:9:1: error: implicit declaration of function 'init'\n".to_string();
    let outputs: Vec<String> = (0..7)
        .map(|i| if i % 2 == 0 { a.clone() } else { b.clone() })
        .collect();
    let run = replay_with(&loop_with("make", &outputs, Between::Edit), &fingerprint);
    // Rounds 1, 1, 2, 3 (stalled, the 4th failure at turn 7), 4, 5 (abandon, turn 11).
    assert_eq!(turns(&run, "stalled"), vec![7]);
    assert_eq!(turns(&run, "abandon"), vec![11]);
}

/// A rising count of a diagnostic seen before escalates fastest, as in the count rule.
#[test]
fn fingerprint_worsening_adds_the_worsening_step() {
    let fingerprint = config(&["progress=fingerprint"]);
    let outputs: Vec<String> = [1, 2, 3].map(pytest).to_vec();
    // A rising count, but a FAILED line more each time: each output is a new diagnostic,
    // and a new diagnostic holds the count.
    let run = replay_with(
        &loop_with("pytest -q", &outputs, Between::Edit),
        &fingerprint,
    );
    assert!(
        firings(&run, "diagnostic_delta").is_empty(),
        "{:?}",
        run.firings
    );
    // The same two failures, then the same two plus the count rising on the summary only.
    let same_lines = |n: usize| format!("FAILED t.py::a\n== {n} failed ==\n");
    let outputs: Vec<String> = [1, 1, 3].map(same_lines).to_vec();
    let run = replay_with(
        &loop_with("pytest -q", &outputs, Between::Edit),
        &fingerprint,
    );
    // Rounds 1, 2, 4: stalled at the third failure (turn 5).
    assert_eq!(turns(&run, "stalled"), vec![5]);
}

/// Settings the guard cannot mean are refused with the key named.
#[test]
fn unknown_progress_rule_is_refused() {
    let mut config = Config::default();
    config
        .set("diagnostic_delta.progress=edits")
        .expect("assignment");
    let err = config.build().err().expect("refused").to_string();
    assert!(err.contains("diagnostic_delta"), "{err}");
    assert!(err.contains("progress") || err.contains("edits"), "{err}");
}

/// Nothing between the failures: every rule escalates a script that fails the same way
/// five times (Go and Rust builds, and the fallback for output with no signal).
#[test]
fn repetition_without_change_escalates_under_every_rule() {
    for settings in [vec![], vec!["progress=fingerprint"]] {
        for (check, out) in [
            (
                "go build ./...",
                "main.go:3:2: undefined: Foo\n".to_string(),
            ),
            ("cargo build", cargo(1)),
            (
                "./run_sim",
                "Segmentation fault (core dumped)\n".to_string(),
            ),
        ] {
            let outputs: Vec<String> = (0..5).map(|_| out.clone()).collect();
            let run = replay_with(
                &loop_with(check, &outputs, Between::Nothing),
                &config(&settings),
            );
            assert_eq!(turns(&run, "abandon"), vec![5], "{check} {settings:?}");
        }
    }
}
