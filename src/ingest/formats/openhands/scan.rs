//! Detection by structure over the head of a document, which may be cut anywhere: the
//! first event's leading keys (`id`, `timestamp`, `source`, `message`,
//! `action`|`observation`, then `args`, or `content` and `extras`, in that order as
//! OpenHands' `event_to_dict` writes them) are read without parsing the rest.

use super::history::{listed, BOOKKEEPING, KNOWN_ACTIONS, KNOWN_OBSERVATIONS};
use crate::ingest::formats::Sniffed;

/// Object keys whose array value is an event history (`EvalOutput.history` of the
/// evaluation harness; the server's trajectory endpoint answers `{"trajectory": [...]}`).
const WRAPPER_KEYS: [&str; 2] = ["history", "trajectory"];

/// Event sources OpenHands writes (`EventSource`).
const SOURCES: [&str; 3] = ["agent", "user", "environment"];

/// Keys read from the first event before judging it.
const MAX_KEYS: usize = 32;

/// An event history: an array of events, or an object holding one (keys before it are
/// skipped), whose first element is an OpenHands event. An event with OpenHands' `source`,
/// an `action` or `observation` and an `id` or `timestamp`, but another vocabulary or
/// without `args` (an action) or `content` and `extras` (an observation), is a look-alike.
pub fn judge(head: &str) -> Sniffed {
    let mut c = Cursor {
        b: head.as_bytes(),
        i: 0,
    };
    match c.peek() {
        Some(b'[') => {
            c.i += 1;
            first_event(&mut c)
        }
        Some(b'{') => wrapped(&mut c),
        _ => Sniffed::No,
    }
}

/// `{"...": ..., "history": [event, ...]}`: other keys before it are skipped.
fn wrapped(c: &mut Cursor<'_>) -> Sniffed {
    c.i += 1;
    loop {
        let Some(key) = c.string() else {
            return Sniffed::No;
        };
        if !c.eat(b':') {
            return Sniffed::No;
        }
        if WRAPPER_KEYS.contains(&key.as_str()) && c.peek() == Some(b'[') {
            c.i += 1;
            return first_event(c);
        }
        if c.skip().is_none() || !c.eat(b',') {
            return Sniffed::No;
        }
    }
}

/// What the first event's keys show, as far as the head goes.
#[derive(Default)]
struct Seen {
    id: bool,
    timestamp: bool,
    source: Option<String>,
    action: Option<String>,
    observation: Option<String>,
    args: bool,
    content: bool,
    extras: bool,
    /// The event's closing brace was reached: a key not seen is not there.
    complete: bool,
}

/// The first element: an event, or an `[action, observation]` pair (the evaluation
/// harness's older history shape).
fn first_event(c: &mut Cursor<'_>) -> Sniffed {
    if c.peek() == Some(b'[') {
        c.i += 1;
    }
    if !c.eat(b'{') {
        return Sniffed::No;
    }
    let mut seen = Seen::default();
    for _ in 0..MAX_KEYS {
        let Some(key) = c.string() else { break };
        if !c.eat(b':') {
            break;
        }
        let read = match key.as_str() {
            "id" => c.scalar().map(|s| seen.id = s.parse::<i64>().is_ok()),
            "timestamp" => c.string().map(|_| seen.timestamp = true),
            "source" => c.string().map(|s| seen.source = Some(s)),
            "action" => c.string().map(|s| seen.action = Some(s)),
            "observation" => c.string().map(|s| seen.observation = Some(s)),
            "content" => c.string().map(|_| seen.content = true),
            "args" | "extras" => {
                let object = c.peek() == Some(b'{');
                let read = c.skip();
                if key == "args" {
                    seen.args = object;
                } else {
                    seen.extras = object;
                }
                read
            }
            _ => c.skip(),
        };
        if read.is_none() {
            break;
        }
        if c.eat(b'}') {
            seen.complete = true;
            break;
        }
        if !c.eat(b',') {
            break;
        }
    }
    verdict(&seen)
}

fn verdict(seen: &Seen) -> Sniffed {
    let source = seen.source.as_deref().is_some_and(|s| SOURCES.contains(&s));
    let close = source && seen.action.is_some() != seen.observation.is_some();
    if !(close && (seen.id || seen.timestamp)) {
        return Sniffed::No;
    }
    let look_alike = |why: String| {
        Sniffed::LookAlike(format!(
            "looks like an OpenHands event history (events with `source`, `action` or \
             `observation`, `id`), but {why}"
        ))
    };
    let (kind, name, known, shaped, needs) = match (&seen.action, &seen.observation) {
        (Some(a), _) => (
            "action",
            a,
            listed(KNOWN_ACTIONS, a) || listed(BOOKKEEPING, a),
            seen.args,
            "an `args` object",
        ),
        (_, Some(o)) => (
            "observation",
            o,
            listed(KNOWN_OBSERVATIONS, o),
            seen.content && seen.extras,
            "a `content` string and an `extras` object",
        ),
        _ => return Sniffed::No,
    };
    if !known {
        return look_alike(format!(
            "its first event's {kind} `{name}` is none OpenHands writes"
        ));
    }
    if seen.complete && !shaped {
        return look_alike(format!("its first event lacks {needs}"));
    }
    Sniffed::Match
}

/// Whether `line` (one line of a file, or the head of one) is an evaluation's `EvalOutput`
/// object: it has an `instance_id` (a string or an integer) and a `history` array, keys in
/// any order.
pub fn is_instance_line(line: &str) -> bool {
    let mut c = Cursor {
        b: line.as_bytes(),
        i: 0,
    };
    if !c.eat(b'{') {
        return false;
    }
    let (mut id, mut history) = (false, false);
    loop {
        let Some(key) = c.string() else { return false };
        if !c.eat(b':') {
            return false;
        }
        let read = match key.as_str() {
            "instance_id" if c.peek() == Some(b'"') => c.string().map(|_| id = true),
            "instance_id" => c.scalar().map(|s| id = s.parse::<i64>().is_ok()),
            "history" => {
                history = c.peek() == Some(b'[');
                c.skip()
            }
            _ => c.skip(),
        };
        if read.is_none() {
            return false;
        }
        if id && history {
            return true;
        }
        if !c.eat(b',') {
            return false;
        }
    }
}

/// A cursor over the head's bytes; reads return `None` where the head ends first.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&mut self) -> Option<u8> {
        while self.b.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let hit = self.peek() == Some(byte);
        if hit {
            self.i += 1;
        }
        hit
    }

    /// The raw string token here, quotes included.
    fn raw_string(&mut self) -> Option<&'a [u8]> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.i;
        let mut i = start + 1;
        while i < self.b.len() {
            match self.b[i] {
                b'\\' => i += 2,
                b'"' => {
                    self.i = i + 1;
                    return Some(&self.b[start..self.i]);
                }
                _ => i += 1,
            }
        }
        None
    }

    fn string(&mut self) -> Option<String> {
        serde_json::from_slice(self.raw_string()?).ok()
    }

    /// A number, `true`, `false` or `null`, as written.
    fn scalar(&mut self) -> Option<&'a str> {
        self.peek()?;
        let start = self.i;
        let len = self.b[start..]
            .iter()
            .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
        self.i = start + len;
        std::str::from_utf8(&self.b[start..self.i])
            .ok()
            .filter(|s| !s.is_empty())
    }

    /// Skips one value of any kind.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.raw_string().map(drop),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.raw_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.i += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
            }
            _ => self.scalar().map(drop),
        }
    }
}
