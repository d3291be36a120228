//! `artifact_packing`: oversized tool output becomes a preview plus an artifact handle.
//!
//! ## What it checks
//! Every tool result whose output exceeds `max_bytes` (8 KiB, UTF-8 bytes) or `max_lines`
//! (400) would have been packed: the exact output stored as a session artifact, and only a
//! preview of at most 8 KiB and 400 lines plus a resolvable handle returned. Fires `pack`;
//! the characters past the preview would not have been carried by any later request. Small
//! output stays inline. A failed result is packed too, and its preview keeps the head of
//! the output, so the failure stays visible.
//!
//! ## Why it matters
//! One oversized build or test log is carried by every request after it until a
//! compaction; packing caps what it costs each of them while keeping the whole text
//! retrievable.
//!
//! ## Seed
//! seed 003 (`003_fb784470a3878970.txt`), "Work unit 3 — finish toolkit artifact
//! integration": the source baseline ("packs output with `maxLines: 400` and
//! `maxBytes: 8 * 1024`") and behavior contract items 1, 2 and 4.

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::model::tokens_from_chars;
use crate::normalize::outcome::failure_signal;
use crate::normalize::text::head;
use crate::normalize::{NormEvent, Outcome, RunState, Step};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Output larger than this many UTF-8 bytes is packed; also the preview's byte cap.
    pub max_bytes: u64,
    /// Output with more lines than this is packed; also the preview's line cap.
    pub max_lines: u64,
    /// Characters of the handle line that replaces the rest of the output.
    pub handle_chars: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_bytes: 8 * 1024,
            max_lines: 400,
            handle_chars: 64,
        }
    }
}

/// How one oversized output would have been packed.
#[derive(Debug, PartialEq, Eq)]
struct Packed {
    /// Characters the model saw (`outputChars`, else the output's length).
    full: u64,
    /// Characters of the preview kept inline.
    preview: u64,
    /// What the detail says about the size.
    size: String,
    /// Error count of the whole output and of the preview, when the output has one.
    signal: Option<(u32, u32)>,
}

pub struct ArtifactPacking {
    settings: Settings,
    packed: u64,
    chars_packed: u64,
    tokens_suppressed: u64,
}

impl Spec for ArtifactPacking {
    const INFO: GuardInfo = GuardInfo {
        id: "artifact_packing",
        work_order: "pi sweep WU-3",
        seed: "003 work unit 3",
        summary: "a tool output over 8 KiB or 400 lines: preview plus handle",
    };
    type Settings = Settings;

    fn check(s: &Settings) -> Result<(), String> {
        super::at_least("max_bytes", s.max_bytes, 1)?;
        super::at_least("max_lines", s.max_lines, 1)
    }

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            packed: 0,
            chars_packed: 0,
            tokens_suppressed: 0,
        }
    }
}

impl Guard for ArtifactPacking {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        let Step::Result { call, outcome, raw } = &event.step else {
            return;
        };
        let Some(packed) = self.pack(raw.output.as_deref(), outcome) else {
            return;
        };
        let kept = packed.preview.saturating_add(self.settings.handle_chars);
        let tokens = tokens_from_chars(packed.full.saturating_sub(kept));
        let mut detail = format!("{}; preview {} chars + handle", packed.size, packed.preview);
        if !outcome.success {
            detail.push_str("; failed output; preview keeps the failure header");
            if let Some((whole, shown)) = packed.signal {
                detail.push_str(&format!(" (error count {shown} of {whole} in the preview)"));
            }
        }
        firings
            .fire(event.turn, event.agent, "pack", Effect::Suppress { tokens })
            .family(call.families.action.clone())
            .detail(detail)
            .subject(&*call.call_id);
        self.packed += 1;
        self.chars_packed = self
            .chars_packed
            .saturating_add(packed.full.saturating_sub(packed.preview));
        self.tokens_suppressed = self.tokens_suppressed.saturating_add(tokens);
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _state: &RunState, _f: &mut Firings) -> Metrics {
        let mut metrics = Metrics::new();
        metrics.insert("packed".into(), self.packed.into());
        metrics.insert("chars_packed".into(), self.chars_packed.into());
        metrics.insert("tokens_suppressed".into(), self.tokens_suppressed.into());
        metrics
    }
}

