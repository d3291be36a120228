//! Text primitives for the hot paths: every line of every tool output is searched for a
//! dozen short phrases.
//!
//! Each function returns exactly what its `std` counterpart returns; only the cost differs.

/// Haystacks up to this many bytes are searched by comparing the needle at every offset.
const SHORT: usize = 64;

/// `hay.find(needle)`: the byte offset of the leftmost occurrence.
///
/// `str::find` with a string pattern builds a two-way searcher at every call, which costs
/// more than the search itself on a short line; a short haystack is searched by comparing
/// the needle at each offset instead (a match of a whole UTF-8 needle always starts on a
/// character boundary, so the offsets agree).
pub fn find(hay: &str, needle: &str) -> Option<usize> {
    if hay.len() > SHORT {
        return hay.find(needle);
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

/// `hay.contains(needle)`: `std`'s vectorized search, except on a haystack too short for
/// it (where `std` builds a two-way searcher), which [`find`] handles.
pub fn contains(hay: &str, needle: &str) -> bool {
    if hay.len() > SHORT {
        hay.contains(needle)
    } else {
        find(hay, needle).is_some()
    }
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

    proptest::proptest! {
        #[test]
        fn find_agrees_with_std_on_any_text(hay in "[ab é\u{10348}]{0,90}", needle in "[ab é]{0,4}") {
            proptest::prop_assert_eq!(find(&hay, &needle), hay.find(needle.as_str()));
            proptest::prop_assert_eq!(contains(&hay, &needle), hay.contains(needle.as_str()));
        }
    }
}
