//! Whether an observation reports a failure, and of which class.
//!
//! SWE-agent records no exit code and no per-step status: a step keeps `action`,
//! `observation`, `response`, `thought`, `state` (the open file, the working directory,
//! 1.x's diff), `execution_time`, `query` and `extra_info`, and the only status is the run's
//! `info.exit_status`. So the observation's wording decides, read with anchored rules: a
//! phrase counts only where a failure message puts it (the start of a line, the message
//! after a `<program>: <operand>: ` label, the message after a program's label, a shell's
//! message about a line of its script, apt's `E: ` severity letter, the end of a line, or a
//! line's own label), so the same words inside other text do not trip it. No rule names a
//! program: a line's shape says who speaks.
//!
//! Every line is judged, wherever it stands: 0.x runs the whole action in one shell, so a
//! failing command may print between other output, or after a file window. Set aside are
//! lines that carry no verdict: a 0.x file window's body (file text: `[File: ...]`, then
//! `(N more lines above)`, lines numbered `N:` with consecutive numbers, `(N more lines
//! below)`; it ends at the first line of another shape), warnings (`warning:`,
//! `UserWarning:`, apt's `W: `: the command went on) and lone markup tags (`<warning>`). A
//! listing, search result, 1.x view or diff ([`VIEWS`]) has no line shape to tell its body
//! from messages, so an observation that opens with one succeeded. *Edge* rules match only
//! the first and the last judged line: their words (`not found`, `failed`, a log's `ERROR:`)
//! are common in output that goes on, and a failure's last word ends the output.

/// First lines of observations that show a listing, a search result, a 1.x file view or a
/// diff: successes whose body (file text, matches) is not read for errors. 0.x's file
/// window (`[File: `) is not among them: its body has a shape (`Window`), and what a
/// command prints after it is read.
pub const VIEWS: [&str; 7] = [
    "Here's the result of running `cat -n`",
    "Here's the files and directories",
    "The file ",
    "File created successfully",
    "Last edit to ",
    "Found ",
    "diff --git",
];

/// Where in a line a rule's phrase must stand (compared case-insensitively, unless said).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// At the start of a line; a `*` in the phrase stands for any text, so a message may
    /// run over several lines (a multi-line `old_str`).
    Start,
    /// At the start of a line's message: the line's start, or right after a `: ` that ends
    /// a `<program>:` or `<operand>:` label, after an optional `[Errno N] ` code
    /// (`ls: cannot access 'x': No such file or directory`, `python: can't open file 'x':
    /// [Errno 2] No such file or directory`).
    Said,
    /// As a program's message: the line's first label (before its first `: `) is one word
    /// shaped like a program's name, maybe a path, with an optional `[N]` or ` (child)`
    /// suffix (`cc1`, `/usr/bin/ld`, `sub[1]`, `x (child)`), and the phrase opens the
    /// message after it or after a further `<operand>: ` label.
    Labelled,
    /// As a shell's message about a line of its script: a program's label, an optional
    /// `-c: `, then the line (`line 3: ` or `3: `), then the phrase, maybe after a further
    /// `<operand>: ` (`/bin/bash: -c: line 1: syntax error ...`, `sh: 1: foo: not found`).
    ScriptLine,
    /// As the line's one-letter severity label, in this case (apt's `E: `), followed by a
    /// message that starts with a letter (`E: Unable to ...`, not `E: 2.5`).
    Severity,
    /// At the end of a line, trailing `.` and `!` aside.
    End,
    /// As the line's label: the word before its first `:` once locations (`x.c:3:5:`) are
    /// passed. The phrase `Error` stands for any error or exception name (`Error`,
    /// `error`, `ValueError`, `subprocess.CalledProcessError`, `_curses.error`, a bare
    /// `AssertionError` line) but a log's upper-case `ERROR`, which the phrase `ERROR`
    /// (in that case) stands for.
    Label,
    /// As a whole word anywhere in the line.
    Word,
}

/// One wording: where its phrase stands, the phrase, the error class it gives, and whether
/// it is an edge rule (matched only on the first and the last judged line).
pub struct Rule {
    pub at: At,
    pub phrase: &'static str,
    pub class: &'static str,
    pub edge: bool,
}

/// A rule matched on every judged line.
const fn rule(at: At, phrase: &'static str, class: &'static str) -> Rule {
    Rule {
        at,
        phrase,
        class,
        edge: false,
    }
}

/// A rule matched only on the first and the last judged line.
const fn edge(at: At, phrase: &'static str, class: &'static str) -> Rule {
    Rule {
        at,
        phrase,
        class,
        edge: true,
    }
}

