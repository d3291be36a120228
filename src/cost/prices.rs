//! Token prices by model: a built-in table of the text models the supported agents run
//! (generated from a LiteLLM price file, `super::prices_table`), and `--prices FILE` in the
//! shape of LiteLLM's `model_prices_and_context_window.json` (docs/COUNTERFACTUAL.md,
//! *Money*).
//!
//! A price is US dollars per token for each kind a provider bills: fresh input, cache
//! writes, cache reads and output. A model is found by its exact name, then by the name
//! without a provider prefix (`anthropic/claude-…`), then by a table entry whose name
//! without its prefix is the model's; when two such entries disagree the model stays
//! unpriced (a false split, never a false merge). A model with no price is reported as
//! unpriced, never as free.

use crate::ingest::unique::read_user_file;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// US dollars per token, by kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub cache_write: f64,
    /// A write to a 1-hour cache (Anthropic: twice the input rate); where a provider has
    /// one tier, its cache write rate.
    pub cache_write_1h: f64,
    pub cache_read: f64,
    pub output: f64,
}

impl Price {
    /// From dollars per token: input, cache write, 1-hour cache write, cache read, output.
    pub const fn per_token(
        input: f64,
        cache_write: f64,
        cache_write_1h: f64,
        cache_read: f64,
        output: f64,
    ) -> Self {
        Self {
            input,
            cache_write,
            cache_write_1h,
            cache_read,
            output,
        }
    }

    /// From dollars per million tokens (how vendors list them), one cache write rate.
    #[cfg(test)]
    fn per_million(input: f64, cache_write: f64, cache_read: f64, output: f64) -> Self {
        const M: f64 = 1_000_000.0;
        let write = cache_write / M;
        Self::per_token(input / M, write, write, cache_read / M, output / M)
    }
}

/// The built-in table: list prices of the text models the supported agents run, generated
/// from a LiteLLM price file by `scripts/prices_table.py` ([`super::prices_table`]).
/// Anthropic's cache writes have two tiers (5-minute, 1-hour); OpenAI, Google and DeepSeek
/// bill no cache writes (priced as input). Models routed through aggregators at
/// provider-dependent prices (OpenRouter's Llama 4 Maverick) are left out: give them with
/// `--prices`.
const BUILT_IN: &[(&str, Price)] = super::prices_table::TABLE;

/// `--prices`'s help, with the built-in table's date.
pub fn prices_help() -> String {
    format!(
        "Token prices by model, in the shape of LiteLLM's model_prices_and_context_window.json; \
         added to, and overriding, the built-in table (a LiteLLM price file of {})",
        super::prices_table::DATE
    )
}

/// Where the table came from, for the report.
pub const BUILT_IN_SOURCE: &str = "built-in list prices (LiteLLM price file)";

/// The prices in force: the built-in table, overridden entry by entry by `--prices`.
#[derive(Debug, Clone, PartialEq)]
pub struct Prices {
    by_model: BTreeMap<String, Price>,
}

impl Default for Prices {
    fn default() -> Self {
        Self::built_in()
    }
}

/// Why a price file could not be used; says which file, model and field.
#[derive(Debug, thiserror::Error)]
pub enum PricesError {
    /// The file does not read, or is not JSON.
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{path}: expected an object of models at the top level")]
    NotAnObject { path: String },
    #[error("{path}: model {model:?}: field {field}: {message}")]
    Field {
        path: String,
        model: String,
        field: &'static str,
        message: String,
    },
}

impl Prices {
    pub fn built_in() -> Self {
        Self {
            by_model: BUILT_IN
                .iter()
                .map(|(name, price)| (name.to_string(), *price))
                .collect(),
        }
    }

    /// No prices at all (every model unpriced).
    pub fn none() -> Self {
        Self {
            by_model: BTreeMap::new(),
        }
    }

    /// The built-in table with every model of the LiteLLM-shaped file at `path` added or
    /// replaced. Entries without `input_cost_per_token` and `output_cost_per_token` (image,
    /// audio and embedding models, LiteLLM's `sample_spec`) are not token-priced and are
    /// passed over; a price that is present but not a non-negative number is an error.
    pub fn with_file(mut self, path: &Path) -> Result<Self, PricesError> {
        let shown = path.display().to_string();
        let json = read_user_file(path).map_err(|message| PricesError::File {
            path: shown.clone(),
            message,
        })?;
        let Value::Object(models) = json else {
            return Err(PricesError::NotAnObject { path: shown });
        };
        for (model, entry) in &models {
            if let Some(price) =
                litellm_price(entry).map_err(|(field, message)| PricesError::Field {
                    path: shown.clone(),
                    model: model.clone(),
                    field,
                    message,
                })?
            {
                self.by_model.insert(model.clone(), price);
            }
        }
        Ok(self)
    }

