//! `tool_selector`: the observe-only expected-utility tool selector, replayed.
//!
//! ## What it checks
//! Keeps the seed's per-key statistics for every executed call of the main agent, keyed by
//! (intent class, tool): a Beta success posterior, latency and absolute-deviation EWMAs,
//! argument/output token-estimate EWMAs, failure and sample counts. At the first tool call of
//! each turn it ranks the tools of that call's intent seen so far in the run, plus `no_tool`,
//! by expected utility, and recommends one, shortlists three or abstains, as the seed's score
//! contract says. It compares that with the tool actually used and fires an advisory
//! `recommend_other` when the recommendation differed and the used tool failed. Telemetry
//! records no host fingerprint or model ref, so those key parts are constant: the store is
//! the run's own, and tools are the names the run recorded (no name is special-cased).
//!
//! ## Why it matters
//! The selector is meant to improve tool choice from measured outcomes without an LLM judge;
//! replaying it shows how often it would have agreed with the model (match rate, shortlist
//! hits, abstentions) and where a measured alternative existed when the chosen tool failed.
//! It is diagnostics only: no hint is injected, so every firing is advisory and saves nothing.
//!
//! ## Seed
//! seed 003 (`003_fb784470a3878970.txt`), "Work unit 4 — add an observe-only expected-utility
//! tool selector": data contract, candidate and score contract, constants.

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::model::{tokens_from_chars, ToolResult};
use crate::normalize::{CallInfo, NormEvent, Outcome, RunState, Step, ToolKind};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The primary agent; sub-agents may run another model, so their outcomes stay out.
const MAIN: &str = "main";
/// How the `no_tool` candidate is named in decisions and details.
const NO_TOOL: &str = "no_tool";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    pub lambda_latency: f64,
    pub lambda_tokens: f64,
    pub lambda_risk: f64,
    pub lambda_context: f64,
    /// Latency that costs 1 (normalized cost saturates there).
    pub latency_scale_ms: f64,
    /// Estimated tokens that cost 1.
    pub token_scale: f64,
    /// Samples the best tool needs unless it is a deterministic match.
    pub min_evidence: u64,
    /// The best must beat the second by more than this to be recommended.
    pub min_margin: f64,
    /// Normalized entropy at or above which the field is too flat to recommend.
    pub high_entropy: f64,
    pub ewma_alpha: f64,
    pub shortlist_size: usize,
    /// Risk cost in [0, 1] by intent class (missing: 0).
    pub risk: BTreeMap<String, f64>,
    /// Value of answering without a tool, by intent class (missing: 0).
    pub no_tool_value: BTreeMap<String, f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            lambda_latency: 0.15,
            lambda_tokens: 0.10,
            lambda_risk: 0.20,
            lambda_context: 0.10,
            latency_scale_ms: 5000.0,
            token_scale: 1000.0,
            min_evidence: 3,
            min_margin: 0.10,
            high_entropy: 0.85,
            ewma_alpha: 0.25,
            shortlist_size: 3,
            risk: [("write", 1.0), ("execute", 0.5)]
                .map(|(k, v)| (k.to_string(), v))
                .into(),
            no_tool_value: [("explain", 0.2), ("other", 0.2)]
                .map(|(k, v)| (k.to_string(), v))
                .into(),
        }
    }
}

/// The seed's intent class of a call, from its kind and argument shape only. `explain` has
/// no call shape (it is the answer without a tool), so no call maps to it.
fn intent(call: &CallInfo) -> &'static str {
    let names_url = ["url", "uri"]
        .iter()
        .any(|k| call.args.get(*k).is_some_and(Value::is_string));
    match call.kind {
        ToolKind::Read => "read",
        ToolKind::Search => "search",
        ToolKind::Shell => "execute",
        ToolKind::Edit | ToolKind::Write => "write",
        // A call of no known kind that names a URL fetches something.
        ToolKind::Other if names_url => "retrieve",
        _ => "other",
    }
}

