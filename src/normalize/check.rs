//! Checks and their results (issue #28): what a person reading a shell agent's run accepts
//! as "the code was checked, and this is what the check said".
//!
//! A check is an execution: a line whose producing command is not a viewer, a writer, a
//! shell setting, a package install, a version-control command or a narrative print
//! (`shell::verdict::runs_check_in`), and that wrote no files (a fix script run by name
//! is a writer: `normalize::work`). Its result is read from its exit status and its own
//! output, the same way whatever the toolchain:
//!
//! - *fail*: a non-zero exit status, or a failure marker in the output: the failure signal
//!   (`error:`, `FAIL`, `N failed`, an uncaught exception's last line), a Python traceback
//!   (whatever the exception's class is called), a cross mark;
//! - *could not start*: the check never ran: a missing module or command, a script that is
//!   not there, a test runner that collected nothing, with no sign that anything ran
//!   (no test summary). A run that could not start says nothing about the code;
//! - *pass*: exit status 0, no failure marker, and a pass marker: `N passed`, a lone `OK`
//!   (unittest), `... ok` lines, `PASS`, `ok  pkg` (go), `test result: ok` (cargo), a
//!   check mark, or a line saying the tests passed or the thing works, is fixed or
//!   succeeded, with no negation on that line;
//! - *inconclusive*: it ran and exited 0, but nothing in its output says what it found.
//!
//! A pipeline that masks the exit status (`pytest | tail`) is read by the same markers.

use super::outcome::{pass_signal, Signal};
use super::shell::verdict::from_shell;

/// What a check said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CheckResult {
    Pass,
    Fail,
    CouldNotStart,
    Inconclusive,
}

impl CheckResult {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::CouldNotStart => "could_not_start",
            Self::Inconclusive => "inconclusive",
        }
    }

    /// Whether the result says something about the code (pass or fail).
    pub fn is_verdict(self) -> bool {
        matches!(self, Self::Pass | Self::Fail)
    }
}

/// Wordings of a check that never ran: what is missing is the check's own means, not a
/// fault of the code under test.
const COULD_NOT_START: [&str; 8] = [
    "No module named",
    " 0 selected",
    "command not found",
    "can't open file",
    "Cannot find module",
    "collected 0 items",
    "no tests ran",
    "file or directory not found",
];

/// Wordings of a check stopped before it finished: a harness's or runner's time limit. It
/// says neither that the code passed nor that it failed.
const TIMED_OUT: [&str; 3] = ["timed out after", "TimeoutExpired", "Timed out after"];

/// Marks a test runner or a script prints for a failure beside the failure signal.
const FAIL_MARKS: [&str; 5] = [
    "Traceback (most recent call last)",
    "\u{2717}", // ✗
    "\u{2718}", // ✘
    "\u{274c}", // ❌
    "FAILED",
];

/// Marks of a pass beside the runners' summaries.
const PASS_MARKS: [&str; 3] = ["\u{2713}", "\u{2714}", "\u{2705}"]; // ✓ ✔ ✅

/// Subjects a line must give `pass` for it to say a check passed (`4 tests passed`, `All
/// checks pass`), so `pass_many=True` or `passed to` says nothing.
const PASS_SUBJECTS: [&str; 9] = [
    "all",
    "test",
    "tests",
    "check",
    "checks",
    "assertion",
    "assertions",
    "case",
    "cases",
];

/// Words that turn a pass word around when they come just before it ("not fixed",
/// "doesn't work", "0 passed").
const NEGATIONS: [&str; 5] = ["not", "no", "never", "still", "0"];

/// Words that make a whole line a failure report ("2 passed, 1 failed"), unless a
/// `without` or `no` comes right before them ("parsed without error").
const FAILURE_WORDS: [&str; 6] = ["fail", "failed", "fails", "failure", "error", "errors"];

/// The result of a check whose recorded exit status is `exit_ok`, from its output and the
/// failure signal already read from it.
pub fn result(exit_ok: bool, output: &str, signal: Option<&Signal>) -> CheckResult {
    let signal_fails = signal.is_some_and(|s| s.reports_failures());
    let marked_fail = FAIL_MARKS.iter().any(|m| output.contains(m)) || labelled_failure(output);
    let passes = pass_signal(output);
    let ran = ran_tests(output, passes);
    if !ran && (COULD_NOT_START.iter().any(|m| output.contains(m)) || missing_program(output)) {
        return CheckResult::CouldNotStart;
    }
    if TIMED_OUT.iter().any(|m| output.contains(m)) && !signal_fails && !marked_fail {
        return CheckResult::Inconclusive;
    }
    if !exit_ok || signal_fails || marked_fail {
        return CheckResult::Fail;
    }
    if passes || says_passed(output) {
        CheckResult::Pass
    } else {
        CheckResult::Inconclusive
    }
}