/// The failure wordings, first match wins (over all judged lines).
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
    edge(At::End, "does not exist", "not_found"),
    rule(At::Said, "command not found", "tool_failed"),
    // A shell's `<shell>: 1: foo: not found`.
    rule(At::ScriptLine, "not found", "not_found"),
    edge(At::End, "not found", "not_found"),
    // Refusals, errors and crashes.
    rule(At::Start, "No file open", "tool_failed"),
    edge(At::Start, "Usage: ", "tool_failed"),
    rule(
        At::Start,
        "Traceback (most recent call last)",
        "tool_failed",
    ),
    rule(At::Label, "Error", "tool_failed"),
    edge(At::Label, "ERROR", "tool_failed"),
    rule(At::Label, "fatal", "tool_failed"),
    rule(At::Said, "Permission denied", "tool_failed"),
    rule(At::Said, "File exists", "tool_failed"),
    // Programs' own failure wordings, by their shape: a shell could not parse its script,
    // a package tool stopped (`E: `), a build tool stopped (`<program>: *** `), an archiver
    // gave up.
    rule(At::ScriptLine, "syntax error", "tool_failed"),
    rule(
        At::ScriptLine,
        "unexpected EOF while looking for matching",
        "tool_failed",
    ),
    rule(At::Severity, "E", "tool_failed"),
    rule(At::Labelled, "*** ", "tool_failed"),
    rule(At::Labelled, "Error is not recoverable", "tool_failed"),
    rule(At::Labelled, "Exiting with failure status", "tool_failed"),
    rule(
        At::Start,
        "The command '* was cancelled because it took more than",
        "tool_failed",
    ),
    edge(At::Word, "timed out", "tool_failed"),
    rule(At::Start, "File already exists", "tool_failed"),
    rule(
        At::Start,
        "The path * is not an absolute path",
        "tool_failed",
    ),
    rule(At::Start, "Invalid `", "tool_failed"),
    edge(At::Word, "failed", "tool_failed"),
];

/// Text searched from a judged line on, for phrases that span lines.
const SPAN: usize = 8 * 1024;

/// One judged line: as written, lower-cased, the lower-cased text from it on (up to
/// [`SPAN`]), and whether it is the first or the last.
struct Line<'a> {
    original: &'a str,
    lower: &'a str,
    from_here: &'a str,
    edge: bool,
}

/// The failure class an observation reports, `None` when it succeeded.
pub fn failure(observation: &str) -> Option<String> {
    let lines = judged(observation);
    let first = *lines.first()?;
    if VIEWS.iter().any(|v| first.starts_with(v)) {
        return None;
    }
    // ASCII lower-casing keeps every byte offset, so a line's slice of `observation` has
    // the same place in `lower`.
    let lower = observation.to_ascii_lowercase();
    let base = observation.as_ptr() as usize;
    let last = lines.len() - 1;
    let lines: Vec<Line> = lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let at = line.as_ptr() as usize - base;
            let mut end = (at + SPAN).min(observation.len());
            while !observation.is_char_boundary(end) {
                end -= 1;
            }
            Line {
                original: line,
                lower: &lower[at..at + line.len()],
                from_here: &lower[at..end],
                edge: i == 0 || i == last,
            }
        })
        .collect();
    RULES
        .iter()
        .find(|r| {
            let phrase = r.phrase.to_ascii_lowercase();
            lines
                .iter()
                .any(|l| (l.edge || !r.edge) && matches(r, &phrase, l))
        })
        .map(|r| r.class.to_string())
}

/// The lines that carry a verdict, trimmed, in order: not empty, not in a file window's
/// body, not a warning, not a lone markup tag.
fn judged(observation: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut window: Option<Window> = None;
    for line in observation.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(w) = window.as_mut() {
            if w.takes(line) {
                continue;
            }
            window = None;
        }
        if line.starts_with("[File: ") && line.ends_with(']') {
            window = Some(Window::Header);
            continue;
        }
        if !is_warning(line) && !is_markup(line) {
            out.push(line);
        }
    }
    out
}

/// Where a 0.x file window is, as SWE-agent prints it: `[File: <path> (N lines total)]`,
/// then `(N more lines above)` if any, the file's lines as `grep -n` numbers them (`12:`
/// and the text), then `(N more lines below)` if any, which ends it.
enum Window {
    /// After the header.
    Header,
    /// After a numbered line: the number the next one must have.
    Body(u64),
    /// After `(N more lines below)`: the window is over.
    Closed,
}

