//! Whether an observation reports a failure, and of which class.
//!
//! SWE-agent records no exit code and no per-step status: a step keeps `action`,
//! `observation`, `response`, `thought`, `state` (the open file, the working directory,
//! 1.x's diff), `execution_time`, `query` and `extra_info`, and the only status is the run's
//! `info.exit_status`. So the observation's wording decides, read with anchored rules: a
//! phrase counts only where a failure message puts it (the start of a line, the message
//! after a `<program>: <operand>: ` label, the end of a line, or a line's own label), so the
//! same words inside other text do not trip it.
//!
//! Only the first and last lines that carry a message are judged. Warning lines are not:
//! a line labelled `Warning:`, `warning:` or with a Python warning category
//! (`UserWarning:`, also after a `file.py:12:` location) says the command went on, as do
//! lone markup tags (`<warning>`). An observation whose first judged line opens a file
//! window, a listing or a diff ([`VIEWS`]) succeeded.

/// First lines of observations that show a file window, a listing or a diff: successes
/// whose body (file text) is not read for errors.
pub const VIEWS: [&str; 8] = [
    "[File: ",
    "Here's the result of running `cat -n`",
    "Here's the files and directories",
    "The file ",
    "File created successfully",
    "Last edit to ",
    "Found ",
    "diff --git",
];

/// Where in a line a rule's phrase must stand (compared case-insensitively).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// At the start of the first judged line; a `*` in the phrase stands for any text, so a
    /// message may run over several lines (a multi-line `old_str`).
    Start,
    /// At the start of a line's message: the line's start, or right after a `: ` that ends
    /// a `<program>:` or `<operand>:` label, after an optional `[Errno N] ` code
    /// (`ls: cannot access 'x': No such file or directory`, `python: can't open file 'x':
    /// [Errno 2] No such file or directory`).
    Said,
    /// At the end of a line, trailing `.` and `!` aside.
    End,
    /// As the line's label: the word before its first `:` once locations (`x.c:3:5:`) are
    /// passed. The phrase `Error` stands for any error or exception name (`Error`,
    /// `error`, `ValueError`, `subprocess.CalledProcessError`, `_curses.error`, a bare
    /// `AssertionError` line).
    Label,
    /// As a whole word anywhere in the line.
    Word,
}

/// One wording: where its phrase stands, the phrase, the error class it gives.
pub struct Rule {
    pub at: At,
    pub phrase: &'static str,
    pub class: &'static str,
}

const fn rule(at: At, phrase: &'static str, class: &'static str) -> Rule {
    Rule { at, phrase, class }
}

/// The failure wordings, first match wins (over the first and the last judged line).
pub const RULES: &[Rule] = &[
    // The harness's own tools (0.x and 1.x bundles).
    rule(
        At::Start,
        "Your proposed edit has introduced new syntax error",
        "tool_failed",
    ),
    rule(
        At::Start,
        "No replacement was performed, old_str `*did not appear verbatim",
        "stale_edit",
    ),
    rule(At::Start, "No replacement was performed", "tool_failed"),
    rule(
        At::Start,
        "Your edit was not applied (file not modified): Text *not found",
        "stale_edit",
    ),
    rule(At::Start, "Your edit was not applied", "tool_failed"),
    // Missing files and commands, as programs word them.
    rule(At::Said, "No such file", "not_found"),
    rule(At::End, "(No such file or directory)", "not_found"),
    rule(At::Start, "The path * does not exist", "not_found"),
    rule(
        At::Start,
        "The parent directory * does not exist",
        "not_found",
    ),
    rule(At::End, "does not exist", "not_found"),
    rule(At::Said, "command not found", "tool_failed"),
    rule(At::End, "not found", "not_found"),
    // Refusals, errors and crashes.
    rule(At::Start, "No file open", "tool_failed"),
    rule(At::Start, "Usage: ", "tool_failed"),
    rule(
        At::Start,
        "Traceback (most recent call last)",
        "tool_failed",
    ),
    rule(At::Label, "Error", "tool_failed"),
    rule(At::Label, "fatal", "tool_failed"),
    rule(At::Said, "Permission denied", "tool_failed"),
    rule(At::Said, "File exists", "tool_failed"),
    rule(
        At::Start,
        "The command '* was cancelled because it took more than",
        "tool_failed",
    ),
    rule(At::Word, "timed out", "tool_failed"),
    rule(At::Start, "File already exists", "tool_failed"),
    rule(
        At::Start,
        "The path * is not an absolute path",
        "tool_failed",
    ),
    rule(At::Start, "Invalid `", "tool_failed"),
    rule(At::Word, "failed", "tool_failed"),
];

/// Text searched from the first judged line on, for phrases that span lines.
const SPAN: usize = 8 * 1024;

