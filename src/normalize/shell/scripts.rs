//! Scripts a command line runs by name, and which words name files (issue #28).
//!
//! Shell agents write a fix script with a here-document and run it in a later turn
//! (`cat > fix.py <<'EOF' ... EOF`, then `python fix.py`): the grammar of the second line
//! says nothing of what it writes, but the run recorded the script's body. The line's
//! walk (`writes`) notes each script it runs; `normalize::work` reads the recorded body
//! as it reads inline code. Only the grammar is used: an interpreter with a file operand
//! (`python3 -u fix.py`, `node fix.js`, `bash run.sh`) or a program named by a path
//! (`./fix.sh`), never a script's or project's name.

/// A script a line runs by name, keyed like the paths a line writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptRun {
    pub path: String,
    pub kind: ScriptKind,
    /// It is the line's last command: if the line failed, so did the script.
    pub tail: bool,
}

/// How a script's recorded body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptKind {
    /// A shell script: its body is a command line (`bash run.sh`).
    Shell,
    /// An interpreter's code (`python fix.py`): read for files it opens for writing.
    Code,
    /// Run directly (`./fix.sh`): its first line (`#!`) says which.
    ByShebang,
}

impl ScriptKind {
    /// The kind a body is read as: a `#!` line naming a shell makes it a shell script,
    /// any other interpreter code.
    pub fn of_body(self, body: &str) -> Self {
        match self {
            Self::ByShebang => {
                let first = body.lines().next().unwrap_or("");
                let shell = ["sh", "bash", "zsh", "dash"].iter().any(|s| {
                    first.ends_with(&format!("/{s}")) || first.ends_with(&format!(" {s}"))
                });
                if first.starts_with("#!") && !shell {
                    Self::Code
                } else {
                    Self::Shell
                }
            }
            other => other,
        }
    }
}

/// Options of interpreters that take a value, so the word after them is not the script.
const VALUE_OPTIONS: [&str; 6] = ["-W", "-X", "-r", "--require", "-I", "--import"];

/// The script an interpreter runs: its first operand, unless it runs a module or code
/// (`python -m pytest`, `node -e`), which is not a file of the run.
pub fn script_operand<'a>(_program: &str, args: &'a [String]) -> Option<&'a String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-m" || a == "-c" || a == "-e" || a == "--eval" || a == "-p" || a == "-" {
            return None;
        }
        if VALUE_OPTIONS.contains(&a.as_str()) {
            it.next();
            continue;
        }
        if !a.starts_with('-') {
            return Some(a);
        }
    }
    None
}

/// Whether a word is shaped like a file's path: it holds a `/`, or ends in an extension
/// (`setup.cfg`, `main.c`), and is not an option, a URL or a version (`1.2.3`).
pub fn looks_like_path(word: &str) -> bool {
    // Every word of every output that holds a `/` or a `.` is asked: byte searches only.
    let bytes = word.as_bytes();
    let url =
        || memchr::memchr(b':', bytes).is_some() && memchr::memmem::find(bytes, b"://").is_some();
    if bytes.is_empty() || bytes[0] == b'-' || memchr::memchr(b'=', bytes).is_some() || url() {
        return false;
    }
    if memchr::memchr(b'/', bytes).is_some() {
        return word.chars().any(|c| c.is_alphanumeric());
    }
    let Some((stem, ext)) = word.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty()
        && (1..=8).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic())
        && stem
            .chars()
            .all(|c| c.is_alphanumeric() || "._-+@".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_by_shape() {
        for path in [
            "src/a.py",
            "setup.cfg",
            "main.c",
            "./run.sh",
            "/tmp/x",
            "a/b",
        ] {
            assert!(looks_like_path(path), "{path}");
        }
        for word in [
            "main",
            "-v",
            "1.2.3",
            "https://x.org/a",
            "A=b",
            "",
            "v2.9.0",
        ] {
            assert!(!looks_like_path(word), "{word}");
        }
    }

    #[test]
    fn the_script_an_interpreter_runs() {
        let words = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            script_operand("python", &words("-u fix.py --flag")).map(String::as_str),
            Some("fix.py")
        );
        assert_eq!(script_operand("python", &words("-m pytest t.py")), None);
        assert_eq!(script_operand("node", &words("-e x")), None);
        assert_eq!(
            script_operand("node", &words("-r ts-node/register run.ts")).map(String::as_str),
            Some("run.ts")
        );
    }

    #[test]
    fn a_shebang_says_how_a_body_is_read() {
        assert_eq!(
            ScriptKind::ByShebang.of_body("#!/usr/bin/env python3\n"),
            ScriptKind::Code
        );
        assert_eq!(
            ScriptKind::ByShebang.of_body("#!/bin/bash\nsed -i x f"),
            ScriptKind::Shell
        );
        assert_eq!(
            ScriptKind::ByShebang.of_body("sed -i x f"),
            ScriptKind::Shell
        );
        assert_eq!(ScriptKind::Code.of_body("#!/bin/sh"), ScriptKind::Code);
    }
}
