//! The hash the replay's in-memory tables use (issue #13): foldhash's fast hash with its
//! fixed seed. On the short keys replay looks up (call ids, families, evidence lines) it
//! costs a fraction of the standard library's SipHash, which was 2% of a replay's cycles,
//! and it is the same on every machine and run. No table's contents reach the output in
//! hash order, so the choice changes speed only. Unlike SipHash's random keys it does not
//! resist keys crafted to collide; the inputs are a user's own recordings.

/// The hasher state of every table: fixed, so equal keys hash alike in every process.
pub type State = foldhash::fast::FixedState;

pub type HashMap<K, V> = std::collections::HashMap<K, V, State>;

pub type HashSet<T> = std::collections::HashSet<T, State>;

/// The hash of `value`.
pub fn hash_of(value: &impl std::hash::Hash) -> u64 {
    use std::hash::BuildHasher;
    State::default().hash_one(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_hash_alike_and_tables_find_them() {
        let key = ("shell", String::from("cargo test"));
        assert_eq!(hash_of(&key), hash_of(&("shell", "cargo test".to_string())));
        assert_ne!(
            hash_of(&key),
            hash_of(&("shell", "cargo test ".to_string()))
        );
        let mut table: HashMap<String, u32> = HashMap::default();
        table.insert("call_1".into(), 1);
        assert_eq!(table.get("call_1"), Some(&1));
        assert_eq!(table.get("call_2"), None);
    }
}
