//! The work tree as the run shows it: which written files belonged to the work before the
//! run wrote them (a *code change*) and which are the run's own scratch (issue #28).
//!
//! A ledger asks whether the project's code changed since it was last checked (seed 001
//! WO-TD-06: "missing verification after code mutations"; seed 002 fix 4). Shell agents
//! write much that is not the project's code: reproduction and test scripts, backups,
//! files under `/tmp`, edits to installed packages. So a write is a code change when its
//! path belonged to the work before the run wrote it (named earlier in a command, an edit
//! or read tool's path, an output or a recorded result) or when the grammar
//! cannot name it; it is scratch when the run itself created the path (its first write
//! wrote it whole, nothing named it before, and it lies at the top of the work tree or in a
//! directory where no file of the work was seen: `reproduce_issue.py`, `debug/run.py`),
//! when it lies under a temporary directory,
//! is a backup (`*.bak`, `*.backup*`, `*.orig`, `*~`) or a variant named after a file of
//! the work (`schema.py.fixed`), or lies outside the work tree (an
//! absolute path not under the run's directory, or one that climbs out of it). An in-place
//! edit (`sed -i`, `patch`, an edit tool's replacement) needs the file to exist, so it is a
//! code change unless the location makes it scratch. A new file beside the work's own files
//! (`app/formats.py` once `app/dates.py` was seen) is part of the work: a new module, a new
//! regression test in the project's tests directory.
//!
//! The run's scripts are read too: a here-document written to a file is kept, and a later
//! `python fix.py` or `bash run.sh` writes what that body writes (`shell::scripts`).

use super::shell::code::code_writes;
use super::shell::scripts::{looks_like_path, ScriptKind, ScriptRun};
use super::shell::{join_path, relative_form, writes, Writes};
use super::text::head;
use crate::hash::{HashMap, HashSet};
use std::sync::Arc;

/// Directories whose files no project keeps: a run's scratch.
pub const TEMP_DIRS: [&str; 6] = [
    "/tmp/",
    "/var/tmp/",
    "/var/folders/",
    "/private/var/folders/",
    "/dev/shm/",
    "\\AppData\\Local\\Temp\\",
];

/// Bytes of a listing's output read for the paths it names, and of a script body kept.
const READ_CAP: usize = 64 * 1024;

/// Paths the run learns of, at most: a bound on memory for runs that list huge trees.
const KNOWN_CAP: usize = 200_000;

/// What the run has shown of its work tree so far.
#[derive(Debug, Default)]
pub struct WorkTree {
    /// Paths named before (commands, tools' paths, listings, recorded results).
    known: HashSet<String>,
    /// The directories of known paths: where the work's own files lie.
    known_dirs: HashSet<String>,
    /// Paths the run created: every later write to them is scratch too.
    created: HashSet<String>,
    /// Script bodies the run wrote, by path.
    bodies: HashMap<String, Arc<str>>,
}

/// The files one call wrote, as the work tree judges them.
#[derive(Debug, Default)]
pub struct Written<'a> {
    /// Paths edited in place (they existed).
    pub edited: Vec<&'a str>,
    /// Paths written whole (they may be new).
    pub created: Vec<&'a str>,
    /// It also wrote files it does not name.
    pub unnamed: bool,
}

impl<'a> Written<'a> {
    /// Adds what a shell line (or a script it ran) wrote.
    pub fn add(&mut self, writes: &'a Writes) {
        for path in &writes.paths {
            if writes.created.contains(path) {
                self.created.push(path);
            } else {
                self.edited.push(path);
            }
        }
        self.unnamed |= writes.unnamed;
    }
}

impl WorkTree {
    /// Whether the write `written` changed the project's code, and the run's record of it:
    /// paths it created become scratch for the rest of the run. A write that names no path
    /// at all is a code change: nothing says it was not.
    pub fn changes_code(&mut self, written: &Written<'_>, run_cwd: Option<&str>) -> bool {
        let mut code = written.unnamed || (written.edited.is_empty() && written.created.is_empty());
        for path in &written.edited {
            code |= !self.is_scratch(path, run_cwd);
        }
        for path in &written.created {
            if self.is_scratch(path, run_cwd) || self.is_variant(path) {
                continue;
            }
            let beside_the_work = parent(path).is_some_and(|d| self.known_dirs.contains(d));
            if self.known.contains(*path) || beside_the_work {
                code = true;
            } else {
                self.created.insert(path.to_string());
            }
        }
        code
    }

