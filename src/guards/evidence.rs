//! Evidence in a context frame: what counts as evidence, its family, and how it folds.
//!
//! Shared by the guards that reason about frames (evidence folding, compaction policy):
//! seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-04's folding rule, kept in one place.
//! Tool messages linked to a call take that call's family and outcome; system messages
//! opening with the evidence marker are keyed by their masked first line; later system
//! messages repeated modulo numbers are synthetic noise.

use crate::hash::HashMap;
use crate::model::{tokens_from_chars, Frame, Message};
use crate::normalize::outcome::failure_signal;
use crate::normalize::RunState;
use std::borrow::Cow;
use std::collections::BTreeMap;

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
    LAST_PLAN.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((key, plan)) = last.as_ref() {
            if key.names(frame, run, marker) {
                return plan.clone();
            }
        }
        let plan = compute_plan(frame, run, marker);
        *last = Some((PlanKey::of(frame, run, marker), plan.clone()));
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

impl PlanKey {
    fn of(frame: &Frame, run: &RunState, marker: &str) -> Self {
        Self {
            frame: frame as *const Frame as usize,
            run: run as *const RunState as usize,
            turn: frame.turn,
            messages: frame.messages.len(),
            source: frame.source.clone(),
            marker: marker.to_string(),
        }
    }

    /// Whether this is the key of `frame` resolved against `run` with `marker` (compared
    /// field by field, so asking costs no copy).
    fn names(&self, frame: &Frame, run: &RunState, marker: &str) -> bool {
        self.frame == frame as *const Frame as usize
            && self.run == run as *const RunState as usize
            && self.turn == frame.turn
            && self.messages == frame.messages.len()
            && self.source == frame.source
            && self.marker == marker
    }
}

thread_local! {
    /// The last frame's plan on this thread (a project replays on one thread).
    static LAST_PLAN: std::cell::RefCell<Option<(PlanKey, FoldPlan)>> = const { std::cell::RefCell::new(None) };
}

