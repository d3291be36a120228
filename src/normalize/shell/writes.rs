//! What a shell command line writes, read from its grammar (issue #10: bash-only agents
//! edit with `sed -i`, here-documents and scripts, never with an edit tool).
//!
//! A command writes files when it has an output redirection to a path (`>`, `>>`, `&>`,
//! `2>`, not `/dev/null`, `/dev/std*`, `/dev/fd/*` or a tty; a here-document sent to a
//! file is one), runs `tee FILE`, an in-place editor (`sed -i`, `perl -i`, `ruby -i`),
//! `patch`, a `git` command that rewrites the work tree (`apply`, `am`, `checkout`,
//! `restore`, `reset --hard`, `stash pop|apply`, `mv`, `rm`), `mv`, `cp`, `rm`, `touch`,
//! `truncate`, `dd of=`, `find -delete` / `find -exec` of any of these, or an interpreter
//! whose code (`-c`/`-e` body, here-document or here-string) opens a file for writing
//! (`open(p, 'w')`, `write_text`, `writeFileSync`, `File.write`, ...). A viewer (`cat f`,
//! `grep`, `ls`, `echo x`, `> /dev/null`) writes nothing. The rules name shell
//! utilities and interpreters, never a project's tool or path.
//!
//! A written path is kept when the grammar gives it literally, relative to the run's
//! directory (after any `cd` earlier in the line); otherwise the write is *unnamed*.
//! Inline interpreter code is read by `code`; package installs are not writes here
//! (`installs` tells them apart: they change what the next run sees without changing the
//! code, docs/GUARDS.md).

use super::code::{code_writes, is_interpreter};
use super::grammar::{base_name, literal, parse, Command, Pipeline};
use super::scripts::{looks_like_path, script_operand, ScriptKind, ScriptRun};
use super::{clean_path, join_path, relative_form};
use std::collections::BTreeSet;

/// What a command line writes, as far as its grammar tells.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Writes {
    /// Files it changes, relative to the run's directory when under it; sorted, unique.
    pub paths: Vec<String>,
    /// It also changes files it does not name literally (`git apply`, `patch -p1 <x`,
    /// `> "$out"`, a script's computed path).
    pub unnamed: bool,
    /// Files that only receive a program's output as a record (`make > build.log`,
    /// `git diff > patch.txt`, `pytest | tee out.txt`): written, but not a change to the
    /// work (not a code mutation).
    pub captures: Vec<String>,
    /// Of `paths`, those written whole (a redirection, `tee`, `cp`/`mv` to, `touch`, code
    /// that opens a file for writing): they may be new files. An in-place edit (`sed -i`,
    /// `patch`, `rm`, `git checkout`) needs the file to exist already.
    pub created: Vec<String>,
    /// What stands when the line failed: the writes of commands before its last. The last
    /// command is the one whose status the line's is, so it did not write; a write by an
    /// earlier command happened whatever the later status (`sed -i ... f && python t.py`).
    pub kept_if_failed: Vec<String>,
    /// A command before the line's last wrote files it does not name.
    pub unnamed_if_failed: bool,
    /// Here-document bodies written to a named file (`cat > fix.py <<'EOF' ... EOF`): a
    /// script the run may later run by name (`normalize::work`).
    pub bodies: Vec<(String, String)>,
}

impl Writes {
    /// Whether it changes the work: a mutation, not only a capture of output.
    pub fn mutates(&self) -> bool {
        !self.paths.is_empty() || self.unnamed
    }

    /// What the line wrote when its exit status says it failed: only what commands before
    /// its last wrote (`None` when that is nothing).
    pub fn if_failed(&self) -> Option<Writes> {
        let kept = |list: &[String]| -> Vec<String> {
            list.iter()
                .filter(|p| self.kept_if_failed.contains(p))
                .cloned()
                .collect()
        };
        let w = Writes {
            paths: self.kept_if_failed.clone(),
            unnamed: self.unnamed_if_failed,
            created: kept(&self.created),
            bodies: self
                .bodies
                .iter()
                .filter(|(p, _)| self.kept_if_failed.contains(p))
                .cloned()
                .collect(),
            ..Writes::default()
        };
        w.mutates().then_some(w)
    }
}

