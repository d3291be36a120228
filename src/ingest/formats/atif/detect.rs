//! Whether the head of a document is an ATIF trajectory, judged by structure.

use super::super::mini_swe_agent::head::{first_element, members, Member};
use super::super::Sniffed;

/// Whether `head` is an ATIF trajectory ([`judge`]).
pub fn sniff(head: &str) -> bool {
    judge(head) == Sniffed::Match
}

/// The head of a document is an ATIF trajectory: a top-level object whose `schema_version`
/// is a string starting `ATIF-` and whose `steps` is an array (or not yet reached: the
/// head ends before it), whose first step, when the head shows it, has a `step_id` or a
/// `source`. A document with ATIF's `agent` and `steps` but another or no
/// `schema_version`, or an `ATIF-` version whose `steps` is no array of steps, is a
/// look-alike.
pub fn judge(head: &str) -> Sniffed {
    let Some(members) = members(head) else {
        return Sniffed::No;
    };
    let get = |key: &str| members.iter().find(|m| m.key == key);
    let steps = get("steps");
    if get("schema_version").is_some_and(atif_version) {
        return match steps {
            Some(s) if !steps_shaped(s.value) => Sniffed::LookAlike(
                "looks like an ATIF trajectory (an `ATIF-` `schema_version`), but its `steps` \
                 is not an array of steps"
                    .into(),
            ),
            _ => Sniffed::Match,
        };
    }
    let agent = get("agent").is_some_and(|a| a.value.starts_with('{'));
    match steps {
        Some(s) if agent && steps_shaped(s.value) => Sniffed::LookAlike(
            "looks like an ATIF trajectory (`agent` and `steps`), but has no \
             `schema_version` starting `ATIF-`"
                .into(),
        ),
        _ => Sniffed::No,
    }
}

/// A `schema_version` whose (possibly cut) string starts `ATIF-`.
fn atif_version(m: &Member<'_>) -> bool {
    m.value.starts_with("\"ATIF-")
}

/// An array that is empty, cut before its first element, or whose first element (as far
/// as the head shows it) is an object with `step_id` or `source` among its keys.
fn steps_shaped(value: &str) -> bool {
    match first_element(value) {
        None => false,
        Some(None) => true,
        Some(Some((first, _))) => {
            let keys = members(first);
            match keys {
                Some(keys) if keys.is_empty() => !first.trim_start().starts_with("{}"),
                Some(keys) => keys.iter().any(|k| k.key == "step_id" || k.key == "source"),
                None => first.trim().is_empty(),
            }
        }
    }
}