/// Labels a line starts with when it reports a failure (`ERROR: no len()`, `FAIL: x`).
const FAILURE_LABELS: [&str; 4] = ["ERROR", "FAIL", "FAILURE", "FATAL"];

/// A line labelled as a failure report: `ERROR:`, `FAIL:`, `FAILURE:` or `FATAL:` (in
/// capitals, at the line's start, before a space or a colon). Mixed-case `Error:` is read
/// by the failure signal as an exception's name.
fn labelled_failure(output: &str) -> bool {
    output.lines().any(|line| {
        let t = line.trim_start();
        FAILURE_LABELS.iter().any(|label| {
            t.strip_prefix(label)
                .is_some_and(|rest| rest.starts_with(':') || rest.starts_with(" "))
        })
    })
}

/// The shell could not find the program or script it was asked to run
/// (`bash: ./run.sh: No such file or directory`).
fn missing_program(output: &str) -> bool {
    output
        .lines()
        .any(|line| from_shell(line) && line.contains("No such file or directory"))
}

/// Some test ran and passed (`3 passed`, `... ok`, a lone `OK`, `test result: ok`): the
/// check did start, whatever else its output says is missing.
fn ran_tests(output: &str, pass_signal: bool) -> bool {
    pass_signal || output.lines().any(|line| runner_ok(line.trim()))
}

/// A test runner's own line for tests that passed: a lone `OK` (unittest, with its
/// `(skipped=1)`) or a `... ok` line.
fn runner_ok(line: &str) -> bool {
    line == "OK" || line.starts_with("OK (") || line.ends_with("... ok")
}

/// A line of the output says the check passed: a lone `OK` (unittest, with its
/// `(skipped=1)`), a `... ok` line, `PASS` at a line's start, a check mark, or a short
/// line with a pass word and no negation. `PASS`/`PASSED` are a test runner's status
/// words wherever they stand on a line (`== [a.sql] PASS`, `test_x PASSED`).
fn says_passed(output: &str) -> bool {
    output.lines().any(|line| {
        let t = line.trim();
        runner_ok(t)
            || t.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == "PASS" || w == "PASSED")
            || PASS_MARKS.iter().any(|m| t.contains(m))
            || pass_words(t)
    })
}

/// A line that says, in words, that the check passed, with no negation in it: tests or
/// checks that pass (`All tests passed!`, `4 tests pass`, a line that is only `passed`), a
/// thing that works (`works correctly`, `now works`, `is working`), an issue fixed
/// (`Issue fixed`, `the bug is now resolved`), or a success (`Success: parsed`, `created
/// successfully`).
fn pass_words(line: &str) -> bool {
    if line.len() > 200 || !mentions_a_pass_word(line) {
        return false;
    }
    let lower = line.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect();
    let reports_failure = words.iter().enumerate().any(|(i, w)| {
        FAILURE_WORDS.contains(w) && !(i > 0 && ["without", "no"].contains(&words[i - 1]))
    });
    if reports_failure {
        return false;
    }
    let window = |i: usize| &words[i.saturating_sub(3)..i];
    let negated = |i: usize| {
        window(i)
            .iter()
            .any(|w| NEGATIONS.contains(w) || w.ends_with("n't"))
    };
    let before = |i: usize, set: &[&str]| window(i).iter().any(|w| set.contains(w));
    let after = |i: usize, set: &[&str]| words.get(i + 1).is_some_and(|w| set.contains(w));
    words
        .iter()
        .enumerate()
        .filter(|&(i, _)| !negated(i))
        .any(|(i, w)| match *w {
            "pass" | "passes" | "passed" => words.len() == 1 || before(i, &PASS_SUBJECTS),
            "works" | "working" => {
                after(i, &["correctly", "fine", "now", "as", "properly"])
                    || before(i, &["now", "is", "it", "fix", "everything"])
            }
            "fixed" | "resolved" => before(i, &["issue", "bug", "problem", "is", "been", "now"]),
            "success" | "successful" | "successfully" | "succeeded" => true,
            _ => false,
        })
}

/// Stems of every word [`pass_words`] looks for: a line without one is passed over before
/// it is lower-cased and split (every line of a passing check's output is asked).
const PASS_STEMS: [&[u8]; 5] = [b"pass", b"work", b"fixed", b"resolved", b"succe"];

