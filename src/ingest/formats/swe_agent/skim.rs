//! A skim over the head of a JSON document that may be cut anywhere: the keys of the
//! top-level object and of the first `trajectory` item, without parsing the values.

/// What the head shows of a document's structure.
#[derive(Debug, Default)]
pub struct Shape {
    /// Top-level keys, in order, as far as the head goes.
    pub keys: Vec<String>,
    /// `trajectory` is an array.
    pub trajectory: bool,
    /// Keys of `trajectory[0]`, if the head reaches into it.
    pub first_step: Option<Vec<String>>,
    /// The head holds `trajectory[0]` whole (its closing brace): a key not seen is absent.
    pub first_step_complete: bool,
}

pub fn shape(head: &str) -> Shape {
    let mut s = Skim {
        b: head.trim_start().as_bytes(),
        i: 0,
    };
    let mut shape = Shape::default();
    let (mut trajectory, mut first_step, mut complete) = (false, None, false);
    (shape.keys, _) = s.keys(|s, key| {
        if key != "trajectory" || s.peek() != Some(b'[') {
            return s.skip();
        }
        trajectory = true;
        s.i += 1;
        s.ws();
        if s.peek() == Some(b'{') {
            let (keys, whole) = s.keys(|s, _| s.skip());
            first_step = Some(keys);
            complete = whole;
        }
        // The rest of the array, item by item.
        loop {
            s.ws();
            match s.peek()? {
                b']' => {
                    s.i += 1;
                    return Some(());
                }
                b',' => s.i += 1,
                _ => {
                    let at = s.i;
                    s.skip()?;
                    if s.i == at {
                        return None; // malformed: nothing to skip
                    }
                }
            }
        }
    });
    shape.trajectory = trajectory;
    shape.first_step = first_step;
    shape.first_step_complete = complete;
    shape
}

struct Skim<'a> {
    b: &'a [u8],
    i: usize,
}

impl Skim<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    /// The keys of the object at the cursor, and whether its closing brace was reached;
    /// `value` consumes each value (`None`: cut).
    fn keys(
        &mut self,
        mut value: impl FnMut(&mut Self, &str) -> Option<()>,
    ) -> (Vec<String>, bool) {
        let mut keys = Vec::new();
        if self.peek() != Some(b'{') {
            return (keys, false);
        }
        self.i += 1;
        loop {
            self.ws();
            match self.peek() {
                Some(b'}') => {
                    self.i += 1;
                    return (keys, true);
                }
                None => return (keys, false),
                Some(b',') => {
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            let Some(key) = self.string() else {
                return (keys, false);
            };
            self.ws();
            if self.peek() != Some(b':') {
                return (keys, false);
            }
            self.i += 1;
            self.ws();
            keys.push(key.clone());
            if value(self, &key).is_none() {
                return (keys, false);
            }
        }
    }

    /// A string at the cursor, unescaped only as far as keys need.
    fn string(&mut self) -> Option<String> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.i + 1;
        self.i = start;
        loop {
            match self.peek()? {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(String::from_utf8_lossy(&self.b[start..self.i - 1]).into_owned());
                }
                _ => self.i += 1,
            }
        }
    }

    /// Skips one value; `None` when the head ends inside it.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0u32;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
            }
            _ => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']') || c.is_ascii_whitespace() {
                        return Some(());
                    }
                    self.i += 1;
                }
                None
            }
        }
    }
}
