//! The structure of a JSON document wherever it lies in the file (issue #32, C).
//!
//! Detection judges a document by its keys: a mini-swe-agent trajectory by `info`'s
//! members and `messages`, an OpenHands history by its first event's keys. A long value
//! before them (a 70 KiB first message, a configuration of templates) pushes them past any
//! fixed head. So a document the head cannot judge is streamed once, and what it holds is
//! written as a skeleton: the same JSON, compact, in the same order, with each string cut
//! to [`STRING_BYTES`] and each array to its first [`ELEMENTS`] elements. The skeleton is
//! small whatever the file's size, and the judges read it as they read a head.

use std::io::{self, Read};

/// Bytes of a string's content kept: more than any key or value a judge looks at.
pub const STRING_BYTES: usize = 1024;

/// Elements of an array kept: judges look at the first event, message or step.
pub const ELEMENTS: usize = 4;

/// The largest skeleton written; past it the skeleton is cut, as a head is.
pub const MAX_BYTES: usize = 1024 * 1024;

/// A document's skeleton, and whether it was cut before the document's first value ended
/// (the cap, or the end of the file).
pub struct Skeleton {
    pub text: String,
    pub cut: bool,
}

/// The skeleton of the first JSON value read from `input`, which is read no further than
/// that value's end. Bytes that break JSON's syntax are copied as they are: the judges
/// find the break where they would have in the head.
pub fn skeleton(input: impl Read) -> io::Result<Skeleton> {
    let mut writer = Writer::default();
    let mut buffer = [0u8; 64 * 1024];
    let mut input = input;
    loop {
        let n = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        for &b in &buffer[..n] {
            if writer.push(b) == Step::Done {
                return Ok(writer.finish(false));
            }
        }
    }
    Ok(writer.finish(true))
}

#[derive(PartialEq, Eq)]
enum Step {
    More,
    Done,
}

/// An open array or object, and for an array how many elements it has begun.
struct Open {
    array: bool,
    elements: usize,
}

#[derive(Default)]
struct Writer {
    out: Vec<u8>,
    open: Vec<Open>,
    /// The depth (number of open containers) whose later elements are left out, if any.
    muted_at: Option<usize>,
    string: Option<Str>,
    full: bool,
}

/// A string being read: its content bytes read so far, whether the rest is left out, and
/// how many bytes of an escape are still to come (1: the escaped character; 2 to 5: the
/// `u` and the hex digits of `\uXXXX`).
#[derive(Clone, Copy)]
struct Str {
    read: usize,
    dropping: bool,
    escape: u8,
}

impl Writer {
    fn emit(&mut self, b: u8) {
        if self.muted_at.is_some() {
            return;
        }
        if self.out.len() >= MAX_BYTES {
            self.full = true;
            return;
        }
        self.out.push(b);
    }

    fn push(&mut self, b: u8) -> Step {
        if self.full {
            return Step::Done;
        }
        if let Some(s) = self.string {
            self.in_string(s, b);
            return Step::More;
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'"' => {
                self.string = Some(Str {
                    read: 0,
                    dropping: false,
                    escape: 0,
                });
                self.emit(b);
            }
            b'[' | b'{' => {
                self.emit(b);
                self.open.push(Open {
                    array: b == b'[',
                    elements: 0,
                });
            }
            b']' | b'}' => {
                if self.muted_at == Some(self.open.len()) {
                    self.muted_at = None;
                }
                self.emit(b);
                self.open.pop();
                if self.open.is_empty() {
                    return Step::Done;
                }
            }
            b',' => {
                let depth = self.open.len();
                let muted = self.muted_at.is_some();
                match self.open.last_mut() {
                    Some(open) if open.array && !muted => {
                        open.elements += 1;
                        if open.elements >= ELEMENTS {
                            self.muted_at = Some(depth);
                        } else {
                            self.emit(b);
                        }
                    }
                    _ => self.emit(b),
                }
            }
            // A number, a literal, a colon, or a byte that breaks the syntax.
            _ => self.emit(b),
        }
        Step::More
    }

    fn in_string(&mut self, s: Str, b: u8) {
        if s.escape == 0 && b == b'"' {
            self.string = None;
            self.emit(b);
            return;
        }
        // A character starts here unless inside an escape or a UTF-8 sequence: the only
        // places a string is cut, so the skeleton's strings stay valid.
        let starts_character = s.escape == 0 && (b & 0xC0) != 0x80;
        let dropping = s.dropping || (starts_character && s.read >= STRING_BYTES);
        if !dropping {
            self.emit(b);
        }
        let escape = match (s.escape, b) {
            (0, b'\\') => 1,
            (1, b'u') => 4,
            (0 | 1, _) => 0,
            (n, _) => n - 1,
        };
        self.string = Some(Str {
            read: s.read + 1,
            dropping,
            escape,
        });
    }

    fn finish(self, ended: bool) -> Skeleton {
        let cut = self.full || (ended && (!self.open.is_empty() || self.string.is_some()));
        Skeleton {
            text: String::from_utf8_lossy(&self.out).into_owned(),
            cut,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Skeleton {
        skeleton(text.as_bytes()).expect("read")
    }

    #[test]
    fn keeps_the_structure_in_order_without_whitespace() {
        let s = of("{\n  \"a\": [1, {\"b\": null}],\n  \"c\": \"d\"\n}\n{\"next\": 1}");
        assert_eq!(s.text, r#"{"a":[1,{"b":null}],"c":"d"}"#);
        assert!(!s.cut);
    }

    #[test]
    fn long_strings_are_cut_between_characters() {
        let long = format!(
            "{}é\\u00e9{}",
            "x".repeat(STRING_BYTES - 1),
            "y".repeat(5000)
        );
        let text = format!(r#"{{"m":"{long}","k":1}}"#);
        let s = of(&text);
        let v: serde_json::Value = serde_json::from_str(&s.text).expect("valid JSON");
        let m = v["m"].as_str().expect("string");
        assert_eq!(
            m.chars().count(),
            STRING_BYTES,
            "the é kept whole, the escape left out"
        );
        assert_eq!(v["k"], 1, "what follows the long string is kept");
    }

    #[test]
    fn an_escape_is_never_split() {
        let text = format!(r#"["{}\"tail"]"#, "x".repeat(STRING_BYTES));
        let s = of(&text);
        let v: serde_json::Value = serde_json::from_str(&s.text).expect("valid JSON");
        assert_eq!(v[0].as_str().map(str::len), Some(STRING_BYTES));
    }

    #[test]
    fn arrays_keep_their_first_elements() {
        let s = of(r#"{"h":[[1,2,3,4,5,6],2,3,4,5,{"x":[7]}],"after":true}"#);
        assert_eq!(s.text, r#"{"h":[[1,2,3,4],2,3,4],"after":true}"#);
    }

    #[test]
    fn a_document_that_ends_early_is_cut() {
        let s = of(r#"{"info": {"config": "#);
        assert!(s.cut);
        assert_eq!(s.text, r#"{"info":{"config":"#);
    }

    #[test]
    fn the_skeleton_is_capped() {
        let many: Vec<String> = (0..200_000).map(|i| format!(r#""k{i}":{i}"#)).collect();
        let text = format!("{{{}}}", many.join(","));
        let s = of(&text);
        assert!(s.cut);
        assert_eq!(s.text.len(), MAX_BYTES);
    }
}
