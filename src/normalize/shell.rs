//! The shell action-identity canonicalizer (seed 000, WO-9 9a, `normalizeShellForFamily`).
//!
//! Works on shell *grammar* only (pipes, redirections, path syntax, whitespace), never on
//! a command's name, so it treats every toolchain alike. It strips decoration that does
//! not change what a command does: trailing display filters (`| tail`, `| head`,
//! `| less`, `| cat`, `| grep`), stream redirections (`2>&1`, `>/dev/null`,
//! `2>/dev/null`) and the absolute/relative form of a leading `cd` path. Everything else
//! is kept verbatim: when in doubt it splits rather than merges (rule 3 of WO-9).

/// Canonical form of `command` for family keying; `cwd` is the directory the run ran in.
///
/// Idempotent: normalizing the output again returns it unchanged.
pub fn normalize_shell_for_family(command: &str, cwd: Option<&str>) -> String {
    let mut list = parse(command);
    for pipeline in &mut list {
        for cmd in &mut pipeline.commands {
            cmd.redirects.retain(|r| !r.is_stream_noise());
        }
        strip_display_filters(pipeline);
    }
    drop_empty(&mut list);
    // Dropping a no-op `cd <cwd> &&` brings the next command to the front: repeat.
    while normalize_leading_cd(&mut list, cwd) {}
    render(&list)
}

/// Commands left with nothing once their noise was stripped (`2>&1 &`, `make; 2>&1`)
/// go, as an empty command in the input would; a dangling `&&`/`||`/`;` goes with them.
fn drop_empty(list: &mut Vec<Pipeline>) {
    list.retain(|p| {
        !p.commands
            .iter()
            .all(|c| c.words.is_empty() && c.redirects.is_empty())
    });
    if let Some(last) = list.last_mut() {
        if matches!(last.then.as_deref(), Some("&&" | "||" | ";")) {
            last.then = None;
        }
    }
}

/// Whether the output the model saw was cut by a trailing display filter (so an error
/// count read from it may be smaller than the real one).
pub fn output_is_filtered(command: &str) -> bool {
    parse(command).iter().any(|p| {
        let mut stripped = p.clone();
        // The same order as the family key: noise redirections go first, so
        // `| tail -n 2 2>/dev/null` is a display filter here too.
        for cmd in &mut stripped.commands {
            cmd.redirects.retain(|r| !r.is_stream_noise());
        }
        strip_display_filters(&mut stripped);
        stripped.commands.len() != p.commands.len()
    })
}

/// The commands a successful top-level `&&` chain proves successful, each in canonical
/// form: `a && b` succeeding means `a` and `b` each succeeded. A leading `cd DIR` is kept
/// on every part (the parts ran there). `None` unless the whole command is such a chain
/// (an `||` or `;` anywhere means a part's failure could be masked or ignored).
pub fn conjuncts(command: &str, cwd: Option<&str>) -> Option<Vec<String>> {
    let normalized = normalize_shell_for_family(command, cwd);
    let list = parse(&normalized);
    let chained = list.len() > 1
        && list[..list.len() - 1]
            .iter()
            .all(|p| p.then.as_deref() == Some("&&"))
        && list.last().is_some_and(|p| p.then.is_none());
    if !chained {
        return None;
    }
    let (cd, rest) = match list.split_first() {
        Some((first, rest))
            if first.commands.len() == 1 && first.commands[0].name() == Some("cd") =>
        {
            (
                Some(render(std::slice::from_ref(&Pipeline {
                    then: None,
                    ..first.clone()
                }))),
                rest,
            )
        }
        _ => (None, &list[..]),
    };
    let parts = rest
        .iter()
        .map(|p| {
            let part = render(std::slice::from_ref(&Pipeline {
                then: None,
                ..p.clone()
            }));
            match &cd {
                Some(cd) => format!("{cd} && {part}"),
                None => part,
            }
        })
        .collect();
    Some(parts)
}

