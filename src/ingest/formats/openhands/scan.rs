//! Detection by structure over the head of a document, which may be cut anywhere: the
//! first event's leading keys (`id`, `timestamp`, `source`, `action`|`observation`, in
//! that order as OpenHands writes them) are read without parsing the rest.

/// Object keys whose array value is an event history (`EvalOutput.history` of the
/// evaluation harness; the server's trajectory endpoint answers `{"trajectory": [...]}`).
const WRAPPER_KEYS: [&str; 2] = ["history", "trajectory"];

/// Event sources OpenHands writes (`EventSource`).
const SOURCES: [&str; 3] = ["agent", "user", "environment"];

/// Keys read from the first event before judging it.
const MAX_KEYS: usize = 32;

pub fn is_history(head: &str) -> bool {
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
        _ => false,
    }
}

/// `{"...": ..., "history": [event, ...]}`: other keys before it are skipped.
fn wrapped(c: &mut Cursor<'_>) -> bool {
    c.i += 1;
    loop {
        let Some(key) = c.string() else { return false };
        if !c.eat(b':') {
            return false;
        }
        if WRAPPER_KEYS.contains(&key.as_str()) && c.peek() == Some(b'[') {
            c.i += 1;
            return first_event(c);
        }
        if c.skip().is_none() || !c.eat(b',') {
            return false;
        }
    }
}

/// The first element: an event, or an `[action, observation]` pair (the evaluation
/// harness's older history shape).
fn first_event(c: &mut Cursor<'_>) -> bool {
    if c.peek() == Some(b'[') {
        c.i += 1;
    }
    if !c.eat(b'{') {
        return false;
    }
    let (mut id, mut timestamp, mut source) = (false, false, None);
    let (mut action, mut observation) = (false, false);
    for _ in 0..MAX_KEYS {
        let Some(key) = c.string() else { break };
        if !c.eat(b':') {
            break;
        }
        match key.as_str() {
            "id" => id = c.scalar().is_some_and(|s| s.parse::<i64>().is_ok()),
            "timestamp" => timestamp = c.string().is_some(),
            "source" => source = c.string(),
            "action" => action = c.string().is_some(),
            "observation" => observation = c.string().is_some(),
            _ => {
                if c.skip().is_none() {
                    break;
                }
            }
        }
        if !c.eat(b',') {
            break;
        }
    }
    source.is_some_and(|s| SOURCES.contains(&s.as_str()))
        && action != observation
        && (id || timestamp)
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
