//! TypeScript declarations from a token stream.
//!
//! A declaration starts a statement (first token, after `;`, a brace, or on a new line)
//! at module scope or inside a `namespace`/`module`/`declare global` block; other blocks
//! (function and class bodies, object literals, interface members) are skipped. What
//! counts as a declaration: `interface`, `type X =`, `class`, `enum`, `function` (a
//! signature without a body, or anything under `declare`/in a `.d.ts`, is a declaration;
//! with a body, a definition), and `const`/`let`/`var` (a definition when the value is an
//! arrow or function expression; otherwise a value, kept when exported or ambient).

use super::decls::{params_at, Decl, DeclKind};
use super::lex::{matching, Kind, Tok};

const MODIFIERS: [&str; 5] = ["export", "default", "declare", "abstract", "async"];
const STATEMENT_WORDS: [&str; 10] = [
    "export",
    "function",
    "declare",
    "const",
    "let",
    "var",
    "class",
    "interface",
    "type",
    "import",
];

struct Frame {
    body: bool,
    name: Option<String>,
    ambient: bool,
}

/// A namespace or module named by the statement before its `{`.
struct Pending {
    name: String,
    ambient: bool,
}

pub fn scan(toks: &[Tok], dts: bool) -> Vec<Decl> {
    let mut out = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut pending: Option<Pending> = None;
    for (i, t) in toks.iter().enumerate() {
        let in_body = stack.last().is_some_and(|f| f.body);
        let ambient = dts || stack.last().is_some_and(|f| f.ambient);
        match t.text.as_str() {
            "{" => stack.push(match pending.take().filter(|_| !in_body) {
                Some(p) => Frame {
                    body: false,
                    name: Some(p.name),
                    ambient: ambient || p.ambient,
                },
                None => Frame {
                    body: true,
                    name: None,
                    ambient,
                },
            }),
            "}" => {
                stack.pop();
            }
            ";" => pending = None,
            _ if !in_body && starts_statement(toks, i) => {
                let scope: Vec<&str> = stack.iter().filter_map(|f| f.name.as_deref()).collect();
                let mut st = Statement {
                    toks,
                    scope: scope.join("::"),
                    ambient,
                    out: &mut out,
                };
                if let Some(p) = st.read(i) {
                    pending = Some(p);
                }
            }
            _ => {}
        }
    }
    out
}

fn starts_statement(toks: &[Tok], i: usize) -> bool {
    i == 0
        || toks[i].nl_before
        || toks
            .get(i - 1)
            .is_some_and(|p| p.is(";") || p.is("{") || p.is("}"))
}

struct Statement<'a, 'o> {
    toks: &'a [Tok],
    scope: String,
    ambient: bool,
    out: &'o mut Vec<Decl>,
}

impl Statement<'_, '_> {
    fn ident(&self, i: usize) -> Option<&str> {
        self.toks.get(i).and_then(Tok::ident)
    }
    fn is(&self, i: usize, text: &str) -> bool {
        self.toks.get(i).is_some_and(|t| t.is(text))
    }

    fn push(&mut self, kind: DeclKind, name: &str, exported: bool, params: Option<usize>) {
        let mut decl = Decl::new(kind, name, &self.scope);
        decl.exported = exported || self.ambient;
        decl.params = params;
        self.out.push(decl);
    }

    /// Reads the statement starting at `i`; a namespace/module head is returned pending.
    fn read(&mut self, mut i: usize) -> Option<Pending> {
        let (mut exported, mut declare) = (false, false);
        while let Some(word) = self
            .toks
            .get(i)
            .filter(|t| MODIFIERS.contains(&t.text.as_str()))
        {
            exported |= word.is("export");
            declare |= word.is("declare");
            i += 1;
        }
        self.ambient |= declare;
        let keyword = self.ident(i)?;
        match keyword {
            "interface" | "class" | "enum" => self.type_def(i + 1, exported),
            "const" if self.is(i + 1, "enum") => self.type_def(i + 2, exported),
            "type" if self.is(i + 2, "=") || self.is(i + 2, "<") => self.type_def(i + 1, exported),
            "function" => self.function(i + 1, exported),
            "const" | "let" | "var" => self.variable(i + 1, exported),
            "namespace" | "module" => return self.namespace(i + 1),
            "global" if declare => {
                return Some(Pending {
                    name: "global".into(),
                    ambient: true,
                })
            }
            _ => {}
        }
        None
    }