/// Pagers and viewers whose only effect at the end of a pipeline is what gets displayed.
const DISPLAY_FILTERS: [&str; 5] = ["tail", "head", "less", "cat", "grep"];

/// `grep` flags that make it decide the exit status rather than display lines.
const GREP_DECIDING_LONG: [&str; 5] = [
    "--quiet",
    "--silent",
    "--count",
    "--files-with-matches",
    "--files-without-match",
];

/// Short `grep` flags that decide rather than display (`-q`, `-c`, `-l`, `-L`), alone or
/// in a cluster such as `-qi` or `-lr`.
fn is_deciding_grep_flag(word: &str) -> bool {
    if GREP_DECIDING_LONG.contains(&word) {
        return true;
    }
    word.strip_prefix('-')
        .filter(|f| !f.starts_with('-') && f.chars().all(|c| c.is_ascii_alphabetic()))
        .is_some_and(|f| f.contains(['q', 'c', 'l', 'L']))
}

#[derive(Debug, Clone, PartialEq)]
struct Redirect {
    /// Operator including any fd prefix, e.g. `2>`, `>&`, `&>`.
    op: String,
    target: String,
    /// How many words came before it: it is written back where it stood, so a word left
    /// open (a trailing `\`, an unclosed quote) never swallows it.
    after_words: usize,
}

