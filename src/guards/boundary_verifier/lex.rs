//! A forgiving tokenizer for C/C++ and TypeScript source, enough to find declarations.
//!
//! Comments are dropped, string literals become one token (so braces and quotes inside them
//! never unbalance the scan), C preprocessor lines are skipped, and TypeScript regex
//! literals are recognized after the tokens that can precede an expression. A string never
//! runs past its line, so one stray quote damages one line at most. Never panics.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Str,
    Num,
    Punct,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tok {
    pub kind: Kind,
    pub text: String,
    /// A line break separates this token from the previous one (TypeScript statement starts).
    pub nl_before: bool,
}

impl Tok {
    pub fn is(&self, text: &str) -> bool {
        self.text == text
    }
    pub fn ident(&self) -> Option<&str> {
        (self.kind == Kind::Ident).then_some(self.text.as_str())
    }
}

/// Which language's lexical quirks apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    C,
    Ts,
}

const MULTI: [&str; 3] = ["::", "=>", "..."];

pub fn lex(src: &str, dialect: Dialect) -> Vec<Tok> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks: Vec<Tok> = Vec::new();
    let (mut i, mut nl, mut line_start) = (0, true, true);
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            if c == '\n' {
                nl = true;
                line_start = true;
            }
            i += 1;
            continue;
        }
        let start = i;
        let (kind, end) = if c == '/' && next == Some('/') {
            i = skip_while(&chars, i, |ch| ch != '\n');
            continue;
        } else if c == '/' && next == Some('*') {
            let end = block_comment_end(&chars, i + 2);
            nl |= chars[i..end].contains(&'\n');
            i = end;
            continue;
        } else if c == '#' && line_start && dialect == Dialect::C {
            i = preprocessor_end(&chars, i);
            continue;
        } else if c == '"' || c == '\'' {
            (Kind::Str, string_end(&chars, i + 1, c, false))
        } else if c == '`' && dialect == Dialect::Ts {
            (Kind::Str, string_end(&chars, i + 1, '`', true))
        } else if c == '/' && dialect == Dialect::Ts && regex_may_start(toks.last()) {
            (Kind::Str, regex_end(&chars, i + 1))
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            (Kind::Ident, skip_while(&chars, i, is_ident_char))
        } else if c.is_ascii_digit() {
            (
                Kind::Num,
                skip_while(&chars, i, |ch| is_ident_char(ch) || ch == '.'),
            )
        } else {
            let pair: String = chars[i..(i + 3).min(chars.len())].iter().collect();
            let len = MULTI
                .iter()
                .find(|m| pair.starts_with(**m))
                .map_or(1, |m| m.len());
            (Kind::Punct, i + len)
        };
        let text: String = chars[start..end].iter().collect();
        toks.push(Tok {
            kind,
            text,
            nl_before: nl,
        });
        nl = false;
        line_start = false;
        i = end;
    }
    toks
}

pub fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

fn skip_while(chars: &[char], mut i: usize, keep: impl Fn(char) -> bool) -> usize {
    while chars.get(i).is_some_and(|&c| keep(c)) {
        i += 1;
    }
    i
}

fn block_comment_end(chars: &[char], mut i: usize) -> usize {
    while i + 1 < chars.len() {
        if chars[i] == '*' && chars[i + 1] == '/' {
            return i + 2;
        }
        i += 1;
    }
    chars.len()
}

/// A `#` line and its `\` continuations.
fn preprocessor_end(chars: &[char], mut i: usize) -> usize {
    while let Some(&c) = chars.get(i) {
        if c == '\n' && chars.get(i.wrapping_sub(1)) != Some(&'\\') {
            return i;
        }
        i += 1;
    }
    i
}

/// Past the closing `quote`; a plain string stops at its line's end.
fn string_end(chars: &[char], mut i: usize, quote: char, multiline: bool) -> usize {
    while let Some(&c) = chars.get(i) {
        if c == '\\' {
            i += 2;
            continue;
        }
        if c == quote {
            return i + 1;
        }
        if c == '\n' && !multiline {
            return i;
        }
        i += 1;
    }
    chars.len()
}

/// A `/` starts a regex where an expression may start (after an operator or a keyword).
/// Not after `<` or `>`: in TSX that is a closing tag (`</div>`).
fn regex_may_start(prev: Option<&Tok>) -> bool {
    match prev {
        None => true,
        Some(t) if t.kind == Kind::Punct => "(,=:[!&|?{};+-*%~^".contains(t.text.as_str()),
        Some(t) => matches!(t.text.as_str(), "return" | "typeof" | "case" | "in" | "of"),
    }
}

fn regex_end(chars: &[char], mut i: usize) -> usize {
    let mut class = false;
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 1,
            '[' => class = true,
            ']' => class = false,
            '/' if !class => return skip_while(chars, i + 1, char::is_alphanumeric),
            '\n' => return i,
            _ => {}
        }
        i += 1;
    }
    chars.len()
}

/// The index of the bracket closing the one at `open` (`(`, `[`, `{` or `<`), or the end.
pub fn matching(toks: &[Tok], open: usize) -> usize {
    let Some(first) = toks.get(open) else {
        return toks.len();
    };
    let close = match first.text.as_str() {
        "(" => ")",
        "[" => "]",
        "{" => "}",
        _ => ">",
    };
    let mut depth = 0usize;
    for (i, t) in toks.iter().enumerate().skip(open) {
        if t.text == first.text {
            depth += 1;
        } else if t.text == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return i;
            }
        }
    }
    toks.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str, d: Dialect) -> Vec<String> {
        lex(src, d).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn comments_strings_and_preprocessor_vanish() {
        let src = "#define X { \\\n }\n/* { */ int a = \"{\"; // }\nchar b = '}';";
        assert_eq!(
            texts(src, Dialect::C),
            ["int", "a", "=", "\"{\"", ";", "char", "b", "=", "'}'", ";"]
        );
    }

    #[test]
    fn ts_regex_and_template_literals_are_single_tokens() {
        let src = "const r = /[{/]'/g;\nconst s = `a ${b} {`;";
        let t = texts(src, Dialect::Ts);
        assert_eq!(t[3], "/[{/]'/g");
        assert_eq!(t[8], "`a ${b} {`");
        assert!(lex("a\nb", Dialect::Ts)[1].nl_before);
        assert_eq!(texts("x => y::z", Dialect::C), ["x", "=>", "y", "::", "z"]);
    }

    #[test]
    fn unterminated_input_never_panics() {
        for src in ["\"abc", "/* open", "`tpl", "#if \\", "/[", "'", "\\"] {
            let _ = lex(src, Dialect::C);
            let _ = lex(src, Dialect::Ts);
        }
    }
}