/// One key's statistics, as the seed's data contract lists them. The Beta posterior starts
/// at alpha = beta = 1: alpha is 1 + successes, beta is 1 + failures.
#[derive(Debug, Clone, Default, PartialEq)]
struct Stats {
    successes: u64,
    failures: u64,
    latency_ewma_ms: Option<f64>,
    latency_deviation_ewma_ms: f64,
    /// Estimates (characters / 4) of the arguments and of the output.
    input_tokens_ewma: Option<f64>,
    output_tokens_ewma: Option<f64>,
}

/// One observed execution, reduced to what the store keeps.
struct Sample {
    success: bool,
    latency_ms: Option<f64>,
    input_tokens: f64,
    output_tokens: Option<f64>,
}

impl Stats {
    fn alpha(&self) -> f64 {
        1.0 + self.successes as f64
    }
    fn beta(&self) -> f64 {
        1.0 + self.failures as f64
    }
    fn samples(&self) -> u64 {
        self.successes + self.failures
    }

    fn record(&mut self, s: &Sample, a: f64) {
        if s.success {
            self.successes += 1;
        } else {
            self.failures += 1;
        }
        if let Some(ms) = s.latency_ms {
            let prev = self.latency_ewma_ms;
            self.latency_deviation_ewma_ms =
                deviation_ewma(prev, self.latency_deviation_ewma_ms, ms, a);
            self.latency_ewma_ms = Some(ewma(prev, ms, a));
        }
        self.input_tokens_ewma = Some(ewma(self.input_tokens_ewma, s.input_tokens, a));
        if let Some(t) = s.output_tokens {
            self.output_tokens_ewma = Some(ewma(self.output_tokens_ewma, t, a));
        }
    }

    /// The key as the metrics show it: counts, and EWMAs rounded to whole ms and tokens.
    fn summary(&self) -> Value {
        let round = |x: Option<f64>| x.map(|v| v.round() as u64);
        let deviation = self.latency_ewma_ms.map(|_| self.latency_deviation_ewma_ms);
        json!({
            "samples": self.samples(),
            "failures": self.failures,
            "alpha": self.successes + 1,
            "beta": self.failures + 1,
            "success_permille": milli(posterior_mean(self.alpha(), self.beta())),
            "latency_ewma_ms": round(self.latency_ewma_ms),
            "latency_deviation_ewma_ms": round(deviation),
            "input_token_estimate_ewma": round(self.input_tokens_ewma),
            "output_token_estimate_ewma": round(self.output_tokens_ewma),
        })
    }
}

/// A ranked candidate: a tool of the intent, or `no_tool` (`tool: None`).
#[derive(Debug, Clone, PartialEq)]
struct Candidate {
    tool: Option<String>,
    utility: f64,
    samples: u64,
}

