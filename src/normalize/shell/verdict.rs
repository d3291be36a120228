//! What a shell command's exit status and output can prove: one rule for every guard.
//!
//! Without `pipefail` a pipeline exits with its last command's status, and a list
//! (`a; b`, `a || b`) with its last pipeline's: `pytest -q 2>&1 | tail -5` exits 0 even
//! when its own output says "3 failed". [`status_masked`] says when the status may not be
//! the checking command's, [`output_is_filtered`] when the output the model saw may be
//! missing lines (so a count of diagnostic lines read from it is not reliable), and
//! [`is_viewer`] when a command only shows text, so text in its output that mentions
//! passing proves nothing. `normalize::Outcome` applies them once for every guard.
//!
//! Seed 000 WO-9 9c ("when a verification-like shell command succeeds") and the root
//! refinement (the failure signal read from the action's own output); seed 002 fix 17
//! (`verify && echo ok || echo failed` exits 0 either way).

use super::grammar::{base_name, parse, Command, Pipeline};

/// Whether the command's exit status may hide the failure of a command it ran: a pipe
/// stage after the first (without `set -o pipefail`), or a list operator that ignores or
/// masks a status (`;`, `||`, `&`).
pub fn status_masked(command: &str) -> bool {
    status_masked_in(&parse(command))
}

pub(super) fn status_masked_in(list: &[Pipeline]) -> bool {
    let mut pipefail = false;
    for (i, p) in list.iter().enumerate() {
        pipefail |= p.commands.iter().any(sets_pipefail);
        if p.commands.len() > 1 && !pipefail {
            return true;
        }
        let last = i + 1 == list.len();
        // A status ignored or masked by the list, of a pipeline that could have printed
        // what the output reports: `cat > t.py <<EOF; python t.py` masks nothing.
        let ignored = match p.then.as_deref() {
            Some("&") => true,
            Some(";" | "||") => !last && !is_silent(p),
            _ => false,
        };
        if ignored {
            return true;
        }
    }
    false
}

/// A pipeline whose status cannot hide a check: it only changes the shell (`cd`,
/// `set -o pipefail`, `export X=1`), or it writes text from the line or from files to a
/// file (`cat > t.py <<EOF`). `make > build.log` is not one: the build's failure is what a
/// later `cat build.log` shows.
fn is_silent(p: &Pipeline) -> bool {
    let Some(last) = p.commands.last() else {
        return true;
    };
    let settings = p.commands.iter().all(|c| {
        matches!(
            c.name(),
            Some("cd" | "set" | "export" | "unset" | "shopt" | "ulimit" | "umask")
        )
    });
    let stdout_to_file = last.redirects.iter().any(|r| {
        r.is_output()
            && matches!(
                r.op.as_str(),
                ">" | ">>" | ">|" | "1>" | "1>>" | "&>" | "&>>"
            )
    });
    settings || (stdout_to_file && p.commands.iter().all(Command::only_moves_text))
}

fn sets_pipefail(cmd: &Command) -> bool {
    cmd.name() == Some("set")
        && cmd
            .words
            .windows(2)
            .any(|w| w[0].starts_with('-') && w[0].ends_with('o') && w[1] == "pipefail")
}

/// What a shell prints when it refuses a line before running any of it (bash, dash, zsh).
const REFUSALS: [&str; 5] = [
    "syntax error near unexpected token",
    "syntax error: unexpected end of file",
    "unexpected EOF while looking for matching",
    "Syntax error: Unterminated quoted string",
    "parse error near",
];

/// Whether the shell refused the line: a syntax error, so none of it ran and nothing it
/// names was written (`sed -i` on a line bash could not parse edited nothing).
/// The message must come from the shell itself (`bash: ...`, `/bin/sh: 1: ...`, `zsh:
/// ...`): a log that quotes one is not a refusal.
pub fn refused(output: &str) -> bool {
    // Every shell result is asked: one fast pass for the shell's label first.
    memchr::memmem::find(output.as_bytes(), b"sh:").is_some()
        && REFUSALS.iter().any(|r| output.contains(r))
        && output
            .lines()
            .any(|line| from_shell(line) && REFUSALS.iter().any(|r| line.contains(r)))
}