/// Where the next command runs, as far as the line's `cd`s tell.
#[derive(Debug, Clone)]
enum Dir {
    /// The run's directory.
    Run,
    /// A directory relative to the run's (or absolute).
    At(String),
    /// Somewhere the grammar cannot follow (`cd "$d"`, `cd -`, `cd ~`).
    Unknown,
}

/// A written word, as a key: a path relative to the run's directory, a file the grammar
/// cannot name, or a device that keeps nothing.
enum Key {
    Named(String),
    Unnamed,
    Device,
}

/// Collects writes while walking a line, in the directory its `cd`s lead to.
struct Walk<'a> {
    cwd: Option<&'a str>,
    dir: Dir,
    paths: BTreeSet<String>,
    unnamed: bool,
    captures: BTreeSet<String>,
    /// The text reaching the current command came only from the line itself or from
    /// files (text tools, here-documents): what it writes is authored, not captured.
    authored: bool,
    created: BTreeSet<String>,
    bodies: Vec<(String, String)>,
    /// The current command is the line's last.
    at_tail: bool,
    /// Writes recorded by commands before the line's last.
    before_tail: BTreeSet<String>,
    unnamed_before_tail: bool,
    /// Scripts the line runs by name (`python fix.py`, `bash run.sh`, `./build.sh`).
    scripts: Vec<ScriptRun>,
    /// Every word of the line that looks like a path, keyed like `paths`.
    named_words: BTreeSet<String>,
}

impl<'a> Walk<'a> {
    fn new(cwd: Option<&'a str>, dir: Dir) -> Self {
        Self {
            cwd,
            dir,
            paths: BTreeSet::new(),
            unnamed: false,
            captures: BTreeSet::new(),
            authored: true,
            created: BTreeSet::new(),
            bodies: Vec::new(),
            at_tail: true,
            before_tail: BTreeSet::new(),
            unnamed_before_tail: false,
            scripts: Vec::new(),
            named_words: BTreeSet::new(),
        }
    }

    /// A path as written in the line, edited in place: named when it is a literal.
    fn path(&mut self, word: &str) {
        let key = self.key(word);
        self.record(key, false);
    }

    /// A write to files the line does not name.
    fn unnamed_write(&mut self) {
        self.unnamed = true;
        self.unnamed_before_tail |= !self.at_tail;
    }

    /// A path written whole (it may be new).
    fn create(&mut self, word: &str) {
        let key = self.key(word);
        self.record(key, true);
    }

    fn record(&mut self, key: Key, creating: bool) {
        match key {
            Key::Named(p) => {
                if creating {
                    self.created.insert(p.clone());
                }
                if !self.at_tail {
                    self.before_tail.insert(p.clone());
                }
                self.paths.insert(p);
            }
            Key::Unnamed => self.unnamed_write(),
            Key::Device => {}
        }
    }

    /// Where a command sends its output: a change to the work when the text is authored,
    /// else a capture of a program's output (an unnamed capture is dropped). The
    /// here-document the command reads, if any, is what an authored file holds.
    fn output(&mut self, word: &str, heredoc: Option<&str>) {
        if self.authored {
            if let (Some(body), Key::Named(p)) = (heredoc, self.key(word)) {
                self.bodies.push((p, body.to_string()));
            }
            return self.create(word);
        }
        if let Key::Named(p) = self.key(word) {
            self.captures.insert(p);
        }
    }

    /// A literal path inline code writes, made relative to the run's directory when it
    /// lies under it.
    fn named(&mut self, path: &str) {
        let key = self.key_of_literal(path);
        self.record(key, true);
    }

