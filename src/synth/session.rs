//! One generated session (run): episodes of a recognisable shape (exploring, fix loops,
//! test loops, stale and hash-mismatch edit retries, searches, writes), directives, and a
//! context frame every few turns.

use super::eco::{fill, repo_map, rng_pick_str, variant, Eco, IDENTS};
use super::Run;
use crate::rng::Rng;
use serde_json::json;

/// One session being written, with what its frames draw on.
struct Session {
    run: Run,
    rng: Rng,
    eco: &'static Eco,
    cwd: String,
    /// Every result so far: call id and output length.
    results: Vec<(String, usize)>,
    evidence: Vec<String>,
    focus: Vec<String>,
    system_chars: usize,
    next_frame: u32,
    last_output: usize,
}

impl Session {
    fn begin(&mut self) {
        let growth = 60 + (self.last_output / 4) as u64 + self.rng.below(160);
        self.run.turn(growth);
    }

    fn after(&mut self, what: &str, ok: bool, output_len: usize) {
        let turn = self.run.turn;
        self.results.push((self.run.last_call(), output_len));
        let status = if ok { "ok" } else { "failed" };
        self.evidence.push(format!(
            "[RUN EVIDENCE] turn {turn}: {what} {status} ({output_len} chars)"
        ));
        self.last_output = output_len;
        if turn >= self.next_frame {
            self.frame();
            self.next_frame = turn + self.rng.range(3, 7) as u32;
        }
    }

    fn shell(&mut self, cmd: &str, ok: bool, output: &str) {
        self.begin();
        self.run.shell(cmd, ok, output);
        self.after(&format!("shell {cmd}"), ok, output.len());
    }

    fn edit(&mut self, path: &str, old: &str, new: &str, outcome: Result<&str, (&str, &str)>) {
        self.begin();
        let ok = outcome.is_ok();
        let len = match outcome {
            Ok(o) | Err((_, o)) => o.len(),
        };
        self.run.edit(path, old, new, outcome);
        self.after(&format!("file_edit {path}"), ok, len);
    }

    fn hash_edit(&mut self, path: &str, old: &str, expected: &str, actual: &str) {
        self.begin();
        let id = self.run.call(
            "file_edit",
            json!({"path": path, "old_string": old, "new_string": "", "expected_hash": expected}),
        );
        let output = format!(
            "file_edit rejected: hash mismatch (expected_hash {expected}, file is {actual})"
        );
        self.run.result(
            &id,
            false,
            &output,
            json!({"errorClass": "hash_mismatch", "mutation": false}),
        );
        self.after(&format!("file_edit {path}"), false, output.len());
    }

    fn read(&mut self, path: &str, output: &str) {
        self.begin();
        self.run.read(path, output);
        self.after(&format!("file_read {path}"), true, output.len());
    }

    fn write(&mut self, path: &str, content: &str) {
        self.begin();
        self.run.write(path, content);
        self.after(&format!("file_write {path}"), true, 10);
    }

    fn directive(&mut self, action: &str, family: &str) {
        self.run.directive(action, family, "forced_replan");
        let turn = self.run.turn;
        self.focus.push(format!(
            "[FOCUS SUPERVISOR] turn {turn}: family `{family}` failed again; required_next_action={action}. Blocked families: {family}"
        ));
    }

