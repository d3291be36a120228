//! Lines of a JSONL file as raw bytes (so invalid UTF-8 is reported, not fatal), one
//! reused buffer, a cap on the length of a line, and a leading byte order mark skipped.
//!
//! A line over the cap is never held whole: the reader keeps at most the cap and a few
//! bytes of it, then reads past the rest to the next newline, and reports the line as too
//! long.

use super::files::BOM;
use std::io::{self, BufRead, Read, Seek};

/// Where a line starts in its file: a run that is one line of a file (an OpenHands
/// evaluation output's instance) is read from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineAt {
    /// Bytes before the line.
    pub offset: u64,
    /// 1-based line number.
    pub number: u64,
}

/// One line of a JSONL file.
pub struct Line<'a> {
    /// 1-based line number.
    pub number: u64,
    /// The line without its ending (`\n` or `\r\n`) and, on line 1, without a byte order
    /// mark; empty when the line was over the cap.
    pub bytes: &'a mut [u8],
    /// Whether it ended in a newline (a crashed writer leaves the last one open). A line
    /// over the cap counts as ended.
    pub terminated: bool,
    /// Bytes read, including the ending.
    pub raw_len: u64,
    /// The line was longer than the cap and was skipped.
    pub too_long: bool,
}

/// Reads lines of at most `max` bytes each (their ending aside).
pub struct LineReader<R> {
    reader: R,
    buf: Vec<u8>,
    number: u64,
    max: u64,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(reader: R, max: u64) -> Self {
        Self {
            reader,
            buf: Vec::with_capacity(64 * 1024),
            number: 0,
            max,
        }
    }

    /// The next line, or `None` at the end of the stream.
    pub fn next_line(&mut self) -> Option<io::Result<Line<'_>>> {
        self.buf.clear();
        // The line, its `\r\n` and one byte more tell a line over the cap from one at it.
        let room = self.max.saturating_add(3);
        let read = match (&mut self.reader)
            .take(room)
            .read_until(b'\n', &mut self.buf)
        {
            Ok(0) => return None,
            Ok(n) => n as u64,
            Err(e) => return Some(Err(e)),
        };
        self.number += 1;
        let mut terminated = self.buf.last() == Some(&b'\n');
        let mut raw_len = read;
        if terminated {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        let too_long = self.buf.len() as u64 > self.max;
        if too_long {
            self.buf.clear();
            if !terminated {
                // The rest of the line is read past, never kept.
                match self.reader.skip_until(b'\n') {
                    Ok(skipped) => raw_len += skipped as u64,
                    Err(e) => return Some(Err(e)),
                }
                terminated = true;
            }
        }
        let start = if self.number == 1 && self.buf.starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        Some(Ok(Line {
            number: self.number,
            bytes: &mut self.buf[start..],
            terminated,
            raw_len,
            too_long,
        }))
    }
}

impl<R: BufRead + Seek> LineReader<R> {
    /// The same file again from its first line, for a second pass over it.
    pub fn rewound(mut self) -> io::Result<Self> {
        self.reader.rewind()?;
        self.number = 0;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[u8], max: u64) -> Vec<(u64, String, bool, u64, bool)> {
        let mut reader = LineReader::new(std::io::BufReader::with_capacity(4, text), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line() {
            let l = line.expect("read");
            out.push((
                l.number,
                String::from_utf8_lossy(l.bytes).into_owned(),
                l.terminated,
                l.raw_len,
                l.too_long,
            ));
        }
        out
    }

    #[test]
    fn lines_at_over_and_under_the_cap() {
        let got = lines(b"abcd\nabcde\r\nabcdefgh\nab", 4);
        assert_eq!(
            got,
            [
                (1, "abcd".into(), true, 5, false),
                (2, String::new(), true, 7, true),
                (3, String::new(), true, 9, true),
                (4, "ab".into(), false, 2, false),
            ]
        );
    }

    #[test]
    fn an_endless_line_is_skipped_to_its_end() {
        let text = [b'x'; 10_000];
        let got = lines(&text, 16);
        assert_eq!(got, [(1, String::new(), true, 10_000, true)]);
    }

    #[test]
    fn a_byte_order_mark_is_skipped_on_line_one_only() {
        let got = lines(b"\xEF\xBB\xBF{}\n\xEF\xBB\xBF{}\n", 64);
        assert_eq!(got[0].1, "{}");
        assert_eq!(got[0].3, 6);
        assert_eq!(got[1].1, "\u{feff}{}");
    }
}