    /// Notes the words of a command that look like paths (`src/a.py`, `setup.cfg`).
    fn note_words(&mut self, words: &[String]) {
        for word in words {
            if let Some(p) = literal(word).filter(|p| looks_like_path(p)) {
                if let Key::Named(key) = self.key_of_literal(&p) {
                    self.named_words.insert(key);
                }
            }
        }
    }

    fn key(&self, word: &str) -> Key {
        match literal(word) {
            Some(p) => self.key_of_literal(&p),
            None => Key::Unnamed,
        }
    }

    fn key_of_literal(&self, path: &str) -> Key {
        if is_device(path) {
            return Key::Device;
        }
        let joined = match (&self.dir, path.starts_with('/')) {
            (_, true) | (Dir::Run, _) => clean_path(path),
            (Dir::At(dir), false) => join_path(Some(dir), path),
            (Dir::Unknown, false) => return Key::Unnamed,
        };
        Key::Named(relative_form(&joined, self.cwd).unwrap_or(joined))
    }

    fn paths<'w>(&mut self, words: impl IntoIterator<Item = &'w String>) {
        for w in words {
            self.path(w);
        }
    }

    fn command(&mut self, cmd: &Command, depth: u8) {
        let words = cmd.effective();
        let program = words.first().map(|w| base_name(w));
        self.authored &= cmd.only_moves_text();
        self.note_words(words);
        // A here-document's body as recorded ends with its terminator line, unless no
        // terminator closed it.
        let heredoc = cmd
            .redirects
            .iter()
            .find(|r| r.op.starts_with("<<") && r.op != "<<<")
            .and_then(|r| {
                let body = r.body.as_deref()?;
                Some(match body.rsplit_once('\n') {
                    Some((text, _)) if !r.open => text,
                    _ if !r.open => "",
                    _ => body,
                })
            });
        for r in cmd.redirects.iter().filter(|r| r.is_output()) {
            if !r.target.is_empty() && !r.is_discarded() {
                self.output(&r.target, heredoc);
            }
        }
        let Some(program) = program else {
            return;
        };
        let args = &words[1..];
        match program {
            "cd" => self.cd(args),
            "tee" => {
                for file in operands(args, &[]) {
                    self.output(file, heredoc);
                }
            }
            "sed" if in_place(args) => self.paths(sed_files(args)),
            "perl" | "ruby" if in_place(args) => self.paths(script_files(args)),
            "patch" => self.patch(args),
            "git" => self.git(args),
            "mv" => self.moved(args),
            "touch" => {
                for file in operands(args, &["-t", "-d", "-r"]) {
                    self.create(file);
                }
            }
            "rm" | "unlink" | "shred" => self.paths(operands(args, &[])),
            "truncate" => self.paths(operands(args, &["-s", "--size", "-r"])),
            "cp" => self.copy(args),
            "dd" => {
                for of in args.iter().filter_map(|a| a.strip_prefix("of=")) {
                    self.create(of);
                }
            }
            "find" => self.find(args, depth),
            "bash" | "sh" | "zsh" | "dash" => self.shell(args, depth, heredoc.is_some()),
            p if is_interpreter(p) => self.interpreter_or_script(p, cmd, args),
            _ if words[0].contains('/') => self.script(ScriptKind::ByShebang, words.first()),
            _ => {}
        }
    }

    /// `bash -c '...'` is walked as a line; `bash x.sh` runs a script by name.
    fn shell(&mut self, args: &[String], depth: u8, fed_heredoc: bool) {
        if !self.shell_body(args, depth) && !fed_heredoc {
            self.script(ScriptKind::Shell, operands(args, &["-o", "-O"]).next());
        }
    }

    /// Inline code is read for what it writes; otherwise the interpreter runs a script.
    fn interpreter_or_script(&mut self, program: &str, cmd: &Command, args: &[String]) {
        if !self.interpreter(program, cmd, args) {
            self.script(ScriptKind::Code, script_operand(program, args));
        }
    }

    /// A script the command runs by name: a later look-up may read what it writes.
    fn script(&mut self, kind: ScriptKind, word: Option<&String>) {
        let Some(path) = word.and_then(|w| literal(w)) else {
            return;
        };
        if let Key::Named(path) = self.key_of_literal(&path) {
            self.scripts.push(ScriptRun {
                path,
                kind,
                tail: self.at_tail,
            });
        }
    }

    /// `mv a b c dir`: the destination is written whole, the sources go.
    fn moved(&mut self, args: &[String]) {
        let files: Vec<&String> = operands(args, &["-t"]).collect();
        if let Some((dest, sources)) = files.split_last() {
            self.paths(sources.iter().copied());
            self.create(dest);
        }
    }

    fn cd(&mut self, args: &[String]) {
        let target = args
            .first()
            .and_then(|a| literal(a))
            .filter(|d| !d.starts_with(['-', '~']));
        self.dir = match (target, &self.dir) {
            (Some(d), _) if d.starts_with('/') => Dir::At(clean_path(&d)),
            (Some(d), Dir::Run) => Dir::At(clean_path(&d)),
            (Some(d), Dir::At(dir)) => Dir::At(join_path(Some(dir), &d)),
            _ => Dir::Unknown,
        };
    }

    fn patch(&mut self, args: &[String]) {
        if args
            .iter()
            .any(|a| a == "--dry-run" || a == "-C" || a == "--check")
        {
            return;
        }
        let mut named = false;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if a == "-o" || a == "--output" {
                if let Some(out) = it.next() {
                    self.path(out);
                    named = true;
                }
            } else if let Some(out) = a.strip_prefix("--output=") {
                self.path(out);
                named = true;
            }
        }
        let files: Vec<&String> = operands(
            args,
            &["-p", "-i", "-d", "-r", "-B", "-z", "-V", "-D", "-F", "-o"],
        )
        .collect();
        if let Some(first) = files.first() {
            self.path(first);
            named = true;
        }
        if !named {
            self.unnamed_write();
        }
    }

    fn git(&mut self, args: &[String]) {
        let words: Vec<&String> =
            operands(args, &["-C", "-c", "--git-dir", "--work-tree"]).collect();
        let Some(sub) = words.first().map(|s| s.as_str()) else {
            return;
        };
        let sub_args: Vec<String> = args
            .iter()
            .skip_while(|a| a.as_str() != sub)
            .skip(1)
            .cloned()
            .collect();
        let has = |flag: &str| sub_args.iter().any(|a| a == flag);
        match sub {
            "apply"
                if !["--check", "--stat", "--numstat", "--summary"]
                    .iter()
                    .any(|f| has(f)) =>
            {
                self.unnamed_write()
            }
            "am" | "cherry-pick" | "revert" | "merge" | "rebase" | "pull" => self.unnamed_write(),
            "checkout" | "switch" => match sub_args.iter().position(|a| a == "--") {
                Some(i) => self.paths(&sub_args[i + 1..]),
                None if has("-b") || has("-B") || has("-c") => {}
                None => {
                    // `git checkout src/a.py` restores the file; `git checkout main`
                    // switches the tree. A word shaped like a path names a file.
                    let ops: Vec<&String> = operands(&sub_args, &[]).collect();
                    let files: Vec<&String> = ops
                        .iter()
                        .copied()
                        .filter(|w| literal(w).is_some_and(|p| looks_like_path(&p)))
                        .collect();
                    if files.is_empty() || sub == "switch" {
                        self.unnamed_write();
                    } else {
                        self.paths(files);
                    }
                }
            },
            "restore" if !has("--staged") || has("--worktree") || has("-W") => {
                self.paths(operands(&sub_args, &["-s", "--source"]))
            }
            "reset" if has("--hard") => self.unnamed_write(),
            // `git stash` takes the run's changes out of the tree, `pop` puts them back:
            // either way the code under the next check differs.
            "stash"
                if sub_args.first().is_none_or(|s| {
                    ["pop", "apply", "push", "save", "-u", "--include-untracked"]
                        .contains(&s.as_str())
                }) =>
            {
                self.unnamed_write()
            }
            "mv" => self.paths(operands(&sub_args, &[])),
            "rm" if !has("--cached") => self.paths(operands(&sub_args, &[])),
            _ => {}
        }
    }

    fn copy(&mut self, args: &[String]) {
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if a == "-t" || a == "--target-directory" {
                if let Some(dir) = it.next() {
                    self.create(dir);
                }
                return;
            }
        }
        if let Some(dest) = operands(args, &[]).last() {
            self.create(dest);
        }
    }

    /// `find -delete`, and `find -exec CMD {} ;` where CMD writes: the files are unnamed.
    fn find(&mut self, args: &[String], depth: u8) {
        if args.iter().any(|a| a == "-delete") {
            self.unnamed_write();
        }
        let mut rest = args;
        while let Some(i) = rest.iter().position(|a| a == "-exec" || a == "-execdir") {
            let end = rest[i + 1..]
                .iter()
                .position(|a| a == ";" || a == "\\;" || a == "+" || a == "';'")
                .map_or(rest.len(), |e| i + 1 + e);
            let inner = Command {
                words: rest[i + 1..end].to_vec(),
                redirects: Vec::new(),
            };
            let mut probe = Walk::new(self.cwd, self.dir.clone());
            probe.command(&inner, depth.saturating_add(1));
            if probe.unnamed || !probe.paths.is_empty() {
                self.unnamed_write();
            }
            rest = &rest[(end + 1).min(rest.len())..];
        }
    }

    /// `bash -c '...'`: the body is a command line of its own. Whether there was one.
    fn shell_body(&mut self, args: &[String], depth: u8) -> bool {
        let Some(i) = args.iter().position(|a| {
            a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a.ends_with('c'))
        }) else {
            return false;
        };
        if depth <= 4 {
            if let Some(body) = args.get(i + 1).map(|b| unquote(b)) {
                self.line(&body, depth + 1);
            }
        }
        true
    }

    /// Inline code (`python -c`, `node -e`, `perl -e`, `php -r`, or a here-document or
    /// here-string the interpreter reads) that writes files. Whether there was any.
    fn interpreter(&mut self, program: &str, cmd: &Command, args: &[String]) -> bool {
        let mut code: Vec<String> = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if takes_code(program, a) {
                code.extend(it.next().map(|body| unquote(body)));
            }
        }
        code.extend(
            cmd.redirects
                .iter()
                .filter(|r| r.op.contains("<<"))
                .map(|r| r.body.clone().unwrap_or_else(|| unquote(&r.target))),
        );
        let inline = !code.is_empty();
        for text in code {
            let found = code_writes(&text);
            for p in &found.paths {
                self.named(p);
            }
            if found.unnamed {
                self.unnamed_write();
            }
        }
        inline
    }

    fn line(&mut self, command: &str, depth: u8) {
        self.pipelines(&parse(command), depth);
    }

    fn pipelines(&mut self, list: &[Pipeline], depth: u8) {
        let outer_tail = self.at_tail;
        // A trailing pipeline of bare redirections (`x & 2>&1`) runs nothing: the line's
        // status is the last pipeline that names a command.
        let last = list
            .iter()
            .rposition(|p| p.commands.iter().any(|c| !c.words.is_empty()))
            .unwrap_or(list.len().saturating_sub(1));
        for (i, pipeline) in list.iter().enumerate() {
            // Each pipeline starts with no text yet: its first command produces it.
            self.authored = true;
            for (j, cmd) in pipeline.commands.iter().enumerate() {
                // In a pipe every stage runs; the line's status is its last stage's.
                self.at_tail = outer_tail && i >= last && j + 1 == pipeline.commands.len();
                self.command(cmd, depth);
            }
        }
        self.at_tail = outer_tail;
    }
}