    fn type_def(&mut self, i: usize, exported: bool) {
        if let Some(name) = self.ident(i).map(str::to_string) {
            self.push(DeclKind::TypeDef, &name, exported, None);
        }
    }

    fn function(&mut self, mut i: usize, exported: bool) {
        if self.is(i, "*") {
            i += 1;
        }
        let Some(name) = self.ident(i).map(str::to_string) else {
            return;
        };
        let mut open = i + 1;
        if self.is(open, "<") {
            open = matching(self.toks, open) + 1;
        }
        if !self.is(open, "(") {
            return;
        }
        let (params, close) = params_at(self.toks, open);
        let params = params - usize::from(params > 0 && self.is(open + 1, "this"));
        let kind = if !self.ambient && body_follows(self.toks, close + 1) {
            DeclKind::FnDef
        } else {
            DeclKind::FnDecl
        };
        self.push(kind, &name, exported, Some(params));
    }

    /// `const f = (a, b) => ...`, `= async (a) =>`, `= function (a) {`, `= x =>`.
    fn variable(&mut self, i: usize, exported: bool) {
        let Some(name) = self.ident(i).map(str::to_string) else {
            return;
        };
        let mut j = i + 1;
        if self.is(j, ":") {
            j = skip_type(self.toks, j + 1);
        }
        let params = if self.is(j, "=") {
            self.function_value(j + 1)
        } else {
            None
        };
        match params {
            Some(n) if !self.ambient => self.push(DeclKind::FnDef, &name, exported, Some(n)),
            _ if exported || self.ambient => self.push(DeclKind::Value, &name, exported, None),
            _ => {}
        }
    }

    /// The parameter count of a function-valued initializer starting at `j`.
    fn function_value(&self, mut j: usize) -> Option<usize> {
        if self.is(j, "async") {
            j += 1;
        }
        if self.is(j, "function") {
            j += 1 + usize::from(self.ident(j + 1).is_some());
            return self.is(j, "(").then(|| params_at(self.toks, j).0);
        }
        if self.is(j, "<") {
            j = matching(self.toks, j) + 1;
        }
        if self.ident(j).is_some() && self.is(j + 1, "=>") {
            return Some(1);
        }
        if !self.is(j, "(") {
            return None;
        }
        let (params, close) = params_at(self.toks, j);
        (self.is(close + 1, "=>") || self.is(close + 1, ":")).then_some(params)
    }

    fn namespace(&self, i: usize) -> Option<Pending> {
        let first = self.toks.get(i)?;
        let name = match first.kind {
            Kind::Str => first
                .text
                .trim_matches(|c| c == '"' || c == '\'')
                .to_string(),
            Kind::Ident => {
                let mut name = first.text.clone();
                let mut k = i + 1;
                while let (true, Some(part)) = (self.is(k, "."), self.ident(k + 1)) {
                    name = format!("{name}.{part}");
                    k += 2;
                }
                name
            }
            _ => return None,
        };
        Some(Pending {
            name,
            ambient: self.ambient,
        })
    }
}

/// Past a type annotation: up to the `=` at bracket depth 0.
fn skip_type(toks: &[Tok], mut j: usize) -> usize {
    let mut depth = 0usize;
    while let Some(t) = toks.get(j) {
        match t.text.as_str() {
            "(" | "[" | "{" | "<" => depth += 1,
            ")" | "]" | "}" | ">" => depth = depth.saturating_sub(1),
            "=" | ";" if depth == 0 => return j,
            _ => {}
        }
        j += 1;
    }
    j
}

/// Whether a function body follows a signature's `)`: a `{` at depth 0 that is not an
/// object type in the return annotation. A `;`, the enclosing `}` or a new statement on
/// the next line means a bodiless signature (an overload).
fn body_follows(toks: &[Tok], mut j: usize) -> bool {
    let mut depth = 0usize;
    while let Some(t) = toks.get(j) {
        let prev = toks.get(j.wrapping_sub(1)).map(|p| p.text.as_str());
        match t.text.as_str() {
            "{" if depth == 0 => {
                if !matches!(prev, Some(":" | "|" | "&" | "=>" | "," | "<" | "?")) {
                    return true;
                }
                j = matching(toks, j);
            }
            "(" | "[" | "<" => depth += 1,
            ")" | "]" | ">" => depth = depth.saturating_sub(1),
            ";" | "}" if depth == 0 => return false,
            w if depth == 0 && t.nl_before && STATEMENT_WORDS.contains(&w) => return false,
            _ => {}
        }
        j += 1;
    }
    false
}
