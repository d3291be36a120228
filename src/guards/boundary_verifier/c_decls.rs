//! C/C++ declarations from a token stream: type definitions, prototypes, definitions.
//!
//! A stack of blocks: namespaces, `extern "C"` and class bodies are *scopes* (declarations
//! inside them are read), anything else (function bodies, enumerator lists, initializers)
//! is a *body* whose braces are only counted. At scope level the tokens up to a `;` are a
//! declaration and the tokens up to a `{` open a block; both are classified by shape.

use super::decls::{params_at, Decl, DeclKind};
use super::lex::{matching, Kind, Tok};

/// Words that are never a function's name, whatever precedes a `(`.
const NOT_NAMES: &str = "if while for switch return sizeof alignof decltype catch \
    static_assert __attribute__ alignas __declspec defined typeof noexcept throw new delete \
    operator int char void short long float double signed unsigned bool auto const volatile \
    struct class union";
/// Words that start a statement, not a declaration.
const STATEMENTS: &str = "return if else while for do switch case goto delete";

fn listed(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

const TAGS: [&str; 4] = ["struct", "class", "union", "enum"];
const ACCESS: [&str; 5] = ["public", "private", "protected", "signals", "slots"];

struct Frame {
    body: bool,
    name: Option<String>,
    class: bool,
    typedef: bool,
}

impl Frame {
    fn new(body: bool, name: Option<String>, class: bool, typedef: bool) -> Self {
        Self {
            body,
            name,
            class,
            typedef,
        }
    }
    fn body() -> Self {
        Self::new(true, None, false, false)
    }
}

#[derive(Default)]
struct Scanner {
    out: Vec<Decl>,
    stack: Vec<Frame>,
    /// A `typedef struct { ... }` just closed: the next declaration names the type.
    pending_typedef: bool,
}

pub fn scan(toks: &[Tok]) -> Vec<Decl> {
    let mut s = Scanner::default();
    let (mut start, mut paren) = (0, 0usize);
    for (i, t) in toks.iter().enumerate() {
        let in_body = s.in_body();
        match t.text.as_str() {
            "{" => {
                let frame = if in_body {
                    Frame::body()
                } else {
                    s.opener(&toks[start..i])
                };
                s.stack.push(frame);
                (start, paren) = (i + 1, 0);
            }
            "}" => {
                if let Some(f) = s.stack.pop() {
                    s.pending_typedef = f.typedef && !s.in_body();
                }
                (start, paren) = (i + 1, 0);
            }
            ";" if !in_body && paren == 0 => {
                s.declaration(&toks[start..i]);
                start = i + 1;
            }
            "(" => paren += 1,
            ")" => paren = paren.saturating_sub(1),
            _ => {}
        }
    }
    s.out
}

impl Scanner {
    fn in_body(&self) -> bool {
        self.stack.last().is_some_and(|f| f.body)
    }

    fn in_class(&self) -> bool {
        self.stack.last().is_some_and(|f| f.class)
    }

    fn scope(&self) -> Vec<String> {
        self.stack.iter().filter_map(|f| f.name.clone()).collect()
    }

    fn push(&mut self, kind: DeclKind, name: &str, qualifier: &[String], params: Option<usize>) {
        let mut scope = self.scope();
        scope.extend(qualifier.iter().cloned());
        let mut decl = Decl::new(kind, name, &scope.join("::"));
        decl.params = params;
        self.out.push(decl);
    }

    /// A typedef or `using` name.
    fn alias(&mut self, kind: DeclKind, name: &str) {
        self.push(kind, name, &[], None);
        if let Some(last) = self.out.last_mut() {
            last.alias = true;
        }
    }

    /// The block a `{` opens, recording what its head defines.
    fn opener(&mut self, head: &[Tok]) -> Frame {
        self.pending_typedef = false;
        let head = strip_prefix(head);
        let typedef = head.first().is_some_and(|t| t.is("typedef"));
        let head = &head[usize::from(typedef)..];
        let first = head.first().map(|t| t.text.as_str());
        if first == Some("namespace") {
            let name = qualified_name(&head[1..]).map(|(n, _)| n);
            return Frame::new(false, name, false, false);
        }
        if first == Some("extern") && head.get(1).is_some_and(|t| t.kind == Kind::Str) {
            return Frame::new(false, None, false, false);
        }
        if let Some(tag) = tag(head) {
            let is_enum = first == Some("enum");
            if let Some(name) = &tag {
                self.push(DeclKind::TypeDef, name, &[], None);
            }
            return Frame::new(is_enum, tag.filter(|_| !is_enum), !is_enum, typedef);
        }
        if let Some((name, qualifier, params)) = signature(head, self.in_class()) {
            self.push(DeclKind::FnDef, &name, &qualifier, Some(params));
        }
        Frame::body()
    }

    /// A declaration ended by `;` at scope level.
    fn declaration(&mut self, toks: &[Tok]) {
        if std::mem::take(&mut self.pending_typedef) {
            for part in toks.split(|t| t.is(",")) {
                if let Some(name) = last_ident(part) {
                    self.alias(DeclKind::TypeDef, name);
                }
            }
            return;
        }
        let toks = strip_prefix(toks);
        match toks.first().map(|t| t.text.as_str()) {
            None | Some("friend" | "static_assert") => {}
            Some("typedef") => self.typedef(&toks[1..]),
            Some("using") => {
                if let (Some(name), Some(eq)) = (toks.get(1).and_then(Tok::ident), toks.get(2)) {
                    if eq.is("=") && name != "namespace" {
                        self.alias(DeclKind::TypeDef, name);
                    }
                }
            }
            _ => self.prototype_or_value(toks),
        }
    }

    fn prototype_or_value(&mut self, toks: &[Tok]) {
        if let Some(Some(name)) = tag(toks) {
            return self.push(DeclKind::TypeDecl, &name, &[], None);
        }
        if let Some((name, qualifier, params)) = signature(toks, self.in_class()) {
            return self.push(DeclKind::FnDecl, &name, &qualifier, Some(params));
        }
        // A variable other units see (`extern Config g_cfg;`); fields are not symbols, and
        // a statement (`return x;`, `cfg->kp = 1;`) is not a declaration.
        let head = toks
            .split(|t| t.is("=") || t.is("["))
            .next()
            .unwrap_or_default();
        let idents = head.iter().filter(|t| t.kind == Kind::Ident).count();
        let shaped = head.iter().all(|t| {
            t.kind == Kind::Ident || ["*", "&", "::", "<", ">", ","].contains(&t.text.as_str())
        });
        let statement = head.first().is_some_and(|t| listed(STATEMENTS, &t.text));
        if !self.in_class() && idents >= 2 && shaped && !statement {
            if let Some(name) = last_ident(head) {
                self.push(DeclKind::Value, name, &[], None);
            }
        }
    }

    fn typedef(&mut self, rest: &[Tok]) {
        if let Some(open) = rest.iter().position(|t| t.is("(")) {
            // A pointer to a function (`(*handler_t)(int)`) or a function type (`fn_t(int)`).
            let inner = rest.get(open + 1..matching(rest, open)).unwrap_or_default();
            let pointer = inner.iter().any(|t| t.is("*") || t.is("&") || t.is("^"));
            let name = if pointer {
                last_ident(inner)
            } else {
                rest.get(open.wrapping_sub(1))
                    .and_then(Tok::ident)
                    .filter(|n| !listed(NOT_NAMES, n))
            };
            if let Some(name) = name {
                self.alias(DeclKind::TypeDef, name);
            }
            return;
        }
        for (i, part) in rest.split(|t| t.is(",")).enumerate() {
            let head = part.split(|t| t.is("[")).next().unwrap_or_default();
            let Some(name) = last_ident(head) else {
                continue;
            };
            // `typedef struct Packet Packet;` names the tag; the body is elsewhere.
            let self_alias = i == 0
                && head.len() == 3
                && TAGS.contains(&head[0].text.as_str())
                && head[1].is(name);
            let kind = if self_alias {
                DeclKind::TypeDecl
            } else {
                DeclKind::TypeDef
            };
            self.alias(kind, name);
        }
    }
}

/// Drops access labels, `template <...>`, attributes and `extern "C"` before a declaration.
fn strip_prefix(mut toks: &[Tok]) -> &[Tok] {
    loop {
        let first = toks.first().map(|t| t.text.as_str());
        let second = toks.get(1);
        let skip = match first {
            Some(a) if ACCESS.contains(&a) && second.is_some_and(|t| t.is(":")) => 2,
            Some("template") if second.is_some_and(|t| t.is("<")) => matching(toks, 1) + 1,
            Some("[") if second.is_some_and(|t| t.is("[")) => matching(toks, 0) + 1,
            Some("__attribute__" | "__declspec" | "alignas")
                if second.is_some_and(|t| t.is("(")) =>
            {
                matching(toks, 1) + 1
            }
            Some("extern") if second.is_some_and(|t| t.kind == Kind::Str) => 2,
            _ => return toks,
        };
        toks = toks.get(skip..).unwrap_or_default();
    }
}

/// `struct|class|union|enum [class] [attrs] Name` followed by nothing, a base clause or
/// `final`: `Some(Some(name))`; an anonymous tag: `Some(None)`; anything else `None`.
fn tag(toks: &[Tok]) -> Option<Option<String>> {
    let first = toks.first()?;
    if !TAGS.contains(&first.text.as_str()) {
        return None;
    }
    let mut rest = &toks[1..];
    if first.is("enum")
        && rest
            .first()
            .is_some_and(|t| t.is("class") || t.is("struct"))
    {
        rest = &rest[1..];
    }
    let rest = strip_prefix(rest);
    if rest.is_empty() || rest[0].is(":") {
        return Some(None);
    }
    let (mut name, mut used) = qualified_name(rest)?;
    // `class EXPORT_API Name`: an export macro before the name.
    let macro_before = rest
        .get(used)
        .and_then(Tok::ident)
        .is_some_and(|n| n != "final");
    if let Some((real, more)) = rest
        .get(used..)
        .filter(|_| macro_before)
        .and_then(qualified_name)
    {
        (name, used) = (real, used + more);
    }
    match rest.get(used).map(|t| t.text.as_str()) {
        None | Some(":" | "final") => Some(Some(name)),
        _ => None,
    }
}

/// `A::B::C` at the start of `toks`: the last name and the tokens used.
fn qualified_name(toks: &[Tok]) -> Option<(String, usize)> {
    let mut name = toks.first()?.ident()?;
    let mut used = 1;
    while toks.get(used).is_some_and(|t| t.is("::")) {
        match toks.get(used + 1).and_then(Tok::ident) {
            Some(next) => {
                name = next;
                used += 2;
            }
            None => break,
        }
    }
    Some((name.to_string(), used))
}

fn last_ident(toks: &[Tok]) -> Option<&str> {
    toks.iter()
        .rev()
        .filter_map(Tok::ident)
        .find(|n| !listed(NOT_NAMES, n))
}

/// A function declarator: name, class qualifier (`Foo::run`) and parameter count. It
/// needs a return type before the name, a qualifier, or a class body (constructors), so a
/// macro call at file scope (`REGISTER(x);`) is not a function.
fn signature(toks: &[Tok], in_class: bool) -> Option<(String, Vec<String>, usize)> {
    let open = toks.iter().position(|t| t.is("("))?;
    if toks[..open].iter().any(|t| t.is("=")) {
        return None;
    }
    let name = toks.get(open.checked_sub(1)?)?.ident()?;
    if listed(NOT_NAMES, name) {
        return None;
    }
    let mut start = open - 1;
    let mut qualifier = Vec::new();
    while start >= 2 && toks[start - 1].is("::") {
        match toks[start - 2].ident() {
            Some(q) => qualifier.insert(0, q.to_string()),
            None => break,
        }
        start -= 2;
    }
    if start > 0 && toks[start - 1].is("~") {
        return None;
    }
    if start == 0 && qualifier.is_empty() && !in_class {
        return None;
    }
    let (params, _) = params_at(toks, open);
    Some((name.to_string(), qualifier, params))
}