fn is_device(path: &str) -> bool {
    path == "/dev/null"
        || path == "/dev/tty"
        || path.starts_with("/dev/std")
        || path.starts_with("/dev/fd/")
}

/// A short-option cluster asks for in-place editing (`-i`, `-i.bak`, `-pi`, `-Ei`) or
/// the long form does.
fn in_place(args: &[String]) -> bool {
    args.iter().any(|a| {
        a == "--in-place"
            || a.starts_with("--in-place=")
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a[1..]
                    .split('.')
                    .next()
                    .is_some_and(|flags| flags.contains('i')))
    })
}

/// Whether `arg` introduces inline code for `program`: `python -c`, `php -r`,
/// `node -e`/`--eval`/`-p`, and for Perl and Ruby an option cluster ending in `e`
/// (`-e`, `-pe`, `-ne`).
fn takes_code(program: &str, arg: &str) -> bool {
    match program {
        "php" => arg == "-r",
        "node" | "nodejs" | "deno" | "bun" => ["-e", "--eval", "-p", "--print"].contains(&arg),
        "perl" | "ruby" => short_cluster(arg).is_some_and(|f| f.ends_with(['e', 'E'])),
        _ => arg == "-c",
    }
}

/// The letters of a short-option cluster (`-pie` -> `pie`).
fn short_cluster(arg: &str) -> Option<&str> {
    arg.strip_prefix('-')
        .filter(|f| !f.starts_with('-') && !f.is_empty())
}

