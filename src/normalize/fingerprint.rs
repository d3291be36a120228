//! The fingerprint of a failure: which diagnostic it ended in, whatever command printed it.
//!
//! Shell agents rename the script around one unchanged failure (`python test_fix.py`, then
//! `python test_fix2.py`, both ending in the same `KeyError`), so a family keyed by the
//! command never reaches a tier. Keyed by what the failure says instead, the loop shows
//! (issue #28, the shell-agent form of seed 000 WO-3: "the same family observed 5x").
//!
//! The fingerprint is the output's diagnostic lines (every line the failure signal reads:
//! seed 000's `error:`, `error TS`, `error[`, `N failed`, `FAIL` lines and uncaught
//! exceptions' last lines), else its last [`TAIL`] lines that hold text (a line of markup
//! alone, such as a harness's `<returncode>1</returncode>` wrapper, holds none), with what changes
//! from one run of the same failure to the next masked: runs of digits (line numbers,
//! durations, counts), hexadecimal words (addresses, hashes, ids) and paths under a
//! temporary directory. Whitespace runs count as one space. Masking only merges texts that
//! differ in those places; two failures whose words differ stay apart (a false split is
//! preferred to a false merge, seed 000 WO-9 rule 3).

use super::outcome::diagnostic_lines;
use super::work::TEMP_DIRS;
use crate::hash::hash_of;

/// Non-blank lines read from the end of an output that holds no diagnostic line.
pub const TAIL: usize = 3;

/// The fingerprint of a failure's output: a hash of [`masked`]; `None` when the output
/// holds no text (a silent exit 1: nothing says which failure it was).
pub fn fingerprint(output: &str) -> Option<u64> {
    let text = masked(output);
    (!text.is_empty()).then(|| hash_of(&text))
}

/// The text a fingerprint is taken of: the diagnostic lines (else the last lines), each
/// masked and trimmed, one per line.
pub fn masked(output: &str) -> String {
    let mut lines: Vec<&str> = diagnostic_lines(output).collect();
    if lines.is_empty() {
        lines = output
            .lines()
            .rev()
            .filter(|l| holds_text(l))
            .take(TAIL)
            .collect();
        lines.reverse();
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        mask_line(line.trim(), &mut out);
    }
    out
}

/// The line of `output` that names the failure, verbatim and trimmed: its first
/// diagnostic line (the first error, the first failing test, the exception; a summary
/// such as `FAIL` or `3 failed` comes after), else its last line that holds text.
pub fn naming_line(output: &str) -> Option<&str> {
    diagnostic_lines(output)
        .next()
        .or_else(|| output.lines().rev().find(|l| holds_text(l)))
        .map(str::trim)
}

/// Whether a line holds more than markup: what is left once every `<...>` tag is taken
/// out is neither blank nor a bare number (`<returncode>1</returncode>`, `</output>`).
fn holds_text(line: &str) -> bool {
    let mut rest = line.trim();
    let mut left = String::new();
    while let Some(open) = rest.find('<') {
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        left.push_str(&rest[..open]);
        rest = &rest[open + close + 1..];
    }
    left.push_str(rest);
    let left = left.trim();
    !left.is_empty() && !left.bytes().all(|b| b.is_ascii_digit())
}

/// Appends `line` masked: a temporary path becomes `<tmp>`, a hexadecimal word `<hex>`, a
/// run of digits `#`, a run of whitespace one space.
fn mask_line(line: &str, out: &mut String) {
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if let Some(len) = temp_path_len(rest) {
            out.push_str("<tmp>");
            rest = &rest[len..];
        } else if let Some(len) = hex_word_len(rest) {
            out.push_str("<hex>");
            rest = &rest[len..];
        } else if c.is_ascii_digit() {
            out.push('#');
            rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        } else if c.is_whitespace() {
            out.push(' ');
            rest = rest.trim_start();
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            // A word goes whole, so a hexadecimal or temporary path starts only at a word's
            // start (`cafe` in `cafeteria` stays).
            if c.is_alphanumeric() || c == '_' {
                let word = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                out.push_str(&rest[..word]);
                rest = &rest[word..];
            }
        }
    }
}

/// The length of a temporary path at the start of `s` (to the next space or quote).
fn temp_path_len(s: &str) -> Option<usize> {
    TEMP_DIRS
        .iter()
        .find(|d| !d.starts_with('\\') && s.starts_with(*d))?;
    Some(
        s.find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ',' | ')' | ']' | ':'))
            .unwrap_or(s.len()),
    )
}