impl Window {
    /// Whether `line` belongs to the window; moves past it.
    fn takes(&mut self, line: &str) -> bool {
        let number = line
            .split_once(':')
            .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|(n, _)| n.parse::<u64>().ok());
        let marker = |which: &str| {
            line.strip_prefix('(')
                .and_then(|l| l.strip_suffix(which))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        let (taken, next) = match (&*self, number) {
            (Window::Closed, _) => (false, Window::Closed),
            (Window::Header, Some(n)) => (true, Window::Body(n.saturating_add(1))),
            (Window::Body(expected), Some(n)) if n == *expected => {
                (true, Window::Body(n.saturating_add(1)))
            }
            (Window::Header, None) if marker(" more lines above)") => (true, Window::Header),
            (Window::Header | Window::Body(_), None) if marker(" more lines below)") => {
                (true, Window::Closed)
            }
            _ => (false, Window::Closed),
        };
        *self = next;
        taken
    }
}

/// Whether `rule` (its phrase lower-cased: `phrase`) matches a judged line.
fn matches(rule: &Rule, phrase: &str, line: &Line) -> bool {
    match rule.at {
        At::Start => starts_with_pattern(line.from_here, phrase),
        At::Said => messages(line.lower, true).any(|m| m.starts_with(phrase)),
        At::Labelled => {
            program(line.original).is_some()
                && messages(line.lower, false).any(|m| m.starts_with(phrase))
        }
        At::ScriptLine => program(line.original).is_some_and(|label| {
            script_line_message(&line.lower[label.len() + 2..])
                .is_some_and(|m| messages(m, true).any(|m| m.starts_with(phrase)))
        }),
        At::Severity => line
            .original
            .strip_prefix(rule.phrase)
            .and_then(|rest| rest.strip_prefix(": "))
            .and_then(|message| message.chars().next())
            .is_some_and(char::is_alphabetic),
        At::End => line
            .lower
            .trim_end_matches(['.', '!', ' '])
            .ends_with(phrase),
        At::Label => label(line.original).is_some_and(|(name, colon)| match rule.phrase {
            "Error" => is_error_name(name, colon) && name != "ERROR",
            "ERROR" => colon && name == "ERROR",
            _ => colon && name.eq_ignore_ascii_case(phrase),
        }),
        At::Word => line.lower.match_indices(phrase).any(|(at, _)| {
            let before = line.lower[..at].chars().next_back();
            let after = line.lower[at + phrase.len()..].chars().next();
            !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
        }),
    }
}

/// Where a line's message may start: after each `: ` (and at the line's start, when
/// `from_start`), leading spaces and an `[Errno N] ` code skipped.
fn messages(line: &str, from_start: bool) -> impl Iterator<Item = &str> {
    let start = from_start.then_some(0);
    start
        .into_iter()
        .chain(line.match_indices(": ").map(|(i, _)| i + 2))
        .map(|at| skip_errno(line[at..].trim_start()))
}

/// A line's first label when it is shaped like a program's name: the text before its
/// first `: `, one word (letters, digits, `_`, `-`, `.`, `+`, maybe a path) with an optional
/// `[N]` or ` (child)` suffix. Returns the whole label.
fn program(line: &str) -> Option<&str> {
    let (label, _) = line.split_once(": ")?;
    let name = label
        .strip_suffix(" (child)")
        .or_else(|| {
            label
                .strip_suffix(']')
                .and_then(|l| l.rsplit_once('['))
                .filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .map(|(name, _)| name)
        })
        .unwrap_or(label);
    let base = name.rsplit('/').next().unwrap_or(name);
    let shaped = !base.is_empty()
        && base.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && base
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.+".contains(c));
    shaped.then_some(label)
}