impl Candidate {
    fn name(&self) -> &str {
        self.tool.as_deref().unwrap_or(NO_TOOL)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Decision {
    Recommend(Candidate),
    Shortlist(Vec<Candidate>),
    Abstain,
}

/// The per-run comparison counts (the seed's metrics), all reported even when zero.
const COUNTS: [&str; 9] = [
    "first_tool_calls",
    "first_tool_successes",
    "recommendations",
    "matches",
    "mismatches",
    "shortlists",
    "shortlist_hits",
    "abstentions",
    "wrong_tool_failures",
];

pub struct ToolSelector {
    settings: Settings,
    /// The run's store, keyed by (intent class, tool).
    stats: BTreeMap<(&'static str, String), Stats>,
    /// (session, turn) of the main agent's last first call.
    last_turn: Option<(u32, u32)>,
    /// First calls awaiting their result: the recommendation they did not follow, if any.
    pending: BTreeMap<std::sync::Arc<str>, Option<Candidate>>,
    counts: BTreeMap<&'static str, u64>,
}

impl Spec for ToolSelector {
    const INFO: GuardInfo = GuardInfo {
        id: "tool_selector",
        work_order: "pi sweep WU-4",
        seed: "003 work unit 4",
        summary: "expected-utility tool choice vs the first tool of each turn (observe-only)",
    };
    type Settings = Settings;

    fn check(s: &Settings) -> Result<(), String> {
        let weights = [
            ("lambda_latency", s.lambda_latency),
            ("lambda_tokens", s.lambda_tokens),
            ("lambda_risk", s.lambda_risk),
            ("lambda_context", s.lambda_context),
            ("min_margin", s.min_margin),
            ("high_entropy", s.high_entropy),
        ];
        for (key, value) in weights {
            super::within(key, value, 0.0, f64::MAX)?;
        }
        for (key, value) in [
            ("latency_scale_ms", s.latency_scale_ms),
            ("token_scale", s.token_scale),
        ] {
            super::within(key, value, f64::MIN_POSITIVE, f64::MAX)?;
        }
        super::within("ewma_alpha", s.ewma_alpha, f64::MIN_POSITIVE, 1.0)
    }

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            stats: BTreeMap::new(),
            last_turn: None,
            pending: BTreeMap::new(),
            counts: COUNTS.iter().map(|k| (*k, 0)).collect(),
        }
    }
}

impl Guard for ToolSelector {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, run: &RunState, firings: &mut Firings) {
        match &event.step {
            Step::Call(call)
                if &*call.agent == MAIN && self.last_turn != Some((event.session, event.turn)) =>
            {
                self.last_turn = Some((event.session, event.turn));
                self.first_call(call);
            }
            // A result with no recorded call has no tool identity to learn from.
            Step::Result { call, outcome, raw }
                if &*call.agent == MAIN && run.call(&call.call_id).is_some() =>
            {
                self.conclude(call, outcome, firings);
                self.record(call, outcome, raw);
            }
            _ => {}
        }
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _: &RunState, _: &mut Firings) -> Metrics {
        let mut m: Metrics = self
            .counts
            .iter()
            .map(|(k, v)| (k.to_string(), Value::from(*v)))
            .collect();
        let (matches, recs) = (self.counts["matches"], self.counts["recommendations"]);
        let rate = (recs > 0).then(|| matches * 1000 / recs);
        m.insert("match_rate_permille".into(), rate.into());
        let stats = self
            .stats
            .iter()
            .map(|((intent, tool), s)| (format!("{intent}:{tool}"), s.summary()));
        m.insert("stats".into(), Value::Object(stats.collect()));
        m
    }
}

impl ToolSelector {
    fn count(&mut self, key: &'static str) {
        *self.counts.entry(key).or_default() += 1;
    }

    /// Decides at a turn's first call, from the statistics of earlier results only.
    fn first_call(&mut self, call: &CallInfo) {
        let ranked = rank(self.candidates(intent(call)));
        let used = Some(call.tool.as_str());
        self.count("first_tool_calls");
        let mut other = None;
        match decide(&ranked, &self.settings) {
            Decision::Recommend(best) => {
                self.count("recommendations");
                if best.tool.as_deref() == used {
                    self.count("matches");
                } else {
                    self.count("mismatches");
                    other = Some(best);
                }
            }
            Decision::Shortlist(list) => {
                self.count("shortlists");
                if list.iter().any(|c| c.tool.as_deref() == used) {
                    self.count("shortlist_hits");
                }
            }
            Decision::Abstain => self.count("abstentions"),
        }
        self.pending.insert(call.call_id.clone(), other);
    }

    /// The first call's outcome: success counts; a failure against a recommendation fires.
    fn conclude(&mut self, call: &CallInfo, outcome: &Outcome, firings: &mut Firings) {
        let Some(other) = self.pending.remove(&call.call_id) else {
            return;
        };
        if outcome.success {
            self.count("first_tool_successes");
            return;
        }
        let Some(best) = other else { return };
        self.count("wrong_tool_failures");
        let detail = format!(
            "recommended {} (U={}), used {} which failed",
            best.name(),
            fixed3(milli(best.utility)),
            call.tool
        );
        firings
            .fire(call.turn, &call.agent, "recommend_other", Effect::Advisory)
            .family(call.families.action.clone())
            .detail(detail);
    }

    /// Updates the key's statistics with an execution (every main-agent result).
    fn record(&mut self, call: &CallInfo, outcome: &Outcome, raw: &ToolResult) {
        let args = serde_json::to_string(&*call.args).map_or(0, |s| s.chars().count() as u64);
        let observable = raw.output.is_some() || raw.output_chars.is_some();
        let sample = Sample {
            success: outcome.success,
            latency_ms: raw.duration_ms.map(|d| d as f64),
            input_tokens: tokens_from_chars(args) as f64,
            output_tokens: observable.then(|| tokens_from_chars(outcome.chars) as f64),
        };
        let alpha = self.settings.ewma_alpha;
        let key = (intent(call), call.tool.clone());
        self.stats.entry(key).or_default().record(&sample, alpha);
    }