impl ArtifactPacking {
    /// The packed form of a result, or `None` when it stays inline.
    fn pack(&self, output: Option<&str>, outcome: &Outcome) -> Option<Packed> {
        let (max_bytes, max_lines) = (self.settings.max_bytes, self.settings.max_lines);
        let Some(text) = output else {
            // Only the size was recorded: characters are a lower bound on bytes.
            return (outcome.chars > max_bytes).then(|| Packed {
                full: outcome.chars,
                preview: max_bytes,
                size: format!(
                    "{} chars, no output text recorded (limit {max_bytes} bytes)",
                    outcome.chars
                ),
                signal: None,
            });
        };
        let bytes = text.len() as u64;
        let lines = line_count(text);
        if bytes <= max_bytes && lines <= max_lines && outcome.chars <= max_bytes {
            return None;
        }
        let head = preview(text, max_bytes, max_lines);
        let signal = failure_signal(text).map(|whole| (whole, failure_signal(head).unwrap_or(0)));
        Some(Packed {
            full: outcome.chars,
            preview: head.chars().count() as u64,
            size: format!(
                "{bytes} bytes, {lines} lines (limits {max_bytes} bytes, {max_lines} lines)"
            ),
            signal,
        })
    }
}

/// Lines in `text`, as `str::lines().count()` gives them: its newlines, and one more for a
/// last line with none. Counted with memchr, since every tool output passes here.
fn line_count(text: &str) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    (newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))) as u64
}

/// The head of `text` a packed result keeps: its first `max_lines` lines, cut to at most
/// `max_bytes` bytes at a character boundary.
fn preview(text: &str, max_bytes: u64, max_lines: u64) -> &str {
    let by_lines: usize = text
        .split_inclusive('\n')
        .take(usize::try_from(max_lines).unwrap_or(usize::MAX))
        .map(str::len)
        .sum();
    head(
        text,
        by_lines.min(usize::try_from(max_bytes).unwrap_or(usize::MAX)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_cuts_lines_then_bytes_at_a_char_boundary() {
        assert_eq!(preview("a\nb\nc\n", 100, 2), "a\nb\n");
        assert_eq!(preview("abcdef", 4, 400), "abcd");
        // `é` is two bytes: a cut inside it moves back.
        assert_eq!(preview("aé", 2, 400), "a");
        assert_eq!(preview("", 0, 0), "");
    }

    #[test]
    fn lines_are_counted_as_str_lines_counts_them() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\nb",
            "a\r\nb\r\n",
            "\n\n",
            "é\nx\n\ny",
        ] {
            assert_eq!(line_count(text), text.lines().count() as u64, "{text:?}");
        }
    }

    fn outcome(text: &str) -> Outcome {
        Outcome {
            chars: text.chars().count() as u64,
            signal: crate::normalize::outcome::diagnostic_signal(text, false),
            ..Outcome::default()
        }
    }

    #[test]
    fn packs_only_past_a_limit() {
        let guard = ArtifactPacking::new(Settings::default());
        let at_limit = "x\n".repeat(400);
        assert_eq!(guard.pack(Some(&at_limit), &outcome(&at_limit)), None);
        let over = "x\n".repeat(401);
        let packed = guard.pack(Some(&over), &outcome(&over)).expect("packed");
        assert_eq!((packed.full, packed.preview), (802, 800));
        // Multi-byte text: 3000 characters are 9000 bytes, over 8 KiB.
        let wide = "✓".repeat(3000);
        let packed = guard.pack(Some(&wide), &outcome(&wide)).expect("packed");
        assert_eq!((packed.full, packed.preview), (3000, 2730));
    }

    #[test]
    fn size_only_results_pack_on_characters() {
        let guard = ArtifactPacking::new(Settings::default());
        let mut o = Outcome {
            chars: 8192,
            ..Outcome::default()
        };
        assert_eq!(guard.pack(None, &o), None);
        o.chars = 20_000;
        let packed = guard.pack(None, &o).expect("packed");
        assert_eq!((packed.full, packed.preview), (20_000, 8192));
    }
}
