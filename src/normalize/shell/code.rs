//! Inline interpreter code (`python -c`, `node -e`, a here-document fed to `python3 -`):
//! which files it opens for writing, read from the code's text (issue #10).
//!
//! Generic calls only, across Python, Node, Ruby and Perl: `open(p, 'w')`,
//! `open(my $fh, '>', $p)`, `Path(p).write_text(...)`, `fs.writeFileSync(p, ...)`,
//! `File.write(p, ...)`, `shutil.copy(src, dst)`, `os.remove(p)`, `fileinput` in place. A
//! path is named when the call gives it as a string literal.

use std::collections::BTreeSet;

/// What inline code writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CodeWrites {
    /// Literal paths it writes, as written in the code.
    pub paths: Vec<String>,
    /// It writes files whose paths are computed.
    pub unnamed: bool,
}

/// Interpreters whose inline code may write files.
pub fn is_interpreter(program: &str) -> bool {
    let python = program
        .strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    python || ["node", "nodejs", "deno", "bun", "ruby", "perl", "php"].contains(&program)
}

/// Calls in inline code that write or remove the file named by their first argument.
const WRITING_CALLS: [&str; 16] = [
    "writeFileSync(",
    "writeFile(",
    "appendFileSync(",
    "appendFile(",
    "createWriteStream(",
    "rmSync(",
    "unlinkSync(",
    "renameSync(",
    "copyFileSync(",
    "File.write(",
    "os.remove(",
    "os.unlink(",
    "os.rename(",
    "os.replace(",
    "shutil.move(",
    "shutil.rmtree(",
];

/// Method calls that write the path object they are called on (`Path('a').write_text`).
const WRITING_METHODS: [&str; 3] = [".write_text(", ".write_bytes(", ".unlink("];

/// What inline interpreter code writes: files opened for writing (`open(p, 'w')`,
/// `open(my $fh, '>', $p)`), `Path(p).write_text(...)`, `fs.writeFileSync(p, ...)`,
/// `File.write(p, ...)`, `shutil.copy(src, dst)`, `fileinput` in place, ...
pub fn code_writes(code: &str) -> CodeWrites {
    let mut found = Found::default();
    for (at, _) in code.match_indices("open(") {
        let args = call_args(&code[at + "open(".len()..]);
        let literals: Vec<Option<String>> = args.iter().map(|a| string_literal(a)).collect();
        let mode_at = args
            .iter()
            .zip(&literals)
            .position(|(a, lit)| lit.as_deref().is_some_and(is_write_mode) || is_mode_keyword(a));
        if let Some(m) = mode_at {
            let path = literals
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != m)
                .find_map(|(_, l)| l.clone().filter(|l| !is_write_mode(l)));
            match path {
                Some(p) => found.note(Some(p)),
                None => found.note_arg(
                    args.iter()
                        .enumerate()
                        .find(|(i, _)| *i != m)
                        .map(|(_, a)| a),
                    code,
                ),
            }
        }
    }
    for call in WRITING_CALLS {
        for (at, _) in code.match_indices(call) {
            let args = call_args(&code[at + call.len()..]);
            found.note_arg(args.first(), code);
        }
    }
    for (at, _) in code.match_indices("shutil.copy") {
        let rest = &code[at..];
        if let Some(open) = rest.find('(') {
            let args = call_args(&rest[open + 1..]);
            found.note_arg(args.get(1), code);
        }
    }
    for method in WRITING_METHODS {
        for (at, _) in code.match_indices(method) {
            let before = &code[..at];
            // `os.unlink(p)` is the module's call, read above.
            if before.ends_with("os") {
                continue;
            }
            match receiver_path(before) {
                Some(path) => found.note(Some(path)),
                None if temporary(receiver(before), code) => {}
                None => found.note(None),
            }
        }
    }
    if code.contains("fileinput") && code.contains("inplace") {
        found.unnamed = true;
    }
    CodeWrites {
        paths: found.paths.into_iter().collect(),
        unnamed: found.unnamed,
    }
}

/// Writes found so far in a piece of code.
#[derive(Default)]
struct Found {
    paths: BTreeSet<String>,
    unnamed: bool,
}

impl Found {
    fn note(&mut self, path: Option<String>) {
        match path {
            Some(p) => {
                self.paths.insert(p);
            }
            None => self.unnamed = true,
        }
    }

    /// A path argument: a literal is named; a computed path the code took from a temporary
    /// file or directory is scratch, not an unnamed write to the work (a test script that
    /// saves to `tempfile.mkstemp()`); any other computed path is unnamed.
    fn note_arg(&mut self, arg: Option<&String>, code: &str) {
        match arg.and_then(|a| string_literal(a)) {
            Some(p) => self.note(Some(p)),
            None if arg.is_some_and(|a| temporary(a, code)) => {}
            None => self.note(None),
        }
    }
}

/// What temporary files and directories are made with, in Python, Node and Ruby.
const TEMP_MAKERS: [&str; 7] = [
    "tempfile",
    "mkstemp",
    "mkdtemp",
    "TemporaryDirectory",
    "mkdtempSync",
    "os.tmpdir",
    "/tmp/",
];

/// Whether a computed path argument is temporary: the expression makes it from a
/// temporary directory, or a name in it is one (`tmp_path`, `temp_file`) or was assigned
/// (`x = ...`, `... as x`) from such an expression, followed back a few steps (`f =
/// tempfile.NamedTemporaryFile()`, `name = f.name`, `open(os.path.join(name, 'a'), 'w')`).
fn temporary(expr: &str, code: &str) -> bool {
    temporary_within(expr, code, 3)
}

