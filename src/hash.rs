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

/// The value of `key` in `map`, made with its default when missing. The key is copied only
/// then: the tables a replay looks up at every call or result of a run would otherwise copy
/// it each time (issue #13).
pub fn value_mut<'m, V: Default>(map: &'m mut HashMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_string(), V::default());
    }
    map.get_mut(key).expect("inserted above")
}

/// The hash of `value`.
pub fn hash_of(value: &impl std::hash::Hash) -> u64 {
    use std::hash::BuildHasher;
    State::default().hash_one(value)
}

/// A digest of `bytes` that is the same on every machine, version and platform (FNV-1a,
/// 64 bits, as 16 hex digits): what identifies a replay's settings and prices in its
/// report, so that shards replayed apart can be told to be of one replay (issue #32, F).
/// Not a defence against forgery; a check that like was merged with like.
pub fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
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

    #[test]
    fn value_mut_makes_a_missing_value_once_and_finds_it_after() {
        let mut table: HashMap<String, u32> = HashMap::default();
        *value_mut(&mut table, "main") += 2;
        *value_mut(&mut table, "main") += 3;
        *value_mut(&mut table, "task-1") += 1;
        assert_eq!(table.len(), 2);
        assert_eq!(table.get("main"), Some(&5));
        assert_eq!(table.get("task-1"), Some(&1));
    }

    #[test]
    fn digest_is_fnv_1a_64() {
        // The published FNV-1a 64 test vectors.
        assert_eq!(digest(b""), "cbf29ce484222325");
        assert_eq!(digest(b"a"), "af63dc4c8601ec8c");
        assert_eq!(digest(b"foobar"), "85944171f73967e8");
    }
}