/// A line the shell itself printed: its first word is a shell's label (`bash:`,
/// `/bin/sh:`, `zsh:`).
pub(crate) fn from_shell(line: &str) -> bool {
    line.split_whitespace()
        .next()
        .is_some_and(|w| w.ends_with("sh:"))
}

/// Pipe stages that show everything they read.
const PASS_THROUGH: [&str; 4] = ["tee", "cat", "less", "more"];

/// Whether the output the model saw may lack lines the command printed: a pipe stage that
/// selects lines (`tail`, `head`, `grep`, `sed`, ...) or an output stream sent elsewhere
/// (`2>/dev/null`, `>build.log`). Duplicating a stream (`2>&1`) loses nothing.
pub fn output_is_filtered(command: &str) -> bool {
    output_is_filtered_in(&parse(command))
}

pub(super) fn output_is_filtered_in(list: &[Pipeline]) -> bool {
    list.iter().any(cuts_output)
}

fn cuts_output(p: &Pipeline) -> bool {
    let selecting_stage = p.commands.iter().skip(1).any(|c| {
        c.name().is_none_or(|n| !PASS_THROUGH.contains(&n))
            || (c.name() == Some("cat") && c.words.len() > 1)
    });
    let redirected = p
        .commands
        .iter()
        .flat_map(|c| &c.redirects)
        .any(|r| r.is_output());
    selecting_stage || redirected
}

/// Whether the line ends by running something that may check the work: the producing
/// command (`python t.py` in `python t.py 2>&1 | tail`) of its last pipeline that does
/// more than show or say something (`pytest; echo done` ends with `pytest`) is not a
/// writer (`sed -i`, `cp`, `cat > f <<EOF`), a shell setting, a package install or a
/// version-control command. Whether what it ran was a fix script, which writes files, only
/// the run's recorded scripts can tell (`normalize::check`).
pub(super) fn runs_check_in(list: &[Pipeline]) -> bool {
    for pipeline in list.iter().rev() {
        // The command of the pipeline that runs something: not a text source feeding it
        // (`echo "select 1;" | linter -`) nor a display filter after it (`| tail`).
        let Some(runner) = pipeline.commands.iter().find(|c| !says_or_shows(c)) else {
            continue;
        };
        let words = runner.effective();
        let program = words.first().map(|w| base_name(w)).unwrap_or_default();
        return !(super::writes::command_writes(runner)
            || NOT_CHECKS.contains(&program)
            || super::installs::is_install(words));
    }
    false
}

/// A command that only shows or says something: a viewer, a narrative print, a question
/// about a program (`--help`, `--version`), a package manager's report of what is
/// installed (`pip list`).
fn says_or_shows(cmd: &Command) -> bool {
    let words = cmd.effective();
    let Some(program) = words.first().map(|w| base_name(w)) else {
        return true;
    };
    shows_only(cmd)
        || narrative_print(program, &words[1..])
        || asks_about(&words[1..])
        || super::installs::is_package_query(words)
}

/// Programs whose run checks nothing: they change files, the shell or the repository.
const NOT_CHECKS: [&str; 24] = [
    "export", "unset", "set", "source", ".", "alias", "sed", "cp", "mv", "rm", "touch", "mkdir",
    "rmdir", "chmod", "chown", "ln", "tee", "patch", "dd", "truncate", "git", "hg", "svn", "sleep",
];

/// `python --version`, `pytest --help`: a question about the program, not a run of it.
fn asks_about(args: &[String]) -> bool {
    args.iter()
        .any(|a| ["--version", "-V", "--help", "-h"].contains(&a.as_str()))
        || args.first().is_some_and(|a| a == "help" || a == "version")
}