    /// A context frame of 50-400 KB: system prompt, evidence and focus blocks, the latest
    /// tool results, and a repository map and pinned files filling the rest.
    fn frame(&mut self) {
        let turn = self.run.turn as usize;
        let mut target = 50_000 + turn * 2_200 + self.rng.usize(0, 60_000);
        if self.rng.chance(5) {
            target = self.rng.usize(360_000, 400_000);
        }
        let target = target.min(400_000);
        let mut blocks: Vec<String> = Vec::new();
        let skip_e = self.evidence.len().saturating_sub(40);
        blocks.extend(self.evidence[skip_e..].iter().cloned());
        let skip_f = self.focus.len().saturating_sub(24);
        blocks.extend(self.focus[skip_f..].iter().cloned());
        let fixed = self.system_chars + 40 + blocks.iter().map(String::len).sum::<usize>();
        let mut room = target.saturating_sub(fixed);
        let mut ids: Vec<String> = Vec::new();
        for (id, len) in self.results.iter().rev().take(200) {
            if *len > room {
                break;
            }
            room -= len;
            ids.push(id.clone());
        }
        ids.reverse();
        // The rest: a repository map and the files the harness pinned into context.
        if room > 2_000 {
            let map = self.rng.usize(1_000, 8_000).min(room - 100);
            blocks.insert(0, repo_map(&mut self.rng, self.eco, map));
            room -= map + 100;
            let mut pinned = 1;
            while room > 1_500 {
                let path = self.path();
                let lines = self.rng.usize(40, 300);
                let mut text = format!("[FILE CONTEXT] {path}\n");
                text.push_str(&self.source(lines));
                if text.len() > room {
                    let mut cut = room;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                }
                room -= text.len().min(room);
                blocks.insert(pinned, text);
                pinned += 1;
            }
        }
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        self.run.frame(self.system_chars, &refs, &blocks);
    }

    fn path(&mut self) -> String {
        let files = self.eco.files;
        self.rng.pick(&files[..files.len() - 1]).to_string()
    }

    /// A source line worth editing (not a lone brace or a blank).
    fn line(&mut self) -> String {
        loop {
            let template = rng_pick_str(&mut self.rng, self.eco.lang.source_templates());
            let line = fill(&mut self.rng, template);
            if line.trim().len() >= 8 {
                return line;
            }
        }
    }

    fn source(&mut self, lines: usize) -> String {
        self.eco.lang.source(&mut self.rng, lines)
    }

    fn build_errors(&mut self, n: usize) -> String {
        self.eco
            .lang
            .build_errors(&mut self.rng, self.eco, &self.cwd, n)
    }

    fn build_ok(&mut self) -> String {
        self.eco.lang.build_ok(&mut self.rng, self.eco, &self.cwd)
    }

    // --- episodes: each a few turns of a recognisable pattern ---

    fn explore(&mut self) {
        for _ in 0..self.rng.range(1, 3) {
            let path = self.path();
            let lines = self.rng.usize(20, 400);
            let text = self.source(lines);
            self.read(&path, &text);
        }
    }

    fn search(&mut self) {
        let word = self.rng.pick(&IDENTS).to_string();
        match self.rng.below(3) {
            0 => {
                let mut out = String::new();
                for _ in 0..self.rng.range(3, 40) {
                    let path = self.path();
                    let n = self.rng.range(1, 900);
                    let line = self.line();
                    out.push_str(&format!("{path}:{n}:{line}\n"));
                }
                self.shell(&format!("rg -n \"{word}\" ."), true, &out);
            }
            1 => {
                let mut out = String::from(" ");
                for f in self.eco.files {
                    out.push_str(&format!(
                        "{f} | {} {}\n ",
                        self.rng.range(1, 80),
                        "+".repeat(self.rng.usize(1, 30))
                    ));
                }
                out.push_str(&format!(
                    "{} files changed, {} insertions(+), {} deletions(-)\n",
                    self.eco.files.len(),
                    self.rng.range(5, 300),
                    self.rng.range(0, 120)
                ));
                self.shell("git diff --stat", true, &out);
            }
            _ => {
                let mut out = String::new();
                for _ in 0..self.rng.range(5, 60) {
                    out.push_str(&format!(
                        "{}/{}_{}.{}\n",
                        self.rng
                            .pick(&["src", "tests", "include", "docs", "scripts"]),
                        self.rng.pick(&IDENTS),
                        self.rng.below(50),
                        self.rng
                            .pick(&["rs", "cpp", "h", "ts", "py", "go", "kt", "md"])
                    ));
                }
                self.shell("ls -R | head -200", true, &out);
            }
        }
    }