/// The files of `perl -i` / `ruby -i`: operands, skipping the code after `-e`-like
/// clusters.
fn script_files(args: &[String]) -> Vec<&String> {
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if short_cluster(a).is_some_and(|f| f.ends_with(['e', 'E'])) {
            it.next();
        } else if !a.starts_with('-') {
            files.push(a);
        }
    }
    files
}

/// `sed` options followed by a separate value.
const SED_VALUE_OPTIONS: [&str; 5] = ["-e", "-f", "-l", "--expression", "--file"];

/// `sed`'s files: every operand when a script came with `-e`/`-f`, else all but the first
/// (the script).
fn sed_files(args: &[String]) -> Vec<&String> {
    let with_value = &SED_VALUE_OPTIONS;
    let scripted = args.iter().any(|a| {
        with_value[..2].contains(&a.as_str())
            || a.starts_with("--expression")
            || a.starts_with("--file")
    });
    let ops: Vec<&String> = operands(args, with_value).collect();
    if scripted {
        ops
    } else {
        ops.into_iter().skip(1).collect()
    }
}

/// The operands of a command's arguments: words that are not options, skipping the value
/// after each option in `with_value`; after `--` every word is an operand.
fn operands<'a>(
    args: &'a [String],
    with_value: &'a [&'a str],
) -> impl Iterator<Item = &'a String> + 'a {
    let mut skip_next = false;
    let mut all = false;
    args.iter().filter(move |a| {
        if skip_next {
            skip_next = false;
            return false;
        }
        if all {
            return true;
        }
        if a.as_str() == "--" {
            all = true;
            return false;
        }
        if with_value.contains(&a.as_str()) {
            skip_next = true;
            return false;
        }
        !(a.starts_with('-') && a.len() > 1)
    })
}

