//! Text primitives for the hot paths: every line of every tool output is searched for a
//! dozen short phrases.
//!
//! Each function returns exactly what its `std` counterpart returns; only the cost differs.

/// Haystacks up to this many bytes are searched by comparing the needle at every offset.
const SHORT: usize = 64;

/// `hay.find(needle)`: the byte offset of the leftmost occurrence.
///
/// `str::find` with a string pattern builds a two-way searcher at every call, which costs
/// more than the search itself on a short line: a short haystack is searched by comparing
/// the needle at each offset, a long one by a vectorized searcher built once per needle
/// (a match of a whole UTF-8 needle always starts on a character boundary, so the offsets
/// agree).
pub fn find(hay: &str, needle: &'static str) -> Option<usize> {
    if hay.len() > SHORT {
        return find_long(hay.as_bytes(), needle);
    }
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = n.split_first() else {
        return Some(0);
    };
    if n.len() > h.len() {
        return None;
    }
    (0..=h.len() - n.len()).find(|&i| h[i] == first && &h[i + 1..i + n.len()] == rest)
}

/// Searches with a searcher for `needle` built on first use and kept by the thread: the
/// callers search a few dozen constant phrases (hence `'static`, which also bounds the
/// cache) in every line, and building a searcher costs several times what searching a
/// line does.
fn find_long(hay: &[u8], needle: &'static str) -> Option<usize> {
    // Few enough to look up by address (the same literal at two sites may be two entries).
    type Finders = Vec<(&'static str, memchr::memmem::Finder<'static>)>;
    thread_local! {
        static FINDERS: std::cell::RefCell<Finders> = const { std::cell::RefCell::new(Vec::new()) };
    }
    FINDERS.with(|finders| {
        let mut finders = finders.borrow_mut();
        let known = finders.iter().position(|(n, _)| std::ptr::eq(*n, needle));
        let at = known.unwrap_or_else(|| {
            finders.push((needle, memchr::memmem::Finder::new(needle)));
            finders.len() - 1
        });
        finders[at].1.find(hay)
    })
}

/// `hay.contains(needle)`, as [`find`] searches.
pub fn contains(hay: &str, needle: &'static str) -> bool {
    find(hay, needle).is_some()
}

/// The lines of `hay` (as `str::lines` gives them, in order) holding at least one of the
/// phrases `finders` look for (phrases without line breaks); every other line is skipped
/// without being split off.
///
/// A tool output's lines are mostly prose or build chatter that holds none of the phrases
/// a diagnostic needs, so the phrases are searched over the whole output (vectorized) and
/// only the lines around their occurrences are handed on.
pub fn lines_holding<'h>(
    hay: &'h str,
    finders: &'h [memchr::memmem::Finder<'static>],
) -> impl Iterator<Item = &'h str> + 'h {
    let bytes = hay.as_bytes();
    // The next occurrence of each phrase at or after `from` (`None`: no more).
    let mut next: Vec<Option<usize>> = finders.iter().map(|f| f.find(bytes)).collect();
    std::iter::from_fn(move || {
        let at = next.iter().flatten().copied().min()?;
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1);
        let from = end;
        for (slot, finder) in next.iter_mut().zip(finders) {
            if slot.is_some_and(|i| i < from) {
                *slot = finder.find(&bytes[from..]).map(|i| from + i);
            }
        }
        // `start` begins a line, so the first of its lines is the one `lines` yields.
        hay[start..].lines().next()
    })
}

/// Searchers for `phrases`, built once (a searcher's set-up costs more than a short search).
pub fn finders(phrases: &[&'static str]) -> Vec<memchr::memmem::Finder<'static>> {
    phrases
        .iter()
        .map(|p| memchr::memmem::Finder::new(p.as_bytes()))
        .collect()
}

/// The first `max` bytes of `s` at most, cut back to a character boundary.
pub fn head(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_agrees_with_std() {
        let hays = [
            "",
            " ",
            "3 failed",
            "error: 3 failed, 2 failed",
            "  failed",
            "é 3 failed",
            "ééé failed x failed",
            "test result: FAILED. 0 passed; 2 failed",
            "no match here",
            "aaaaab",
            "   ",
            "x error TS2304: y error TS1",
            "a line longer than the sixty-four bytes searched by hand: é error TS2304, 3 failed b",
        ];
        let needles = [
            "", " ", " failed", "failed", " passed", "error TS", "aab", "é", " é", "   ", "  ", "b",
        ];
        for hay in hays {
            for needle in needles {
                assert_eq!(find(hay, needle), hay.find(needle), "{hay:?} / {needle:?}");
                assert_eq!(contains(hay, needle), hay.contains(needle));
            }
        }
    }

    /// `lines_holding` as its definition says: `lines()` filtered by `contains`.
    fn lines_holding_by_definition<'h>(hay: &'h str, phrases: &[&str]) -> Vec<&'h str> {
        hay.lines()
            .filter(|l| phrases.iter().any(|p| l.contains(p)))
            .collect()
    }

    #[test]
    fn lines_holding_examples() {
        let phrases = ["error", "FAIL"];
        let finders = finders(&phrases);
        for hay in [
            "",
            "error",
            "ok\nerror: x\r\nfine\nFAIL a error\n",
            "\n\nerror\n\n",
            "x\r\nerrorFAIL\r",
            "no\nmatch\n",
        ] {
            let got: Vec<&str> = lines_holding(hay, &finders).collect();
            assert_eq!(got, lines_holding_by_definition(hay, &phrases), "{hay:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn lines_holding_agrees_with_its_definition(hay in "[ab\r\n é]{0,120}") {
            let phrases = ["ab", "é b", "bb", "\u{e9}"];
            let finders = finders(&phrases);
            let got: Vec<&str> = lines_holding(&hay, &finders).collect();
            proptest::prop_assert_eq!(got, lines_holding_by_definition(&hay, &phrases));
        }

        #[test]
        fn find_agrees_with_std_on_any_text(hay in "[ab é\u{10348}]{0,90}", needle in "[ab é]{0,4}") {
            let needle: &'static str = Box::leak(needle.into_boxed_str());
            proptest::prop_assert_eq!(find(&hay, needle), hay.find(needle));
            proptest::prop_assert_eq!(contains(&hay, needle), hay.contains(needle));
        }
    }
}