    /// Build, fix, rebuild: errors fall, or stay stuck and draw focus directives.
    /// Returns the build and its count if it was left failing.
    fn fix_loop(&mut self, resume: Option<(String, usize)>) -> Option<(String, usize)> {
        let (build, mut n) = resume.unwrap_or_else(|| {
            let b = self.rng.pick(self.eco.builds).to_string();
            (b, self.rng.usize(1, 12))
        });
        let stuck = self.rng.chance(25);
        let attempts = self.rng.range(2, 7);
        let mut previous = String::new();
        let mut fails = 0;
        for _ in 0..attempts {
            let cmd = variant(&mut self.rng, &build, &self.cwd);
            if n == 0 {
                let ok = self.build_ok();
                self.shell(&cmd, true, &ok);
                return None;
            }
            let out = self.build_errors(n);
            self.shell(&cmd, false, &out);
            fails += 1;
            if cmd == previous {
                self.run.dedup(&format!("shell:{cmd}"));
            }
            if fails >= 3 && self.rng.chance(60) {
                self.directive("forced_replan", &format!("shell:{build}"));
            }
            previous = cmd;
            let path = self.path();
            let (old, new) = (self.line(), self.line());
            match self.rng.below(100) {
                0..=79 => self.edit(&path, &old, &new, Ok("applied 1 edit")),
                80..=91 => {
                    let msg = format!("old_string not found in {path}");
                    self.edit(&path, &old, &new, Err(("old_string_not_found", &msg)));
                }
                92..=96 => {
                    let (a, b) = (self.rng.hash(), self.rng.hash());
                    self.hash_edit(&path, &old, &a, &b);
                }
                _ => {
                    let msg = format!("file does not exist: {path}.bak");
                    self.edit(&format!("{path}.bak"), &old, &new, Err(("not_found", &msg)));
                }
            }
            if !stuck {
                n = n.saturating_sub(self.rng.usize(0, 3));
            } else if self.rng.chance(20) {
                n += 1;
            }
        }
        (n > 0).then_some((build, n))
    }

    fn test_loop(&mut self) {
        let test = self.rng.pick(self.eco.tests).to_string();
        let mut failed = self.rng.usize(0, 6);
        let passed = self.rng.usize(5, 80);
        for _ in 0..self.rng.range(1, 4) {
            let cmd = variant(&mut self.rng, &test, &self.cwd);
            if failed == 0 {
                let out = self.eco.lang.tests_passed(&mut self.rng, passed);
                self.shell(&cmd, true, &out);
                return;
            }
            let out = self
                .eco
                .lang
                .tests_failed(&mut self.rng, self.eco, failed, passed);
            self.shell(&cmd, false, &out);
            let path = self.path();
            let (old, new) = (self.line(), self.line());
            self.edit(&path, &old, &new, Ok("applied 1 edit"));
            failed = failed.saturating_sub(self.rng.usize(0, 3));
        }
    }

    /// One edit lands, then the same edit is retried against text that is gone.
    fn stale_loop(&mut self) {
        let path = self.path();
        let (old, new) = (self.line(), self.line());
        self.edit(&path, &old, &new, Ok("applied 1 edit"));
        let msg = format!("old_string not found in {path}");
        for i in 0..self.rng.range(2, 6) {
            self.edit(&path, &old, &new, Err(("old_string_not_found", &msg)));
            if i >= 1 {
                self.directive("update_todos", &format!("file_edit:{path}"));
            }
        }
        if self.rng.chance(60) {
            let lines = self.rng.usize(20, 100);
            let text = self.source(lines);
            self.read(&path, &text);
            let (old, new) = (self.line(), self.line());
            self.edit(&path, &old, &new, Ok("applied 1 edit"));
        }
    }