/// A quoted word's text (`'…'` or `"…"` around it removed), for inline code.
fn unquote(word: &str) -> String {
    let w = word.trim();
    for q in ['\'', '"'] {
        if w.len() >= 2 && w.starts_with(q) && w.ends_with(q) {
            return w[1..w.len() - 1].to_string();
        }
    }
    w.to_string()
}

/// What a command line writes; `None` when it writes nothing the grammar can see.
pub fn writes(command: &str, cwd: Option<&str>) -> Option<Writes> {
    writes_in(&parse(command), cwd)
}

pub(super) fn writes_in(list: &[Pipeline], cwd: Option<&str>) -> Option<Writes> {
    read_line(list, cwd).writes
}

/// Whether one command, alone, writes files (`perl -pi ...`, `cat > f <<EOF`, a
/// here-document of Python that opens a file for writing): a writer, not a check. Output
/// a program sends to a file is a capture, not a write.
pub(super) fn command_writes(cmd: &Command) -> bool {
    let mut walk = Walk::new(None, Dir::Run);
    walk.command(cmd, 0);
    !walk.paths.is_empty() || walk.unnamed
}

/// What one walk of a line finds: its writes, the scripts it runs by name and the words
/// that look like paths.
pub(super) struct Line {
    pub writes: Option<Writes>,
    pub scripts: Vec<ScriptRun>,
    pub named: Vec<String>,
}

