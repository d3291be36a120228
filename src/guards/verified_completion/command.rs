//! Structural matching of verifier commands (seed 002 fix 17) on canonical shell forms.
//!
//! Private to `verified_completion`: a quote-aware splitter on the top-level list
//! operators. The shared normalizer (`crate::normalize::shell`) renders a whole command;
//! matching a declared `verifyCommand` needs its `&&` / `||` structure.

use crate::normalize::shell::{normalize_shell_for_family, quoted_end};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    And,
    Or,
    /// `;` or a newline.
    Seq,
    /// `&`: the command before it ran in the background, its status unknown.
    Background,
}

/// One command of a top-level list and the operator that follows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Segment {
    pub text: String,
    pub op: Option<Op>,
}

/// What one command line proves when it exits 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Forms {
    /// The canonical form with any reliable `&& echo ...` tail removed.
    pub whole: String,
    /// For a pure `&&` chain, each component (a leading `cd X` kept on each).
    pub conjuncts: Vec<String>,
    /// The form that ran ahead of a `||`, whose failure the `||` masked.
    pub masked: Option<String>,
}

impl Forms {
    pub fn of(command: &str, cwd: Option<&str>) -> Self {
        let canonical = normalize_shell_for_family(command, cwd);
        let segments = split_top_level(&canonical);
        let masked = segments.iter().position(|s| s.op == Some(Op::Or)).map(|i| {
            let mut head = segments[..=i].to_vec();
            head[i].op = None;
            normalize_shell_for_family(&render(&strip_echo_tail(head)), cwd)
        });
        let stripped = strip_echo_tail(segments);
        Self {
            whole: normalize_shell_for_family(&render(&stripped), cwd),
            conjuncts: conjuncts(&stripped)
                .into_iter()
                .map(|c| normalize_shell_for_family(&c, cwd))
                .collect(),
            masked,
        }
    }
}

fn first_word(text: &str) -> &str {
    let word = text.split_whitespace().next().unwrap_or("");
    word.rsplit('/').next().unwrap_or(word)
}

/// Drops `&& echo ...` from the end: it runs only when everything before passed and
/// does not change the exit status. Anything after it (`||`, `;`) keeps it.
fn strip_echo_tail(mut segments: Vec<Segment>) -> Vec<Segment> {
    while segments.len() >= 2 {
        let n = segments.len();
        let tail_is_echo =
            segments[n - 1].op.is_none() && first_word(&segments[n - 1].text) == "echo";
        if !(tail_is_echo && segments[n - 2].op == Some(Op::And)) {
            break;
        }
        segments.pop();
        if let Some(last) = segments.last_mut() {
            last.op = None;
        }
    }
    segments
}

/// The components of a pure `&&` chain; none for a single command, any other
/// operator, or a `cd` past the first component (the directory is no longer known).
fn conjuncts(segments: &[Segment]) -> Vec<String> {
    let n = segments.len();
    let pure = n > 1
        && segments[..n - 1].iter().all(|s| s.op == Some(Op::And))
        && segments[n - 1].op.is_none();
    if !pure || segments[1..].iter().any(|s| first_word(&s.text) == "cd") {
        return Vec::new();
    }
    if first_word(&segments[0].text) == "cd" {
        let cd = &segments[0].text;
        return segments[1..]
            .iter()
            .map(|s| format!("{cd} && {}", s.text))
            .collect();
    }
    segments.iter().map(|s| s.text.clone()).collect()
}

pub(super) fn render(segments: &[Segment]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push_str(&s.text);
        out.push_str(match s.op {
            Some(Op::And) => " && ",
            Some(Op::Or) => " || ",
            Some(Op::Seq) => "; ",
            Some(Op::Background) => " & ",
            None => "",
        });
    }
    out.trim_end().to_string()
}

