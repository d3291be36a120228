//! Agents that edit through the shell (issue #10): shell mutations, one pipeline verdict,
//! working directories and what a passing check is, replayed through the guards that
//! depend on them. Every rule has a case that fires and one that stays quiet, each on
//! several ecosystems (python, node, make/C, go, cargo), as WO-9 rule 4 asks of every
//! triage component (seed 000 `000_053cae7e53b598d3.txt`).
//!
//! The seeds' lines behind them: WO-3's "a productive mutation between failures decays the
//! count (no false abandon)"; WO-TD-06's "a ledger with an unverified code mutation
//! finalizes as `incomplete_verification`" (seed 001 `001_d7c440e7b9955800.txt`); WO-9's
//! non-merge table (`go build ./a` is not `go build ./b`) and 9c (`resolve()` when a
//! verification-like command succeeds).

mod common;

use common::{firings, metric_value, replay};
use hindsight::replay::RunReplay;
use hindsight::synth::Run;

fn actions(run: &RunReplay, guard: &str) -> Vec<(u32, String)> {
    firings(run, guard)
        .iter()
        .map(|f| (f.turn, f.action.clone()))
        .collect()
}

fn finalized(run: &RunReplay) -> String {
    metric_value(run, "ledger_finalization", "finalized")
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// One ecosystem's test command, a shell edit of a source file, and outputs with a given
/// number of failures (reported as a total the runner prints) or none.
struct Eco {
    cwd: &'static str,
    test: &'static str,
    edit: &'static str,
    /// What a look at the tree prints (`git ls-files`): the file `edit` changes is the
    /// project's, not one the run creates.
    files: &'static str,
    failing: fn(u32) -> String,
    passing: &'static str,
}

fn ecosystems() -> Vec<Eco> {
    vec![
        Eco {
            cwd: "/w/api",
            test: "python -m pytest tests/ -q",
            edit: "sed -i 's/return a/return a + b/' api/calc.py",
            files: "api/calc.py\ntests/test_calc.py",
            failing: |n| format!("FAILED tests/test_calc.py::test_{n}\n{n} failed, 9 passed in 0.2s"),
            passing: "12 passed in 0.3s",
        },
        Eco {
            cwd: "/w/web",
            test: "npm test",
            edit: "cat > src/cart.js <<'EOF'\nexport const total = (xs) => xs.reduce((a, x) => a + x.qty * x.price, 0);\nEOF",
            files: "src/cart.js\nsrc/cart.test.js",
            failing: |n| format!("FAIL src/cart.test.js\nTests:       {n} failed, 8 passed, 10 total"),
            passing: "PASS src/cart.test.js\nTests:       10 passed, 10 total",
        },
        Eco {
            cwd: "/w/fw",
            test: "make",
            edit: "perl -pi -e 's/int speed;/long speed;/' src/motor.c",
            files: "Makefile\nsrc/motor.c",
            failing: |n| {
                (0..n)
                    .map(|i| format!("src/motor.c:{}:5: error: conflicting types\n", 10 + i))
                    .collect::<String>()
                    + "make: *** [all] Error 1"
            },
            passing: "cc -o motor src/motor.c\n0 errors",
        },
        Eco {
            cwd: "/w/svc",
            test: "go test ./...",
            edit: "python3 - <<'EOF'\np = 'pkg/parse.go'\ns = open(p).read()\nopen(p, 'w').write(s.replace('x', 'y'))\nEOF",
            files: "pkg/parse.go\npkg/parse_test.go",
            failing: |n| {
                (0..n)
                    .map(|i| format!("--- FAIL: TestParse{i} (0.00s)\n"))
                    .collect::<String>()
                    + "FAIL\texample.com/svc/pkg\t0.01s"
            },
            passing: "ok  \texample.com/svc/pkg\t0.01s",
        },
        Eco {
            cwd: "/w/crate",
            test: "cargo test",
            edit: "git apply fix.patch",
            files: "Cargo.toml\nsrc/lib.rs",
            failing: |n| format!("error[E0308]: mismatched types\ntest result: FAILED. 3 passed; {n} failed"),
            passing: "test result: ok. 8 passed; 0 failed",
        },
    ]
}

// ------------------------------------------------------------ shell mutations and WO-3

/// A converging bash-only loop: failures falling 5, 4, 3, 2, 1 with a shell edit between
/// each, then the tests pass. The edits are mutations, so WO-3's breaker never cuts it
/// (the case was cut as `abandon` two turns before its tests passed).
#[test]
fn a_converging_shell_edit_loop_is_never_abandoned() {
    for eco in ecosystems() {
        let mut run = Run::new("1780000000000-converge", eco.cwd, 100);
        for n in (1..=5).rev() {
            run.turn(10).shell(eco.test, false, &(eco.failing)(n));
            run.turn(10).shell(eco.edit, true, "");
        }
        run.turn(10).shell(eco.test, true, eco.passing);
        let replay = replay(&run);
        assert!(
            actions(&replay, "convergence_breaker").is_empty(),
            "{}: {:?}",
            eco.test,
            replay.firings
        );
        assert_eq!(
            metric_value(&replay, "ledger_finalization", "inferred_mutations"),
            5,
            "{}",
            eco.edit
        );
    }
}

/// The same loop with only viewers between the failures (`cat`, `grep`, `ls`, `echo x`,
/// output thrown away): nothing changed, so the breaker escalates to `abandon`.
#[test]
fn viewers_between_failures_are_not_progress() {
    let viewers = [
        "cat src/main",
        "grep -rn TODO .",
        "ls -la",
        "echo retrying",
        "git diff > /dev/null",
    ];
    for eco in ecosystems() {
        let mut run = Run::new("1780000000000-stuck", eco.cwd, 100);
        for viewer in viewers {
            run.turn(10).shell(eco.test, false, &(eco.failing)(2));
            run.turn(10).shell(viewer, true, "");
        }
        let replay = replay(&run);
        assert_eq!(
            actions(&replay, "convergence_breaker"),
            [(5, "stalled".to_string()), (9, "abandon".to_string())],
            "{}",
            eco.test
        );
        assert_eq!(metric_value(&replay, "ledger_finalization", "mutations"), 0);
    }
}

/// A package install between two failures changes what the next run sees: progress for
/// the breaker (like a mutation), but not a code mutation for the ledger.
#[test]
fn a_package_install_is_progress_but_not_a_code_change() {
    let installs = [
        (
            "/w/api",
            "python -m pytest -q",
            "pip install -e .",
            "1 failed",
        ),
        ("/w/web", "npm test", "npm ci", "Tests: 1 failed, 4 total"),
        (
            "/w/svc",
            "go test ./...",
            "go get example.com/dep@v1.2.0",
            "--- FAIL: TestX (0.00s)",
        ),
    ];
    for (cwd, test, install, failing) in installs {
        let mut run = Run::new("1780000000000-install", cwd, 100);
        for _ in 0..4 {
            run.turn(10).shell(test, false, failing);
            run.turn(10).shell(install, true, "done");
        }
        run.turn(10).shell(test, false, failing);
        let replay = replay(&run);
        assert!(
            actions(&replay, "convergence_breaker").is_empty(),
            "{install}"
        );
        assert_eq!(metric_value(&replay, "ledger_finalization", "mutations"), 0);
    }
}

// ---------------------------------------------------------------- WO-TD-06 on shell edits

/// "A ledger with an unverified code mutation finalizes as incomplete_verification": a
/// shell edit followed by a completion claim, no check after it.
#[test]
fn an_unverified_shell_edit_finalizes_incomplete() {
    for eco in ecosystems() {
        let mut run = Run::new("1780000000000-unverified", eco.cwd, 100);
        run.turn(10).shell("git ls-files", true, eco.files);
        run.turn(10).shell(eco.test, true, eco.passing);
        run.turn(10).shell(eco.edit, true, "");
        run.turn(10).complete("completed", "fixed");
        let replay = replay(&run);
        assert_eq!(
            finalized(&replay),
            "incomplete_verification",
            "{}",
            eco.edit
        );
    }
}

/// The same edit followed by a passing check finalizes `completed`.
#[test]
fn a_verified_shell_edit_finalizes_completed() {
    for eco in ecosystems() {
        let mut run = Run::new("1780000000000-verified", eco.cwd, 100);
        run.turn(10).shell(eco.edit, true, "");
        run.turn(10).shell(eco.test, true, eco.passing);
        run.turn(10).complete("completed", "fixed");
        let replay = replay(&run);
        assert_eq!(finalized(&replay), "completed", "{}", eco.test);
    }
}

// ---------------------------------------------------------------- one pipeline verdict

/// `test 2>&1 | tail -5` exiting 0 with failures in its own output is not a pass for any
/// guard: the ledger stays incomplete, the completion claim is held, and the family is not
/// resolved (the next failure continues its count).
#[test]
fn a_masked_failing_check_is_not_a_pass_anywhere() {
    for eco in ecosystems() {
        let masked = format!("{} 2>&1 | tail -5", eco.test);
        let mut run = Run::new("1780000000000-masked", eco.cwd, 100);
        run.turn(10).shell(eco.test, false, &(eco.failing)(3));
        run.turn(10).shell(eco.test, false, &(eco.failing)(3));
        run.turn(10).shell(eco.edit, true, "");
        run.turn(10).shell(&masked, true, &(eco.failing)(3));
        run.turn(10).complete("completed", "all green");
        let replay = replay(&run);
        assert_eq!(finalized(&replay), "incomplete_verification", "{masked}");
        assert_eq!(
            actions(&replay, "verified_completion"),
            [(5, "hold_completion".to_string())],
            "{masked}"
        );
        assert!(
            !firings(&replay, "context_folding")
                .iter()
                .any(|f| f.turn == 4),
            "{masked} closed a subtask"
        );
    }
}

/// The same pipeline with output that reports no failure is a pass for every guard.
#[test]
fn a_filtered_passing_check_is_a_pass() {
    for eco in ecosystems() {
        let filtered = format!("{} 2>&1 | tail -5", eco.test);
        let mut run = Run::new("1780000000000-filtered-pass", eco.cwd, 100);
        run.turn(10).shell(eco.test, false, &(eco.failing)(3));
        run.turn(10).shell(eco.edit, true, "");
        run.turn(10).shell(&filtered, true, eco.passing);
        run.turn(10).complete("completed", "all green");
        let replay = replay(&run);
        assert_eq!(finalized(&replay), "completed", "{filtered}");
        assert!(
            actions(&replay, "verified_completion").is_empty(),
            "{filtered}"
        );
    }
}

/// A trailing `| grep PATTERN` decides the pipeline's exit status: it is its own family,
/// so failures of `test | grep ok` do not count as rounds of `test`.
#[test]
fn a_trailing_grep_is_its_own_family() {
    for eco in ecosystems() {
        let grep = format!("{} 2>&1 | grep -i error", eco.test);
        let mut run = Run::new("1780000000000-grep", eco.cwd, 100);
        for _ in 0..2 {
            run.turn(10).shell(eco.test, false, &(eco.failing)(1));
            run.turn(10).shell(&grep, false, "");
        }
        assert!(
            actions(&replay(&run), "convergence_breaker").is_empty(),
            "{grep}"
        );
        let mut stuck = Run::new("1780000000000-tail", eco.cwd, 100);
        for _ in 0..2 {
            stuck.turn(10).shell(eco.test, false, &(eco.failing)(1));
            stuck.turn(10).shell(
                &format!("{} 2>&1 | tail -3", eco.test),
                false,
                &(eco.failing)(1),
            );
        }
        assert_eq!(
            actions(&replay(&stuck), "convergence_breaker"),
            [(3, "stalled".to_string())],
            "{}",
            eco.test
        );
    }
}

/// A reported total stays reliable through `| tail`: a falling total read through a
/// filter is progress for the root refinement, with no edit recorded between.
#[test]
fn a_falling_reported_total_through_a_filter_is_progress() {
    let totals = [
        (
            "/w/api",
            "pytest -q 2>&1 | tail -3",
            "{n} failed, 9 passed in 0.2s",
        ),
        (
            "/w/web",
            "npm test 2>&1 | tail -5",
            "Tests:       {n} failed, 8 passed, 12 total",
        ),
        (
            "/w/ts",
            "npx tsc --noEmit | tail -1",
            "Found {n} errors in 3 files.",
        ),
    ];
    for (cwd, command, summary) in totals {
        let mut run = Run::new("1780000000000-totals", cwd, 100);
        for n in (1..=6).rev() {
            run.turn(10)
                .shell(command, false, &summary.replace("{n}", &n.to_string()));
        }
        let replay = replay(&run);
        assert!(actions(&replay, "diagnostic_delta").is_empty(), "{command}");
        // The mutation rule sees no edit: WO-3's breaker escalates.
        assert_eq!(
            actions(&replay, "convergence_breaker")
                .last()
                .map(|a| a.1.as_str()),
            Some("abandon"),
            "{command}"
        );
    }
}

// ---------------------------------------------------------------- working directories

/// `make` in `svc-a` and `make` in `svc-b` are two families; `make` run in `svc-a` is the
/// same family as `cd svc-a && make` from the run's directory.
#[test]
fn a_calls_working_directory_is_part_of_its_family() {
    for (run_cwd, command) in [
        ("/w", "make"),
        ("/w", "go build ./..."),
        ("/w", "npm run build"),
    ] {
        let call = |run: &mut Run, dir: &str| {
            let id = run.call("shell", serde_json::json!({"command": command, "cwd": dir}));
            run.result(
                &id,
                false,
                "error: failed",
                serde_json::json!({"errorClass": "tool_failed"}),
            );
        };
        let mut two = Run::new("1780000000000-two-dirs", run_cwd, 100);
        for _ in 0..2 {
            two.turn(10);
            call(&mut two, "/w/svc-a");
            two.turn(10);
            call(&mut two, "/w/svc-b");
        }
        assert!(
            actions(&replay(&two), "convergence_breaker").is_empty(),
            "{command}"
        );
        let mut one = Run::new("1780000000000-one-dir", run_cwd, 100);
        one.turn(10);
        call(&mut one, "/w/svc-a");
        one.turn(10)
            .shell(&format!("cd svc-a && {command}"), false, "error: failed");
        one.turn(10).shell(
            &format!("cd /w/svc-a && {command} 2>&1"),
            false,
            "error: failed",
        );
        assert_eq!(
            actions(&replay(&one), "convergence_breaker"),
            [(3, "stalled".to_string())],
            "{command}"
        );
    }
}

// ---------------------------------------------------------------- a passing check runs something

/// Text that mentions passing, printed by a viewer (`cat NOTES.md`, `grep -rn passed`,
/// `git log`), is not a check: an edit before it stays unverified.
#[test]
fn a_viewer_mentioning_passes_is_not_a_check() {
    for eco in ecosystems().into_iter().take(3) {
        for viewer in [
            "cat NOTES.md",
            "grep -rn passed tests/",
            "git log --oneline -3",
        ] {
            let mut run = Run::new("1780000000000-viewer", eco.cwd, 100);
            run.turn(10).shell("git ls-files", true, eco.files);
            run.turn(10).shell(eco.edit, true, "");
            run.turn(10)
                .shell(viewer, true, "12 passed\nPASS all\nok  \tpkg\t0.1s");
            run.turn(10).complete("completed", "done");
            let replay = replay(&run);
            assert_eq!(finalized(&replay), "incomplete_verification", "{viewer}");
        }
    }
}