pub(super) fn read_line(list: &[Pipeline], cwd: Option<&str>) -> Line {
    let mut walk = Walk::new(cwd, Dir::Run);
    walk.pipelines(list, 0);
    let captures: Vec<String> = walk
        .captures
        .into_iter()
        .filter(|c| !walk.paths.contains(c))
        .collect();
    let writes = (!walk.paths.is_empty() || walk.unnamed || !captures.is_empty()).then(|| Writes {
        created: walk.created.into_iter().collect(),
        kept_if_failed: walk.before_tail.into_iter().collect(),
        unnamed_if_failed: walk.unnamed_before_tail,
        bodies: walk.bodies,
        paths: walk.paths.into_iter().collect(),
        unnamed: walk.unnamed,
        captures,
    });
    Line {
        writes,
        scripts: walk.scripts,
        named: walk.named_words.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(cmd: &str) -> Option<Writes> {
        writes(cmd, Some("/testbed"))
    }

    fn named(cmd: &str) -> Vec<String> {
        w(cmd).map(|w| w.paths).unwrap_or_default()
    }

    fn captured(cmd: &str) -> Vec<String> {
        w(cmd).map(|w| w.captures).unwrap_or_default()
    }

    #[test]
    fn redirections_and_heredocs_write_their_target() {
        assert_eq!(named("echo x > out.txt"), ["out.txt"]);
        assert_eq!(named("printf '%s' a >> log/app.log"), ["log/app.log"]);
        assert_eq!(named("sed 's/a/b/' in.cfg > out.cfg"), ["out.cfg"]);
        assert_eq!(
            named("grep -v DEBUG app.cfg > app.prod.cfg"),
            ["app.prod.cfg"]
        );
        assert_eq!(
            named("cat > /testbed/src/fix.py << 'EOF'\nprint('a > b')\nEOF"),
            ["src/fix.py"]
        );
        assert_eq!(
            named("cd /testbed/pkg && cat <<EOF > main.go\npackage main\nEOF"),
            ["pkg/main.go"]
        );
        assert_eq!(
            named("tee -a CMakeLists.txt <<< 'add_subdirectory(x)'"),
            ["CMakeLists.txt"]
        );
        let unnamed = w("echo x > \"$OUT\"").expect("writes");
        assert!(unnamed.unnamed && unnamed.paths.is_empty());
    }

    #[test]
    fn program_output_sent_to_a_file_is_a_capture() {
        for (cmd, file) in [
            ("make &> build.log", "build.log"),
            ("git diff -- src/ > patch.txt", "patch.txt"),
            ("python -m pytest tests/ > out.txt 2>&1", "out.txt"),
            ("npm test 2>&1 | tee test.log", "test.log"),
            ("go vet ./... 2> vet.txt", "vet.txt"),
        ] {
            let writes = w(cmd).expect("writes");
            assert!(!writes.mutates(), "{cmd}");
            assert_eq!(captured(cmd), [file], "{cmd}");
        }
    }

    #[test]
    fn viewers_write_nothing() {
        for viewer in [
            "cat src/app.py",
            "grep -rn 'x > y' src/",
            "ls -la > /dev/null",
            "echo done",
            "make 2>&1 | tail -50",
            "cargo build 2>/dev/null",
            "go test ./... >/dev/stdout",
            "sed -n '1,20p' lib/index.js",
            "git diff > /dev/null; git status",
            "cat <<EOF\nrm -rf build\nEOF",
            "python3 -c 'print(open(\"a.txt\").read())'",
        ] {
            assert_eq!(w(viewer), None, "{viewer}");
        }
    }

    #[test]
    fn in_place_editors_write_their_files() {
        assert_eq!(
            named("sed -i 's/old/new/g' src/a.py src/b.py"),
            ["src/a.py", "src/b.py"]
        );
        assert_eq!(named("sed -i.bak -e 's/x/y/' Makefile"), ["Makefile"]);
        assert_eq!(named("sed -Ei 's/a/b/' lib/x.js"), ["lib/x.js"]);
        assert_eq!(named("perl -pi -e 's/foo/bar/' Cargo.toml"), ["Cargo.toml"]);
        assert_eq!(
            named("cd /testbed && sed -i '10d' pkg/core.go"),
            ["pkg/core.go"]
        );
    }

    #[test]
    fn file_utilities_and_git_write() {
        assert_eq!(
            named("mv src/old.rs src/new.rs"),
            ["src/new.rs", "src/old.rs"]
        );
        assert_eq!(named("cp -r template/ dist/"), ["dist"]);
        assert_eq!(named("rm -f build/out.o"), ["build/out.o"]);
        assert_eq!(named("touch tests/__init__.py"), ["tests/__init__.py"]);
        assert_eq!(
            named("dd if=/dev/zero of=disk.img bs=1M count=1"),
            ["disk.img"]
        );
        assert_eq!(named("git checkout -- src/main.c"), ["src/main.c"]);
        assert_eq!(named("git restore package.json"), ["package.json"]);
        assert_eq!(named("patch src/a.c < fix.diff"), ["src/a.c"]);
        for unnamed in [
            "git apply fix.patch",
            "patch -p1 < fix.diff",
            "git stash pop",
            "find . -name '*.pyc' -delete",
        ] {
            assert!(w(unnamed).is_some_and(|w| w.unnamed), "{unnamed}");
        }
        for quiet in [
            "git apply --check fix.patch",
            "git log -3",
            "git restore --staged a.c",
            "git checkout -b topic",
            "patch --dry-run -p1 < x.diff",
        ] {
            assert_eq!(w(quiet), None, "{quiet}");
        }
    }

    #[test]
    fn interpreters_that_open_files_for_writing() {
        let py = "python3 - <<'EOF'\nsrc = open('pkg/mod.py').read()\nwith open('pkg/mod.py', 'w') as f:\n    f.write(src.replace('a', 'b'))\nEOF";
        assert_eq!(named(py), ["pkg/mod.py"]);
        assert_eq!(
            named("python -c \"from pathlib import Path; Path('setup.cfg').write_text('x')\""),
            ["setup.cfg"]
        );
        assert_eq!(
            named("node -e \"require('fs').writeFileSync('src/index.js', 'x')\""),
            ["src/index.js"]
        );
        assert_eq!(named("ruby -e \"File.write('Gemfile', 'x')\""), ["Gemfile"]);
        let computed =
            w("python3 -c \"import sys; open(sys.argv[1], 'a').write('x')\" f").expect("writes");
        assert!(computed.unnamed);
        assert_eq!(
            w("python3 -c \"import json; print(json.load(open('a.json', 'r')))\""),
            None
        );
        assert_eq!(w("python3 reproduce.py"), None);
        assert_eq!(named("bash -c 'sed -i s/a/b/ main.c'"), ["main.c"]);
    }
}
