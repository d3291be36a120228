//! A small table of values seen recently, so that a repeat can share the first one's
//! allocation instead of making its own (issue #13). A stuck run repeats a handful of
//! calls, arguments and outputs for hundreds of thousands of turns: ingest shares the
//! repeated arguments and outputs it reads, normalization the repeated calls' shapes.
//!
//! The table has one slot per hash bucket, holding the newest value there: a run of
//! repeats finds its value, a run of distinct values keeps no more than the table holds.
//! A value is shared only when the caller's own comparison says it is the same, so what
//! is shared never depends on the hash; the hash only says where to look.

/// Recently seen values of type `V`, each kept with its hash.
#[derive(Debug)]
pub struct Recent<V> {
    slots: Vec<Option<(u64, V)>>,
}

impl<V> Default for Recent<V> {
    fn default() -> Self {
        Self { slots: Vec::new() }
    }
}

impl<V> Recent<V> {
    const SLOTS: usize = 64;

    /// The value whose hash is `hash` and which `is_same` accepts, if it is still in the
    /// table; else `make`'s, which takes its slot.
    pub fn get_or_insert(
        &mut self,
        hash: u64,
        is_same: impl FnOnce(&V) -> bool,
        make: impl FnOnce() -> V,
    ) -> &V {
        if self.slots.is_empty() {
            self.slots.resize_with(Self::SLOTS, || None);
        }
        let slot = &mut self.slots[(hash % Self::SLOTS as u64) as usize];
        let found = matches!(slot, Some((h, v)) if *h == hash && is_same(v));
        if !found {
            *slot = Some((hash, make()));
        }
        let (_, value) = slot.as_ref().expect("the slot was just filled");
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash_of;

    #[test]
    fn a_repeat_gets_the_first_value_and_a_different_one_its_own() {
        let mut recent: Recent<(String, usize)> = Recent::default();
        let mut made = 0;
        let mut get = |key: &str| {
            recent
                .get_or_insert(
                    hash_of(&key),
                    |v| v.0 == key,
                    || {
                        made += 1;
                        (key.to_string(), made)
                    },
                )
                .1
        };
        assert_eq!(get("a"), 1);
        assert_eq!(get("a"), 1);
        assert_eq!(get("b"), 2);
        assert_eq!(get("a"), 1);
        assert_eq!(get("c"), 3);
    }

    #[test]
    fn the_same_hash_is_not_enough_to_share() {
        let mut recent: Recent<&str> = Recent::default();
        assert_eq!(*recent.get_or_insert(7, |v| *v == "x", || "x"), "x");
        // The same hash, but the comparison says it is another value: it takes the slot.
        assert_eq!(*recent.get_or_insert(7, |v| *v == "y", || "y"), "y");
        assert_eq!(*recent.get_or_insert(7, |v| *v == "y", || "z"), "y");
    }
}