/// `python -c "print('Fix applied')"`: inline code that only prints, with no import and
/// no other call, says something rather than checking it.
fn narrative_print(program: &str, args: &[String]) -> bool {
    if !super::code::is_interpreter(program) {
        return false;
    }
    let Some(code) = args
        .iter()
        .position(|a| a == "-c" || a == "-e")
        .and_then(|i| args.get(i + 1))
    else {
        return false;
    };
    let code = code.trim_matches(|c| c == '"' || c == '\'');
    let statements: Vec<&str> = code
        .split([';', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    !statements.is_empty()
        && statements.iter().all(|s| {
            (s.starts_with("print(") || s.starts_with("console.log(") || s.starts_with("puts "))
                && s.matches('(').count() <= 1
        })
}

/// Programs that only show text (files, listings, history, search results).
const VIEWERS: [&str; 41] = [
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ack", "find",
    "ls", "tree", "wc", "sort", "uniq", "cut", "tr", "nl", "echo", "printf", "pwd", "cd", "true",
    "diff", "cmp", "file", "stat", "which", "type", "du", "df", "column", "jq", "awk", "xxd", "od",
    "strings", "basename", "dirname",
];

/// `git` subcommands that only show history, state or text.
const GIT_VIEWS: [&str; 9] = [
    "log",
    "show",
    "diff",
    "status",
    "grep",
    "blame",
    "ls-files",
    "rev-parse",
    "shortlog",
];

/// Programs that search text and exit 1 when they find nothing (grep's convention).
const SEARCHERS: [&str; 6] = ["grep", "egrep", "fgrep", "rg", "ag", "ack"];

/// Whether the line only shows text and its status is a search's (its last command is
/// `grep`, `rg`, `git grep`...): exit 1 with nothing printed then means "no match", not a
/// failure.
pub(super) fn searches_in(list: &[Pipeline]) -> bool {
    let last = list.last().and_then(|p| p.commands.last());
    is_viewer_in(list)
        && last.is_some_and(|c| {
            let words = c.effective();
            match words.first().map(|w| base_name(w)) {
                Some("git") => words
                    .iter()
                    .skip(1)
                    .find(|w| !w.starts_with('-'))
                    .is_some_and(|sub| sub == "grep"),
                Some(p) => SEARCHERS.contains(&p),
                None => false,
            }
        })
}

/// Whether every command of the line only shows text: `cat NOTES.md`, `grep -rn passed`,
/// `git log`, `sed -n 1,20p f`. Text such a command prints ("12 passed") is what some file
/// says, not the result of a check that ran.
pub fn is_viewer(command: &str) -> bool {
    is_viewer_in(&parse(command))
}

pub(super) fn is_viewer_in(list: &[Pipeline]) -> bool {
    !list.is_empty()
        && list
            .iter()
            .flat_map(|p| &p.commands)
            .all(|c| c.words.is_empty() || shows_only(c))
}

fn shows_only(cmd: &Command) -> bool {
    let words = cmd.effective();
    let Some(program) = words.first().map(|w| base_name(w)) else {
        return true;
    };
    match program {
        "git" => words
            .iter()
            .skip(1)
            .find(|w| !w.starts_with('-'))
            .is_some_and(|sub| GIT_VIEWS.contains(&sub.as_str())),
        "sed" => !words
            .iter()
            .any(|w| w.starts_with("-i") || w == "--in-place"),
        p => VIEWERS.contains(&p),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_come_from_the_shell() {
        for said in [
            "/bin/bash: -c: line 1: syntax error near unexpected token `('",
            "bash: line 3: syntax error: unexpected end of file",
            "/bin/sh: 1: Syntax error: Unterminated quoted string",
            "zsh: parse error near `)'",
            "bash: -c: line 2: unexpected EOF while looking for matching `\"'",
        ] {
            assert!(
                refused(&format!("<returncode>2</returncode>\n{said}\n")),
                "{said}"
            );
        }
        assert!(!refused(
            "grep: log.txt: syntax error near unexpected token"
        ));
        assert!(!refused("error: syntax error near line 3"));
    }

    #[test]
    fn lines_that_run_a_check() {
        let check = |c: &str| runs_check_in(&parse(c));
        for c in [
            "python reproduce.py",
            "cd /testbed && python -m pytest tests/test_a.py -x 2>&1 | tail -20",
            "sed -i 's/a/b/' src/x.py && python test_fix.py",
            "npm test",
            "go test ./...",
            "cargo test --lib",
            "make check",
            "./run_tests.sh",
            "python -c \"import pkg; print(pkg.__version__)\"",
            "node repro.js > out.log",
            "pytest -q; echo done",
            "python t.py && echo ok",
            "echo 'select 1;' | sqlfluff lint -",
            "cat input.txt | python solve.py",
        ] {
            assert!(check(c), "{c}");
        }
        for c in [
            "cat src/x.py",
            "grep -rn foo src/",
            "sed -i 's/a/b/' src/x.py",
            "cat > t.py <<'EOF'\nprint(1)\nEOF",
            "pip install -e .",
            "git diff",
            "git checkout src/x.py",
            "cd /testbed",
            "echo done",
            "python -c \"print('Fix applied')\"",
            "python test.py && cp a.py b.py",
            "ls -la && pwd",
            "sed -i 's/a/b/' f.py && echo done",
            "python --version",
            "pytest --help | head",
            "pip list | grep numpy",
            "npm ls react",
            "sqlfluff fix --help | head -20",
            "apt-cache search llvm",
            "apt-cache policy llvm-14-dev | head",
            "brew info cmake",
            "conda list numpy",
        ] {
            assert!(!check(c), "{c}");
        }
    }

    #[test]
    fn masked_statuses() {
        for masked in [
            "pytest -q 2>&1 | tail -5",
            "npm test | tee log",
            "make check || true",
            "make > build.log 2>&1; cat build.log",
            "go test ./...; echo done",
            "cargo test & wait",
            "npm test && echo ok || echo failed",
        ] {
            assert!(status_masked(masked), "{masked}");
        }
        for plain in [
            "pytest -q",
            "cd app && npm test",
            "make && make check",
            "set -o pipefail; cargo test 2>&1 | tail -5",
            "set -euo pipefail && go test ./... | tail",
            "cat > t.py <<'EOF'\nprint('FAIL: expected')\nEOF\npython t.py",
            "cd build; ctest",
        ] {
            assert!(!status_masked(plain), "{plain}");
        }
    }

    #[test]
    fn filtered_outputs() {
        assert!(output_is_filtered("make 2>&1 | tail -n 2"));
        assert!(output_is_filtered("make | tail -n 2 2>/dev/null"));
        assert!(output_is_filtered("cargo build 2>/dev/null"));
        assert!(output_is_filtered("npm test | grep -i fail"));
        assert!(output_is_filtered("pytest > out.txt"));
        assert!(!output_is_filtered("make 2>&1"));
        assert!(!output_is_filtered("make | tee build.log"));
        assert!(!output_is_filtered("go test ./... 2>&1 | cat"));
    }

    #[test]
    fn viewers_show_text() {
        for viewer in [
            "cat NOTES.md",
            "grep -rn passed tests/",
            "git log --oneline -5",
            "sed -n '1,20p' src/app.py",
            "cd /w && ls -la | head",
            "find . -name '*.go' | xargs grep -l Test",
        ] {
            assert!(is_viewer(viewer), "{viewer}");
        }
        for runner in [
            "pytest -q",
            "npm test",
            "make check",
            "go test ./...",
            "cargo build",
            "python -c 'print(1)'",
            "sed -i 's/a/b/' f",
            "git commit -m passed",
        ] {
            assert!(!is_viewer(runner), "{runner}");
        }
    }
}
