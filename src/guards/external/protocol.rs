//! The lines an external guard and hindsight exchange besides the event stream: the
//! hello it is greeted with, and its replies (firings, series points, the done marker).
//! docs/EVENTS.md "Protocol" specifies them; this module owns their shape and checks.

use crate::guards::Effect;
use crate::model::LedgerFamily;
use serde::{Deserialize, Serialize};

/// The protocol's version, in the hello. A change a guard could trip on bumps it.
pub const PROTOCOL: u32 = 1;

#[derive(Debug, Serialize)]
pub struct Hello<'a> {
    pub schema: u32,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub protocol: u32,
    pub guard: &'a str,
    pub settings: &'a serde_json::Value,
}

/// One line a guard writes.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    Firing(FiringReply),
    Point(PointReply),
    Done(DoneReply),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FiringReply {
    pub turn: u32,
    #[serde(default = "main_agent")]
    pub agent: String,
    pub action: String,
    pub effect: EffectReply,
    /// For `suppress` and `shrink`: the tokens a later request (suppress: each one until a
    /// compaction) or this turn's request (shrink) would not have carried.
    pub tokens: Option<u64>,
    pub family: Option<String>,
    pub detail: Option<String>,
    pub subject: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EffectReply {
    Advisory,
    Terminal,
    Suppress,
    Shrink,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointReply {
    pub series: String,
    pub turn: u32,
    pub value: u64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoneReply {
    /// Figures about the run, by name (shown as the guard's metrics).
    #[serde(default)]
    pub metrics: crate::guards::Metrics,
    /// What the project's next session starts with, by family (reports show it as the
    /// run's carry).
    #[serde(default)]
    pub carry: Vec<LedgerFamily>,
    /// Any object: handed back verbatim in the next session's `run_start` (`state`).
    #[serde(default)]
    pub state: Option<serde_json::Map<String, serde_json::Value>>,
}

fn main_agent() -> String {
    "main".to_string()
}

/// Reads one reply line; the error says what is wrong with it.
pub fn parse(line: &[u8]) -> Result<Reply, String> {
    let text = std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?;
    if text.trim().is_empty() {
        return Err("an empty line".into());
    }
    serde_json::from_str(text).map_err(|e| format!("not a reply ({e}): {}", shorten(text)))
}

impl FiringReply {
    /// The effect as the cost model takes it; `tokens` must come with `suppress` and
    /// `shrink` and only with them.
    pub fn effect(&self) -> Result<Effect, String> {
        match (self.effect, self.tokens) {
            (EffectReply::Advisory, None) => Ok(Effect::Advisory),
            (EffectReply::Terminal, None) => Ok(Effect::Terminal),
            (EffectReply::Suppress, Some(tokens)) => Ok(Effect::Suppress { tokens }),
            (EffectReply::Shrink, Some(tokens)) => Ok(Effect::Shrink { tokens }),
            (EffectReply::Suppress | EffectReply::Shrink, None) => {
                Err("a `suppress` or `shrink` firing needs `tokens`".into())
            }
            (_, Some(_)) => Err("`tokens` only goes with `suppress` or `shrink`".into()),
        }
    }
}

/// The first 120 characters of a line, for an error message.
fn shorten(text: &str) -> String {
    match text.char_indices().nth(120) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_and_bad_ones_say_why() {
        let firing = br#"{"type":"firing","turn":4,"action":"abandon","effect":"terminal"}"#;
        let Ok(Reply::Firing(f)) = parse(firing) else {
            panic!("a firing");
        };
        assert_eq!((f.turn, f.agent.as_str()), (4, "main"));
        assert_eq!(f.effect(), Ok(Effect::Terminal));
        let suppress = br#"{"type":"firing","turn":1,"action":"x","effect":"suppress"}"#;
        let Ok(Reply::Firing(f)) = parse(suppress) else {
            panic!("a firing");
        };
        assert!(f.effect().unwrap_err().contains("needs `tokens`"));
        assert!(parse(b"hello").unwrap_err().starts_with("not a reply"));
        assert!(parse(br#"{"type":"firing","turn":1}"#).is_err());
        assert!(parse(br#"{"type":"done","extra":1}"#).is_err());
        assert!(parse(b"  ").unwrap_err().contains("empty"));
        assert!(matches!(parse(br#"{"type":"done"}"#), Ok(Reply::Done(_))));
    }
}