impl Redirect {
    /// fd duplication (`2>&1`, `>&2`) or output discarded to `/dev/null`.
    fn is_stream_noise(&self) -> bool {
        // A redirection with no target (`2> 2>&1 x`) is malformed shell; written back it
        // would capture the next word, so it goes with the noise.
        if self.target.is_empty() {
            return true;
        }
        let dup = self.op.ends_with(">&") && self.target.chars().all(|c| c.is_ascii_digit());
        let discard = self.op.contains('>') && self.target == "/dev/null";
        dup || discard
    }
    fn render(&self) -> String {
        format!("{}{}", self.op, self.target)
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Command {
    words: Vec<String>,
    redirects: Vec<Redirect>,
}

impl Command {
    fn name(&self) -> Option<&str> {
        self.words
            .first()
            .map(|w| w.rsplit('/').next().unwrap_or(w))
    }

    fn is_display_filter(&self) -> bool {
        let Some(name) = self.name() else {
            return false;
        };
        if !DISPLAY_FILTERS.contains(&name) || !self.redirects.is_empty() {
            return false;
        }
        if name == "grep" {
            return !self.words[1..].iter().any(|w| is_deciding_grep_flag(w));
        }
        // `cat FILE` at the end of a pipeline prints something else: not a filter.
        name != "cat" || self.words.len() == 1
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Pipeline {
    commands: Vec<Command>,
    /// Pipe operators between commands (`|` or `|&`), one fewer than commands.
    pipes: Vec<String>,
    /// The list operator that follows this pipeline (`&&`, `||`, `;`, `&`), if any.
    then: Option<String>,
}

fn strip_display_filters(p: &mut Pipeline) {
    while p.commands.len() > 1 && p.commands.last().is_some_and(Command::is_display_filter) {
        p.commands.pop();
        p.pipes.pop();
    }
}

/// `cd <cwd> && X` is `X`; `cd <cwd>/sub` is `cd sub`. Only a leading `cd` is rewritten:
/// after it the working directory is no longer the run's. Returns whether it dropped a
/// no-op `cd`, after which the new first command is leading in turn.
fn normalize_leading_cd(list: &mut Vec<Pipeline>, cwd: Option<&str>) -> bool {
    let Some(first) = list.first_mut() else {
        return false;
    };
    if first.commands.len() != 1 {
        return false;
    }
    let cmd = &mut first.commands[0];
    if cmd.name() != Some("cd") || cmd.words.len() != 2 || !cmd.redirects.is_empty() {
        return false;
    }
    let Some(target) = plain_word(&cmd.words[1]) else {
        return false;
    };
    match relative_form(&target, cwd) {
        Some(rel) if rel == "." && list.len() > 1 && list[0].then.as_deref() == Some("&&") => {
            list.remove(0);
            true
        }
        // `cd <cwd>` alone changes nothing worth rewriting.
        Some(rel) if rel == "." => false,
        Some(rel) => {
            list[0].commands[0].words[1] = rel;
            false
        }
        None => false,
    }
}

/// The unquoted value of a word, when quoting is trivial (no expansions, no spaces).
fn plain_word(word: &str) -> Option<String> {
    let unquoted = if (word.starts_with('"') && word.ends_with('"') && word.len() >= 2)
        || (word.starts_with('\'') && word.ends_with('\'') && word.len() >= 2)
    {
        &word[1..word.len() - 1]
    } else {
        word
    };
    // Anything the tokenizer would split on stays quoted, so such targets are not rewritten.
    let special = |c: char| c.is_whitespace() || "\"'\\$`*?[]{}~&|;<>()#".contains(c);
    (!unquoted.is_empty() && !unquoted.contains(special)).then(|| unquoted.to_string())
}

/// Cleans a path's form (`./`, `//`, trailing `/`) and makes it relative to `cwd` when it
/// lies under it. `None` when nothing would change.
pub fn relative_form(path: &str, cwd: Option<&str>) -> Option<String> {
    let cleaned = clean_path(path);
    let cwd = cwd.map(clean_path);
    let rel = match cwd {
        Some(cwd) if cleaned.starts_with('/') && cwd.starts_with('/') => {
            if cleaned == cwd {
                ".".to_string()
            } else if let Some(rest) =
                cleaned.strip_prefix(&format!("{}/", cwd.trim_end_matches('/')))
            {
                rest.to_string()
            } else {
                cleaned
            }
        }
        _ => cleaned,
    };
    (rel != path).then_some(rel)
}

/// Lexical clean-up only: `.` segments and repeated or trailing slashes. `..` is kept,
/// since resolving it lexically is wrong across symlinks.
pub fn clean_path(path: &str) -> String {
    let absolute = path.starts_with('/');
    let parts: Vec<&str> = path
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    match (absolute, parts.is_empty()) {
        (true, true) => "/".into(),
        (true, false) => format!("/{}", parts.join("/")),
        (false, true) => ".".into(),
        (false, false) => parts.join("/"),
    }
}

/// One command's words and redirections, each redirection where it stood.
fn command_text(cmd: &Command) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(cmd.words.len() + cmd.redirects.len());
    let mut redirects = cmd.redirects.iter().peekable();
    for (i, word) in cmd.words.iter().enumerate() {
        while let Some(r) = redirects.next_if(|r| r.after_words <= i) {
            parts.push(r.render());
        }
        parts.push(word.clone());
    }
    parts.extend(redirects.map(Redirect::render));
    parts.join(" ")
}

fn render(list: &[Pipeline]) -> String {
    let mut out = String::new();
    for (i, p) in list.iter().enumerate() {
        for (j, cmd) in p.commands.iter().enumerate() {
            if j > 0 {
                out.push(' ');
                out.push_str(&p.pipes[j - 1]);
                out.push(' ');
            }
            out.push_str(&command_text(cmd));
        }
        match p.then.as_deref() {
            // A trailing `;` separates nothing.
            Some(";") if i + 1 == list.len() => {}
            Some(";") => out.push_str("; "),
            Some(op) if i + 1 == list.len() => {
                out.push(' ');
                out.push_str(op);
            }
            Some(op) => {
                out.push(' ');
                out.push_str(op);
                out.push(' ');
            }
            None => {}
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Op(String),
    Redirect(String),
}

/// Splits a command line into words, operators and redirection operators. Quoted text
/// and escapes stay inside their word verbatim; unquoted whitespace separates words.
fn tokenize(input: &str) -> Vec<Token> {
    let chars: Vec<char> = input.chars().collect();
    let mut tokens = Vec::new();
    let mut word = String::new();
    let mut i = 0;
    let flush = |word: &mut String, tokens: &mut Vec<Token>| {
        if !word.is_empty() {
            tokens.push(Token::Word(std::mem::take(word)));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' | '"' | '\\' => {
                let end = quoted_end(&chars, i);
                word.extend(&chars[i..end]);
                i = end;
                continue;
            }
            c if c.is_whitespace() && c != '\n' => flush(&mut word, &mut tokens),
            '\n' | ';' => {
                flush(&mut word, &mut tokens);
                tokens.push(Token::Op(";".into()));
            }
            '|' | '&' => {
                let next = chars.get(i + 1).copied();
                // `&>` / `&>>` redirect both streams.
                if c == '&' && next == Some('>') {
                    flush(&mut word, &mut tokens);
                    let len = if chars.get(i + 2) == Some(&'>') { 3 } else { 2 };
                    tokens.push(Token::Redirect(chars[i..i + len].iter().collect()));
                    i += len;
                    continue;
                }
                flush(&mut word, &mut tokens);
                let op: String = match (c, next) {
                    ('|', Some('|')) | ('&', Some('&')) | ('|', Some('&')) => {
                        chars[i..i + 2].iter().collect()
                    }
                    _ => c.to_string(),
                };
                i += op.len();
                tokens.push(Token::Op(op));
                continue;
            }
            '>' | '<' => {
                // An fd number written right before the operator belongs to it.
                let fd = if !word.is_empty() && word.chars().all(|d| d.is_ascii_digit()) {
                    std::mem::take(&mut word)
                } else {
                    flush(&mut word, &mut tokens);
                    String::new()
                };
                let mut op = fd;
                op.push(c);
                i += 1;
                if let Some(&n) = chars.get(i) {
                    if n == '>' || n == '&' {
                        op.push(n);
                        i += 1;
                    }
                }
                tokens.push(Token::Redirect(op));
                continue;
            }
            c => word.push(c),
        }
        i += 1;
    }
    flush(&mut word, &mut tokens);
    tokens
}

/// Index just past the quoted run (`'…'`, `"…"`, `` `…` ``) or the escape (`\x`) starting
/// at `start`, or the end of input when the quote never closes. A backslash escapes the
/// next character inside every quote but `'`.
pub(crate) fn quoted_end(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    if quote == '\\' {
        return (start + 2).min(chars.len());
    }
    let mut i = start + 1;
    while i < chars.len() {
        if quote != '\'' && chars[i] == '\\' {
            i += 2;
            continue;
        }
        if chars[i] == quote {
            return i + 1;
        }
        i += 1;
    }
    chars.len()
}

fn parse(input: &str) -> Vec<Pipeline> {
    let mut list = Vec::new();
    let mut pipeline = Pipeline::default();
    let mut cmd = Command::default();
    let mut tokens = tokenize(input).into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            Token::Word(w) => cmd.words.push(w),
            Token::Redirect(op) => {
                let target = match tokens.peek() {
                    Some(Token::Word(_)) => match tokens.next() {
                        Some(Token::Word(w)) => w,
                        _ => String::new(),
                    },
                    _ => String::new(),
                };
                let after_words = cmd.words.len();
                cmd.redirects.push(Redirect {
                    op,
                    target,
                    after_words,
                });
            }
            Token::Op(op) if op == "|" || op == "|&" => {
                pipeline.commands.push(std::mem::take(&mut cmd));
                pipeline.pipes.push(op);
            }
            Token::Op(op) => {
                pipeline.commands.push(std::mem::take(&mut cmd));
                pipeline.then = Some(op);
                list.push(std::mem::take(&mut pipeline));
            }
        }
    }
    if !cmd.words.is_empty() || !cmd.redirects.is_empty() || !pipeline.commands.is_empty() {
        pipeline.commands.push(cmd);
        list.push(pipeline);
    }
    // Empty commands come from stray separators (`a ;; b`); they carry no meaning.
    list.retain(|p| !(p.commands.len() == 1 && p.commands[0] == Command::default()));
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(cmd: &str) -> String {
        normalize_shell_for_family(cmd, Some("/home/dev/proj"))
    }

    #[test]
    fn whitespace_collapses_outside_quotes_only() {
        assert_eq!(n("  npm   test  "), "npm test");
        assert_eq!(n("echo 'a   b'"), "echo 'a   b'");
        assert_eq!(n("grep \"x  y\" f"), "grep \"x  y\" f");
    }

    #[test]
    fn redirects_to_files_and_writing_tee_are_kept() {
        assert_eq!(n("make > build.log 2>&1"), "make >build.log");
        assert_eq!(n("pytest -q | tee log"), "pytest -q | tee log");
        assert_eq!(n("sort < in.txt"), "sort <in.txt");
    }

    #[test]
    fn split_redirect_forms_are_recognised() {
        assert_eq!(n("cargo build 2> /dev/null"), "cargo build");
        assert_eq!(n("cargo build &> /dev/null"), "cargo build");
        assert_eq!(n("cargo build >&2"), "cargo build");
    }

    #[test]
    fn only_trailing_filters_are_display() {
        assert_eq!(n("cat Cargo.toml"), "cat Cargo.toml");
        assert_eq!(n("cat log | grep ERROR"), "cat log");
        assert_eq!(
            n("npm test | grep -qi passing"),
            "npm test | grep -qi passing"
        );
        assert_eq!(n("make | grep -lr x ."), "make | grep -lr x .");
        assert_eq!(n("make | grep -i warning"), "make");
        assert_eq!(
            n("npm test | grep -q passing"),
            "npm test | grep -q passing"
        );
        assert_eq!(n("npm test | cat README.md"), "npm test | cat README.md");
        assert_eq!(n("make | tail -5 | head -2"), "make");
    }

    #[test]
    fn filtered_output_is_recognised_like_the_family_key() {
        assert!(output_is_filtered("make 2>&1 | tail -n 2"));
        assert!(output_is_filtered("make | tail -n 2 2>/dev/null"));
        assert!(!output_is_filtered("make 2>&1"));
        assert!(!output_is_filtered("make | tee build.log"));
    }

    #[test]
    fn conjunctions_prove_their_parts() {
        let parts = |c: &str| conjuncts(c, Some("/home/dev/proj"));
        assert_eq!(
            parts("npx tsc --noEmit && npm test 2>&1"),
            Some(vec!["npx tsc --noEmit".into(), "npm test".into()])
        );
        assert_eq!(
            parts("cd /home/dev/proj/api && make && make check"),
            Some(vec!["cd api && make".into(), "cd api && make check".into()])
        );
        assert_eq!(parts("make && make check || true"), None);
        assert_eq!(parts("make; make check"), None);
        assert_eq!(parts("make"), None);
    }

    #[test]
    fn cd_outside_cwd_stays_absolute() {
        assert_eq!(n("cd /opt/other && make"), "cd /opt/other && make");
        assert_eq!(n("cd ./svc/ && make"), "cd svc && make");
        assert_eq!(n("cd .. && make"), "cd .. && make");
    }

    #[test]
    fn without_cwd_only_path_form_is_cleaned() {
        assert_eq!(
            normalize_shell_for_family("cd /abs/x && make 2>&1", None),
            "cd /abs/x && make"
        );
    }

    #[test]
    fn list_operators_are_kept() {
        assert_eq!(n("make || true"), "make || true");
        assert_eq!(n("make; make install;"), "make; make install");
        assert_eq!(n("server &"), "server &");
    }

    #[test]
    fn unterminated_quotes_do_not_panic() {
        for odd in [
            "echo 'abc",
            "echo \"a\\",
            "\\",
            "",
            "|",
            "&&",
            "2>",
            "a | | b",
            ";;",
        ] {
            let once = n(odd);
            assert_eq!(n(&once), once, "not idempotent on {odd:?}");
        }
        assert_eq!(n("echo 'abc"), "echo 'abc");
    }
}