    /// The intent's tools seen so far in the run, and `no_tool`.
    fn candidates(&self, intent: &str) -> Vec<Candidate> {
        let s = &self.settings;
        let risk = s.risk.get(intent).copied().unwrap_or(0.0);
        let mut out: Vec<Candidate> = self
            .stats
            .iter()
            .filter(|((i, _), _)| *i == intent)
            .map(|((_, tool), st)| Candidate {
                tool: Some(tool.clone()),
                utility: utility(st, 1.0, risk, s),
                samples: st.samples(),
            })
            .collect();
        // Zero costs, no success to measure: its utility is the intent's fixed value.
        out.push(Candidate {
            tool: None,
            utility: s.no_tool_value.get(intent).copied().unwrap_or(0.0),
            samples: 0,
        });
        out
    }
}

// ------------------------------------------------------------------ pure math

fn ewma(prev: Option<f64>, x: f64, a: f64) -> f64 {
    prev.map_or(x, |p| p + a * (x - p))
}

/// Absolute-deviation EWMA, measured against the mean before this sample.
fn deviation_ewma(prev_mean: Option<f64>, dev: f64, x: f64, a: f64) -> f64 {
    prev_mean.map_or(0.0, |p| dev + a * ((x - p).abs() - dev))
}

/// The Beta posterior's mean: the success probability.
fn posterior_mean(alpha: f64, beta: f64) -> f64 {
    let n = alpha + beta;
    if n > 0.0 {
        alpha / n
    } else {
        0.5
    }
}

/// A cost input scaled into [0, 1]; missing, negative or NaN inputs cost nothing.
fn normalized(x: f64, scale: f64) -> f64 {
    if scale > 0.0 && x > 0.0 {
        (x / scale).min(1.0)
    } else {
        0.0
    }
}

/// U = P·value − λl·latency − λt·tokens − λr·risk − λc·context, each cost in [0, 1].
/// Tokens are arguments plus output (what the call spends); context is the output alone
/// (what stays in the window).
fn utility(st: &Stats, value: f64, risk: f64, s: &Settings) -> f64 {
    let output = st.output_tokens_ewma.unwrap_or(0.0);
    let spent = st.input_tokens_ewma.unwrap_or(0.0) + output;
    posterior_mean(st.alpha(), st.beta()) * value
        - s.lambda_latency * normalized(st.latency_ewma_ms.unwrap_or(0.0), s.latency_scale_ms)
        - s.lambda_tokens * normalized(spent, s.token_scale)
        - s.lambda_risk * normalized(risk, 1.0)
        - s.lambda_context * normalized(output, s.token_scale)
}

/// Best first; equal utilities by name, so the order never depends on insertion.
fn rank(mut candidates: Vec<Candidate>) -> Vec<Candidate> {
    candidates.sort_by(|a, b| {
        b.utility
            .total_cmp(&a.utility)
            .then_with(|| a.name().cmp(b.name()))
    });
    candidates
}

/// Entropy of the positive utilities normalized to a distribution, over ln(candidates):
/// 0 when one candidate holds all the value, 1 when all hold it equally. `None` when no
/// utility is positive.
fn normalized_entropy(utilities: &[f64]) -> Option<f64> {
    let total: f64 = utilities.iter().map(|u| u.max(0.0)).sum();
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    if utilities.len() < 2 {
        return Some(0.0);
    }
    let h: f64 = utilities
        .iter()
        .map(|u| u.max(0.0) / total)
        .filter(|p| *p > 0.0)
        .map(|p| -p * p.ln())
        .sum();
    Some(h / (utilities.len() as f64).ln())
}

