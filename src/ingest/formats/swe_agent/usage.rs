//! Token usage per model call, estimated from `info.model_stats` totals and the prompt
//! sizes the trajectory shows (`query`, else `history`), and the history itself.

use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::json::token_count;
use crate::model::MAX_TOKENS;
use serde_json::{Map, Value};

pub struct HistoryMessage {
    pub role: String,
    pub content: String,
    pub demo: bool,
}

/// The main agent's messages (`agent` absent, `primary` or `main`).
pub fn history_of(history: Option<&Value>) -> Vec<HistoryMessage> {
    let items = history
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    items
        .iter()
        .filter_map(Value::as_object)
        .filter(|m| {
            m.get("agent")
                .and_then(Value::as_str)
                .is_none_or(|a| a == "primary" || a == "main")
        })
        .map(|m| HistoryMessage {
            role: m
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("user")
                .to_string(),
            content: content_text(m.get("content")),
            demo: m.get("is_demo").and_then(Value::as_bool).unwrap_or(false),
        })
        .collect()
}

/// Message content: a string, or a list of `{type: text, text}` parts.
fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A run total of `info.model_stats`: a number (SWE-agent may write it as a float), `None`
/// when absent; a value that cannot be a token count is a problem.
pub fn total(info: Option<&Value>, key: &str) -> Result<Option<u64>, FieldError> {
    let Some(v) = info
        .and_then(|i| i.get("model_stats"))
        .and_then(|s| s.get(key))
        .filter(|v| !v.is_null())
    else {
        return Ok(None);
    };
    let field = format!("info.model_stats.{key}");
    let bad = |why: String| FieldError::new(&field, ProblemKind::BadValue(why));
    match v.as_u64() {
        Some(n) => token_count(n, &field).map(Some),
        None => match v.as_f64() {
            Some(f) if (0.0..=MAX_TOKENS as f64).contains(&f) => Ok(Some(f as u64)),
            Some(f) => Err(bad(format!("{f} is not a token count"))),
            None => Err(bad(format!("expected a token count, found {v}"))),
        },
    }
}

/// Estimated `(prompt, completion)` tokens per model call, from the run's totals.
pub fn usage(
    totals: (Option<u64>, Option<u64>),
    calls: &[&Map<String, Value>],
    history: &[HistoryMessage],
) -> Vec<Option<(u64, u64)>> {
    let (Some(sent), Some(received)) = totals else {
        return vec![None; calls.len()];
    };
    let chars = |s: &str| s.chars().count() as u64;
    let queries: Option<Vec<u64>> = calls
        .iter()
        .map(|c| match c.get("query") {
            Some(Value::Array(q)) if !q.is_empty() => Some(
                q.iter()
                    .map(|m| chars(&content_text(m.get("content"))))
                    .sum(),
            ),
            _ => None,
        })
        .collect();
    let prompts = queries.unwrap_or_else(|| {
        let mut before = Vec::new();
        let mut carried = 0;
        for m in history {
            if m.role == "assistant" && !m.demo {
                before.push(carried);
            }
            carried += chars(&m.content);
        }
        if before.len() == calls.len() {
            before
        } else {
            vec![1; calls.len()]
        }
    });
    let replies: Vec<u64> = calls
        .iter()
        .map(|c| chars(c.get("response").and_then(Value::as_str).unwrap_or("")))
        .collect();
    spread(sent, &prompts)
        .into_iter()
        .zip(spread(received, &replies))
        .map(Some)
        .collect()
}

/// `total` split in proportion to `weights` (evenly if all are 0): largest remainder,
/// ties to the earlier index, so the parts always sum to `total`.
fn spread(total: u64, weights: &[u64]) -> Vec<u64> {
    let even = weights.iter().all(|w| *w == 0);
    let w: Vec<u128> = weights
        .iter()
        .map(|x| if even { 1 } else { u128::from(*x) })
        .collect();
    let sum: u128 = w.iter().sum();
    if sum == 0 {
        return Vec::new();
    }
    let mut parts: Vec<u64> = w
        .iter()
        .map(|x| (u128::from(total) * x / sum) as u64)
        .collect();
    let mut order: Vec<usize> = (0..w.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(u128::from(total) * w[i] % sum), i));
    let left = total - parts.iter().sum::<u64>();
    for &i in order.iter().take(left as usize) {
        parts[i] += 1;
    }
    parts
}
