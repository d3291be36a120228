//! The event model: what a recorded run *is*, independent of how it was stored.
//!
//! Everything downstream (normalization, guards, replay, cost, reports) speaks these
//! types; nothing here does I/O. Field names follow the harness's own vocabulary
//! (turn, frame, directive, ledger) as the omnius dumps use it (docs/FORMAT.md).

use std::fmt;

/// Where an event sits in its run: the model request it belongs to and who made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    /// Model request index within the run (the harness's `turn`).
    pub turn: u32,
    /// Order within the file (the record's `seq`, else its line number).
    pub seq: u64,
    /// Session number as recorded (default 1).
    pub session: u32,
    /// `main` for the primary agent, anything else is a sub-agent kept apart.
    pub agent: String,
}

/// One recorded tool invocation.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub call_id: String,
    pub tool: String,
    /// Arguments as recorded; keys are sorted so the canonical form is stable. Shared with
    /// the normalized call ([`crate::normalize::CallInfo::args`]) rather than copied.
    pub args: std::sync::Arc<serde_json::Map<String, serde_json::Value>>,
    pub cwd: Option<String>,
}

/// The outcome the harness recorded for a tool call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResult {
    pub call_id: String,
    pub success: bool,
    pub error_class: Option<String>,
    /// Shared with the other results whose output is the same text.
    pub output: Option<Text>,
    /// Size of the output the model saw; may be present without `output`.
    pub output_chars: Option<u64>,
    pub duration_ms: Option<u64>,
    /// `true` when the call changed files.
    pub mutation: Option<bool>,
    pub paths: Vec<String>,
    /// `true` when the harness itself classified the call as verification evidence.
    pub verification: Option<bool>,
}

impl ToolResult {
    /// Characters the result put into the context window.
    pub fn chars(&self) -> u64 {
        self.output_chars
            .or_else(|| self.output.as_ref().map(Text::char_count))
            .unwrap_or(0)
    }
}

/// Where a token figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub enum TokenSource {
    /// Recorded for this request by the harness or the provider.
    #[default]
    Recorded,
    /// A total the log records for the whole run, spread over its requests by hindsight:
    /// the total is recorded, each request's share is an estimate.
    Spread,
    /// Estimated by hindsight (characters / 4, a frame's own estimate).
    Estimated,
}

impl TokenSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Recorded => "recorded",
            Self::Spread => "spread",
            Self::Estimated => "estimated",
        }
    }
}

/// The tokens of one model request, by kind, as providers bill them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Prompt tokens read fresh (neither written to nor read from a cache).
    pub input: u64,
    /// Prompt tokens written to the provider's prompt cache.
    pub cache_write: u64,
    /// Of `cache_write`, the tokens written to a 1-hour cache, billed at their own rate
    /// (Anthropic's `cache_creation.ephemeral_1h_input_tokens`); 0 where the log does not
    /// say (every write then at the 5-minute rate).
    pub cache_write_1h: u64,
    /// Prompt tokens read from the provider's prompt cache.
    pub cache_read: u64,
    /// Completion tokens.
    pub output: u64,
    pub source: TokenSource,
}

impl Usage {
    /// A recorded request known only by its prompt and completion totals.
    pub fn totals(prompt: u64, completion: u64) -> Self {
        Self {
            input: prompt,
            output: completion,
            ..Self::default()
        }
    }

    /// Every prompt token, cached or not.
    pub fn prompt(&self) -> u64 {
        sum_tokens([self.input, self.cache_write, self.cache_read])
    }

    pub fn total(&self) -> u64 {
        sum_tokens([self.prompt(), self.output])
    }

    /// Component-wise sum (saturating); the source is the weakest of the two.
    pub fn add(&self, other: &Usage) -> Usage {
        Usage {
            input: self.input.saturating_add(other.input),
            cache_write: self.cache_write.saturating_add(other.cache_write),
            cache_write_1h: self.cache_write_1h.saturating_add(other.cache_write_1h),
            cache_read: self.cache_read.saturating_add(other.cache_read),
            output: self.output.saturating_add(other.output),
            source: self.source.max(other.source),
        }
    }
}