/// Splits a command line on its top-level `&&`, `||`, `;`, newline and `&`, leaving
/// quotes, escapes, backquotes and parentheses (`( )`, `$( )`) intact, and pipes
/// (`|`, `|&`) and redirections (`2>&1`, `&>f`) inside their command.
pub(super) fn split_top_level(command: &str) -> Vec<Segment> {
    let chars: Vec<char> = command.chars().collect();
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let op = match c {
            '\\' | '\'' | '"' | '`' => {
                let end = quoted_end(&chars, i);
                current.extend(&chars[i..end]);
                i = end;
                continue;
            }
            '(' => {
                depth += 1;
                None
            }
            ')' => {
                depth = depth.saturating_sub(1);
                None
            }
            _ if depth > 0 => None,
            '&' if next == Some('&') => Some((Op::And, 2)),
            '|' if next == Some('|') => Some((Op::Or, 2)),
            ';' | '\n' => Some((Op::Seq, 1)),
            '&' if next != Some('>') && !is_redirect_before(&current) => Some((Op::Background, 1)),
            _ => None,
        };
        match op {
            Some((op, len)) => {
                push(&mut segments, &mut current, Some(op));
                i += len;
            }
            None => {
                current.push(c);
                i += 1;
            }
        }
    }
    push(&mut segments, &mut current, None);
    segments
}

/// `>&` and `<&`: the `&` names a file descriptor, it does not background.
fn is_redirect_before(current: &str) -> bool {
    current.ends_with('>') || current.ends_with('<') || current.ends_with('|')
}

fn push(segments: &mut Vec<Segment>, current: &mut String, op: Option<Op>) {
    let text = current.trim().to_string();
    current.clear();
    if !text.is_empty() {
        segments.push(Segment { text, op });
    } else if let (Some(last), Some(op)) = (segments.last_mut(), op) {
        // A stray separator (`a ;; b`) joins nothing new; keep the stronger operator.
        if last.op == Some(Op::Seq) || last.op.is_none() {
            last.op = Some(op);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{split_top_level, Forms, Op};

    fn forms(cmd: &str) -> Forms {
        Forms::of(cmd, Some("/w/app"))
    }

    #[test]
    fn splits_only_top_level_operators() {
        let ops =
            |cmd: &str| -> Vec<Option<Op>> { split_top_level(cmd).iter().map(|s| s.op).collect() };
        assert_eq!(ops("a && b || c"), vec![Some(Op::And), Some(Op::Or), None]);
        assert_eq!(ops("echo 'x && y' \"p || q\""), vec![None]);
        assert_eq!(ops("(a && b) | tee log"), vec![None]);
        assert_eq!(ops("x=$(a || b) && c"), vec![Some(Op::And), None]);
        assert_eq!(ops("make 2>&1 && go vet &>out"), vec![Some(Op::And), None]);
        assert_eq!(ops("make |& tee l; b"), vec![Some(Op::Seq), None]);
        assert_eq!(ops("server & pytest"), vec![Some(Op::Background), None]);
        assert_eq!(ops("a \\&\\& b"), vec![None]);
        for odd in ["", "&&", "'", "\\", "a ;; b", "|| x", "(((", ")"] {
            let _ = split_top_level(odd);
            let _ = forms(odd);
            let _ = forms(&format!("cd /w/app && {odd} && echo x"));
        }
    }

    #[test]
    fn reliable_echo_tails_are_dropped() {
        assert_eq!(forms("npm test && echo ok").whole, "npm test");
        assert_eq!(forms("npm test && echo a && echo 'b c'").whole, "npm test");
        assert_eq!(
            forms("cd /w/app && npm test 2>&1 | tail && echo done").whole,
            "npm test"
        );
        let masked = forms("npm test && echo ok || echo failed");
        assert_eq!(masked.whole, "npm test && echo ok || echo failed");
        assert_eq!(masked.masked.as_deref(), Some("npm test"));
        assert_eq!(
            forms("npm test && echo ok; true").whole,
            "npm test && echo ok; true"
        );
    }

    #[test]
    fn conjuncts_keep_a_leading_cd() {
        assert_eq!(
            forms("npx tsc --noEmit && npm test").conjuncts,
            ["npx tsc --noEmit", "npm test"]
        );
        assert_eq!(
            forms("cd /w/app/api && go build ./... && go test ./...").conjuncts,
            ["cd api && go build ./...", "cd api && go test ./..."]
        );
        assert!(forms("make && cd sub && make").conjuncts.is_empty());
        assert!(forms("a; b").conjuncts.is_empty());
        assert!(forms("pytest -q").conjuncts.is_empty());
    }
}
