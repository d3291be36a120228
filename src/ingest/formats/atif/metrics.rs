//! What ATIF records of each model request (`steps[].metrics`) and of the whole run
//! (`final_metrics`), and how the run totals fill what the steps leave out without
//! counting anything twice.

use super::super::swe_agent::usage::{spread, spread_cost};
use crate::ingest::error::{FieldError, ProblemKind};
use crate::ingest::json::token_count;
use crate::model::{TokenSource, Usage};
use serde_json::{Map, Value};

/// The usage and recorded cost of one request.
pub type Figures = (Option<Usage>, Option<f64>);

/// Cache writes converters keep in `metrics.extra` (Claude Code's, Codex's, Cline's and
/// goose's names); the first present wins. `prompt_tokens` counts them (Claude Code's
/// converter adds them in), as it counts the cached reads.
const CACHE_WRITES: [&str; 3] = [
    "cache_creation_input_tokens",
    "cache_write_input_tokens",
    "cache_write_tokens",
];

/// The same, as `final_metrics.extra` totals.
const TOTAL_CACHE_WRITES: [&str; 2] = [
    "total_cache_creation_input_tokens",
    "total_cache_write_input_tokens",
];

/// A step's `metrics` (at `field`): usage by kind, fresh input being `prompt_tokens` less
/// the cached reads and writes, and `cost_usd`. No usage when neither `prompt_tokens` nor
/// `completion_tokens` is recorded.
pub fn step(metrics: &Value, field: &str) -> Result<Figures, FieldError> {
    let Some(m) = metrics.as_object() else {
        return Err(wrong(field, "object", metrics));
    };
    let at = |k: &str| format!("{field}.{k}");
    let prompt = tokens(m, "prompt_tokens", &at("prompt_tokens"))?;
    let completion = tokens(m, "completion_tokens", &at("completion_tokens"))?;
    let cached = tokens(m, "cached_tokens", &at("cached_tokens"))?.unwrap_or(0);
    let extra = m.get("extra").and_then(Value::as_object);
    let writes = first_count(extra, &CACHE_WRITES, &at("extra"))?.unwrap_or(0);
    let cost = cost(m.get("cost_usd"), &at("cost_usd"))?;
    let usage = (prompt.is_some() || completion.is_some())
        .then(|| usage(prompt.unwrap_or(0), cached, writes, completion.unwrap_or(0)));
    // A cost of 0 beside tokens is a producer that could not price the model (LiteLLM
    // writes 0 then), not a free request: the cost model prices the tokens instead.
    let cost = cost.filter(|c| *c > 0.0 || usage.is_none_or(|u| u.total() == 0));
    Ok((usage, cost))
}

/// Usage by kind from a prompt count that includes the cached reads and writes. Cached
/// tokens above the prompt count mean it left them out: fresh input is then 0.
fn usage(prompt: u64, cached: u64, writes: u64, completion: u64) -> Usage {
    Usage {
        input: prompt.saturating_sub(cached.saturating_add(writes)),
        cache_write: writes,
        cache_write_1h: 0,
        cache_read: cached,
        output: completion,
        source: TokenSource::Recorded,
    }
}

/// `final_metrics`: the run's totals as the producer summed them.
#[derive(Debug, Default, Clone, Copy)]
pub struct Totals {
    pub prompt: Option<u64>,
    pub completion: Option<u64>,
    pub cached: Option<u64>,
    pub writes: Option<u64>,
    /// Includes the sub-agents' cost (the definition says so).
    pub cost: Option<f64>,
}

/// `final_metrics` at `field`, absent fields `None`.
pub fn totals(v: Option<&Value>, field: &str) -> Result<Totals, FieldError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(Totals::default());
    };
    let Some(m) = v.as_object() else {
        return Err(wrong(field, "object", v));
    };
    let at = |k: &str| format!("{field}.{k}");
    Ok(Totals {
        prompt: tokens(m, "total_prompt_tokens", &at("total_prompt_tokens"))?,
        completion: tokens(m, "total_completion_tokens", &at("total_completion_tokens"))?,
        cached: tokens(m, "total_cached_tokens", &at("total_cached_tokens"))?,
        writes: first_count(
            m.get("extra").and_then(Value::as_object),
            &TOTAL_CACHE_WRITES,
            &at("extra"),
        )?,
        cost: cost(m.get("total_cost_usd"), &at("total_cost_usd"))?,
    })
}

/// When no request of a trajectory records usage, its `final_metrics` token totals are
/// spread evenly over its requests (exact in sum, marked spread); otherwise the steps'
/// own figures stand and the totals (their sum) are not read again.
pub fn fill_tokens(requests: &mut [Figures], totals: &Totals) {
    if requests.is_empty() || requests.iter().any(|(u, _)| u.is_some()) {
        return;
    }
    let (Some(prompt), Some(completion)) = (totals.prompt, totals.completion) else {
        return;
    };
    let even = vec![1; requests.len()];
    let cached = spread(totals.cached.unwrap_or(0), &even);
    let writes = spread(totals.writes.unwrap_or(0), &even);
    let prompts = spread(prompt, &even);
    let completions = spread(completion, &even);
    for (i, r) in requests.iter_mut().enumerate() {
        r.0 = Some(Usage {
            source: TokenSource::Spread,
            ..usage(prompts[i], cached[i], writes[i], completions[i])
        });
    }
}

/// The part of the run's recorded cost that no step records (all of it when no step has a
/// `cost_usd`), spread over the requests without a cost in proportion to their tokens, as
/// their recorded cost. Nothing when the steps' costs already reach the total.
pub fn fill_cost(requests: &mut [&mut Figures], total: Option<f64>) {
    let Some(total) = total.filter(|t| *t > 0.0) else {
        return;
    };
    let recorded: f64 = requests.iter().filter_map(|r| r.1).sum();
    let left = total - recorded;
    // Below a millionth of the total, the difference is rounding in the producer's sums.
    if left <= total * 1e-6 {
        return;
    }
    let open: Vec<usize> = (0..requests.len())
        .filter(|&i| requests[i].1.is_none())
        .collect();
    let weights: Vec<u64> = open
        .iter()
        .map(|&i| requests[i].0.map_or(0, |u| u.total()))
        .collect();
    for (part, &i) in spread_cost(left, &weights).into_iter().zip(&open) {
        requests[i].1 = Some(part);
    }
}

fn tokens(m: &Map<String, Value>, key: &str, field: &str) -> Result<Option<u64>, FieldError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) => token_count(n, field).map(Some),
            None => Err(FieldError::new(
                field,
                ProblemKind::BadValue(format!("expected a token count, found {v}")),
            )),
        },
    }
}

fn first_count(
    extra: Option<&Map<String, Value>>,
    keys: &[&str],
    field: &str,
) -> Result<Option<u64>, FieldError> {
    let Some(extra) = extra else { return Ok(None) };
    for key in keys {
        if let Some(n) = tokens(extra, key, &format!("{field}.{key}"))? {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

fn cost(v: Option<&Value>, field: &str) -> Result<Option<f64>, FieldError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(c) if c.is_finite() && c >= 0.0 => Ok(Some(c)),
            _ => Err(FieldError::new(
                field,
                ProblemKind::BadValue(format!(
                    "expected a cost in US dollars (a finite, non-negative number), found {v}"
                )),
            )),
        },
    }
}

pub use super::super::values::wrong;
