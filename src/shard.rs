//! Shards: one corpus split across machines by whole projects (`--shard K/N`,
//! docs/SCALE.md).
//!
//! A project belongs to shard `K` of `N` when the FNV-1a 64-bit hash of its name's UTF-8
//! bytes, modulo `N`, is `K - 1`. The name is the one discovery gives it (the `project` of
//! the JSON report: the path as given on the command line, `/`-separated), so the
//! assignment is the same on every machine, platform and run, as long as every shard is
//! given the same paths spelled the same way. Whole projects only: the sessions of one
//! project replay in order through one set of guards, so what a guard carries from one
//! session to the next never crosses shards.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Shard `index` (1-based) of `count`: `None` unless `1 <= index <= count`.
    pub fn new(index: u32, count: u32) -> Option<Self> {
        (1..=count)
            .contains(&index)
            .then_some(Self { index, count })
    }

    /// Whether the project named `project` belongs to this shard.
    pub fn holds(&self, project: &str) -> bool {
        Self::of(project, self.count) == self.index
    }

    /// The shard (1-based) of `count` the project named `project` belongs to.
    pub fn of(project: &str, count: u32) -> u32 {
        // `count` is at least 1 for any shard `new` accepts; 0 is treated as 1.
        (fnv1a64(project.as_bytes()) % u64::from(count.max(1))) as u32 + 1
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why a `--shard` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("expected K/N (shard K of N, e.g. 1/3), got `{0}`")]
    Shape(String),
    #[error("expected 1 <= K <= N, got K={index}, N={count}")]
    Range { index: u32, count: u32 },
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(text: &str) -> Result<Self, ShardError> {
        let shape = || ShardError::Shape(text.to_string());
        let (k, n) = text.split_once('/').ok_or_else(shape)?;
        let number = |s: &str| {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(shape());
            }
            s.parse::<u32>().map_err(|_| shape())
        };
        let (index, count) = (number(k)?, number(n)?);
        Self::new(index, count).ok_or(ShardError::Range { index, count })
    }
}

/// FNV-1a, 64 bits: offset basis `0xcbf29ce484222325`, prime `0x100000001b3`, one byte at
/// a time (xor, then multiply). Fixed and platform-independent, unlike std's hasher.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!("2/3".parse(), Ok(Shard { index: 2, count: 3 }));
        assert_eq!("1/1".parse(), Ok(Shard { index: 1, count: 1 }));
        assert_eq!(
            "0/3".parse::<Shard>(),
            Err(ShardError::Range { index: 0, count: 3 })
        );
        assert_eq!(
            "4/3".parse::<Shard>(),
            Err(ShardError::Range { index: 4, count: 3 })
        );
        for bad in [
            "", "3", "1/", "/3", "a/3", "1/3/5", "+1/3", "1/-3", " 1/3", "1.0/3",
        ] {
            assert_eq!(
                bad.parse::<Shard>(),
                Err(ShardError::Shape(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(Shard { index: 2, count: 3 }.to_string(), "2/3");
    }

    #[test]
    fn every_project_is_in_exactly_one_shard() {
        for count in 1..=7 {
            for name in ["corpora/myactuator", "corpora/real/pi", ".", "ü/ß"] {
                let owners: Vec<u32> = (1..=count)
                    .filter(|&k| Shard::new(k, count).unwrap().holds(name))
                    .collect();
                assert_eq!(owners, [Shard::of(name, count)], "{name} of {count}");
            }
        }
    }
}