/// One model request as the log records it: each figure only when recorded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Request {
    pub usage: Option<Usage>,
    /// The model asked (prices are by model).
    pub model: Option<String>,
    /// What the request cost in US dollars, as the harness recorded it.
    pub cost_usd: Option<f64>,
}

/// A focus-supervisor (or other guard) instruction the harness injected.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Directive {
    pub source: String,
    pub required_next_action: String,
    pub family: Option<String>,
    pub state: Option<String>,
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Todo {
    pub id: String,
    pub parent_id: Option<String>,
    pub status: String,
    pub content: String,
    pub verify_command: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    SessionStart {
        cwd: Option<String>,
    },
    ToolCall(ToolCall),
    ToolResult(ToolResult),
    /// A model request (a turn).
    ModelRequest(Request),
    Directive(Directive),
    Dedup {
        call_id: Option<String>,
        family: Option<String>,
    },
    Compaction {
        before_tokens: u64,
        after_tokens: u64,
    },
    TodoWrite {
        todos: Vec<Todo>,
    },
    TaskComplete {
        status: String,
        summary: String,
    },
    /// A record type this version does not know; kept so it is counted, not lost.
    Unknown {
        type_name: String,
    },
}

impl EventKind {
    /// The recorded usage, for a model request that has one.
    pub fn usage(&self) -> Option<&Usage> {
        match self {
            Self::ModelRequest(r) => r.usage.as_ref(),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub at: At,
    pub kind: EventKind,
}

/// One message of a context-window frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: Text,
    /// The tool call a `tool` message answers, when the dump links it.
    pub tool_call_id: Option<Text>,
}

/// Who a message is from. Every frame repeats its messages' roles, so the roles formats
/// use are shared statics rather than a string allocated per message ([`role`]).
pub type Role = std::borrow::Cow<'static, str>;

/// The [`Role`] named `name`.
pub fn role(name: &str) -> Role {
    match name {
        "system" => Role::Borrowed("system"),
        "user" => Role::Borrowed("user"),
        "assistant" => Role::Borrowed("assistant"),
        "tool" => Role::Borrowed("tool"),
        other => Role::Owned(other.to_string()),
    }
}

/// A message's text, shared rather than copied, with its length in characters.
///
/// Frames are most of what a recording holds, and their text is only inspected, so a
/// frame read from disk keeps the document it was parsed from and each message is a span
/// of it ([`Text::span`]): reading a frame copies none of its text. Text from elsewhere
/// (an importer's history, shared by every later frame) is one shared string. Either way
/// a clone is a reference count, and the character count (the token estimate's input) is
/// taken once.
#[derive(Clone)]
pub struct Text {
    shared: TextBuf,
    chars: u64,
}

#[derive(Clone)]
enum TextBuf {
    Own(std::sync::Arc<str>),
    Span {
        doc: std::sync::Arc<String>,
        start: usize,
        end: usize,
    },
}

impl Text {
    /// `doc[start..end]`, or `None` when that is not a span of whole characters of `doc`.
    pub fn span(doc: &std::sync::Arc<String>, start: usize, end: usize) -> Option<Self> {
        let text = doc.get(start..end)?;
        Some(Self {
            chars: char_count(text),
            shared: TextBuf::Span {
                doc: std::sync::Arc::clone(doc),
                start,
                end,
            },
        })
    }

    pub fn as_str(&self) -> &str {
        match &self.shared {
            TextBuf::Own(s) => s,
            TextBuf::Span { doc, start, end } => &doc[*start..*end],
        }
    }

