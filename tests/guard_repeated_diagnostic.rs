//! `repeated_diagnostic` (issue #28; seed 000 `000_053cae7e53b598d3.txt`, WO-3 keyed by
//! what fails): the same diagnostic failing across any commands of one agent, shown on
//! Python, Node, Go, Rust and C/make.

mod common;

use common::{firings, replay_with};
use hindsight::config::Config;
use hindsight::guards::Effect;
use hindsight::replay::RunReplay;
use hindsight::synth::Run;

const ABS: &str = "/home/dev/proj";

fn fired(run: &RunReplay) -> Vec<(u32, String)> {
    firings(run, "repeated_diagnostic")
        .iter()
        .map(|f| (f.turn, f.action.clone()))
        .collect()
}

/// An ecosystem's name, its commands, and the failure the i-th of them prints.
type Ecosystem = (&'static str, Vec<String>, fn(usize) -> String);

/// Per ecosystem: commands that differ each time, and the one failure they all print (with
/// what varies between runs of it: line numbers, temporary paths, durations).
fn ecosystems() -> Vec<Ecosystem> {
    vec![
        (
            "python",
            (0..5).map(|i| format!("python check_{i}.py")).collect(),
            |i| {
                format!("Traceback (most recent call last):\n  File \"/tmp/tmp{i}x/check.py\", line {i}, in <module>\nKeyError: 'bands'\n")
            },
        ),
        (
            "node",
            vec![
                "node repro.js".into(),
                "npx jest cart".into(),
                "node repro2.js".into(),
                "npm test -- cart".into(),
                "node check.js".into(),
            ],
            |i| {
                format!("/home/dev/proj/repro.js:{i}\nTypeError: Cannot read properties of undefined (reading 'total')\n    at run (/home/dev/proj/repro.js:{i}:9)\n")
            },
        ),
        (
            "go",
            vec![
                "go build ./...".into(),
                "go vet ./...".into(),
                "go test ./pkg/...".into(),
                "go build -o /tmp/app ./cmd/app".into(),
                "go run ./cmd/app".into(),
            ],
            |i| {
                format!(
                    "# example.com/app\n./store.go:{}:2: undefined: openDB\n",
                    10 + i
                )
            },
        ),
        (
            "rust",
            vec![
                "cargo build".into(),
                "cargo check --all-targets".into(),
                "cargo test".into(),
                "cargo build --release".into(),
                "cargo clippy".into(),
            ],
            |i| {
                format!("error[E0425]: cannot find value `ledger` in this scope\n --> src/lib.rs:{}:5\nerror: could not compile `books` (lib) due to 1 previous error\n", 20 + i)
            },
        ),
        (
            "c",
            vec![
                "make".into(),
                "make all 2>&1 | tail -5".into(),
                "gcc -c src/io.c -o /tmp/io.o".into(),
                "make -j4".into(),
                "cc -Wall -c src/io.c".into(),
            ],
            |i| format!("src/io.c:{}:5: error: unknown type name 'buf_t'\n", 3 + i),
        ),
    ]
}

/// Five failures of one diagnostic from five commands, an edit between each: `stalled`
/// at the third failure, `abandon` (advisory) at the fifth, in every ecosystem; WO-3's
/// breaker, keyed by command, sees five families at one round each.
#[test]
fn one_diagnostic_from_many_commands_stalls() {
    for (name, commands, output) in ecosystems() {
        let mut run = Run::new("1780000000000-r", ABS, 100);
        for (i, command) in commands.iter().enumerate() {
            if i > 0 {
                run.turn(10)
                    .edit("src/x", &format!("a{i}"), &format!("b{i}"), Ok("applied"));
            }
            run.turn(10).shell(command, false, &output(i));
        }
        let replay = replay_with(&run, &Config::default());
        assert_eq!(
            fired(&replay),
            [(5, "stalled".to_string()), (9, "abandon".to_string())],
            "{name}"
        );
        assert!(firings(&replay, "repeated_diagnostic")
            .iter()
            .all(|f| f.effect == Effect::Advisory));
        assert!(firings(&replay, "convergence_breaker").is_empty(), "{name}");
    }
}

/// A different diagnostic each time is no stall, whatever the commands.
#[test]
fn new_diagnostics_are_not_a_stall() {
    for (name, commands, _) in ecosystems() {
        let mut run = Run::new("1780000000000-n", ABS, 100);
        for (i, command) in commands.iter().enumerate() {
            run.turn(10).shell(
                command,
                false,
                &format!("src/io.c:3:5: error: unknown type name 'kind_{i}'\n"),
            );
        }
        assert!(
            fired(&replay_with(&run, &Config::default())).is_empty(),
            "{name}"
        );
    }
}

/// A passing check clears the count: two failures, a pass, two more is no stall.
#[test]
fn a_passing_check_clears_the_count() {
    for (name, commands, output) in ecosystems() {
        let mut run = Run::new("1780000000000-p", ABS, 100);
        for (i, command) in commands.iter().take(4).enumerate() {
            if i == 2 {
                run.turn(10).shell("pytest -q", true, "12 passed in 0.40s");
            }
            run.turn(10).shell(command, false, &output(i));
        }
        assert!(
            fired(&replay_with(&run, &Config::default())).is_empty(),
            "{name}"
        );
    }
}

/// `terminal = true`: the main agent's `abandon` ends the run; a sub-agent's stays advisory
/// and its failures are its own (one agent's count is not another's).
#[test]
fn terminal_abandon_is_for_the_main_agent() {
    let mut config = Config::default();
    config
        .set("repeated_diagnostic.terminal=true")
        .expect("set");
    config.build().expect("valid");
    let (_, commands, output) = ecosystems().remove(3);
    let mut run = Run::new("1780000000000-t", ABS, 100);
    for (i, command) in commands.iter().enumerate() {
        run.turn(10).shell(command, false, &output(i));
        run.turn(10)
            .agent_shell("worker", command, false, &output(i));
    }
    let replay = replay_with(&run, &config);
    let all = firings(&replay, "repeated_diagnostic");
    let main: Vec<_> = all.iter().filter(|f| f.agent == "main").collect();
    let worker: Vec<_> = all.iter().filter(|f| f.agent == "worker").collect();
    assert_eq!(main.len(), 2);
    assert_eq!(worker.len(), 2);
    assert_eq!(main[1].effect, Effect::Terminal);
    assert_eq!(worker[1].effect, Effect::Advisory);
    assert_eq!(
        replay
            .firings
            .iter()
            .filter(|f| f.effect == Effect::Terminal && f.guard == "repeated_diagnostic")
            .count(),
        1
    );
}

/// A failure that says nothing (a silent exit 1, or a harness wrapper around an empty
/// output) has no fingerprint: `grep` finding nothing five times is no stall.
#[test]
fn silent_failures_are_not_one_diagnostic() {
    let mut run = Run::new("1780000000000-s", ABS, 100);
    for i in 0..5 {
        let output = if i % 2 == 0 {
            String::new()
        } else {
            "<returncode>1</returncode>\n<output>\n</output>".to_string()
        };
        run.turn(10)
            .shell(&format!("grep -rn symbol_{i} src/"), false, &output);
    }
    assert!(fired(&replay_with(&run, &Config::default())).is_empty());
}

/// Thresholds are settings, checked as a whole.
#[test]
fn thresholds_are_settings() {
    let (_, commands, output) = ecosystems().remove(0);
    let mut run = Run::new("1780000000000-h", ABS, 100);
    for (i, command) in commands.iter().enumerate() {
        run.turn(10).shell(command, false, &output(i));
    }
    let mut config = Config::default();
    config.set("repeated_diagnostic.stalled=2").expect("set");
    config.set("repeated_diagnostic.abandon=4").expect("set");
    config.build().expect("valid");
    assert_eq!(
        fired(&replay_with(&run, &config)),
        [(2, "stalled".to_string()), (4, "abandon".to_string())]
    );
    let mut bad = Config::default();
    bad.set("repeated_diagnostic.stalled=6").expect("set");
    let err = bad.build().err().expect("refused").to_string();
    assert!(
        err.contains("`stalled` (6) must not exceed `abandon` (5)"),
        "{err}"
    );
}