/// The score contract's step 5 over a ranked list.
fn decide(ranked: &[Candidate], s: &Settings) -> Decision {
    let tools = ranked.iter().filter(|c| c.tool.is_some()).count();
    let (Some(best), Some(second)) = (ranked.first(), ranked.get(1)) else {
        return Decision::Abstain;
    };
    if tools == 0 || best.utility.is_nan() || best.utility <= 0.0 {
        return Decision::Abstain;
    }
    let utilities: Vec<f64> = ranked.iter().map(|c| c.utility).collect();
    let flat = normalized_entropy(&utilities).is_some_and(|h| h >= s.high_entropy);
    if flat || best.utility - second.utility <= s.min_margin {
        return Decision::Shortlist(ranked.iter().take(s.shortlist_size).cloned().collect());
    }
    // `no_tool`'s value is fixed, and a lone measured tool is the intent's only match.
    let deterministic = best.tool.is_none() || tools == 1;
    if best.samples >= s.min_evidence || deterministic {
        Decision::Recommend(best.clone())
    } else {
        Decision::Abstain
    }
}

/// A float as a fixed integer in thousandths (the only form floats reach output in).
fn milli(x: f64) -> i64 {
    (x * 1000.0).round() as i64
}

/// Thousandths written as a decimal with three places, by integer arithmetic.
fn fixed3(m: i64) -> String {
    let sign = if m < 0 { "-" } else { "" };
    format!(
        "{sign}{}.{:03}",
        m.unsigned_abs() / 1000,
        m.unsigned_abs() % 1000
    )
}

#[cfg(test)]
mod tests {
    //! The seed's "Pure math" tests: posterior, normalization, positive-best, tie/entropy
    //! shortlist, evidence threshold, deterministic override, and `no_tool`.
    use super::*;

    fn cand(tool: Option<&str>, utility: f64, samples: u64) -> Candidate {
        let tool = tool.map(str::to_string);
        Candidate {
            tool,
            utility,
            samples,
        }
    }

    fn names(list: &[Candidate]) -> Vec<&str> {
        list.iter().map(Candidate::name).collect()
    }

    fn sample(success: bool, ms: u64, output_tokens: u64) -> Sample {
        Sample {
            success,
            latency_ms: Some(ms as f64),
            input_tokens: 10.0,
            output_tokens: Some(output_tokens as f64),
        }
    }

    #[test]
    fn posterior_starts_at_one_one_and_counts_outcomes() {
        let mut st = Stats::default();
        assert_eq!((st.alpha(), st.beta()), (1.0, 1.0));
        assert_eq!(posterior_mean(st.alpha(), st.beta()), 0.5);
        for ok in [true, true, true, false] {
            st.record(&sample(ok, 1000, 100), 0.25);
        }
        assert_eq!(
            (st.alpha(), st.beta(), st.samples(), st.failures),
            (4.0, 2.0, 4, 1)
        );
        assert_eq!(milli(posterior_mean(st.alpha(), st.beta())), 667);
    }

    #[test]
    fn latency_ewma_and_absolute_deviation_use_alpha_quarter() {
        let mut st = Stats::default();
        st.record(&sample(true, 1000, 0), 0.25);
        assert_eq!(
            (st.latency_ewma_ms, st.latency_deviation_ewma_ms),
            (Some(1000.0), 0.0)
        );
        st.record(&sample(true, 2000, 0), 0.25);
        assert_eq!(
            (st.latency_ewma_ms, st.latency_deviation_ewma_ms),
            (Some(1250.0), 250.0)
        );
        st.record(&sample(true, 1250, 0), 0.25);
        assert_eq!(
            (st.latency_ewma_ms, st.latency_deviation_ewma_ms),
            (Some(1250.0), 187.5)
        );
    }

    #[test]
    fn cost_inputs_normalize_into_unit_interval() {
        assert_eq!(normalized(2500.0, 5000.0), 0.5);
        assert_eq!(normalized(9000.0, 5000.0), 1.0);
        assert_eq!(normalized(-3.0, 5000.0), 0.0);
        assert_eq!(normalized(f64::NAN, 5000.0), 0.0);
        assert_eq!(normalized(10.0, 0.0), 0.0);
    }

