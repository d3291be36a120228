//! Token usage per model call, estimated from `info.model_stats` totals and the prompt
//! sizes the trajectory shows (`query`, else `history`), and the history itself.

use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::formats::values::{opt_str, str_at, typed, wrong};
use crate::ingest::json::token_count;
use crate::model::{TokenSource, Usage, MAX_TOKENS};
use serde_json::{Map, Value};

pub struct HistoryMessage {
    pub role: String,
    pub content: String,
    pub demo: bool,
}

/// The main agent's messages (`agent` absent, `primary` or `main`) of `history`, and the
/// problems found in it: a `history` that is no array, a message that is no object or has a
/// field of the wrong type (that message is passed over).
pub fn history_of(history: Option<&Value>) -> (Vec<HistoryMessage>, Vec<FieldError>) {
    let mut problems = Vec::new();
    let items = match typed(history, "history", "array", Value::as_array) {
        Ok(items) => items.map(Vec::as_slice).unwrap_or_default(),
        Err(e) => {
            problems.push(e);
            &[]
        }
    };
    let messages = items
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            message(i, m).unwrap_or_else(|e| {
                problems.push(e);
                None
            })
        })
        .collect();
    (messages, problems)
}

/// Message `i` of `history`, when it is the main agent's.
fn message(i: usize, m: &Value) -> Result<Option<HistoryMessage>, FieldError> {
    let m = m
        .as_object()
        .ok_or_else(|| FieldError::new(format!("history[{i}]"), ProblemKind::NotAnObject))?;
    let at = |key: &str| format!("history[{i}].{key}");
    let agent = opt_str(m.get("agent"), &at("agent"))?;
    if !agent.is_none_or(|a| a == "primary" || a == "main") {
        return Ok(None);
    }
    let content = match m.get("content") {
        v @ (None | Some(Value::Null | Value::String(_) | Value::Array(_))) => content_text(v),
        Some(other) => return Err(wrong(at("content"), "string or array", other)),
    };
    Ok(Some(HistoryMessage {
        role: opt_str(m.get("role"), &at("role"))?
            .unwrap_or("user")
            .to_string(),
        content,
        demo: typed(m.get("is_demo"), &at("is_demo"), "boolean", Value::as_bool)?.unwrap_or(false),
    }))
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

/// A run total of `info.model_stats` (`stats`): a number (SWE-agent may write it as a
/// float), `None` when absent; a value that cannot be a token count is a problem.
pub fn total(stats: Option<&Value>, key: &str) -> Result<Option<u64>, FieldError> {
    let Some(v) = stats.and_then(|s| s.get(key)).filter(|v| !v.is_null()) else {
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

/// `info.model_stats.instance_cost`, the run's cost in US dollars as SWE-agent recorded it
/// (priced by LiteLLM from each response); `None` when absent or 0 (SWE-agent writes 0 for
/// a model it could not price, and for runs it did not pay for, such as replays). A value
/// that cannot be a cost is a problem. `stats` is `info.model_stats`.
pub fn cost(stats: Option<&Value>) -> Result<Option<f64>, FieldError> {
    let Some(v) = stats
        .and_then(|s| s.get("instance_cost"))
        .filter(|v| !v.is_null())
    else {
        return Ok(None);
    };
    match v.as_f64() {
        Some(c) if c.is_finite() && c >= 0.0 => Ok((c > 0.0).then_some(c)),
        _ => Err(FieldError::new(
            "info.model_stats.instance_cost",
            ProblemKind::BadValue(format!(
                "expected a cost in US dollars (a finite, non-negative number), found {v}"
            )),
        )),
    }
}

/// The model the run asked, from the configuration 1.x saves beside the trajectory:
/// `replay_config` (a JSON string, or an object) at `agent.model.name`. A `replay_config`
/// or a name of another type is a problem; a string that is no JSON names no model.
pub fn model(doc: &Map<String, Value>) -> Result<Option<String>, FieldError> {
    let parsed;
    let config = match doc.get("replay_config") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v) => {
                parsed = v;
                &parsed
            }
            Err(_) => return Ok(None),
        },
        Some(v @ Value::Object(_)) => v,
        Some(other) => return Err(wrong("replay_config", "string or object", other)),
    };
    let name = str_at(Some(config), "replay_config", &["agent", "model", "name"])?;
    Ok(name
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string))
}

/// Each model call's share of the run's recorded totals: its tokens (all fresh input and
/// output: SWE-agent counts no cache) marked [`TokenSource::Spread`], and its share of
/// `cost` in proportion to its tokens. Exact in sum.
pub fn requests(
    totals: (Option<u64>, Option<u64>),
    cost: Option<f64>,
    calls: &[&Map<String, Value>],
    history: &[HistoryMessage],
) -> Vec<(Option<Usage>, Option<f64>)> {
    let usage: Vec<Option<Usage>> = usage(totals, calls, history)
        .into_iter()
        .map(|u| {
            u.map(|(prompt, completion)| Usage {
                source: TokenSource::Spread,
                ..Usage::totals(prompt, completion)
            })
        })
        .collect();
    let weights: Vec<u64> = usage.iter().map(|u| u.map_or(0, |u| u.total())).collect();
    let costs = match cost {
        Some(c) => spread_cost(c, &weights).into_iter().map(Some).collect(),
        None => vec![None; calls.len()],
    };
    usage.into_iter().zip(costs).collect()
}

/// Estimated `(prompt, completion)` tokens per model call, from the run's totals.
fn usage(
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
pub(crate) fn spread(total: u64, weights: &[u64]) -> Vec<u64> {
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

/// `total` dollars split in proportion to `weights` (evenly if all are 0); what rounding
/// leaves over goes to the largest part, so the parts add up to `total`.
pub(crate) fn spread_cost(total: f64, weights: &[u64]) -> Vec<f64> {
    if weights.is_empty() {
        return Vec::new();
    }
    let even = weights.iter().all(|w| *w == 0);
    let w: Vec<f64> = weights
        .iter()
        .map(|x| if even { 1.0 } else { *x as f64 })
        .collect();
    let sum: f64 = w.iter().sum();
    let mut parts: Vec<f64> = w.iter().map(|x| total * x / sum).collect();
    let left = total - parts.iter().sum::<f64>();
    let largest = (0..parts.len())
        .max_by(|&a, &b| parts[a].total_cmp(&parts[b]).then(b.cmp(&a)))
        .unwrap_or(0);
    parts[largest] = (parts[largest] + left).max(0.0);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cost_spread_adds_up_to_the_total() {
        for (total, weights) in [
            (1.26719, vec![7141, 9000, 11000, 3, 0, 52861]),
            (0.3, vec![0, 0, 0]),
            (0.1, vec![1; 7]),
            (2.5, vec![1, 2]),
        ] {
            let parts = spread_cost(total, &weights);
            assert_eq!(parts.len(), weights.len());
            let sum: f64 = parts.iter().sum();
            assert!((sum - total).abs() <= 1e-12 * total, "{sum} {total}");
            assert!(parts.iter().all(|p| *p >= 0.0));
        }
        assert!(spread_cost(1.0, &[]).is_empty());
        // In proportion to the weights.
        let parts = spread_cost(3.0, &[1, 2]);
        assert!((parts[0] - 1.0).abs() < 1e-12 && (parts[1] - 2.0).abs() < 1e-12);
    }
}