    /// The identical edit retried against a file whose hash moved on (seed 000 WO-8).
    fn hash_loop(&mut self) {
        let path = self.path();
        let old = self.line();
        let (expected, actual) = (self.rng.hash(), self.rng.hash());
        for i in 0..self.rng.range(2, 8) {
            self.hash_edit(&path, &old, &expected, &actual);
            if i > 0 {
                self.run.dedup(&format!("file_edit:{path}"));
            }
        }
        if self.rng.chance(50) {
            let lines = self.rng.usize(20, 100);
            let text = self.source(lines);
            self.read(&path, &text);
        }
    }

    fn write_file(&mut self) {
        let path = format!("{}.new", self.path());
        let lines = self.rng.usize(8, 60);
        let text = self.source(lines);
        self.write(&path, &text);
    }
}

/// Writes one session of 30-140 turns; `resume` is the failing build the previous session
/// left behind (cross-session carry), `last` whether it is the project's last session.
/// Returns the run and the build it leaves failing, if any.
pub(super) fn session(
    rng: &mut Rng,
    eco: &'static Eco,
    cwd: &str,
    id: &str,
    resume: Option<(String, usize)>,
    last: bool,
) -> (Run, Option<(String, usize)>) {
    let mut rng = Rng::new(rng.next());
    // System prompts of 24-144 KB (the dropbear seed's was 142,000 characters).
    let system_chars = rng.usize(1_000, 6_000) * 24;
    let max_turns = rng.range(30, 140) as u32;
    let first_frame = rng.range(3, 6) as u32;
    let mut s = Session {
        run: Run::new(id, cwd, (system_chars / 4 + 400) as u64),
        rng,
        eco,
        cwd: cwd.to_string(),
        results: Vec::new(),
        evidence: Vec::new(),
        focus: Vec::new(),
        system_chars,
        next_frame: first_frame,
        last_output: 0,
    };
    let test = eco.tests[0];
    s.run.turn(120).todos(json!([
        {"id": "1", "status": "in_progress", "content": "make the build pass", "verifyCommand": eco.builds[0]},
        {"id": "2", "status": "pending", "content": "make the tests pass", "verifyCommand": test},
        {"id": "3", "status": "pending", "content": "clean up and summarise"}
    ]));
    let mut carry = None;
    if resume.is_some() && s.rng.chance(60) {
        carry = s.fix_loop(resume);
    }
    while s.run.turn < max_turns {
        carry = match s.rng.below(100) {
            0..=24 => {
                s.explore();
                carry
            }
            25..=54 => s.fix_loop(None).or(carry),
            55..=69 => {
                s.test_loop();
                carry
            }
            70..=79 => {
                s.stale_loop();
                carry
            }
            80..=86 => {
                s.hash_loop();
                carry
            }
            87..=92 => {
                s.write_file();
                carry
            }
            _ => {
                s.search();
                carry
            }
        };
    }
    let done = carry.is_none() && s.rng.chance(70);
    let status = if done { "completed" } else { "in_progress" };
    s.run.todos(json!([
        {"id": "1", "status": status, "content": "make the build pass", "verifyCommand": eco.builds[0]},
        {"id": "2", "status": status, "content": "make the tests pass", "verifyCommand": test},
        {"id": "3", "status": "pending", "content": "clean up and summarise"}
    ]));
    if done || s.rng.chance(30) {
        s.run.complete(
            if done { "completed" } else { "partial" },
            "Build and tests checked; see the evidence list.",
        );
    }
    s.run.ledger = Some(
        match (done, last, s.rng.below(3)) {
            (true, _, 0) => "incomplete_verification",
            (true, _, _) => "completed",
            (false, false, _) => "open",
            (false, true, 0) => "incomplete_verification",
            (false, true, _) => "open",
        }
        .to_string(),
    );
    (s.run, carry)
}
