//! Compiler diagnostics in a tool's output, and the symbols they name.
//!
//! Line formats, with no tool names (seed 000 WO-1: "parses gcc/clang and tsc"):
//! - gcc/clang: `path:line[:col]: error|fatal error|note: message` (a location-less
//!   `tool: error: message`, as from a linker driver, is kept without a path);
//! - tsc: `path(line,col): error TSnnnn: message` and the pretty
//!   `path:line:col - error TSnnnn: message`;
//! - GNU ld: `...: undefined reference to 'symbol'`.
//!
//! A message names a symbol when the symbol is an identifier inside one of its quoted spans
//! ('…', "…", `…', `…`, ‘…’), or, for identifiers too distinctive to be an English word
//! (`read_sensor`, `SensorConfig`), anywhere as a whole word.

use super::lex::is_ident_char;
use crate::normalize::text;
use std::collections::BTreeSet;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic<'a> {
    /// The file as the compiler printed it; empty when the line has no location.
    pub path: &'a str,
    /// An error (notes explain an error and may be the only line naming the symbol).
    pub error: bool,
    pub message: &'a str,
}

const GCC_MARKERS: [(&str, bool); 3] = [
    (": fatal error: ", true),
    (": error: ", true),
    (": note: ", false),
];
const LINKER_PHRASE: &str = "undefined reference to ";

/// Every diagnostic line of `output`, in order.
pub fn parse(output: &str) -> Vec<Diagnostic<'_>> {
    output.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Diagnostic<'_>> {
    // Every form but the linker's has a `:` (tsc's after its code); most lines have none.
    if line.contains(':') {
        if let Some(d) = tsc(line) {
            return Some(d);
        }
        for (marker, error) in GCC_MARKERS {
            if let Some(at) = text::find(line, marker) {
                let path = location(&line[..at]).unwrap_or("");
                let message = &line[at + marker.len()..];
                return Some(Diagnostic {
                    path,
                    error,
                    message,
                });
            }
        }
    }
    let at = text::find(line, LINKER_PHRASE)?;
    Some(Diagnostic {
        path: line.split(':').next().unwrap_or(""),
        error: true,
        message: &line[at..],
    })
}

/// `path(line,col): error TS1234: msg` or `path:line:col - error TS1234: msg`.
fn tsc(line: &str) -> Option<Diagnostic<'_>> {
    let at = text::find(line, "error TS")?;
    let code_end = line[at + 8..].find(": ")? + at + 8;
    if !line[at + 8..code_end].chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let head = line[..at].trim_end();
    let head = head
        .strip_suffix(':')
        .or_else(|| head.strip_suffix(" -"))
        .or_else(|| head.strip_suffix('-'))
        .unwrap_or(head)
        .trim_end();
    let path = match head.strip_suffix(')').and_then(|h| h.rsplit_once('(')) {
        Some((path, _pos)) => path,
        None => location(head).unwrap_or(head),
    };
    Some(Diagnostic {
        path,
        error: true,
        message: &line[code_end + 2..],
    })
}

/// The path of `path:line[:col]`, when the tail is numeric.
fn location(head: &str) -> Option<&str> {
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let (rest, last) = head.rsplit_once(':')?;
    if !numeric(last) {
        return None;
    }
    match rest.rsplit_once(':') {
        Some((path, line)) if numeric(line) => Some(path),
        _ => Some(rest),
    }
    .filter(|p| !p.is_empty())
}

/// Identifier tokens of `text`.
pub fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_ident_char(c))
        .filter(|w| w.starts_with(|c: char| c.is_alphabetic() || c == '_'))
}

/// The quoted spans of a message. An apostrophe between letters (`doesn't`) quotes nothing.
pub fn quoted_spans(message: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut rest = message;
    while let Some((at, open)) = rest.char_indices().find(|&(i, c)| opens(rest, i, c)) {
        let body = &rest[at + open.len_utf8()..];
        let closers: &[char] = match open {
            '‘' => &['’'],
            '“' => &['”'],
            '`' => &['`', '\''],
            other => &[other],
        };
        let Some(end) = body.find(closers) else {
            break;
        };
        spans.push(&body[..end]);
        let closer_len = body[end..].chars().next().map_or(1, char::len_utf8);
        rest = &body[end + closer_len..];
    }
    spans
}

fn opens(s: &str, i: usize, c: char) -> bool {
    if !matches!(c, '\'' | '"' | '`' | '‘' | '“') {
        return false;
    }
    let before = s[..i].chars().next_back();
    let after = s[i + c.len_utf8()..].chars().next();
    !(c == '\''
        && before.is_some_and(char::is_alphanumeric)
        && after.is_some_and(char::is_alphanumeric))
}

/// Too specific to be an English word: has `_` or a digit, or mixes case after the start
/// (`readSensor`, `SensorConfig`, `HTTP`).
pub fn distinctive(symbol: &str) -> bool {
    let inner_upper = symbol.chars().skip(1).any(char::is_uppercase);
    symbol.chars().count() >= 4
        && (symbol.contains('_') || symbol.chars().any(|c| c.is_ascii_digit()) || inner_upper)
}

/// What one diagnostic line names: the identifiers inside its quotes, and all its words.
pub struct Named<'a> {
    pub path: &'a str,
    quoted: BTreeSet<&'a str>,
    words: BTreeSet<&'a str>,
}

impl<'a> Named<'a> {
    pub fn new(d: &Diagnostic<'a>) -> Self {
        Self {
            path: d.path,
            quoted: quoted_spans(d.message)
                .into_iter()
                .flat_map(identifiers)
                .collect(),
            words: identifiers(d.message).collect(),
        }
    }

    /// Whether the line names `symbol`: quoted, or as a whole word if it is distinctive.
    pub fn names(&self, symbol: &str) -> bool {
        self.quoted.contains(symbol) || (distinctive(symbol) && self.words.contains(symbol))
    }
}

/// Diagnostic wordings that name an unresolved symbol in their first quoted span.
const UNRESOLVED: [&str; 6] = [
    "unknown type name",
    "does not name a type",
    "was not declared in this scope",
    "use of undeclared identifier",
    "Cannot find name",
    "has no exported member",
];

/// The symbol an "unknown type / cannot find name" diagnostic names, if it is one.
pub fn unresolved_name(message: &str) -> Option<&str> {
    if !UNRESOLVED.iter().any(|p| message.contains(p)) {
        return None;
    }
    // `has no exported member 'X'` quotes the module first: take the last span then.
    let spans = quoted_spans(message);
    let span = if message.contains("has no exported member") {
        spans.last()
    } else {
        spans.first()
    }?;
    identifiers(span).last()
}