fn compute_plan(frame: &Frame, run: &RunState, marker: &str) -> FoldPlan {
    // Keyed by the linked call's family (borrowed from the run) or the masked first line.
    let mut families: BTreeMap<Cow<'_, str>, Vec<Item>> = BTreeMap::new();
    let mut synthetic = Repeats::default();
    let mut plan = FoldPlan::default();
    let mut folded_repeat_groups = 0;
    for (index, message) in frame.messages.iter().enumerate() {
        if let Some((family, item)) = evidence_item(index, message, run, marker) {
            families.entry(family).or_default().push(item);
        } else if message.role == "system" && index > 0 {
            // The first message is the system prompt proper; later system messages are
            // injected blocks, and an identical one repeated is pure noise.
            let seen = synthetic.count(index, &frame.messages);
            if seen > 1 {
                plan.folded += 1;
                plan.repeats += 1;
                plan.folded_chars += message.content.char_count();
                if seen == 2 {
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

/// The injected blocks of one frame, grouped by their masked text ([`mask_numbers`]).
///
/// Most blocks are unique (pinned files, a repository map), so a block is first keyed by a
/// hash of the start of its masked text only ([`masked_prefix_hash`]), and the whole of a
/// block is hashed ([`masked_hash`]) only when another block starts the same way: the
/// groups are those of the whole masked text, without reading every block to its end.
#[derive(Default)]
struct Repeats {
    /// Prefix hash -> the groups starting that way: (whole hash once known, a member's
    /// message index, members so far).
    by_prefix: HashMap<u64, Vec<(Option<u64>, usize, u64)>>,
}

impl Repeats {
    /// Counts the block at `index` in its group; returns how many the group now holds.
    fn count(&mut self, index: usize, messages: &[Message]) -> u64 {
        let text = &messages[index].content;
        let (prefix, whole) = masked_prefix_hash(text);
        let groups = self.by_prefix.entry(prefix).or_default();
        if groups.is_empty() {
            groups.push((whole.then_some(prefix), index, 1));
            return 1;
        }
        let hash = if whole { prefix } else { masked_hash(text) };
        for (known, member, members) in groups.iter_mut() {
            let theirs = *known.get_or_insert_with(|| masked_hash(&messages[*member].content));
            if theirs == hash {
                *members += 1;
                return *members;
            }
        }
        groups.push((Some(hash), index, 1));
        1
    }
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
fn evidence_item<'r>(
    index: usize,
    m: &Message,
    run: &'r RunState,
    marker: &str,
) -> Option<(Cow<'r, str>, Item)> {
    let is_marked = m.role == "system" && m.content.trim_start().starts_with(marker);
    if m.role != "tool" && !is_marked {
        return None;
    }
    if let Some(id) = &m.tool_call_id {
        if let (Some(call), Some(outcome)) = (run.call(id.as_str()), run.outcome(id.as_str())) {
            let item = Item {
                index,
                success: outcome.success,
                mutation: outcome.mutation,
                verification: outcome.verification,
            };
            return Some((Cow::Borrowed(call.families.action.as_str()), item));
        }
    }
    let head = m.content.trim_start().lines().next().unwrap_or_default();
    let Head { family, failed } = remembered_head(head);
    let item = Item {
        index,
        success: !failed,
        mutation: false,
        verification: false,
    };
    Some((Cow::Owned(family), item))
}

/// What the first line of an unlinked evidence block says: its family (the line masked)
/// and whether it reports a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Head {
    family: String,
    failed: bool,
}

impl Head {
    fn read(head: &str) -> Self {
        // A count decides when there is one ("0 failed" is a success); else the wording.
        let failed = match failure_signal(head) {
            Some(n) => n > 0,
            None => {
                let lower = head.to_ascii_lowercase();
                lower.contains("fail") || lower.contains("error")
            }
        };
        Self {
            family: mask_numbers(head),
            failed,
        }
    }
}

/// [`Head::read`], remembered: every frame repeats the evidence blocks of the turns before
/// it, so a run reads the same first lines frame after frame. The answer depends on the
/// line alone, so a remembered one is always right; the memory is per thread, holds short
/// lines only and starts over when full, so it stays small.
fn remembered_head(head: &str) -> Head {
    const LONGEST: usize = 1024;
    const MOST: usize = 1 << 14;
    thread_local! {
        static HEADS: std::cell::RefCell<HashMap<Box<str>, Head>> = std::cell::RefCell::default();
    }
    if head.len() > LONGEST {
        return Head::read(head);
    }
    HEADS.with(|heads| {
        let mut heads = heads.borrow_mut();
        if let Some(known) = heads.get(head) {
            return known.clone();
        }
        if heads.len() >= MOST {
            heads.clear();
        }
        let read = Head::read(head);
        heads.insert(head.into(), read.clone());
        read
    })
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
/// comparing them by a 64-bit hash of the masked text keeps the scan linear and
/// allocation-free. It is the hot loop of a frame's plan, so it masks without branching
/// (each byte's class from a table, a masked byte written at every step and kept when it
/// counts) into a small buffer, and hashes the buffer eight bytes at a time with one
/// 128-bit multiply per word. Equal masked texts always hash equal.
pub fn masked_hash(s: &str) -> u64 {
    masked_hash_upto(s, usize::MAX).0
}

/// [`masked_hash`] of the first [`PREFIX`] bytes of the masked text only, and whether that
/// is the whole of it (then it equals [`masked_hash`] of `s`).
pub fn masked_prefix_hash(s: &str) -> (u64, bool) {
    masked_hash_upto(s, PREFIX)
}

/// Masked bytes [`masked_prefix_hash`] reads: a block's first few lines.
const PREFIX: usize = 256;

/// The hash of the first `limit` masked bytes (a multiple of 256, or all), and whether
/// they are all of them (`false` may also mean that what is left masks to nothing).
fn masked_hash_upto(s: &str, limit: usize) -> (u64, bool) {
    const BLOCK: usize = 256;
    let mut buf = [0u8; BLOCK];
    let mut n = 0;
    let mut h = WordHash::default();
    let mut prev = TEXT;
    let bytes = s.trim().as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let class = CLASS[usize::from(b)];
        buf[n] = if class == TEXT {
            b
        } else {
            MASK[usize::from(class)]
        };
        n += usize::from(class == TEXT || class != prev);
        prev = class;
        if n == BLOCK {
            h.block(&buf);
            n = 0;
            if h.len >= limit as u64 {
                return (h.finish(&[]), i + 1 == bytes.len());
            }
        }
    }
    (h.finish(&buf[..n]), true)
}

/// Byte classes for [`masked_hash_upto`]: text passes through; a run of digits becomes `#` and
/// a run of ASCII whitespace one space, as in [`masked_bytes`].
const TEXT: u8 = 0;
const DIGIT: u8 = 1;
const SPACE: u8 = 2;
const MASK: [u8; 3] = [0, b'#', b' '];
const CLASS: [u8; 256] = {
    let mut class = [TEXT; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_digit() {
            class[b] = DIGIT;
        } else if c.is_ascii_whitespace() {
            class[b] = SPACE;
        }
        b += 1;
    }
    class
};

/// A hash of a byte sequence fed in whole eight-byte words, then a tail.
#[derive(Default)]
struct WordHash {
    state: u64,
    len: u64,
}

impl WordHash {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;

    fn fold(a: u64, b: u64) -> u64 {
        let p = u128::from(a) * u128::from(b);
        (p as u64) ^ ((p >> 64) as u64)
    }

    /// `bytes.len()` is a multiple of eight.
    fn block(&mut self, bytes: &[u8]) {
        for word in bytes.chunks_exact(8) {
            let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
            self.state = Self::fold(self.state ^ w, Self::K);
        }
        self.len += bytes.len() as u64;
    }

    fn finish(mut self, tail: &[u8]) -> u64 {
        let whole = tail.len() / 8 * 8;
        self.block(&tail[..whole]);
        let mut last = [0u8; 8];
        last[..tail.len() - whole].copy_from_slice(&tail[whole..]);
        let len = self.len + (tail.len() - whole) as u64;
        let h = Self::fold(self.state ^ u64::from_le_bytes(last), Self::K ^ len);
        Self::fold(h, 0xff51_afd7_ed55_8ccd)
    }
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

    #[test]
    fn a_remembered_head_reads_as_a_fresh_one() {
        let long = format!("[RUN EVIDENCE] {} failed", "x".repeat(2000));
        for head in [
            "[RUN EVIDENCE] turn 4: cargo test failed (3 failed)",
            "[RUN EVIDENCE] turn 5: cargo test ok (0 failed)",
            "[RUN EVIDENCE] turn 6: make: Error 2",
            &long,
        ] {
            let fresh = Head::read(head);
            assert_eq!(remembered_head(head), fresh, "{head}");
            assert_eq!(remembered_head(head), fresh, "{head}");
        }
        assert!(Head::read("turn 6: make: Error 2").failed);
        assert!(!Head::read("turn 5: 0 failed").failed);
    }

    /// Blocks of `n` lines, each naming its number (masked away) and ending with `end`.
    fn block(n: usize, first: usize, end: &str) -> String {
        let mut text: String = (first..first + n)
            .map(|i| format!("line {i}: the same words again\n"))
            .collect();
        text.push_str(end);
        text
    }

    #[test]
    fn the_hash_of_the_masked_text_is_the_hash_of_its_masked_bytes() {
        for (a, b) in [
            ("x", "x"),
            ("  turn 1:\t\t2 failed  ", "turn 33: 4 failed"),
            (&block(40, 1, "done") as &str, &block(40, 900, "done")),
        ] {
            assert_eq!(masked_hash(a), masked_hash(b), "{a:?} / {b:?}");
            assert_eq!(mask_numbers(a), mask_numbers(b));
        }
        // Every length around the word and block boundaries.
        for n in 0..600 {
            let a = "a".repeat(n);
            let b = "a".repeat(n + 1);
            assert_ne!(masked_hash(&a), masked_hash(&b), "{n}");
            let (prefix, whole) = masked_prefix_hash(&a);
            assert_eq!(whole, n <= PREFIX, "{n}");
            if whole {
                assert_eq!(prefix, masked_hash(&a), "{n}");
            }
        }
    }

    #[test]
    fn repeated_blocks_group_by_the_whole_masked_text_not_its_start() {
        let texts = [
            block(40, 1, "done"),
            block(40, 7, "done"),
            block(40, 1, "failed"),
            "short 1".to_string(),
            block(40, 3, "failed"),
            "short 2".to_string(),
            block(40, 1, "done"),
        ];
        let messages: Vec<Message> = texts
            .iter()
            .map(|t| Message {
                role: "system".into(),
                content: t.as_str().into(),
                tool_call_id: None,
            })
            .collect();
        let mut repeats = Repeats::default();
        let seen: Vec<u64> = (0..messages.len())
            .map(|i| repeats.count(i, &messages))
            .collect();
        assert_eq!(seen, [1, 2, 1, 1, 2, 2, 3]);
    }
}