    /// Characters (Unicode scalar values), as `str::chars().count()` gives them.
    pub fn char_count(&self) -> u64 {
        self.chars
    }
}

/// Characters in `s`, as `s.chars().count()` gives them: the bytes that start one, which
/// are all but UTF-8's continuation bytes (`0b10xx_xxxx`).
///
/// Every message of every frame is counted, so this is one of replay's few passes over all
/// of a recording's text: it counts 128 bytes at a time into a byte-sized sum, a loop the
/// compiler turns into vector instructions, at under half the work of `std`'s count,
/// which goes a word at a time.
pub fn char_count(s: &str) -> u64 {
    let (blocks, rest) = s.as_bytes().as_chunks::<128>();
    let in_blocks: usize = blocks.iter().map(|b| usize::from(starts(b))).sum();
    (in_blocks + usize::from(starts(rest))) as u64
}

/// The characters that start in `bytes`, at most 128 of them (so the sum fits a byte).
fn starts(bytes: &[u8]) -> u8 {
    // A byte starts a character unless it is a continuation byte, -64..=-1 as an `i8`.
    bytes.iter().fold(0, |n, &b| n + u8::from(b as i8 >= -0x40))
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Self {
            chars: char_count(s),
            shared: TextBuf::Own(s.into()),
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Self::from(s.as_str())
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A context-window frame: what the harness sent the model at one turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub turn: u32,
    pub agent: String,
    pub estimated_tokens: Option<u64>,
    pub system_prompt_chars: Option<u64>,
    pub messages: Vec<Message>,
    /// `signalToNoise.ratio`; `None` when the harness left it `null`.
    pub signal_to_noise: Option<f64>,
    /// File the frame came from, for located messages.
    pub source: String,
}

impl Frame {
    /// Characters across all messages (the fallback token estimate's input).
    pub fn chars(&self) -> u64 {
        self.messages.iter().map(|m| m.content.char_count()).sum()
    }
}

/// Status of a completion ledger, as recorded or as finalized from evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LedgerStatus {
    Open,
    Completed,
    IncompleteVerification,
    /// Something ran after the last code change, but no output said whether it passed
    /// (issue #28): checked, without a verdict.
    Unverifiable,
    /// No `completion-ledger.json` was recorded for the run.
    Missing,
}

impl LedgerStatus {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "open" => Some(Self::Open),
            "completed" => Some(Self::Completed),
            "incomplete_verification" => Some(Self::IncompleteVerification),
            "unverifiable" => Some(Self::Unverifiable),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Completed => "completed",
            Self::IncompleteVerification => "incomplete_verification",
            Self::Unverifiable => "unverifiable",
            Self::Missing => "missing",
        }
    }
}

impl fmt::Display for LedgerStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One family entry of the project's recorded `convergence-ledger.json`.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LedgerFamily {
    pub family: String,
    pub rounds: u32,
}

/// Identity of a run: the project it belongs to and its id (epoch-ms prefixed).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunId {
    pub project: String,
    pub run_id: String,
}

/// Characters per token when a count has to be estimated from text (docs/COUNTERFACTUAL.md).
pub const CHARS_PER_TOKEN: u64 = 4;

/// Token estimate for `chars` characters, rounded up so non-empty text is never free.
pub fn tokens_from_chars(chars: u64) -> u64 {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// The largest recorded token count accepted: 2^53 - 1, the end of the range in which JSON
/// numbers are exact everywhere (RFC 8259, section 6; JavaScript's
/// `Number.MAX_SAFE_INTEGER`). A larger value is damage (a `-1` written unsigned, an
/// overflow in the harness), not tokens a model was sent (docs/FORMAT.md, *Values*).
pub const MAX_TOKENS: u64 = (1 << 53) - 1;

/// A sum of token counts that stops at `u64::MAX` rather than wrapping: sums of many
/// valid counts cannot reach it, and damage must never turn into a small number.
pub fn sum_tokens(counts: impl IntoIterator<Item = u64>) -> u64 {
    counts.into_iter().fold(0, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chars_are_counted_as_std_counts_them() {
        let pieces = ["a", "é", "—", "𝄞", "\n", "0"];
        for n in 0..600 {
            let text: String = (0..n).map(|i| pieces[(i * 7 + n) % pieces.len()]).collect();
            assert_eq!(char_count(&text), text.chars().count() as u64, "{n}");
            // Every start within a block, against its boundaries.
            for skip in 1..4.min(text.len()) {
                if let Some(tail) = text.get(skip..) {
                    assert_eq!(char_count(tail), tail.chars().count() as u64, "{n} {skip}");
                }
            }
        }
        assert_eq!(char_count(&"é".repeat(128)), 128);
    }
}
