//! Evidence in a context frame: what counts as evidence, its family, and how it folds.
//!
//! Shared by the guards that reason about frames (evidence folding, compaction policy):
//! seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-04's folding rule, kept in one place.
//! Tool messages linked to a call take that call's family and outcome; system messages
//! opening with the evidence marker are keyed by their masked first line; later system
//! messages repeated modulo numbers are synthetic noise.

use crate::model::{tokens_from_chars, Frame, Message};
use crate::normalize::outcome::failure_signal;
use crate::normalize::RunState;
use std::collections::{BTreeMap, HashMap};

/// Characters of the one-line summary that replaces what was folded.
pub const SUMMARY_CHARS: u64 = 48;

/// The outcome of folding one frame.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoldPlan {
    pub retained: u64,
    pub folded: u64,
    /// Repeated synthetic blocks among `folded`.
    pub repeats: u64,
    pub folded_chars: u64,
    pub summaries: u64,
}

/// Tokens that `chars` of this frame stand for: scaled by the frame's own estimate when it
/// has one, else by the fixed characters-per-token rate.
pub fn frame_tokens(frame: &Frame, chars: u64) -> u64 {
    let total = frame.chars();
    match frame.estimated_tokens {
        Some(est) if total > 0 => {
            (u128::from(est) * u128::from(chars.min(total)) / u128::from(total)) as u64
        }
        _ => tokens_from_chars(chars),
    }
}

/// How one piece of evidence stands in its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Item {
    index: usize,
    success: bool,
    mutation: bool,
    verification: bool,
}