/// The failure class an observation reports, `None` when it succeeded.
pub fn failure(observation: &str) -> Option<String> {
    let mut lines = observation
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !is_warning(l) && !is_markup(l));
    let first = lines.next()?;
    if VIEWS.iter().any(|v| first.starts_with(v)) {
        return None;
    }
    let last = lines.next_back().unwrap_or(first);
    // `first` is a slice of `observation`: the text from it on.
    let offset = first.as_ptr() as usize - observation.as_ptr() as usize;
    let mut end = (offset + SPAN).min(observation.len());
    while !observation.is_char_boundary(end) {
        end -= 1;
    }
    let from_first = observation[offset..end].to_ascii_lowercase();
    let (first_lower, last_lower) = (first.to_ascii_lowercase(), last.to_ascii_lowercase());
    let judged = [
        (from_first.as_str(), first, first_lower.as_str()),
        (last_lower.as_str(), last, last_lower.as_str()),
    ];
    RULES
        .iter()
        .find(|r| {
            judged
                .iter()
                .any(|(text, original, line)| matches(r, text, original, line))
        })
        .map(|r| r.class.to_string())
}

/// Whether `rule` matches a judged line, given as written (`original`) and lower-cased
/// (`line`); `text` is the lower-cased judged text from that line on (a `Start` phrase may
/// run over several lines).
fn matches(rule: &Rule, text: &str, original: &str, line: &str) -> bool {
    let phrase = rule.phrase.to_ascii_lowercase();
    match rule.at {
        At::Start => starts_with_pattern(text, &phrase),
        At::Said => {
            let starts = std::iter::once(0).chain(line.match_indices(": ").map(|(i, _)| i + 2));
            starts.into_iter().any(|at| {
                let message = line[at..].trim_start();
                let message = skip_errno(message);
                message.starts_with(&phrase)
            })
        }
        At::End => line.trim_end_matches(['.', '!', ' ']).ends_with(&phrase),
        At::Label => label(original).is_some_and(|(name, colon)| match phrase.as_str() {
            "error" => is_error_name(name, colon),
            _ => colon && name.eq_ignore_ascii_case(&phrase),
        }),
        At::Word => line.match_indices(&phrase).any(|(at, _)| {
            let before = line[..at].chars().next_back();
            let after = line[at + phrase.len()..].chars().next();
            !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
        }),
    }
}

/// `text` starts with `pattern`, whose `*` stands for any text.
fn starts_with_pattern(text: &str, pattern: &str) -> bool {
    let mut pieces = pattern.split('*');
    let head = pieces.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(head) else {
        return false;
    };
    for piece in pieces {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// A message without its leading `[Errno N] ` code.
fn skip_errno(message: &str) -> &str {
    message
        .strip_prefix("[errno ")
        .and_then(|rest| rest.split_once("] "))
        .filter(|(code, _)| code.chars().all(|c| c.is_ascii_digit()))
        .map_or(message, |(_, rest)| rest)
}

/// The label of a line (lower-cased or not, as given): the first `:`-separated word that
/// is no location (a path, a `name.ext` file, a line or column number), and whether a `:`
/// follows it. `None` when that word is no identifier (letters, digits, `_`, inner `.`,
/// and an optional `[code]` suffix, as in `error[E0425]`).
fn label(line: &str) -> Option<(&str, bool)> {
    let mut rest = line;
    loop {
        let (word, after) = match rest.split_once(':') {
            Some((word, after)) => (word.trim(), Some(after)),
            None => (rest.trim(), None),
        };
        match after {
            Some(after) if is_location(word) => rest = after,
            _ => {
                let name = match word.split_once('[') {
                    Some((name, code)) if code.ends_with(']') => name,
                    _ => word,
                };
                return is_identifier(name).then_some((name, after.is_some()));
            }
        }
    }
}

fn is_location(word: &str) -> bool {
    if word.is_empty() || word.contains(char::is_whitespace) {
        return false;
    }
    if word.contains(['/', '\\']) || word.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    // `name.ext`: a file name with a short extension.
    word.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && (1..=4).contains(&ext.len()) && ext.chars().all(is_word_char)
    })
}