    /// A path the run's own work does not hold: created by the run, temporary, a backup,
    /// or outside the run's directory (only when the run's directory is known).
    fn is_scratch(&self, path: &str, run_cwd: Option<&str>) -> bool {
        self.created.contains(path)
            || is_temporary(path)
            || is_backup(path)
            || (run_cwd.is_some() && (path.starts_with('/') || path.starts_with("../")))
    }

    /// A copy or variant named after a file of the work (`schema.py.fixed`,
    /// `config.json.new` beside `config.json`): the run's own, like a backup.
    fn is_variant(&self, path: &str) -> bool {
        let name_at = path.rfind('/').map_or(0, |i| i + 1);
        path[name_at..]
            .match_indices(['.', '_', '-', '~'])
            .map(|(i, _)| &path[..name_at + i])
            .any(|stem| self.known.contains(stem))
    }

    /// Files a call created to hold a program's output (`git diff > patch.txt`): the run's
    /// own, so a later write to them is scratch too (unless the work had them before).
    pub fn note_captures(&mut self, captures: &[String]) {
        for path in captures {
            if !self.known.contains(path) {
                self.created.insert(path.clone());
            }
        }
    }

    /// Paths named by a call: known from now on.
    pub fn note_named<'p>(&mut self, paths: impl IntoIterator<Item = &'p str>) {
        for path in paths {
            if self.known.len() >= KNOWN_CAP {
                return;
            }
            if !self.known.contains(path) {
                self.known.insert(path.to_string());
                if let Some(dir) = parent(path).filter(|d| !self.known_dirs.contains(*d)) {
                    self.known_dirs.insert(dir.to_string());
                }
            }
        }
    }

    /// Paths an output printed (a listing, `git status`, `grep -rn`, a traceback, a test
    /// runner's report), relative to the directory the call ran in: known from now on.
    /// Only the first [`READ_CAP`] bytes are read.
    pub fn note_listing(&mut self, output: &str, call_cwd: Option<&str>, run_cwd: Option<&str>) {
        let read = head(output, READ_CAP).as_bytes();
        // Every output is read, so this is a hot loop: bytes, not chars (the delimiters
        // are ASCII, so every token is whole UTF-8), and no allocation for a path relative
        // to the run's own directory that is known already.
        let same_dir = call_cwd.is_none() || call_cwd == run_cwd;
        for token in path_candidates(read) {
            let Ok(token) = std::str::from_utf8(token) else {
                continue;
            };
            if !looks_like_path(token) {
                continue;
            }
            let token = token.trim_start_matches("./");
            if same_dir && is_plain_relative(token) {
                self.note_named([token]);
            } else {
                let joined = join_path(call_cwd, token);
                let key = relative_form(&joined, run_cwd).unwrap_or(joined);
                self.note_named([key.as_str()]);
            }
        }
    }

    /// Keeps the bodies a call wrote to files, for a later run of them by name.
    pub fn record_bodies(&mut self, writes: &Writes) {
        for (path, body) in &writes.bodies {
            let kept = head(body, READ_CAP);
            self.bodies.insert(path.clone(), Arc::from(kept));
        }
    }

    /// What the scripts a line runs by name write, read from their recorded bodies:
    /// `None` when none of them has one. When the line failed, a script run as its last
    /// command failed, and is not known to have written anything.
    pub fn script_writes(
        &self,
        scripts: &[ScriptRun],
        run_cwd: Option<&str>,
        line_failed: bool,
    ) -> Option<Writes> {
        let mut all: Option<Writes> = None;
        for run in scripts.iter().filter(|r| !(line_failed && r.tail)) {
            let Some(body) = self.bodies.get(&run.path) else {
                continue;
            };
            let found = match run.kind.of_body(body) {
                ScriptKind::Shell | ScriptKind::ByShebang => writes(body, run_cwd),
                ScriptKind::Code => {
                    let code = code_writes(body);
                    (!code.paths.is_empty() || code.unnamed).then(|| {
                        let keyed: Vec<String> = code
                            .paths
                            .iter()
                            .map(|p| {
                                let joined = join_path(run_cwd, p);
                                relative_form(&joined, run_cwd).unwrap_or(joined)
                            })
                            .collect();
                        Writes {
                            created: keyed.clone(),
                            paths: keyed,
                            unnamed: code.unnamed,
                            ..Writes::default()
                        }
                    })
                }
            };
            if let Some(found) = found {
                let into = all.get_or_insert_with(Writes::default);
                into.paths.extend(found.paths);
                into.created.extend(found.created);
                into.unnamed |= found.unnamed;
            }
        }
        all.map(|mut w| {
            for list in [&mut w.paths, &mut w.created] {
                list.sort();
                list.dedup();
            }
            w
        })
    }
}