fn temporary_within(expr: &str, code: &str, depth: u8) -> bool {
    if TEMP_MAKERS.iter().any(|m| expr.contains(m)) {
        return true;
    }
    identifiers(expr).iter().any(|name| {
        let lower = name.to_ascii_lowercase();
        lower.contains("tmp")
            || lower.contains("temp")
            || (depth > 0
                && assignments(name, code)
                    .iter()
                    .any(|rhs| temporary_within(rhs, code, depth - 1)))
    })
}

/// The names in an expression outside its string literals.
fn identifiers(expr: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut quote: Option<char> = None;
    let mut start: Option<usize> = None;
    for (i, c) in expr
        .char_indices()
        .chain(std::iter::once((expr.len(), ' ')))
    {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        let word = c.is_alphanumeric() || c == '_';
        match (word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let name = &expr[s..i];
                if !name.starts_with(|c: char| c.is_ascii_digit()) {
                    names.push(name);
                }
                start = None;
            }
            _ => {}
        }
        if c == '\'' || c == '"' {
            quote = Some(c);
        }
    }
    names
}

/// What `name` is assigned from in `code`: the right side of `name = ...`, or the
/// expression of `with EXPR as name`.
fn assignments<'c>(name: &str, code: &'c str) -> Vec<&'c str> {
    let mut found = Vec::new();
    for line in code.lines() {
        let t = line.trim_start();
        let t = ["const ", "let ", "var ", "my "]
            .iter()
            .find_map(|k| t.strip_prefix(k))
            .unwrap_or(t);
        if let Some(rest) = t.strip_prefix(name) {
            if let Some(rhs) = rest.trim_start().strip_prefix('=') {
                if !rhs.starts_with('=') {
                    found.push(rhs);
                }
            }
        }
        if let Some(at) = t.find(&format!(" as {name}")) {
            found.push(&t[..at]);
        }
    }
    found
}

/// A mode string that writes: `w`, `a`, `x` or `+` among mode letters, or Perl's `>`.
fn is_write_mode(s: &str) -> bool {
    let perl = s.starts_with('>') || s.starts_with("+<");
    let letters = !s.is_empty()
        && s.len() <= 4
        && s.chars().all(|c| "rwaxbtU+".contains(c))
        && s.contains(['w', 'a', 'x', '+']);
    perl || letters
}

/// `mode='w'` / `mode: "a"` as a keyword argument.
fn is_mode_keyword(arg: &str) -> bool {
    let Some(rest) = arg.trim().strip_prefix("mode") else {
        return false;
    };
    let value = rest.trim_start().trim_start_matches(['=', ':']).trim();
    string_literal(value).is_some_and(|m| is_write_mode(&m))
}

/// The arguments of a call whose text starts after its `(`, split on top-level commas.
fn call_args(rest: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            current.push(c);
            if c == '\\' {
                current.extend(chars.next());
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => {
                quote = Some(c);
                current.push(c);
            }
            '(' | '[' | '{' => {
                depth += 1;
                current.push(c);
            }
            ')' | ']' | '}' if depth == 0 => break,
            ')' | ']' | '}' => {
                depth -= 1;
                current.push(c);
            }
            ',' if depth == 0 => args.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
        if args.len() > 8 {
            break;
        }
    }
    if !current.trim().is_empty() {
        args.push(current);
    }
    args.into_iter().map(|a| a.trim().to_string()).collect()
}

/// The text of a string literal argument (`'a.py'`, `"a.py"`, `r"a.py"`), if it is one.
fn string_literal(arg: &str) -> Option<String> {
    let arg = arg.trim().trim_start_matches(['r', 'b', 'R', 'B']);
    let q = arg.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = arg.strip_prefix(q)?.strip_suffix(q)?;
    (!inner.is_empty() && !inner.contains(q) && !inner.contains(['\n', '{']))
        .then(|| inner.to_string())
}

/// The expression a method is called on: the name or call chain right before the `.`
/// (`out_path` of `out_path.write_text(...)`).
fn receiver(before: &str) -> &str {
    let start = before
        .rfind(|c: char| !(c.is_alphanumeric() || "_.()'\"/".contains(c)))
        .map_or(0, |i| i + 1);
    &before[start..]
}

/// The literal path of `Path('a.py')` / `pathlib.Path("a.py")` right before a method call.
fn receiver_path(before: &str) -> Option<String> {
    let inner = before.strip_suffix(')')?;
    let open = inner.rfind("Path(")?;
    string_literal(&inner[open + "Path(".len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_paths_in_code_are_scratch() {
        let code = "import tempfile, os\ntest_dir = tempfile.mkdtemp()\nsrc = os.path.join(test_dir, 'src')\nwith open(os.path.join(src, 'a.py'), 'w') as f:\n    f.write('x')\nwith tempfile.NamedTemporaryFile(delete=False) as f:\n    name = f.name\nos.unlink(name)\n";
        let found = code_writes(code);
        assert!(!found.unnamed && found.paths.is_empty(), "{found:?}");
        // A computed path with nothing temporary about it is an unnamed write.
        let work = "import sys\ntarget = sys.argv[1]\nopen(target, 'w').write('x')\n";
        assert!(code_writes(work).unnamed);
        let node = "const os = require('os');\nconst dir = fs.mkdtempSync(os.tmpdir());\nfs.writeFileSync(path.join(dir, 'a.json'), '{}');\n";
        assert!(!code_writes(node).unnamed);
    }
}
