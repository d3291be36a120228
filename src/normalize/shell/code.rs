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
    let mut paths = BTreeSet::new();
    let mut unnamed = false;
    let mut note = |path: Option<String>| match path {
        Some(p) => {
            paths.insert(p);
        }
        None => unnamed = true,
    };
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
            note(path);
        }
    }
    for call in WRITING_CALLS {
        for (at, _) in code.match_indices(call) {
            let args = call_args(&code[at + call.len()..]);
            note(args.first().and_then(|a| string_literal(a)));
        }
    }
    for (at, _) in code.match_indices("shutil.copy") {
        let rest = &code[at..];
        if let Some(open) = rest.find('(') {
            let args = call_args(&rest[open + 1..]);
            note(args.get(1).and_then(|a| string_literal(a)));
        }
    }
    for method in WRITING_METHODS {
        for (at, _) in code.match_indices(method) {
            note(receiver_path(&code[..at]));
        }
    }
    if code.contains("fileinput") && code.contains("inplace") {
        unnamed = true;
    }
    CodeWrites {
        paths: paths.into_iter().collect(),
        unnamed,
    }
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

/// The literal path of `Path('a.py')` / `pathlib.Path("a.py")` right before a method call.
fn receiver_path(before: &str) -> Option<String> {
    let inner = before.strip_suffix(')')?;
    let open = inner.rfind("Path(")?;
    string_literal(&inner[open + "Path(".len()..])
}