/// The length of a hexadecimal word at the start of `s`: `0x` and hex digits, or eight or
/// more hex digits holding at least one digit and one letter (a commit, an object id).
fn hex_word_len(s: &str) -> Option<usize> {
    let end = |from: usize| {
        s[from..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .map_or(s.len(), |i| from + i)
    };
    let boundary = |at: usize| {
        s[at..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    };
    if let Some(rest) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        let digits = end(2);
        return (digits > 2 && !rest.is_empty() && boundary(digits)).then_some(digits);
    }
    let word = end(0);
    let run = &s[..word];
    (word >= 8
        && boundary(word)
        && run.bytes().any(|b| b.is_ascii_digit())
        && run.bytes().any(|b| b.is_ascii_alphabetic()))
    .then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_failure_printed_by_two_scripts_has_one_fingerprint() {
        let a = "Traceback (most recent call last):\n  File \"/repo/test_fix.py\", line 12, in <module>\n    run()\nKeyError: 'bands'\n";
        let b = "Traceback (most recent call last):\n  File \"/repo/test_final.py\", line 40, in <module>\n    main()\nKeyError: 'bands'\n";
        assert!(fingerprint(a).is_some());
        assert_eq!(fingerprint(a), fingerprint(b));
        assert_eq!(masked(a), "KeyError: 'bands'");
        let other = "Traceback (most recent call last):\nKeyError: 'columns'\n";
        assert_ne!(fingerprint(a), fingerprint(other));
    }

    #[test]
    fn what_changes_between_runs_of_one_failure_is_masked() {
        let gcc = |line: u32, tmp: &str| {
            format!("{tmp}/cc8fA2.o: src/a.c:{line}:5: error: 'x' undeclared at 0x7ffd5e4a1b20\n")
        };
        assert_eq!(
            fingerprint(&gcc(12, "/tmp/build-1")),
            fingerprint(&gcc(40, "/tmp/build-2"))
        );
        assert_eq!(
            masked(&gcc(12, "/tmp/build-1")),
            "<tmp>: src/a.c:#:#: error: 'x' undeclared at <hex>"
        );
        let jest = "FAIL src/a.test.ts (5.123 s)\nTests: 2 failed, 3 passed\n";
        let later = "FAIL src/a.test.ts (1.9 s)\nTests: 2 failed, 3 passed\n";
        assert_eq!(fingerprint(jest), fingerprint(later));
        let commit = "error: pathspec 'a1b2c3d4e5' did not match";
        assert_eq!(masked(commit), "error: pathspec '<hex>' did not match");
    }

    #[test]
    fn words_that_differ_keep_failures_apart() {
        for (a, b) in [
            (
                "ModuleNotFoundError: No module named 'numpy'",
                "ModuleNotFoundError: No module named 'pytz'",
            ),
            (
                "src/main.rs:3:5: error[E0425]: cannot find value `x`",
                "src/main.rs:3:5: error[E0425]: cannot find value `y`",
            ),
            (
                "--- FAIL: TestParse (0.00s)",
                "--- FAIL: TestFormat (0.00s)",
            ),
            (
                "make: *** [all] Error 2\nsegfault",
                "make: *** [all] Error 2\nbus error",
            ),
        ] {
            assert_ne!(fingerprint(a), fingerprint(b), "{a} | {b}");
        }
        // A word that merely looks hexadecimal inside a longer word stays.
        assert_eq!(masked("cafeteria deadbeef"), "cafeteria deadbeef");
    }

    #[test]
    fn without_a_diagnostic_the_last_lines_are_the_fingerprint() {
        let out = "building\n\nstep 1 of 3\nsegmentation fault (core dumped)\n\n";
        assert_eq!(
            masked(out),
            "building\nstep # of #\nsegmentation fault (core dumped)"
        );
        assert_eq!(masked(""), "");
        assert_eq!(fingerprint(""), None);
        // A harness's wrapper around an empty output is no text.
        let wrapped = "<returncode>1</returncode>\n<output>\n</output>";
        assert_eq!(fingerprint(wrapped), None);
        let said = "<returncode>127</returncode>\n<output>\nbash: line 1: tree: command not found\n</output>";
        assert_eq!(masked(said), "bash: line #: tree: command not found");
        assert_eq!(masked("x < y > z"), "x < y > z");
    }
}
