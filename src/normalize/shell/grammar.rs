//! The shell grammar every shell rule reads: words, redirections (with here-document
//! bodies), pipelines and the list operators between them.
//!
//! Deliberately small: enough of POSIX/bash grammar to tell what a command line runs,
//! where its output goes and which exit status it returns, never an interpreter.
//! Quoted text and escapes stay inside their word verbatim, so rendering a parsed line
//! gives back what was written, with whitespace collapsed. A here-document's body is
//! read with its operator (`<<EOF`, `<<-EOF`) and rendered after its line, as bash reads
//! it; a here-string (`<<<word`) is one redirection. Neither body is ever read as
//! commands.

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    /// A here-document's delimiter word and the lines after its command line, up to and
    /// including the terminator line (the rest of the input when it never closes).
    HereDoc {
        word: String,
        body: String,
        /// No terminator line closed it: the body runs to the end of the input.
        open: bool,
    },
    Op(String),
    Redirect(String),
}

/// A here-document whose body starts after the current line.
struct PendingHereDoc {
    token: usize,
    delimiter: String,
    strip_tabs: bool,
}

/// Splits a command line into tokens, one character at a time.
struct Lexer {
    chars: Vec<char>,
    i: usize,
    tokens: Vec<Token>,
    word: String,
    /// `Some(strip_tabs)` right after `<<` / `<<-`: the next word is a delimiter.
    delimiter_next: Option<bool>,
    heredocs: Vec<PendingHereDoc>,
}

impl Lexer {
    fn new(input: &str) -> Self {
        Self {
            chars: input.chars().collect(),
            i: 0,
            tokens: Vec::new(),
            word: String::new(),
            delimiter_next: None,
            heredocs: Vec::new(),
        }
    }

    fn flush(&mut self) {
        if self.word.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.word);
        if let Some(strip_tabs) = self.delimiter_next.take() {
            self.heredocs.push(PendingHereDoc {
                token: self.tokens.len(),
                delimiter: unquote_delimiter(&text),
                strip_tabs,
            });
        }
        self.tokens.push(Token::Word(text));
    }

    fn push(&mut self, token: Token) {
        self.flush();
        self.delimiter_next = None;
        self.tokens.push(token);
    }

    fn run(mut self) -> Vec<Token> {
        while self.i < self.chars.len() {
            let c = self.chars[self.i];
            match c {
                // A backslash before a line break joins the two lines.
                '\\' if self.chars.get(self.i + 1) == Some(&'\n') => self.i += 2,
                '\'' | '"' | '\\' => {
                    let end = quoted_end(&self.chars, self.i);
                    self.word.extend(&self.chars[self.i..end]);
                    self.i = end;
                }
                // A comment runs to the end of its line; it changes nothing the line does.
                '#' if self.word.is_empty() => {
                    self.flush();
                    while self.i < self.chars.len() && self.chars[self.i] != '\n' {
                        self.i += 1;
                    }
                }
                '\n' => {
                    // A line that ends with `&&`, `||` or `|` goes on on the next one.
                    self.flush();
                    let open = matches!(
                        self.tokens.last(),
                        Some(Token::Op(op)) if op == "&&" || op == "||" || op == "|"
                    );
                    if !open {
                        self.push(Token::Op(";".into()));
                    }
                    self.i += 1;
                    self.read_heredoc_bodies();
                }
                c if c.is_whitespace() => {
                    self.flush();
                    self.i += 1;
                }
                ';' => {
                    self.push(Token::Op(";".into()));
                    self.i += 1;
                }
                '|' | '&' => self.pipe_or_list(c),
                '>' | '<' => self.redirect(),
                c => {
                    self.word.push(c);
                    self.i += 1;
                }
            }
        }
        self.flush();
        self.tokens
    }

    fn pipe_or_list(&mut self, c: char) {
        let next = self.chars.get(self.i + 1).copied();
        // `&>` / `&>>` redirect both streams.
        if c == '&' && next == Some('>') {
            let len = if self.chars.get(self.i + 2) == Some(&'>') {
                3
            } else {
                2
            };
            let op: String = self.chars[self.i..self.i + len].iter().collect();
            self.push(Token::Redirect(op));
            self.i += len;
            return;
        }
        let op: String = match (c, next) {
            ('|', Some('|')) | ('&', Some('&')) | ('|', Some('&')) => {
                self.chars[self.i..self.i + 2].iter().collect()
            }
            _ => c.to_string(),
        };
        self.i += op.len();
        self.push(Token::Op(op));
    }

    fn redirect(&mut self) {
        // An fd number written right before the operator belongs to it.
        let fd = if !self.word.is_empty() && self.word.chars().all(|d| d.is_ascii_digit()) {
            std::mem::take(&mut self.word)
        } else {
            String::new()
        };
        let op = redirect_operator(&self.chars[self.i..]);
        self.i += op.chars().count();
        let heredoc = match op.as_str() {
            "<<" => Some(false),
            "<<-" => Some(true),
            _ => None,
        };
        self.push(Token::Redirect(format!("{fd}{op}")));
        self.delimiter_next = heredoc;
    }

    /// After a newline: the bodies of the line's here-documents, in order.
    fn read_heredoc_bodies(&mut self) {
        for doc in std::mem::take(&mut self.heredocs) {
            let start = self.i;
            let mut end = self.chars.len();
            let mut open = true;
            while self.i < self.chars.len() {
                let line_end = self.chars[self.i..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |p| self.i + p);
                let line: String = self.chars[self.i..line_end].iter().collect();
                let line = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    &line
                };
                self.i = (line_end + 1).min(self.chars.len());
                if line == doc.delimiter {
                    end = line_end;
                    open = false;
                    break;
                }
            }
            let body: String = self.chars[start..end.max(start)].iter().collect();
            if let Some(Token::Word(word)) = self.tokens.get(doc.token).cloned() {
                self.tokens[doc.token] = Token::HereDoc { word, body, open };
            }
        }
    }
}