/// Under a temporary directory (a Windows one anywhere in the path).
pub fn is_temporary(path: &str) -> bool {
    TEMP_DIRS.iter().any(|d| {
        if d.starts_with('\\') {
            path.contains(d)
        } else {
            path.starts_with(d)
        }
    })
}

/// The directory of a relative path in the work tree (`app` of `app/dates.py`); none for
/// a file at its top or a path outside it.
fn parent(path: &str) -> Option<&str> {
    if path.starts_with('/') || path.starts_with("../") {
        return None;
    }
    path.rsplit_once('/')
        .map(|(dir, _)| dir)
        .filter(|d| !d.is_empty())
}

/// A backup's name: `*.bak`, `*.orig`, `*.backup`, `*.backup1`, `x.backup.py`, `x~`.
fn is_backup(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".bak")
        || name.ends_with(".orig")
        || name.ends_with('~')
        || name.contains(".backup")
        || name.contains(".bak.")
}

/// Where an output's words end: ASCII whitespace, quotes, brackets and separators.
const DELIMITER: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    let delimiters = b" \t\n\r\x0b\x0c\"'`,;()[]{}<>=|";
    while i < delimiters.len() {
        table[delimiters[i] as usize] = true;
        i += 1;
    }
    table
};

/// The words of `text` that may be paths, each up to its first `:` (`src/a.py:12:`): at
/// least 3 bytes, holding a `/` or a `.` before that `:`. Found from each `/` and `.` (a
/// vectorized search), so text with few of them is passed over quickly.
fn path_candidates(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut marks = memchr::memchr2_iter(b'/', b'.', text);
    let mut done = 0;
    std::iter::from_fn(move || {
        for mark in marks.by_ref() {
            if mark < done || DELIMITER[text[mark] as usize] {
                continue;
            }
            let mut start = mark;
            while start > done && !DELIMITER[text[start - 1] as usize] {
                start -= 1;
            }
            let mut end = mark;
            while end < text.len() && !DELIMITER[text[end] as usize] {
                end += 1;
            }
            done = end;
            let word = &text[start..end];
            let word = match memchr::memchr(b':', word) {
                Some(colon) => &word[..colon],
                None => word,
            };
            if word.len() >= 3 && memchr::memchr2(b'/', b'.', word).is_some() {
                return Some(word);
            }
        }
        None
    })
}