fn mentions_a_pass_word(line: &str) -> bool {
    let bytes = line.as_bytes();
    PASS_STEMS.iter().any(|stem| {
        bytes
            .windows(stem.len())
            .any(|w| w.eq_ignore_ascii_case(stem))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::outcome::diagnostic_signal;

    fn judge(exit_ok: bool, output: &str) -> CheckResult {
        result(exit_ok, output, diagnostic_signal(output, false).as_ref())
    }

    #[test]
    fn passes_across_ecosystems() {
        for output in [
            "==== 12 passed in 0.40s ====",
            "....\n----------------------------------------------------------------------\nRan 4 tests in 0.002s\n\nOK",
            "Ran 2 tests in 0.001s\n\nOK (skipped=1)",
            "test_parse (tests.TestX) ... ok\ntest_dump (tests.TestX) ... ok",
            "ok  \texample.com/p\t0.012s",
            "PASS src/cart.test.js\nTests: 4 passed, 4 total",
            "test result: ok. 3 passed; 0 failed",
            "\u{2713} parses the header\n\u{2713} rejects a bad header",
            "All tests passed!",
            "The fix works: 3 == 3",
            "Issue fixed",
            "== [query.sql] FAIL\nL:   3 | L036 | targets on a new line\n== [query.sql] PASS",
            "Success: parsed without error",
            "Import successful",
            "Schema created successfully",
            "The function now works correctly",
        ] {
            assert_eq!(judge(true, output), CheckResult::Pass, "{output}");
        }
    }

    #[test]
    fn failures_whatever_the_exception_is_called() {
        for output in [
            "Traceback (most recent call last):\n  File \"t.py\", line 3\ndjango.core.exceptions.ImproperlyConfigured: settings are not configured",
            "FAILED tests/test_a.py::test_x\n1 failed, 3 passed",
            "src/a.c:3:1: error: expected ';'",
            "\u{2717} rejects a bad header",
            "--- FAIL: TestParse (0.00s)",
            "Error: expected 3, got 4",
            "ERROR: object of type 'Grid' has no width\nSUCCESS: created",
            "FAIL: test_parse (tests.TestX)",
        ] {
            assert_eq!(judge(true, output), CheckResult::Fail, "{output}");
        }
        assert_eq!(judge(false, "exit status 1"), CheckResult::Fail);
    }

    #[test]
    fn checks_that_could_not_start() {
        for output in [
            "Traceback (most recent call last):\n  File \"r.py\", line 1\nModuleNotFoundError: No module named 'numpy'",
            "bash: line 1: pytest: command not found",
            "python: can't open file '/repo/t.py': [Errno 2] No such file or directory",
            "collected 0 items\n\n==== no tests ran in 0.01s ====",
            "Error: Cannot find module '/repo/check.js'",
            "bash: line 1: ./run_checks.sh: No such file or directory",
            "collected 18 items / 18 deselected / 0 selected\n==== 18 deselected in 0.04s ====",
            "ERROR: test_a (unittest.loader._FailedTest)\nModuleNotFoundError: No module named 'pytest'\nRan 1 test in 0.000s\n\nFAILED (errors=1)",
        ] {
            assert_eq!(judge(false, output), CheckResult::CouldNotStart, "{output}");
        }
        // A missing module inside one test of a run that ran is that test's failure.
        let ran =
            "FAILED t.py::test_io - ModuleNotFoundError: No module named 'x'\n1 failed, 9 passed";
        assert_eq!(judge(false, ran), CheckResult::Fail);
        // A file the code fails to open is the code's failure, not the check's.
        let code = "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or directory: 'data.csv'";
        assert_eq!(judge(false, code), CheckResult::Fail);
    }

    #[test]
    fn inconclusive_and_negated() {
        assert_eq!(
            judge(false, "Command 'pytest -x' timed out after 60 seconds"),
            CheckResult::Inconclusive
        );
        for output in [
            "result: [1, 2, 3]",
            "",
            "The fix does not work yet",
            "Not fixed",
            "0 passed",
            "_invoke_validators called: pass_many=True, field_errors=True",
            "value passed to the constructor: 3",
            "working directory: /repo",
            "Fixed tools.py",
            "<exception>Command 'pytest -x' timed out after 60 seconds</exception>",
        ] {
            let r = judge(true, output);
            assert!(r == CheckResult::Inconclusive, "{output}: {r:?}");
        }
    }
}