/// Decides, for one frame, which evidence stays and which folds.
pub fn plan_frame(frame: &Frame, run: &RunState, marker: &str) -> FoldPlan {
    // Two guards read every frame's plan (folding and the signal-to-noise ratio) during the
    // same dispatch; the plan is computed once and handed to both. The key names the frame
    // (its address, file, turn and size), the run state it was resolved against and the
    // marker, so a stale entry can never be mistaken for the current frame.
    let key = PlanKey {
        frame: frame as *const Frame as usize,
        run: run as *const RunState as usize,
        turn: frame.turn,
        messages: frame.messages.len(),
        source: frame.source.clone(),
        marker: marker.to_string(),
    };
    LAST_PLAN.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((k, plan)) = last.as_ref() {
            if *k == key {
                return plan.clone();
            }
        }
        let plan = compute_plan(frame, run, marker);
        *last = Some((key, plan.clone()));
        plan
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct PlanKey {
    frame: usize,
    run: usize,
    turn: u32,
    messages: usize,
    source: String,
    marker: String,
}

thread_local! {
    /// The last frame's plan on this thread (a project replays on one thread).
    static LAST_PLAN: std::cell::RefCell<Option<(PlanKey, FoldPlan)>> = const { std::cell::RefCell::new(None) };
}

fn compute_plan(frame: &Frame, run: &RunState, marker: &str) -> FoldPlan {
    let mut families: BTreeMap<String, Vec<Item>> = BTreeMap::new();
    let mut synthetic: HashMap<u64, u64> = HashMap::new();
    let mut plan = FoldPlan::default();
    let mut folded_repeat_groups = 0;
    for (index, message) in frame.messages.iter().enumerate() {
        if let Some((family, item)) = evidence_item(index, message, run, marker) {
            families.entry(family).or_default().push(item);
        } else if message.role == "system" && index > 0 {
            // The first message is the system prompt proper; later system messages are
            // injected blocks, and an identical one repeated is pure noise.
            let seen = synthetic.entry(masked_hash(&message.content)).or_default();
            *seen += 1;
            if *seen > 1 {
                plan.folded += 1;
                plan.repeats += 1;
                plan.folded_chars += message.content.char_count();
                if *seen == 2 {
                    folded_repeat_groups += 1;
                }
            } else {
                plan.retained += 1;
            }
        }
    }
    plan.summaries += folded_repeat_groups;
    for items in families.values() {
        let keep = kept(items);
        let folded: Vec<&Item> = items.iter().filter(|i| !keep.contains(&i.index)).collect();
        plan.retained += keep.len() as u64;
        if !folded.is_empty() {
            plan.folded += folded.len() as u64;
            plan.summaries += 1;
            plan.folded_chars += folded
                .iter()
                .map(|i| frame.messages[i.index].content.char_count())
                .sum::<u64>();
        }
    }
    plan
}

/// Message indexes to keep: latest success, latest mutation, latest verification, and the
/// first and last failure after the family's last success (the unresolved ones).
fn kept(items: &[Item]) -> Vec<usize> {
    let last = |pred: &dyn Fn(&Item) -> bool| items.iter().rev().find(|i| pred(i)).map(|i| i.index);
    let last_success = items.iter().rposition(|i| i.success);
    let unresolved: Vec<usize> = items[last_success.map_or(0, |p| p + 1)..]
        .iter()
        .filter(|i| !i.success)
        .map(|i| i.index)
        .collect();
    let mut keep: Vec<usize> = [
        last(&|i| i.success),
        last(&|i| i.mutation),
        last(&|i| i.verification),
        unresolved.first().copied(),
        unresolved.last().copied(),
    ]
    .into_iter()
    .flatten()
    .collect();
    keep.sort_unstable();
    keep.dedup();
    keep
}

/// A tool message, or a system message opening with the evidence marker, as
/// (family, item). Linked evidence takes its call's family and outcome; an unlinked
/// evidence block is keyed by its masked first line.
fn evidence_item(
    index: usize,
    m: &Message,
    run: &RunState,
    marker: &str,
) -> Option<(String, Item)> {
    let is_marked = m.role == "system" && m.content.trim_start().starts_with(marker);
    if m.role != "tool" && !is_marked {
        return None;
    }
    if let Some(id) = &m.tool_call_id {
        if let (Some(call), Some(outcome)) = (run.call(id), run.outcome(id)) {
            let item = Item {
                index,
                success: outcome.success,
                mutation: outcome.mutation,
                verification: outcome.verification,
            };
            return Some((call.families.action.clone(), item));
        }
    }
    let head = m.content.trim_start().lines().next().unwrap_or_default();
    // A count decides when there is one ("0 failed" is a success); else the wording.
    let failed = match failure_signal(head) {
        Some(n) => n > 0,
        None => {
            let lower = head.to_ascii_lowercase();
            lower.contains("fail") || lower.contains("error")
        }
    };
    let item = Item {
        index,
        success: !failed,
        mutation: false,
        verification: false,
    };
    Some((mask_numbers(head), item))
}

/// Text with every run of digits replaced by `#` and whitespace collapsed, so blocks that
/// differ only in counters and turn numbers compare equal.
pub fn mask_numbers(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    masked_bytes(s, |b| out.push(b));
    // Whole UTF-8 sequences are emitted, so this never loses anything.
    String::from_utf8_lossy(&out).into_owned()
}

/// A hash of `mask_numbers(s)` without building it: frames repeat large blocks, and
/// comparing them by a 64-bit FNV-1a of the masked text keeps the scan linear and
/// allocation-free.
pub fn masked_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    masked_bytes(s, |b| {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    });
    h
}

/// Feeds the masked form of `s` to `emit` as UTF-8 bytes.
fn masked_bytes(s: &str, mut emit: impl FnMut(u8)) {
    // Byte by byte: digits and ASCII whitespace are single bytes in UTF-8 and never occur
    // inside a multi-byte character, so every other byte passes through unchanged. (Non-ASCII
    // whitespace is kept as text; frames are large, and this loop is the hot path.)
    #[derive(PartialEq)]
    enum Run {
        Text,
        Digits,
        Space,
    }
    let mut run = Run::Text;
    for &b in s.trim().as_bytes() {
        if b.is_ascii_digit() {
            if run != Run::Digits {
                emit(b'#');
            }
            run = Run::Digits;
        } else if b.is_ascii_whitespace() {
            if run != Run::Space {
                emit(b' ');
            }
            run = Run::Space;
        } else {
            emit(b);
            run = Run::Text;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_ignores_numbers_and_spacing_only() {
        assert_eq!(mask_numbers("turn 12:  3 failed"), "turn #: # failed");
        assert_eq!(mask_numbers("étape 7 — échec"), "étape # — échec");
        assert_eq!(
            masked_hash("turn 12:  3 failed"),
            masked_hash("turn 9: 41 failed")
        );
        assert_ne!(
            masked_hash("turn 1: make failed"),
            masked_hash("turn 1: make passed")
        );
    }
}
