//! Reading the leading structure of a JSON document that may be cut anywhere.
//!
//! Detection sees only the first bytes of a file, and a mini-swe-agent trajectory writes
//! its `trajectory_format` key last, after every message. So the sniffer walks the members
//! of the top-level object as far as the head goes: complete values can be parsed, a cut
//! value is still known by its key and its first characters.

/// One member of an object: its key, the text of its value (as far as the head goes) and
/// whether that text is the whole value.
pub struct Member<'a> {
    pub key: String,
    pub value: &'a str,
    pub complete: bool,
}

/// The members of the object at the start of `text` (after whitespace), as far as `text`
/// goes; `None` when `text` does not start with an object or breaks JSON's syntax.
pub fn members(text: &str) -> Option<Vec<Member<'_>>> {
    let mut rest = text.trim_start().strip_prefix('{')?;
    let mut out = Vec::new();
    loop {
        rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with('}') {
            return Some(out);
        }
        if !rest.starts_with('"') {
            return None;
        }
        let Some(len) = value_len(rest) else {
            return Some(out); // the head ends inside a key
        };
        let key: String = serde_json::from_str(&rest[..len]).ok()?;
        rest = rest[len..].trim_start();
        if rest.is_empty() {
            return Some(out);
        }
        rest = rest.strip_prefix(':')?.trim_start();
        match value_len(rest) {
            Some(len) => {
                out.push(Member {
                    key,
                    value: &rest[..len],
                    complete: true,
                });
                rest = rest[len..].trim_start();
                match rest.chars().next() {
                    Some(',') => rest = &rest[1..],
                    Some('}') | None => return Some(out),
                    Some(_) => return None,
                }
            }
            None => {
                out.push(Member {
                    key,
                    value: rest,
                    complete: false,
                });
                return Some(out);
            }
        }
    }
}

/// The first element of the array at the start of `text`: `Some(None)` for an empty array,
/// `Some(Some((text, complete)))` otherwise; `None` when `text` is no array.
pub fn first_element(text: &str) -> Option<Option<(&str, bool)>> {
    let rest = text.trim_start().strip_prefix('[')?.trim_start();
    if rest.starts_with(']') {
        return Some(None);
    }
    Some(Some(match value_len(rest) {
        Some(len) => (&rest[..len], true),
        None => (rest, false),
    }))
}

/// The length of the JSON value at the start of `text`, or `None` when `text` ends first.
/// Only brackets and strings are followed; the syntax inside is checked by whoever parses
/// the value.
fn value_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n' if depth == 0 => {
                return (i > 0).then_some(i);
            }
            _ => {}
        }
    }
    None
}