fn is_identifier(word: &str) -> bool {
    let mut parts = word.split('.');
    parts.all(|p| {
        p.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && p.chars().all(is_word_char)
    })
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// An error or exception name as a line's label: `Error` or `Exception` in any case
/// (followed by `:`), a name ending in `Error` or `Exception` (`ValueError`), or a module's
/// `error` (`_curses.error`, `socket.error`); the last two may also stand alone, as the last
/// line of a traceback does.
fn is_error_name(name: &str, colon: bool) -> bool {
    if ["error", "exception"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
    {
        return colon;
    }
    let (module, last) = name.rsplit_once('.').unwrap_or(("", name));
    ["Error", "Exception"]
        .iter()
        .any(|end| last.len() > end.len() && last.ends_with(end))
        || (!module.is_empty() && ["error", "exception"].contains(&last))
}

/// A warning line: its label is `warning` or a Python warning category (`UserWarning`).
fn is_warning(line: &str) -> bool {
    label(line).is_some_and(|(name, colon)| {
        colon && {
            let last = name.rsplit('.').next().unwrap_or(name);
            last.eq_ignore_ascii_case("warning")
                || (last.len() > "warning".len() && last.ends_with("Warning"))
        }
    })
}

/// A lone markup tag (`<warning>`, `</observation>`).
fn is_markup(line: &str) -> bool {
    let inner = line
        .strip_prefix("</")
        .or_else(|| line.strip_prefix('<'))
        .and_then(|l| l.strip_suffix('>'));
    inner.is_some_and(|t| {
        !t.is_empty()
            && t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(observation: &str) -> Option<&'static str> {
        let found = failure(observation)?;
        RULES.iter().map(|r| r.class).find(|c| *c == found.as_str())
    }

    #[test]
    fn a_warning_line_does_not_decide() {
        let terminal = "Warning: _curses.error: setupterm: could not find terminfo database\n\n\
            Terminal features will not be available.  Consider setting TERM variable to \
            your current terminal name (or xterm).\n[+] Opening connection: Done\nflag{x}\n";
        assert_eq!(class(terminal), None);
        let python = "/w/run.py:4: BytesWarning: Text is not bytes\n  r.send(\"x\")\nok\n";
        assert_eq!(class(python), None);
        assert_eq!(class("WARNING:root:retrying\ndone"), None);
        assert_eq!(class("warning: LF will be replaced by CRLF"), None);
        // A warning before a real failure leaves the failure to be judged.
        let crash = "Warning: _curses.error: setupterm: could not find terminfo database\n\
            Traceback (most recent call last):\n  File \"x.py\", line 1\nEOFError\n";
        assert_eq!(class(crash), Some("tool_failed"));
    }

    #[test]
    fn missing_files_in_programs_wordings() {
        for line in [
            "strings: 'flash.img': No such file",
            "ls: cannot access 'x': No such file or directory",
            "python: can't open file '/w/x.py': [Errno 2] No such file or directory",
            "FileNotFoundError: [Errno 2] No such file or directory: 'x'",
            "/root/files/*: cannot open `/root/files/*' (No such file or directory)",
            "No such file or directory",
            "File x.py not found",
            "/bin/sh: 1: foo: not found",
            "The path /w/x.py does not exist. Please provide a valid path.",
        ] {
            assert_eq!(class(line), Some("not_found"), "{line}");
        }
        // The phrase elsewhere in a line is not the message.
        for line in [
            "Function main not found! Instead, here is the disassembly of main_0:",
            "print('No such file here')  # a comment",
            "No matches found for \"x\" in /w",
        ] {
            assert_eq!(class(line), None, "{line}");
        }
    }

    #[test]
    fn labels_and_words() {
        for line in [
            "ValueError: invalid literal",
            "subprocess.CalledProcessError: Command 'x' returned 1",
            "_curses.error: setupterm: could not find terminfo database",
            "error: pathspec 'x' did not match",
            "ERROR: Could not find a version",
            "src/main.rs:3:5: error: expected `;`",
            "error[E0425]: cannot find value `x`",
            "fatal: not a git repository",
            "bash: ./run.sh: Permission denied",
            "bash: foo: command not found",
            "curl: (28) Connection timed out after 5000 ms",
            "==== 1 failed, 2 passed in 0.10s ====",
            "Usage: goto <line>",
        ] {
            assert!(class(line).is_some(), "{line}");
        }
        for line in [
            "terror: the game",
            "test_request_failed_twice PASSED",
            "1 xfailed, 3 passed",
            "Errors are reported below",
            "None",
        ] {
            assert_eq!(class(line), None, "{line}");
        }
    }

    #[test]
    fn harness_messages_over_several_lines() {
        let stale = "No replacement was performed, old_str `def f():\n    return 1` did not \
            appear verbatim in /w/x.py.";
        assert_eq!(class(stale), Some("stale_edit"));
        let same = "No replacement was performed, old_str `a` is the same as new_str `a`.";
        assert_eq!(class(same), Some("tool_failed"));
        let timeout = "<warning>\nThe command 'sleep 99' was cancelled because it took more \
            than 60 seconds to complete.\nPlease try a different command.\n</warning>";
        assert_eq!(class(timeout), Some("tool_failed"));
        assert_eq!(class("[File: /w/x.py (3 lines total)]\nError: x"), None);
        assert_eq!(class(""), None);
    }
}