/// The message of a shell's line about its script, after the program's label: an optional
/// `-c: `, then `line N: ` or `N: `.
fn script_line_message(after_label: &str) -> Option<&str> {
    let rest = after_label.strip_prefix("-c: ").unwrap_or(after_label);
    let rest = rest.strip_prefix("line ").unwrap_or(rest);
    let (number, message) = rest.split_once(": ")?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some(message)
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

/// A warning line: its label is `warning` or a Python warning category (`UserWarning`), or
/// apt's severity letter of a warning or a notice (`W: `, `N: `, in that case).
fn is_warning(line: &str) -> bool {
    if line.starts_with("W: ") || line.starts_with("N: ") {
        return true;
    }
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
        assert_eq!(class(""), None);
    }

    /// A 0.x window's body is file text; what the shell prints after the window is read.
    #[test]
    fn a_window_body_is_file_text_and_what_follows_it_is_read() {
        let body = "[File: /w/app.py (40 lines total)]\n(10 more lines above)\n\
            11:    raise ValueError(\"bad\")\n12:error: not a message\n13:E: Unable to x\n\
            14:make: *** [Makefile:1: all] Error 1\n15:Traceback (most recent call last):\n\
            (25 more lines below)\n";
        assert_eq!(class(body), None);
        let edited = format!(
            "{body}File updated. Please review the changes and make sure \
            they are correct (correct indentation, no duplicate lines, etc).\n"
        );
        assert_eq!(class(&edited), None);
        // A command after `open` prints after the window.
        let after = format!("{body}/bin/bash: line 12: cclint: command not found\n");
        assert_eq!(class(&after), Some("tool_failed"));
        // A window that reaches the file's end has no `below` line: it ends at the first
        // line that does not carry the next number.
        let to_end = "[File: /w/a.txt (2 lines total)]\n1:alpha\n2:beta\n\
            bash: cclint: command not found\n";
        assert_eq!(class(to_end), Some("tool_failed"));
        let numbered_after = "[File: /w/a.txt (2 lines total)]\n1:alpha\n2:beta\n\
            9:fatal: not a git repository\n";
        assert_eq!(class(numbered_after), Some("tool_failed"));
        // A header with no numbered lines is followed by messages at once.
        assert_eq!(
            class("[File: /w/x.py (3 lines total)]\nError: x"),
            Some("tool_failed")
        );
        // 1.x views stay whole: their body has no line shape.
        let view = "Here's the result of running `cat -n` on /w/x.py:\n     1\tE: Unable to x\n";
        assert_eq!(class(view), None);
    }

    /// bash's (and dash's) own messages, labelled by the shell: it could not parse the
    /// command. The same words from another program, or as plain text, are no failure.
    #[test]
    fn a_shell_syntax_error() {
        for line in [
            "/bin/bash: -c: line 1: syntax error near unexpected token `('",
            "/bin/bash: -c: line 2: syntax error: unexpected end of file",
            "bash: line 3: syntax error near unexpected token `fi'",
            "/bin/sh: 1: Syntax error: \"(\" unexpected",
            "/bin/bash: -c: line 1: unexpected EOF while looking for matching `\"'",
            // The shape decides, not the shell's name.
            "/opt/tools/mysh: line 4: syntax error near unexpected token `done'",
        ] {
            assert_eq!(class(line), Some("tool_failed"), "{line}");
            assert_eq!(
                class(&format!("a.c\n{line}\nb.c")),
                Some("tool_failed"),
                "{line}"
            );
        }
        for line in [
            "lint: 0 scripts with a syntax error",
            "Syntax error handling: ok",
            "checked 3 scripts: syntax error count 0",
        ] {
            assert_eq!(class(line), None, "{line}");
        }
    }

    /// apt's `E: ` severity letter stops it; `W: ` and `N: ` lines are warnings and notices.
    #[test]
    fn apt_error_lines() {
        let missing = "Reading package lists...\nBuilding dependency tree...\n\
            Reading state information...\nE: Unable to locate package libfoo-dev\n";
        assert_eq!(class(missing), Some("tool_failed"));
        let lock = "E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: \
            Permission denied)\nE: Unable to acquire the dpkg frontend lock, are you root?\n";
        assert_eq!(class(lock), Some("tool_failed"));
        let warned = "Hit:1 deb.example stable InRelease\nReading package lists...\n\
            W: Some index files failed to download. They have been ignored, or old ones used \
            instead.\n";
        assert_eq!(class(warned), None);
        let noted = "Reading package lists...\nN: Skipping a configured file: it has no \
            valid name, so it failed to load\n";
        assert_eq!(class(noted), None);
        // A value printed as `E: <number>`, or a lower-case `e:`, is no apt message.
        assert_eq!(class("E: 2.718281828\ndone"), None);
        assert_eq!(class("e: unable to guess\ndone"), None);
    }

    /// make's `***` marks the error that stopped it (also a sub-make's `make[1]: ***`);
    /// an ignored error and its other messages are no failure.
    #[test]
    fn make_stops() {
        let link = "cc -o app main.o -lfoo\n/usr/bin/ld: cannot find -lfoo\n\
            collect2: error: ld returned 1 exit status\nmake: *** [Makefile:4: app] Error 1\n";
        assert_eq!(class(link), Some("tool_failed"));
        let sub = "make[1]: Entering directory '/w/lib'\ncc -c util.c\n\
            make[1]: *** [Makefile:6: util.o] Error 1\nmake[1]: Leaving directory '/w/lib'\n";
        assert_eq!(class(sub), Some("tool_failed"));
        let no_rule = "make: *** No rule to make target 'tset'.  Stop.";
        assert_eq!(class(no_rule), Some("tool_failed"));
        // Any build tool that stops with the same shape.
        let other = "cc -c a.c
buildit[2]: *** [rules:3: a.o] Error 2
";
        assert_eq!(class(other), Some("tool_failed"));
        for output in [
            "make: Nothing to be done for 'all'.",
            "make: 'app' is up to date.",
            "rm -f app *.o\nmake: [Makefile:9: clean] Error 1 (ignored)\ncleaned",
            "make[1]: Entering directory '/w/lib'\nmake[1]: Leaving directory '/w/lib'",
            "cc -c main.c\nmain.c:12:5: warning: unused variable 'n' [-Wunused-variable]\n\
                cc -o app main.o",
        ] {
            assert_eq!(class(output), None, "{output}");
        }
    }

    /// tar's last words when it gives up; a missing archive keeps the `not_found` class of
    /// its `No such file` line. Its note about leading slashes is no failure.
    #[test]
    fn tar_gives_up() {
        let gzip = "\ngzip: stdin: not in gzip format\ntar: Child returned status 1\n\
            tar: Error is not recoverable: exiting now\n";
        assert_eq!(class(gzip), Some("tool_failed"));
        let member = "readme.txt\ntar: missing.c: Not found in archive\n\
            tar: Exiting with failure status due to previous errors\n";
        assert_eq!(class(member), Some("tool_failed"));
        let missing = "vendor/\ntar (child): vendr.tgz: Cannot open: No such file or directory\n\
            tar (child): Error is not recoverable: exiting now\n\
            tar: Child returned status 2\ntar: Error is not recoverable: exiting now\n";
        assert_eq!(class(missing), Some("not_found"));
        let leading = "tar: Removing leading `/' from member names\n/w/vendor/\n/w/vendor/lib.c\n";
        assert_eq!(class(leading), None);
        // Another archiver with the same last words.
        let other = "x lib.c
archiver-2: Error is not recoverable: exiting now
";
        assert_eq!(class(other), Some("tool_failed"));
        // A label of several words is prose, not a program.
        assert_eq!(
            class(
                "Step 3 of 4: *** done ***
ok"
            ),
            None
        );
    }

    /// Every judged line counts, not only the first and the last; edge rules (words common
    /// in output that goes on) still count only there.
    #[test]
    fn a_failure_between_other_lines() {
        let shell = "build/\nbash: line 2: pytest: command not found\ndone\n";
        assert_eq!(class(shell), Some("tool_failed"));
        let crash = "app\nTraceback (most recent call last):\n  File \"gen.py\", line 3, in \
            <module>\nModuleNotFoundError: No module named 'yaml'\ndone\n";
        assert_eq!(class(crash), Some("tool_failed"));
        let compiler = "x.c: In function 'main':\nx.c:3:5: error: expected ';' before 'return'\n\
            \x20   3 |     int x = 1\n      |              ^\n";
        assert_eq!(class(compiler), Some("tool_failed"));
        let missing = "a.txt\nls: cannot access 'b.txt': No such file or directory\nc.txt\n";
        assert_eq!(class(missing), Some("not_found"));
        let dash = "start\n/bin/sh: 1: cclint: not found\nend\n";
        assert_eq!(class(dash), Some("not_found"));
        for output in [
            "checking 3 headers\nheader foo.h not found, using the bundled copy\nall ready",
            "two runs\nrun 1: failed, retrying\nrun 2: ok\nall done",
            "fetching\nrequest timed out, retrying\nfetched",
            "Installing collected packages: app\nERROR: dependency conflicts were found \
                among the installed packages\nSuccessfully installed app-0.1",
            "python x.py --help\nUsage: x.py [-h]\n  -h  help",
        ] {
            assert_eq!(class(output), None, "{output}");
        }
        // At an edge they still count.
        assert_eq!(
            class("Collecting foo\nERROR: No matching distribution found for foo"),
            Some("tool_failed")
        );
        assert_eq!(class("tests ran\n1 failed, 2 passed"), Some("tool_failed"));
    }

    /// Warnings go on: the lines after them decide.
    #[test]
    fn a_successful_step_with_a_warning() {
        for output in [
            "/w/gen.py:5: UserWarning: config missing, using defaults\n  \
                warnings.warn(\"config missing\")\ngenerated 4 files",
            "warning: adding embedded git repository: vendor/lib\ndone",
            "W: Some index files failed to download. They have been ignored.",
            "make: Nothing to be done for 'all'.",
            "tar: Removing leading `/' from member names",
        ] {
            assert_eq!(class(output), None, "{output}");
        }
    }
}
