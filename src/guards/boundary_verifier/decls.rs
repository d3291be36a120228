//! What a source file declares, found by lightweight scanning (no parser).
//!
//! Shared by `boundary_verifier` (the symbols an interface edit touched) and
//! `coherence_gate` (duplicate type definitions, declaration/definition parameter counts).
//! C/C++ and TypeScript go through the token scanners in `c_decls` and `ts_decls`; `.pyi`
//! stubs are read line by line. Scanning is forgiving: text it cannot place is skipped.

use super::lex::{lex, matching, Dialect, Tok};
use super::{c_decls, ts_decls};

/// The languages the scanners read, by file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lang {
    C,
    Ts,
    Pyi,
}

const C_HEADERS: [&str; 5] = [".h", ".hh", ".hpp", ".hxx", ".h++"];
const C_SOURCES: [&str; 5] = [".c", ".cc", ".cpp", ".cxx", ".c++"];
const TS_SOURCES: [&str; 4] = [".ts", ".tsx", ".mts", ".cts"];
const TS_DECLARATIONS: [&str; 3] = [".d.ts", ".d.mts", ".d.cts"];

fn ends_with_any(path: &str, exts: &[&str]) -> bool {
    let lower = path.to_ascii_lowercase();
    exts.iter().any(|e| lower.ends_with(e))
}

impl Lang {
    pub fn of(path: &str) -> Option<Lang> {
        if ends_with_any(path, &C_HEADERS) || ends_with_any(path, &C_SOURCES) {
            Some(Lang::C)
        } else if ends_with_any(path, &TS_SOURCES) {
            Some(Lang::Ts)
        } else if ends_with_any(path, &[".pyi"]) {
            Some(Lang::Pyi)
        } else {
            None
        }
    }
}

/// A file other units include or import declarations from: a header, a `.d.ts`, a stub.
pub fn is_interface(path: &str) -> bool {
    ends_with_any(path, &C_HEADERS)
        || ends_with_any(path, &TS_DECLARATIONS)
        || ends_with_any(path, &[".pyi"])
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeclKind {
    /// A type with its definition: a struct/class/union/enum body, a typedef, an alias,
    /// an interface or type alias.
    TypeDef,
    /// A type named without its definition (`struct X;`, `typedef struct X X;`).
    TypeDecl,
    /// A function prototype, `declare function`, or overload signature.
    FnDecl,
    /// A function with its body.
    FnDef,
    /// A variable or constant visible to other units.
    Value,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Decl {
    pub kind: DeclKind,
    pub name: String,
    /// Enclosing namespaces and classes, `::`-joined; empty at file scope.
    pub scope: String,
    pub params: Option<usize>,
    /// Visible outside its file by its own syntax (TypeScript `export`/`declare`).
    pub exported: bool,
    /// A C/C++ typedef or `using` name, which lives beside a same-named struct tag
    /// (`typedef struct X {..} X;` defines `X` once, not twice).
    pub alias: bool,
}

impl Decl {
    pub fn new(kind: DeclKind, name: &str, scope: &str) -> Self {
        Self {
            kind,
            name: name.to_string(),
            scope: scope.to_string(),
            params: None,
            exported: false,
            alias: false,
        }
    }

    /// The name with its scope (`ns::Outer::Inner`), which two files must share to clash.
    pub fn qualified(&self) -> String {
        if self.scope.is_empty() {
            self.name.clone()
        } else {
            format!("{}::{}", self.scope, self.name)
        }
    }
}

/// Every declaration `text` makes, read as the language of `path`.
pub fn scan(path: &str, text: &str) -> Vec<Decl> {
    match Lang::of(path) {
        Some(Lang::C) => c_decls::scan(&lex(text, Dialect::C)),
        Some(Lang::Ts) => ts_decls::scan(
            &lex(text, Dialect::Ts),
            ends_with_any(path, &TS_DECLARATIONS),
        ),
        Some(Lang::Pyi) => scan_pyi(text),
        None => Vec::new(),
    }
}

/// Whether C/C++ text selects code with the preprocessor (`#if`, `#ifdef`, `#else`, ...)
/// beyond a single include guard: then two definitions of one name may be alternatives.
pub fn conditional_compilation(text: &str) -> bool {
    let directives: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix('#'))
        .map(|d| d.split_whitespace().next().unwrap_or_default())
        .filter(|d| matches!(*d, "if" | "ifdef" | "ifndef" | "elif" | "else" | "elifdef"))
        .collect();
    directives.len() > 1 || directives.first().is_some_and(|d| *d != "ifndef")
}

/// Parameters in a parameter list (the tokens between its parentheses): commas at depth 0
/// plus one; `()` and `(void)` have none. `=>` is one token, so arrow types do not close `<`.
pub fn count_params(inner: &[Tok]) -> usize {
    if inner.is_empty() || (inner.len() == 1 && inner[0].is("void")) {
        return 0;
    }
    let mut depth = 0usize;
    let mut commas = 0;
    for t in inner {
        match t.text.as_str() {
            "(" | "[" | "{" | "<" => depth += 1,
            ")" | "]" | "}" | ">" => depth = depth.saturating_sub(1),
            "," if depth == 0 => commas += 1,
            _ => {}
        }
    }
    // A trailing comma (allowed in TypeScript) adds no parameter.
    let trailing = inner.last().is_some_and(|t| t.is(","));
    commas + 1 - usize::from(trailing && commas > 0)
}

/// The parameter count of the list opening at `open` (a `(`), and the index of its `)`.
pub fn params_at(toks: &[Tok], open: usize) -> (usize, usize) {
    let close = matching(toks, open);
    let inner = toks.get(open + 1..close).unwrap_or_default();
    (count_params(inner), close)
}

/// Python stubs: `class X` and `def f(` at any indentation.
fn scan_pyi(text: &str) -> Vec<Decl> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        let t = t.strip_prefix("async ").unwrap_or(t).trim_start();
        let (kind, rest) = if let Some(r) = t.strip_prefix("class ") {
            (DeclKind::TypeDef, r)
        } else if let Some(r) = t.strip_prefix("def ") {
            (DeclKind::FnDecl, r)
        } else {
            continue;
        };
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(Decl::new(kind, &name, ""));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(src: &str) -> usize {
        let toks = lex(src, Dialect::Ts);
        count_params(&toks)
    }

    #[test]
    fn parameter_counts() {
        assert_eq!(count(""), 0);
        assert_eq!(count("void"), 0);
        assert_eq!(count("int a"), 1);
        assert_eq!(count("std::map<int, int> m, int (*cb)(int, int)"), 2);
        assert_eq!(
            count("cb: (a: number, b: string) => void, o: { x: 1, y: 2 },"),
            2
        );
        assert_eq!(count("a: Array<(x: number) => void>, b"), 2);
    }

    #[test]
    fn languages_and_interfaces_by_extension() {
        assert_eq!(Lang::of("src/a.hpp"), Some(Lang::C));
        assert_eq!(Lang::of("src/a.d.ts"), Some(Lang::Ts));
        assert_eq!(Lang::of("a.tsx"), Some(Lang::Ts));
        assert_eq!(Lang::of("a.rs"), None);
        assert!(is_interface("include/a.H"));
        assert!(is_interface("types/index.d.ts"));
        assert!(!is_interface("src/a.ts"));
        assert!(!is_interface("src/a.cpp"));
    }

    #[test]
    fn python_stubs() {
        let d = scan(
            "m.pyi",
            "class Packet:\n    def size(self) -> int: ...\nasync def fetch(u: str): ...\n",
        );
        let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["Packet", "size", "fetch"]);
    }
}