/// The redirection operator at the start of `rest`: `>`, `>>`, `>&`, `>|`, `<`, `<&`,
/// `<>`, `<<`, `<<-` or `<<<`.
fn redirect_operator(rest: &[char]) -> String {
    let at = |k: usize| rest.get(k).copied();
    let op: &str = match (at(0), at(1), at(2)) {
        (Some('<'), Some('<'), Some('<')) => "<<<",
        (Some('<'), Some('<'), Some('-')) => "<<-",
        (Some('<'), Some('<'), _) => "<<",
        (Some('<'), Some('&'), _) => "<&",
        (Some('<'), Some('>'), _) => "<>",
        (Some('>'), Some('>'), _) => ">>",
        (Some('>'), Some('&'), _) => ">&",
        (Some('>'), Some('|'), _) => ">|",
        (Some('>'), _, _) => ">",
        _ => "<",
    };
    op.to_string()
}

/// A here-document delimiter as the terminator line spells it: quotes and escapes go.
fn unquote_delimiter(word: &str) -> String {
    word.chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect()
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

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Redirect {
    /// Operator including any fd prefix, e.g. `2>`, `>&`, `&>`, `<<`, `<<<`.
    pub op: String,
    pub target: String,
    /// A here-document's body (its lines and terminator line).
    pub body: Option<String>,
    /// The body never closed: it holds the rest of the input.
    pub open: bool,
    /// How many words came before it: it is written back where it stood, so a word left
    /// open (a trailing `\`, an unclosed quote) never swallows it.
    pub after_words: usize,
}

impl Redirect {
    /// Whether it sends output somewhere (`>`, `>>`, `&>`, `2>`, `>|`), as opposed to
    /// reading input or duplicating a descriptor.
    pub fn is_output(&self) -> bool {
        self.op.contains('>') && !self.op.ends_with('&') && self.op != "<>"
    }

    /// Output that goes nowhere a file keeps: `/dev/null`, the standard streams, a tty.
    pub fn is_discarded(&self) -> bool {
        let t = self.target.as_str();
        t == "/dev/null"
            || t == "/dev/tty"
            || t.starts_with("/dev/std")
            || t.starts_with("/dev/fd/")
    }

    /// fd duplication (`2>&1`, `>&2`) or output discarded to `/dev/null`.
    pub fn is_stream_noise(&self) -> bool {
        // A redirection with no target (`2> 2>&1 x`) is malformed shell; written back it
        // would capture the next word, so it goes with the noise.
        if self.target.is_empty() {
            return true;
        }
        let dup = self.op.ends_with(">&") && self.target.chars().all(|c| c.is_ascii_digit());
        let discard = self.op.contains('>') && self.target == "/dev/null";
        dup || discard
    }

    /// Operator and target, joined unless they would read as another operator
    /// (`<<` then `-x` is not `<<-x`).
    pub fn render(&self) -> String {
        let gap = if self.op.ends_with("<<") && self.target.starts_with('-') {
            " "
        } else {
            ""
        };
        format!("{}{gap}{}", self.op, self.target)
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Command {
    pub words: Vec<String>,
    pub redirects: Vec<Redirect>,
}

/// Words that run the command after them (`sudo make`, `env X=1 make`, `time make`).
const WRAPPERS: [&str; 9] = [
    "sudo", "env", "time", "nohup", "nice", "command", "exec", "stdbuf", "timeout",
];

/// Commands whose output is text from the command line or from files (`cat > f <<EOF`,
/// `echo x > f`, `sed 's/a/b/' a > b`, `grep -v x a > b`), never a program's report.
const TEXT_TOOLS: [&str; 21] = [
    "echo", "printf", "cat", "tee", "sed", "awk", "gawk", "tr", "sort", "uniq", "cut", "head",
    "tail", "paste", "fold", "rev", "envsubst", "true", "grep", "egrep", "fgrep",
];

/// `xargs` options followed by a separate value (`-I {}`, `-n 1`).
const XARGS_VALUE_OPTIONS: [&str; 8] = ["-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"];

impl Command {
    /// Whether its output is text written on the line or read from files (a here-document,
    /// a text tool, or no program at all: `> f`), not the report of a program it runs.
    pub fn only_moves_text(&self) -> bool {
        let reads_heredoc = self.redirects.iter().any(|r| r.op.contains("<<"));
        let program = self.effective().first().map(|w| base_name(w));
        reads_heredoc || program.is_none_or(|p| TEXT_TOOLS.contains(&p))
    }

    /// The command's name as run (its path's last part), before any wrapper is looked
    /// through; a subshell's or group's opening `(`/`{` is not part of it.
    pub fn name(&self) -> Option<&str> {
        self.words.first().map(|w| base_name(w))
    }

    /// The words of the command that actually runs: leading variable assignments and
    /// wrappers (`sudo`, `env`, `time`, `timeout 60`, `xargs -I {}`, ...) with their
    /// options dropped.
    pub fn effective(&self) -> &[String] {
        let mut words = &self.words[..];
        loop {
            match words.first() {
                Some(w) if is_assignment(w) => words = &words[1..],
                Some(w) if base_name(w) == "xargs" => {
                    words = &words[1..];
                    while let Some(opt) = words.first().filter(|w| w.starts_with('-')) {
                        let takes_value = XARGS_VALUE_OPTIONS.contains(&opt.as_str());
                        words = &words[if takes_value { 2 } else { 1 }.min(words.len())..];
                    }
                }
                Some(w) if WRAPPERS.contains(&base_name(w)) => {
                    let takes_duration = base_name(w) == "timeout";
                    words = &words[1..];
                    while words
                        .first()
                        .is_some_and(|w| w.starts_with('-') || is_assignment(w))
                    {
                        words = &words[1..];
                    }
                    if takes_duration
                        && words
                            .first()
                            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
                    {
                        words = &words[1..];
                    }
                }
                _ => return words,
            }
        }
    }
}

/// A program word's last path part, without a subshell's or group's opening `(` / `{`.
pub(crate) fn base_name(word: &str) -> &str {
    let word = word.trim_start_matches(['(', '{']);
    word.rsplit('/').next().unwrap_or(word)
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Pipeline {
    pub commands: Vec<Command>,
    /// Pipe operators between commands (`|` or `|&`), one fewer than commands.
    pub pipes: Vec<String>,
    /// The list operator that follows this pipeline (`&&`, `||`, `;`, `&`), if any.
    pub then: Option<String>,
}

impl Pipeline {
    /// The here-documents of its commands, in order.
    fn heredocs(&self) -> impl Iterator<Item = &Redirect> {
        self.commands
            .iter()
            .flat_map(|c| &c.redirects)
            .filter(|r| r.body.is_some())
    }
}

/// Parses a command line into its list of pipelines.
pub(crate) fn parse(input: &str) -> Vec<Pipeline> {
    let mut list = Vec::new();
    let mut pipeline = Pipeline::default();
    let mut cmd = Command::default();
    let mut tokens = Lexer::new(input).run().into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            Token::Word(w) | Token::HereDoc { word: w, .. } => cmd.words.push(w),
            Token::Redirect(op) => {
                let (target, body, open) = match tokens.peek() {
                    Some(Token::Word(_) | Token::HereDoc { .. }) => match tokens.next() {
                        Some(Token::Word(w)) => (w, None, false),
                        Some(Token::HereDoc { word, body, open }) => (word, Some(body), open),
                        _ => (String::new(), None, false),
                    },
                    _ => (String::new(), None, false),
                };
                let after_words = cmd.words.len();
                cmd.redirects.push(Redirect {
                    op,
                    target,
                    body,
                    open,
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

/// One command's words and redirections, each redirection where it stood.
pub(crate) fn command_text(cmd: &Command) -> String {
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

/// Writes a list back as one line. Here-document bodies follow the line that opens them,
/// as the shell reads them: right after their pipeline and its operator. A body no
/// terminator closed holds the rest of the input, so it (with every body from its pipeline
/// on) comes after everything else.
pub(crate) fn render(list: &[Pipeline]) -> String {
    let mut out = String::new();
    let mut deferred: Vec<&Redirect> = Vec::new();
    for (i, p) in list.iter().enumerate() {
        let last = i + 1 == list.len();
        for (j, cmd) in p.commands.iter().enumerate() {
            if j > 0 {
                out.push(' ');
                out.push_str(&p.pipes[j - 1]);
                out.push(' ');
            }
            out.push_str(&command_text(cmd));
        }
        let docs: Vec<&Redirect> = p.heredocs().collect();
        if !deferred.is_empty() || docs.iter().any(|r| r.open) {
            deferred.extend(docs);
        } else if !docs.is_empty() {
            // The bodies follow the line; a `;` before them is the newline itself.
            if let Some(op) = p.then.as_deref().filter(|op| *op != ";") {
                out.push(' ');
                out.push_str(op);
            }
            push_bodies(&mut out, docs);
            if !last {
                out.push('\n');
            }
            continue;
        }
        match p.then.as_deref() {
            // A trailing `;` separates nothing.
            Some(";") if last => {}
            Some(";") => out.push_str("; "),
            Some(op) if last => {
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
    push_bodies(&mut out, deferred);
    out
}

/// The bodies of `docs`, each on the lines after the current one. An open body took the
/// rest of the input, so the bodies after it were empty and are not written.
fn push_bodies(out: &mut String, docs: Vec<&Redirect>) {
    for r in docs {
        out.push('\n');
        out.push_str(r.body.as_deref().unwrap_or_default());
        if r.open {
            break;
        }
    }
}

/// The unquoted value of a word, when quoting is trivial (no expansions, no spaces).
pub(crate) fn plain_word(word: &str) -> Option<String> {
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

/// The literal text of a word with its quotes removed, when it has no expansion (`$`,
/// backquotes) and no glob; `None` otherwise.
pub(crate) fn literal(word: &str) -> Option<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\'' => {
                let end = quoted_end(&chars, i);
                let inner_end = if chars.get(end - 1) == Some(&'\'') && end - 1 > i {
                    end - 1
                } else {
                    end
                };
                out.extend(&chars[i + 1..inner_end]);
                i = end;
            }
            '"' => {
                let end = quoted_end(&chars, i);
                let inner_end = if chars.get(end - 1) == Some(&'"') && end - 1 > i {
                    end - 1
                } else {
                    end
                };
                for &c in &chars[i + 1..inner_end] {
                    if c == '$' || c == '`' {
                        return None;
                    }
                    if c != '\\' {
                        out.push(c);
                    }
                }
                i = end;
            }
            '\\' => {
                out.extend(chars.get(i + 1));
                i += 2;
            }
            '$' | '`' | '*' | '?' | '[' | '~' => return None,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &str) -> Vec<Vec<String>> {
        parse(cmd)
            .iter()
            .flat_map(|p| &p.commands)
            .map(|c| c.words.clone())
            .collect()
    }

    #[test]
    fn heredoc_bodies_are_not_commands() {
        let cmd = "cat > fix.py << 'EOF'\nimport os\nx = a > b\nrm -rf /\nEOF\npython fix.py";
        assert_eq!(words(cmd), vec![vec!["cat"], vec!["python", "fix.py"]]);
        let list = parse(cmd);
        let doc = &list[0].commands[0].redirects[1];
        assert_eq!(doc.op, "<<");
        assert_eq!(doc.target, "'EOF'");
        assert_eq!(
            doc.body.as_deref(),
            Some("import os\nx = a > b\nrm -rf /\nEOF")
        );
        assert_eq!(render(&list), cmd.replace("> fix.py << ", ">fix.py <<"));
    }

    #[test]
    fn tab_stripped_and_unterminated_heredocs() {
        let list = parse("cat <<-END >f\n\tbody\n\tEND\nls");
        assert_eq!(list.len(), 2);
        assert_eq!(
            list[0].commands[0].redirects[0].body.as_deref(),
            Some("\tbody\n\tEND")
        );
        let open = parse("python3 - <<EOF\nprint(1)\n");
        assert_eq!(open.len(), 1);
        assert_eq!(
            open[0].commands[0].redirects[0].body.as_deref(),
            Some("print(1)\n")
        );
    }

    #[test]
    fn an_open_body_is_rendered_last() {
        for input in [
            "\n\n\n\n\n\n\n:&<<S<<m>a&kv/ti/a1lp> 111\u{7}/cd /.<<&python\n\n\u{b}\nxx<",
            "cat <<E; echo a; echo b\nbody",
            "cat <<E && make\nbody\nE\nmake test",
            "a <<E &\nbody\nE\nb",
        ] {
            let once = render(&parse(input));
            assert_eq!(render(&parse(&once)), once, "{input:?}");
        }
        assert_eq!(
            render(&parse("cat <<E; echo a\nbody")),
            "cat <<E; echo a\nbody"
        );
        // A closed body follows its own pipeline, whatever operator ends it.
        assert_eq!(
            render(&parse("cat <<E & next\nbody\nE\n<&\nafter \"open")),
            "cat <<E &\nbody\nE\nnext; <&; after \"open"
        );
    }

    #[test]
    fn comments_are_not_words() {
        assert_eq!(
            words("git checkout a.py  # revert"),
            vec![vec!["git", "checkout", "a.py"]]
        );
        assert_eq!(words("echo a#b '#c'"), vec![vec!["echo", "a#b", "'#c'"]]);
        assert_eq!(render(&parse("make # build\nmake test")), "make; make test");
    }

    #[test]
    fn here_strings_are_one_redirection() {
        let list = parse("grep -c x <<< \"$out\"");
        let r = &list[0].commands[0].redirects[0];
        assert_eq!((r.op.as_str(), r.target.as_str()), ("<<<", "\"$out\""));
        assert_eq!(render(&list), "grep -c x <<<\"$out\"");
    }

    #[test]
    fn effective_command_skips_wrappers_and_assignments() {
        let list = parse("sudo -E env CI=1 timeout 60 make check");
        assert_eq!(list[0].commands[0].effective(), ["make", "check"]);
        let list = parse("(cd sub && make)");
        assert_eq!(list[0].commands[0].name(), Some("cd"));
    }

    #[test]
    fn continued_lines() {
        let words = |c: &str| {
            parse(c)
                .iter()
                .map(|p| {
                    p.commands
                        .iter()
                        .map(|c| c.words.join(" "))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            words("make && \\\n# build first\nmake check"),
            [vec!["make"], vec!["make check"]]
        );
        assert_eq!(words("cargo test \\\n  --lib"), [vec!["cargo test --lib"]]);
        assert_eq!(words("npm test |\ntail -5"), [vec!["npm test", "tail -5"]]);
    }

    #[test]
    fn literals() {
        assert_eq!(literal("'a b.txt'").as_deref(), Some("a b.txt"));
        assert_eq!(literal("\"src/x.py\"").as_deref(), Some("src/x.py"));
        assert_eq!(literal("a\\ b").as_deref(), Some("a b"));
        assert_eq!(literal("$OUT"), None);
        assert_eq!(literal("\"$dir/x\""), None);
        assert_eq!(literal("*.py"), None);
    }
}