    /// A digest of the whole table, for a report's `replayed` section (issue #32, F).
    pub fn digest(&self) -> String {
        crate::hash::digest(format!("{:?}", self.by_model).as_bytes())
    }

    /// The price of `model`, if the table knows it unambiguously.
    pub fn get(&self, model: &str) -> Option<Price> {
        if let Some(p) = self.by_model.get(model) {
            return Some(*p);
        }
        let bare = unprefixed(model);
        if let Some(p) = self.by_model.get(bare) {
            return Some(*p);
        }
        let mut found = self
            .by_model
            .iter()
            .filter(|(name, _)| unprefixed(name) == bare)
            .map(|(_, p)| *p);
        let first = found.next()?;
        found.all(|p| p == first).then_some(first)
    }
}

/// `provider/model` -> `model`.
fn unprefixed(model: &str) -> &str {
    model.rsplit('/').next().unwrap_or(model)
}

/// One LiteLLM entry's token prices; `None` when it prices no tokens.
fn litellm_price(entry: &Value) -> Result<Option<Price>, (&'static str, String)> {
    let field = |key: &'static str| -> Result<Option<f64>, (&'static str, String)> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err((key, format!("expected a non-negative number, found {v}"))),
            },
        }
    };
    let (Some(input), Some(output)) = (
        field("input_cost_per_token")?,
        field("output_cost_per_token")?,
    ) else {
        return Ok(None);
    };
    // A provider that bills no cache writes lists none: they cost what input costs.
    let cache_write = field("cache_creation_input_token_cost")?.unwrap_or(input);
    Ok(Some(Price {
        input,
        cache_write,
        cache_write_1h: field("cache_creation_input_token_cost_above_1hr")?.unwrap_or(cache_write),
        cache_read: field("cache_read_input_token_cost")?.unwrap_or(input),
        output,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #30, item 6: the current models of the supported agents are priced (Opus 4.6
    /// and Haiku 4.5 were not), Anthropic's with their 1-hour cache write rate.
    #[test]
    fn the_built_in_table_covers_the_current_models() {
        let p = Prices::built_in();
        for model in [
            "claude-opus-4-6",
            "claude-haiku-4-5",
            "claude-sonnet-4-6",
            "gpt-5.1-codex",
            "gemini-2.5-pro",
            "deepseek-chat",
        ] {
            assert!(p.get(model).is_some(), "{model}");
        }
        let opus = p.get("claude-opus-4-6").expect("priced");
        assert_eq!(opus.cache_write_1h, 2.0 * opus.input);
        for (name, price) in BUILT_IN {
            assert!(price.cache_write_1h >= price.cache_write, "{name}");
        }
        assert!(prices_help().contains(super::super::prices_table::DATE));
    }

    #[test]
    fn finds_a_model_with_or_without_its_provider() {
        let p = Prices::built_in();
        assert_eq!(p.get("deepseek-chat"), p.get("deepseek/deepseek-chat"));
        assert!(p.get("deepseek-chat").is_some());
        assert!(p.get("openai/openrouter-llama-4-maverick").is_none());
    }

    #[test]
    fn two_providers_at_different_prices_leave_the_model_unpriced() {
        let mut p = Prices::none();
        p.by_model
            .insert("a/m".into(), Price::per_million(1.0, 1.0, 1.0, 1.0));
        p.by_model
            .insert("b/m".into(), Price::per_million(2.0, 2.0, 2.0, 2.0));
        assert_eq!(p.get("m"), None);
        p.by_model
            .insert("b/m".into(), Price::per_million(1.0, 1.0, 1.0, 1.0));
        assert!(p.get("m").is_some());
    }

    #[test]
    fn litellm_entries_without_token_prices_are_passed_over() {
        let v: Value =
            serde_json::json!({"mode": "image_generation", "input_cost_per_pixel": 1e-8});
        assert_eq!(litellm_price(&v), Ok(None));
        let v: Value =
            serde_json::json!({"input_cost_per_token": "free", "output_cost_per_token": 0});
        assert_eq!(litellm_price(&v).unwrap_err().0, "input_cost_per_token");
        let v: Value =
            serde_json::json!({"input_cost_per_token": 2e-6, "output_cost_per_token": 8e-6});
        let price = litellm_price(&v).unwrap().unwrap();
        assert_eq!(
            price.cache_read, 2e-6,
            "no cache price: cache reads cost input"
        );
    }
}
