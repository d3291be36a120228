//! What a tool result says: its error class and its diagnostic signal.
//!
//! The error classes unify harness wording (seed 001 WO-TD-01, seed 002 fix 3; seed 000
//! WO-8's hash mismatch / old_string not found / not found). The failure signal is the
//! root refinement of seed 000: a generic error count taken from the failing action's
//! own output (`error:`, `error TS`, `error[`, `N failed`, `FAIL`), with no tool names.

/// The error class of a failed call, unified across harness wordings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorClass {
    /// The text an edit meant to replace is no longer there.
    StaleEdit,
    /// The file changed under an edit guarded by a content hash.
    HashMismatch,
    NotFound,
    /// The harness refused the call (focus block, dedup gate) without running it.
    Blocked,
    /// Anything else: the command or tool simply failed.
    Failed,
}

impl ErrorClass {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::StaleEdit => "stale_edit",
            Self::HashMismatch => "hash_mismatch",
            Self::NotFound => "not_found",
            Self::Blocked => "blocked",
            Self::Failed => "tool_failed",
        }
    }

    /// The edit failures WO-8 counts per file.
    pub fn is_edit_failure(self) -> bool {
        matches!(self, Self::StaleEdit | Self::HashMismatch | Self::NotFound)
    }
}

const STALE_PHRASES: [&str; 8] = [
    "old_string not found",
    "old_string was not found",
    "old string not found",
    "string to replace not found",
    "could not find the exact text",
    "did not appear verbatim",
    "no match for old",
    "oldtext not found",
];
const HASH_PHRASES: [&str; 3] = ["hash mismatch", "expected_hash", "hash does not match"];
const NOT_FOUND_PHRASES: [&str; 4] = ["no such file", "enoent", "file not found", "does not exist"];
const BLOCKED_PHRASES: [&str; 3] = ["blocked by", "duplicate call", "[focus"];

/// Classifies a failure from the recorded `errorClass`, else from the output's wording.
pub fn classify(error_class: Option<&str>, output: Option<&str>) -> ErrorClass {
    if let Some(recorded) = error_class {
        let r = recorded.to_ascii_lowercase();
        if r.contains("old_string") || r.contains("stale") || r.contains("not_found_in_file") {
            return ErrorClass::StaleEdit;
        }
        if r.contains("hash") {
            return ErrorClass::HashMismatch;
        }
        if r.contains("blocked") || r.contains("dedup") || r.contains("focus") {
            return ErrorClass::Blocked;
        }
        if r.contains("not_found") || r.contains("enoent") {
            return ErrorClass::NotFound;
        }
    }
    let text = output
        .map(|o| head(o, 4096).to_ascii_lowercase())
        .unwrap_or_default();
    let has = |phrases: &[&str]| phrases.iter().any(|p| text.contains(p));
    if has(&STALE_PHRASES) {
        ErrorClass::StaleEdit
    } else if has(&HASH_PHRASES) {
        ErrorClass::HashMismatch
    } else if has(&BLOCKED_PHRASES) {
        ErrorClass::Blocked
    } else if has(&NOT_FOUND_PHRASES) {
        ErrorClass::NotFound
    } else {
        ErrorClass::Failed
    }
}

/// The start of `s`, cut at a character boundary.
fn head(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The generic error count in a tool's output (`failureProgressSignal`), or `None` when
/// the output carries no diagnostic at all.
///
/// Counted per line: a compiler/type-checker diagnostic (`error:`, `error TS1234`,
/// `error[E0425]`), a test-runner failure line (`FAIL ...`, `--- FAIL: ...`), plus the
/// number in a summary such as `3 failed`.
pub fn failure_signal(output: &str) -> Option<u32> {
    let mut count: u32 = 0;
    let mut seen = false;
    for line in output.lines() {
        let trimmed = line.trim_start();
        if is_diagnostic_line(line)
            || trimmed.starts_with("FAIL")
            || trimmed.starts_with("--- FAIL")
        {
            count = count.saturating_add(1);
            seen = true;
        }
        if let Some(n) = number_before(line, " failed") {
            count = count.saturating_add(n);
            seen = true;
        }
    }
    seen.then_some(count)
}

fn is_diagnostic_line(line: &str) -> bool {
    if line.contains("error:") || line.contains("error[") {
        return true;
    }
    // tsc: `error TS2304: Cannot find name`.
    line.match_indices("error TS")
        .any(|(i, m)| line[i + m.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// The integer written right before `word` (e.g. `3` in `3 failed`), if any.
fn number_before(line: &str, word: &str) -> Option<u32> {
    let i = line.find(word)?;
    let digits: String = line[..i]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

/// Whether a successful output reports checks that passed (`5 passed`, `ok  pkg`,
/// `test result: ok`, `0 errors`): evidence the command verifies something.
pub fn pass_signal(output: &str) -> bool {
    output.lines().any(|line| {
        let t = line.trim_start();
        number_before(line, " passed").is_some()
            || t.starts_with("ok ")
            || t.starts_with("ok\t")
            || t.starts_with("PASS")
            || line.contains("test result: ok")
            || line.contains(" 0 errors")
            || t.starts_with("0 errors")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harness_wordings_become_one_stale_class() {
        for output in [
            "Error: old_string not found in file",
            "String to replace not found in file.",
            "Could not find the exact text in src/a.ts",
            "No replacement was performed, old_str `x` did not appear verbatim in /a.py.",
        ] {
            assert_eq!(
                classify(None, Some(output)),
                ErrorClass::StaleEdit,
                "{output}"
            );
        }
        assert_eq!(
            classify(Some("old_string_not_found"), None),
            ErrorClass::StaleEdit
        );
        assert_eq!(
            classify(Some("hash_mismatch"), None),
            ErrorClass::HashMismatch
        );
        assert_eq!(
            classify(None, Some("ENOENT: no such file")),
            ErrorClass::NotFound
        );
        assert_eq!(classify(None, Some("exit status 2")), ErrorClass::Failed);
    }

    #[test]
    fn signals_across_toolchains() {
        let gcc = "src/pal.cpp:12:5: error: 'MotorConfig' has no member named 'kp'\nsrc/pal.cpp:20:1: error: expected ';'\n";
        assert_eq!(failure_signal(gcc), Some(2));
        let tsc = "src/a.ts(3,7): error TS2322: Type 'string' is not assignable\nsrc/b.ts(1,1): error TS2304: Cannot find name 'x'.\nFound 2 errors.";
        assert_eq!(failure_signal(tsc), Some(2));
        let cargo = "error[E0425]: cannot find value `x`\nerror: could not compile `demo`";
        assert_eq!(failure_signal(cargo), Some(2));
        let pytest = "FAILED tests/test_a.py::test_x\n===== 3 failed, 10 passed in 0.2s =====";
        assert_eq!(failure_signal(pytest), Some(4));
        let go = "--- FAIL: TestParse (0.00s)\nFAIL\texample.com/p\t0.01s";
        assert_eq!(failure_signal(go), Some(2));
        assert_eq!(failure_signal("Segmentation fault"), None);
        assert_eq!(failure_signal(""), None);
    }

    #[test]
    fn pass_signals() {
        assert!(pass_signal("===== 12 passed in 0.3s ====="));
        assert!(pass_signal("ok  \texample.com/p\t0.01s"));
        assert!(pass_signal("test result: ok. 3 passed"));
        assert!(!pass_signal("Compiling demo v0.1.0"));
    }
}