/// A relative path that keys as itself: no empty, `.` or `..` part for cleaning to change.
fn is_plain_relative(path: &str) -> bool {
    !path.starts_with('/')
        && !path
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written<'a>(edited: &[&'a str], created: &[&'a str]) -> Written<'a> {
        Written {
            edited: edited.to_vec(),
            created: created.to_vec(),
            unnamed: false,
        }
    }

    const RUN: Option<&str> = Some("/testbed");

    #[test]
    fn scratch_by_location_and_name() {
        let mut work = WorkTree::default();
        for path in [
            "/tmp/repro/x.py",
            "/opt/conda/lib/python3.11/site-packages/somelib/core.py",
            "../other/x.c",
            "src/app.py.bak",
            "src/app.py.backup2",
            "src/app.orig",
            "notes.txt~",
        ] {
            assert!(!work.changes_code(&written(&[path], &[]), RUN), "{path}");
        }
        assert!(work.changes_code(&written(&["src/app.py"], &[]), RUN));
        // Without the run's directory an absolute path cannot be judged outside.
        assert!(work.changes_code(&written(&["/srv/app/main.go"], &[]), None));
    }

    #[test]
    fn a_file_the_run_created_stays_scratch() {
        let mut work = WorkTree::default();
        assert!(!work.changes_code(&written(&[], &["reproduce.py"]), RUN));
        // Edited in place later, it is still the run's own file.
        assert!(!work.changes_code(&written(&["reproduce.py"], &[]), RUN));
        // A file named before the run wrote it belonged to the work.
        work.note_named(["src/config.py"]);
        assert!(work.changes_code(&written(&[], &["src/config.py"]), RUN));
        // A new file beside the work's own files is part of the work; one at the top or
        // in a directory of the run's own is not.
        assert!(work.changes_code(&written(&[], &["src/formats.py"]), RUN));
        assert!(!work.changes_code(&written(&[], &["debug/run.py"]), RUN));
        assert!(!work.changes_code(&written(&[], &["test_fix2.py"]), RUN));
        // A copy named after a file of the work is the run's own.
        assert!(!work.changes_code(&written(&[], &["src/config.py.fixed"]), RUN));
        assert!(!work.changes_code(&written(&[], &["src/config.py_old"]), RUN));
    }

    #[test]
    fn unnamed_writes_are_code_changes() {
        let mut work = WorkTree::default();
        let w = Written {
            unnamed: true,
            ..Written::default()
        };
        assert!(work.changes_code(&w, RUN));
        assert!(work.changes_code(&Written::default(), RUN));
    }

    #[test]
    fn listings_name_files() {
        let mut work = WorkTree::default();
        work.note_listing(
            "./src/schema.py\n./tests/test_schema.py:12:def test_x():\n\tmodified:   setup.cfg\ndrwxr-xr-x 2 dev dev 4096 Jan 12 docs\n",
            RUN,
            RUN,
        );
        for path in ["src/schema.py", "tests/test_schema.py", "setup.cfg"] {
            assert!(work.changes_code(&written(&[], &[path]), RUN), "{path}");
        }
        assert!(!work.changes_code(&written(&[], &["docs/new.md"]), RUN));
    }

    #[test]
    fn a_recorded_script_writes_what_its_body_writes() {
        let mut work = WorkTree::default();
        let line = writes(
            "cat > fix.py <<'EOF'\nsrc = open('pkg/mod.py').read()\nopen('pkg/mod.py', 'w').write(src)\nEOF",
            RUN,
        )
        .expect("writes");
        assert_eq!(line.bodies.len(), 1);
        work.record_bodies(&line);
        let run = ScriptRun {
            path: "fix.py".into(),
            kind: ScriptKind::Code,
            tail: true,
        };
        let found = work
            .script_writes(std::slice::from_ref(&run), RUN, false)
            .expect("writes");
        assert_eq!(found.paths, ["pkg/mod.py"]);
        // Run as the last command of a line that failed, it is not known to have written.
        assert_eq!(work.script_writes(&[run], RUN, true), None);
        let shell =
            writes("cat > run.sh <<'EOF'\nsed -i 's/a/b/' lib/x.js\nEOF", RUN).expect("writes");
        work.record_bodies(&shell);
        let run = ScriptRun {
            path: "run.sh".into(),
            kind: ScriptKind::Shell,
            tail: false,
        };
        let found = work.script_writes(&[run], RUN, true).expect("writes");
        assert_eq!(found.paths, ["lib/x.js"]);
        let unknown = ScriptRun {
            path: "other.py".into(),
            kind: ScriptKind::Code,
            tail: true,
        };
        assert_eq!(work.script_writes(&[unknown], RUN, false), None);
    }
}