    #[test]
    fn utility_weighs_success_against_normalized_costs() {
        let mut st = Stats::default();
        for _ in 0..3 {
            st.record(&sample(true, 2500, 490), 0.25);
        }
        // P = 0.8; latency 0.5; tokens (10 + 490) / 1000 = 0.5; risk 0.5; context 0.49.
        let u = utility(&st, 1.0, 0.5, &Settings::default());
        assert_eq!(
            milli(u),
            milli(0.8 - 0.15 * 0.5 - 0.10 * 0.5 - 0.20 * 0.5 - 0.10 * 0.49)
        );
        assert_eq!(fixed3(milli(u)), "0.526");
        assert_eq!(
            (fixed3(-45), fixed3(1000)),
            ("-0.045".to_string(), "1.000".to_string())
        );
    }

    #[test]
    fn best_must_be_positive() {
        let s = Settings::default();
        let ranked = rank(vec![cand(Some("a"), -0.1, 5), cand(None, 0.0, 0)]);
        assert_eq!(names(&ranked), ["no_tool", "a"]);
        assert_eq!(decide(&ranked, &s), Decision::Abstain);
    }

    #[test]
    fn sub_margin_tie_shortlists_top_three() {
        let s = Settings::default();
        let ranked = rank(vec![
            cand(Some("b"), 0.60, 5),
            cand(Some("a"), 0.60, 5),
            cand(Some("c"), 0.10, 5),
            cand(Some("d"), 0.05, 5),
            cand(None, 0.0, 0),
        ]);
        let Decision::Shortlist(list) = decide(&ranked, &s) else {
            panic!("a tie shortlists");
        };
        // Equal utilities rank by name, so the shortlist never depends on insertion order.
        assert_eq!(names(&list), ["a", "b", "c"]);
    }

    #[test]
    fn high_entropy_shortlists_despite_margin() {
        let s = Settings::default();
        let u = [0.5, 0.38, 0.37, 0.36];
        assert!(normalized_entropy(&u).is_some_and(|h| h >= 0.85));
        let ranked = rank(vec![
            cand(Some("a"), u[0], 9),
            cand(Some("b"), u[1], 9),
            cand(Some("c"), u[2], 9),
            cand(None, u[3], 0),
        ]);
        assert!(matches!(decide(&ranked, &s), Decision::Shortlist(l) if l.len() == 3));
        assert_eq!(normalized_entropy(&[0.7, 0.0]), Some(0.0));
        assert_eq!(normalized_entropy(&[-0.2, 0.0]), None);
    }

    #[test]
    fn evidence_threshold_needs_three_samples() {
        let s = Settings::default();
        let field = |samples| {
            rank(vec![
                cand(Some("a"), 0.7, samples),
                cand(Some("b"), 0.05, 1),
            ])
        };
        assert_eq!(decide(&field(2), &s), Decision::Abstain);
        assert_eq!(
            decide(&field(3), &s),
            Decision::Recommend(cand(Some("a"), 0.7, 3))
        );
    }

    #[test]
    fn lone_measured_tool_is_a_deterministic_match() {
        let s = Settings::default();
        let ranked = rank(vec![cand(Some("a"), 0.5, 1), cand(None, 0.0, 0)]);
        assert_eq!(
            decide(&ranked, &s),
            Decision::Recommend(cand(Some("a"), 0.5, 1))
        );
    }

    #[test]
    fn no_tool_is_a_real_candidate_with_intent_value() {
        let s = Settings::default();
        let mut selector = ToolSelector::new(Settings::default());
        assert_eq!(selector.candidates("execute"), [cand(None, 0.0, 0)]);
        assert_eq!(selector.candidates("other"), [cand(None, 0.2, 0)]);
        // Alone it is never recommended: nothing was compared.
        assert_eq!(decide(&selector.candidates("other"), &s), Decision::Abstain);
        let failing = Sample {
            success: false,
            latency_ms: None,
            input_tokens: 0.0,
            output_tokens: None,
        };
        // P = 1/16 after 14 failures: the field is no longer flat and the margin holds.
        for _ in 0..14 {
            selector
                .stats
                .entry(("other", "t".into()))
                .or_default()
                .record(&failing, 0.25);
        }
        let ranked = rank(selector.candidates("other"));
        assert_eq!(decide(&ranked, &s), Decision::Recommend(cand(None, 0.2, 0)));
    }
}
