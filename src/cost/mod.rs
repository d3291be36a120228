//! The counterfactual cost model (docs/COUNTERFACTUAL.md).
//!
//! A run's turns are its model requests, one per (turn, agent thread). A request costs its
//! recorded usage; without one, its frames' `estimatedTokens`, else the characters its
//! thread carried divided by [`crate::model::CHARS_PER_TOKEN`], counted apart as
//! estimated. Which later requests a firing saves is the thread rule ([`timeline`]):
//! savings are per-request reductions capped at what the request cost, so the combined
//! figure (all guards, the main agent's earliest terminal firing ending the rest) is not
//! the sum. Dollars come from the log where it records them, else from [`prices`]; a
//! request whose model has no price is counted as unpriced, never as free.

pub mod prices;
mod prices_table;
pub mod timeline;

use crate::guards::{Effect, Firing};
use crate::model::{sum_tokens, tokens_from_chars, TokenSource};
use crate::replay::{RunReplay, TurnUsage};
pub use prices::{Price, Prices};
use std::collections::{BTreeMap, BTreeSet};
pub use timeline::Saved;
use timeline::{Request, Timeline};

/// Tokens by the kind providers bill; `unknown` holds estimates, whose kind the log does
/// not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TokensByKind {
    pub input: u64,
    pub cache_write: u64,
    pub cache_read: u64,
    pub output: u64,
    pub unknown: u64,
}

/// What a run cost in dollars.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spend {
    /// Over the priced requests: recorded costs, else tokens times prices.
    pub usd: f64,
    /// The part of `usd` the log recorded itself.
    pub recorded_usd: f64,
    /// Tokens of requests no price was found for (their model unnamed or not in the table).
    pub unpriced_tokens: u64,
    /// The models named in the log that have no price.
    pub unpriced_models: BTreeSet<String>,
    /// Requests priced or recorded; 0 means `usd` says nothing.
    pub priced_requests: usize,
    /// Every model the requests name (a request naming none is the run's one model, when
    /// it names exactly one).
    pub models: BTreeSet<String>,
}

/// Token and dollar accounting of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunCost {
    /// Model requests (turns).
    pub requests: usize,
    pub tokens_total: u64,
    /// Recorded by the log: per request, or a run total spread over its requests.
    pub tokens_recorded: u64,
    /// Estimated by hindsight (frames, characters / 4).
    pub tokens_estimated: u64,
    pub by_kind: TokensByKind,
    pub spend: Spend,
    /// Tokens each firing would have saved on its own, in firing order.
    pub per_firing: Vec<u64>,
    /// Each guard alone, the others as recorded.
    pub by_guard: BTreeMap<&'static str, Saved>,
    /// Every guard together.
    pub combined: Saved,
    /// The turn of the main agent's earliest terminal firing, if any.
    pub cut_at: Option<u32>,
}

/// What a request cost in tokens, and whether the figure is recorded.
pub fn request_tokens(t: &TurnUsage) -> (u64, TokenSource) {
    match t.recorded.usage {
        Some(u) => (u.total(), u.source),
        None => (
            t.frame
                .unwrap_or_else(|| tokens_from_chars(t.carried_chars)),
            TokenSource::Estimated,
        ),
    }
}

pub fn cost(run: &RunReplay, prices: &Prices) -> RunCost {
    let mut out = RunCost::default();
    let requests = priced_requests(run, prices, |t, tokens, source, priced, model| {
        out.add_tokens(t, tokens, source);
        out.spend.add(priced, tokens, model);
    });
    let timeline = Timeline::new(&requests, &run.compactions);
    let mut by_guard: BTreeMap<&'static str, Vec<&Firing>> = BTreeMap::new();
    for f in &run.firings {
        by_guard.entry(f.guard).or_default().push(f);
    }
    let all: Vec<&Firing> = run.firings.iter().collect();
    out.per_firing = timeline.saved_alone(&run.firings);
    out.by_guard = by_guard
        .iter()
        .map(|(g, fs)| (*g, timeline.saved(fs)))
        .collect();
    out.combined = timeline.saved(&all);
    out.cut_at = cut_at(all);
    out
}

/// The turn of the main agent's earliest terminal firing among `firings`.
fn cut_at<'f>(firings: impl IntoIterator<Item = &'f Firing>) -> Option<u32> {
    firings
        .into_iter()
        .filter(|f| f.effect == Effect::Terminal && f.agent == timeline::MAIN)
        .map(|f| f.turn)
        .min()
}

/// What one grid point of a sweep saves on a run: the combined figure and the cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointSaving {
    pub saved: Saved,
    pub cut_at: Option<u32>,
}

/// What a sweep's replay of a run saves at each grid point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SweptSavings {
    pub points: Vec<PointSaving>,
    /// Some request was priced (else the dollars say nothing).
    pub priced: bool,
    /// The models the requests name, as [`Spend::models`].
    pub models: BTreeSet<String>,
}

/// Each grid point's savings on a sweep's replay of `run` ([`RunReplay::swept`]): with
/// `together`, the run's own firings (the guards the grid leaves alone) and the point's,
/// acting together, as [`cost`] figures them for a replay at that point; else the point's
/// firings alone (the swept guards alone, the others as recorded, as `by_guard` is).
pub fn swept_savings(run: &RunReplay, prices: &Prices, together: bool) -> SweptSavings {
    let mut spend = Spend::default();
    let requests = priced_requests(run, prices, |_, tokens, _, priced, model| {
        spend.add(priced, tokens, model);
    });
    let timeline = Timeline::new(&requests, &run.compactions);
    let shared: &[Firing] = if together { &run.firings } else { &[] };
    let savings = run
        .swept
        .iter()
        .map(|own| {
            // In the order a replay at the point sorts its firings in.
            let mut all: Vec<&Firing> = shared.iter().chain(own).collect();
            all.sort();
            PointSaving {
                saved: timeline.saved(&all),
                cut_at: cut_at(all),
            }
        })
        .collect();
    SweptSavings {
        points: savings,
        priced: spend.priced_requests > 0,
        models: spend.models,
    }
}

/// The run's requests in turn order, each with its tokens and dollars; `each` sees every
/// one as it is priced.
fn priced_requests(
    run: &RunReplay,
    prices: &Prices,
    mut each: impl FnMut(&TurnUsage, u64, TokenSource, &Priced, Option<&str>),
) -> Vec<Request> {
    let fallback = single_model(&run.turns);
    let mut requests = Vec::new();
    for t in run.turns.iter().filter(|t| t.request) {
        let (tokens, source) = request_tokens(t);
        let model = t.recorded.model.as_deref().or(fallback);
        let priced = price(t, tokens, model.and_then(|m| prices.get(m)));
        each(t, tokens, source, &priced, model);
        requests.push(Request {
            turn: t.turn,
            agent: t.agent.clone(),
            tokens,
            usd: priced.usd,
            prompt_rate: priced.prompt_rate,
        });
    }
    requests
}

/// What the run spent on every request after `turn`, of every thread: what a terminal cut
/// of the main agent at `turn` saves (the thread rule, [`timeline`]). Dollars are over the
/// priced requests only.
pub fn spent_after(run: &RunReplay, prices: &Prices, turn: u32) -> Saved {
    let requests = priced_requests(run, prices, |_, _, _, _, _| {});
    let cut = Firing {
        turn,
        guard: "",
        work_order: "",
        agent: timeline::MAIN.to_string(),
        action: String::new(),
        family: None,
        effect: Effect::Terminal,
        detail: None,
        subject: None,
    };
    Timeline::new(&requests, &run.compactions).saved(&[&cut])
}

impl RunCost {
    fn add_tokens(&mut self, t: &TurnUsage, tokens: u64, source: TokenSource) {
        self.requests += 1;
        self.tokens_total = sum_tokens([self.tokens_total, tokens]);
        let k = &mut self.by_kind;
        match (source, t.recorded.usage) {
            (TokenSource::Recorded | TokenSource::Spread, Some(u)) => {
                self.tokens_recorded = sum_tokens([self.tokens_recorded, tokens]);
                k.input = sum_tokens([k.input, u.input]);
                k.cache_write = sum_tokens([k.cache_write, u.cache_write]);
                k.cache_read = sum_tokens([k.cache_read, u.cache_read]);
                k.output = sum_tokens([k.output, u.output]);
            }
            _ => {
                self.tokens_estimated = sum_tokens([self.tokens_estimated, tokens]);
                k.unknown = sum_tokens([k.unknown, tokens]);
            }
        }
    }
}

/// The one model a run's requests name, if they name exactly one: its requests that name
/// none (a harness that records the model once) are priced as that model.
fn single_model(turns: &[TurnUsage]) -> Option<&str> {
    let models: BTreeSet<&str> = turns
        .iter()
        .filter_map(|t| t.recorded.model.as_deref())
        .collect();
    (models.len() == 1).then(|| *models.iter().next().unwrap_or(&""))
}

/// A request in dollars.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Priced {
    usd: Option<f64>,
    /// Dollars per prompt token (blended over the kinds the prompt was billed as).
    prompt_rate: Option<f64>,
    /// `usd` is the cost the log recorded.
    recorded: bool,
}

/// Prices a request: its recorded cost when the log has one (a recorded 0 for a request
/// that used tokens is a harness that could not price the model, not a free request),
/// else its usage times `price`; estimated tokens are priced as fresh input.
fn price(t: &TurnUsage, tokens: u64, price: Option<Price>) -> Priced {
    let recorded = t.recorded.cost_usd.filter(|&c| c > 0.0 || tokens == 0);
    let from_table = price.map(|p| match t.recorded.usage {
        Some(u) => {
            // 1-hour writes at their own rate, the rest of the writes at the 5-minute one.
            let hour = u.cache_write_1h.min(u.cache_write);
            let prompt = u.input as f64 * p.input
                + (u.cache_write - hour) as f64 * p.cache_write
                + hour as f64 * p.cache_write_1h
                + u.cache_read as f64 * p.cache_read;
            let rate = if u.prompt() > 0 {
                prompt / u.prompt() as f64
            } else {
                p.input
            };
            (prompt + u.output as f64 * p.output, rate)
        }
        None => (tokens as f64 * p.input, p.input),
    });
    match (recorded, from_table) {
        (Some(usd), table) => Priced {
            usd: Some(usd),
            prompt_rate: table
                .map(|(_, rate)| rate)
                .or_else(|| (tokens > 0).then(|| usd / tokens as f64)),
            recorded: true,
        },
        (None, Some((usd, rate))) => Priced {
            usd: Some(usd),
            prompt_rate: Some(rate),
            recorded: false,
        },
        (None, None) => Priced::default(),
    }
}

impl Spend {
    fn add(&mut self, p: &Priced, tokens: u64, model: Option<&str>) {
        if let Some(m) = model.filter(|m| !self.models.contains(*m)) {
            self.models.insert(m.to_string());
        }
        match p.usd {
            Some(usd) => {
                self.usd += usd;
                if p.recorded {
                    self.recorded_usd += usd;
                }
                self.priced_requests += 1;
            }
            None => {
                self.unpriced_tokens = sum_tokens([self.unpriced_tokens, tokens]);
                if let Some(m) = model {
                    self.unpriced_models.insert(m.to_string());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Request as Recorded, Usage};
    use crate::replay::Compaction;

    fn request(turn: u32, agent: &str, tokens: u64) -> TurnUsage {
        TurnUsage {
            turn,
            agent: agent.into(),
            request: true,
            recorded: Recorded {
                usage: Some(Usage::totals(tokens, 0)),
                ..Recorded::default()
            },
            ..Default::default()
        }
    }

    fn compaction(turn: u32, agent: &str) -> Compaction {
        Compaction {
            turn,
            agent: agent.into(),
        }
    }

    fn firing(guard: &'static str, turn: u32, effect: Effect) -> Firing {
        on("main", guard, turn, effect)
    }

    fn on(agent: &str, guard: &'static str, turn: u32, effect: Effect) -> Firing {
        Firing {
            turn,
            guard,
            work_order: "WO",
            agent: agent.into(),
            action: "x".into(),
            family: None,
            effect,
            detail: None,
            subject: None,
        }
    }

    fn run(costs: &[(u32, u64)], compactions: &[u32], firings: Vec<Firing>) -> RunReplay {
        let turns = costs.iter().map(|&(t, c)| request(t, "main", c)).collect();
        let compactions = compactions.iter().map(|&c| compaction(c, "main")).collect();
        replay(turns, compactions, firings)
    }

    fn replay(
        mut turns: Vec<TurnUsage>,
        compactions: Vec<Compaction>,
        firings: Vec<Firing>,
    ) -> RunReplay {
        turns.sort_by_key(|t| t.turn);
        RunReplay {
            turns,
            compactions,
            firings,
            ..Default::default()
        }
    }

    fn tokens(run: &RunReplay) -> RunCost {
        cost(run, &Prices::none())
    }

    #[test]
    fn terminal_saves_every_later_turn() {
        let r = run(
            &[(1, 10), (2, 20), (3, 30)],
            &[],
            vec![firing("a", 1, Effect::Terminal)],
        );
        let c = tokens(&r);
        assert_eq!(c.tokens_total, 60);
        assert_eq!(c.per_firing, vec![50]);
        assert_eq!(c.combined.tokens, 50);
        assert_eq!(c.cut_at, Some(1));
    }

    #[test]
    fn suppression_is_carried_until_compaction() {
        let r = run(
            &[(1, 100), (2, 100), (3, 100), (4, 100)],
            &[3],
            vec![firing("a", 1, Effect::Suppress { tokens: 10 })],
        );
        assert_eq!(tokens(&r).per_firing, vec![10]);
    }

    #[test]
    fn each_suppression_is_carried_until_the_first_compaction_after_it() {
        // Compactions given out of order; a suppression at a compaction's own turn is
        // carried to the next one.
        let costs: Vec<(u32, u64)> = (1..=8).map(|t| (t, 100)).collect();
        let at = |turn| firing("a", turn, Effect::Suppress { tokens: 10 });
        let r = run(&costs, &[6, 3], vec![at(1), at(3), at(4), at(6), at(7)]);
        assert_eq!(tokens(&r).per_firing, vec![10, 20, 10, 20, 10]);
    }

    #[test]
    fn combined_is_not_the_sum() {
        let r = run(
            &[(1, 100), (2, 100), (3, 100)],
            &[],
            vec![
                firing("a", 1, Effect::Terminal),
                firing("b", 2, Effect::Shrink { tokens: 40 }),
                firing("b", 1, Effect::Shrink { tokens: 30 }),
            ],
        );
        let c = tokens(&r);
        assert_eq!(c.by_guard["a"].tokens, 200);
        assert_eq!(c.by_guard["b"].tokens, 70);
        // The terminal cut makes the fold at turn 2 moot; only turn 1's fold adds.
        assert_eq!(c.combined.tokens, 230);
    }

    #[test]
    fn one_result_suppressed_by_two_guards_counts_once() {
        let mut a = firing("a", 1, Effect::Suppress { tokens: 30 });
        let mut b = firing("b", 1, Effect::Suppress { tokens: 20 });
        a.subject = Some("call_7".into());
        b.subject = Some("call_7".into());
        let r = run(&[(1, 100), (2, 100), (3, 100)], &[], vec![a, b]);
        let c = tokens(&r);
        assert_eq!((c.by_guard["a"].tokens, c.by_guard["b"].tokens), (60, 40));
        assert_eq!(c.combined.tokens, 60);
    }

    #[test]
    fn sums_stop_at_the_largest_count_instead_of_wrapping() {
        let r = run(
            &[(1, u64::MAX), (2, 5)],
            &[],
            vec![firing("a", 1, Effect::Terminal)],
        );
        let c = tokens(&r);
        assert_eq!(c.tokens_total, u64::MAX);
        assert_eq!(c.combined.tokens, 5);
    }

    #[test]
    fn reductions_never_exceed_the_turn() {
        let r = run(
            &[(1, 10)],
            &[],
            vec![
                firing("a", 1, Effect::Shrink { tokens: 50 }),
                firing("b", 1, Effect::Shrink { tokens: 50 }),
            ],
        );
        assert_eq!(tokens(&r).combined.tokens, 10);
    }

    // The thread rule (docs/COUNTERFACTUAL.md, *Threads*): each case below is one the
    // rule it replaced (every later request of every agent) overcounted.

    #[test]
    fn a_suppression_saves_only_on_its_own_thread() {
        // The sub-agent's duplicate read at turn 2 is blocked; the main agent never
        // carried that result, so its requests at 3 and 5 are unchanged.
        let r = replay(
            vec![
                request(1, "main", 100),
                request(2, "task-1", 100),
                request(3, "main", 100),
                request(4, "task-1", 100),
                request(5, "main", 100),
            ],
            vec![],
            vec![on("task-1", "dedup", 2, Effect::Suppress { tokens: 30 })],
        );
        let c = tokens(&r);
        assert_eq!(c.per_firing, vec![30], "the naive rule gives 90");
        assert_eq!(c.combined.tokens, 30);
    }

    #[test]
    fn a_threads_compaction_ends_only_its_own_carry() {
        // Main compacts at 3; the sub-agent still carries the result until it compacts at 6.
        let r = replay(
            vec![
                request(1, "sub", 100),
                request(4, "sub", 100),
                request(5, "main", 100),
                request(7, "sub", 100),
            ],
            vec![compaction(3, "main"), compaction(6, "sub")],
            vec![on("sub", "g", 1, Effect::Suppress { tokens: 10 })],
        );
        assert_eq!(tokens(&r).per_firing, vec![10]);
    }

    #[test]
    fn the_main_agents_terminal_cut_ends_every_thread() {
        let r = replay(
            vec![
                request(1, "main", 10),
                request(2, "sub", 20),
                request(3, "main", 30),
                request(4, "sub", 40),
            ],
            vec![],
            vec![on("main", "breaker", 2, Effect::Terminal)],
        );
        let c = tokens(&r);
        assert_eq!(c.combined.tokens, 70);
        assert_eq!(c.cut_at, Some(2));
    }

    #[test]
    fn a_sub_agents_terminal_cut_ends_its_own_thread() {
        let r = replay(
            vec![
                request(1, "sub", 10),
                request(2, "main", 20),
                request(3, "sub", 30),
            ],
            vec![],
            vec![on("sub", "breaker", 1, Effect::Terminal)],
        );
        let c = tokens(&r);
        assert_eq!(c.combined.tokens, 30);
        assert_eq!(c.per_firing, vec![30]);
        assert_eq!(c.cut_at, None, "the run itself goes on");
    }

    #[test]
    fn turns_are_requests_and_estimates_are_counted_apart() {
        let mut estimated = request(2, "main", 0);
        estimated.recorded.usage = None;
        estimated.frame = Some(40);
        let not_a_request = TurnUsage {
            turn: 3,
            agent: "main".into(),
            frame: Some(500),
            ..Default::default()
        };
        let r = replay(
            vec![request(1, "main", 100), estimated, not_a_request],
            vec![],
            vec![],
        );
        let c = tokens(&r);
        assert_eq!(c.requests, 2);
        assert_eq!((c.tokens_recorded, c.tokens_estimated), (100, 40));
        assert_eq!(c.tokens_total, 140);
        assert_eq!(c.by_kind.unknown, 40);
    }

    /// The thread rule, written out request by request: the reference the linear
    /// implementation is checked against.
    fn brute_force(run: &RunReplay, firings: &[&Firing]) -> u64 {
        let main_cut = firings
            .iter()
            .filter(|f| f.effect == Effect::Terminal && f.agent == "main")
            .map(|f| f.turn)
            .min();
        let next_compaction = |agent: &str, turn: u32| {
            run.compactions
                .iter()
                .filter(|c| c.agent == agent && c.turn > turn)
                .map(|c| c.turn)
                .min()
                .unwrap_or(u32::MAX)
        };
        let mut total = 0u64;
        for t in run.turns.iter().filter(|t| t.request) {
            let (cost, _) = request_tokens(t);
            let own_cut = firings
                .iter()
                .filter(|f| f.effect == Effect::Terminal && f.agent == t.agent)
                .map(|f| f.turn)
                .min();
            if main_cut.is_some_and(|c| t.turn > c) || own_cut.is_some_and(|c| t.turn > c) {
                total += cost;
                continue;
            }
            let mut by_subject: BTreeMap<&str, u64> = BTreeMap::new();
            let mut plain = 0u64;
            for f in firings.iter().filter(|f| f.agent == t.agent) {
                let r = match f.effect {
                    Effect::Shrink { tokens } if t.turn == f.turn => tokens,
                    Effect::Suppress { tokens }
                        if t.turn > f.turn && t.turn < next_compaction(&f.agent, f.turn) =>
                    {
                        tokens
                    }
                    _ => 0,
                };
                match (&f.subject, r) {
                    (_, 0) => {}
                    (Some(s), r) => {
                        let best = by_subject.entry(s.as_str()).or_default();
                        *best = (*best).max(r);
                    }
                    (None, r) => plain += r,
                }
            }
            total += (plain + by_subject.values().sum::<u64>()).min(cost);
        }
        total
    }

    mod agrees_with_the_rule_written_out {
        use super::*;
        use proptest::prelude::*;

        fn effect() -> impl Strategy<Value = Effect> {
            prop_oneof![
                Just(Effect::Terminal),
                Just(Effect::Advisory),
                (1u64..60).prop_map(|tokens| Effect::Suppress { tokens }),
                (1u64..60).prop_map(|tokens| Effect::Shrink { tokens }),
            ]
        }

        fn agent() -> impl Strategy<Value = &'static str> {
            prop_oneof![Just("main"), Just("a"), Just("b")]
        }

        proptest! {
            #[test]
            fn for_any_firings(
                requests in proptest::collection::vec((0u32..30, agent(), 0u64..100), 0..25),
                compactions in proptest::collection::vec((0u32..30, agent()), 0..4),
                firings in proptest::collection::vec(
                    (0u32..30, agent(), effect(), proptest::option::of(0u8..3)), 0..12),
            ) {
                // One request per turn, as every format records them.
                let turns: BTreeMap<u32, TurnUsage> = requests
                    .into_iter()
                    .map(|(turn, agent, tokens)| (turn, request(turn, agent, tokens)))
                    .collect();
                let compactions = compactions
                    .into_iter()
                    .map(|(turn, agent)| compaction(turn, agent))
                    .collect();
                let firings: Vec<Firing> = firings
                    .into_iter()
                    .enumerate()
                    .map(|(k, (turn, agent, effect, subject))| {
                        let mut f = on(agent, if k % 2 == 0 { "x" } else { "y" }, turn, effect);
                        f.subject = subject.map(|s| format!("call_{s}"));
                        f
                    })
                    .collect();
                let run = replay(turns.into_values().collect(), compactions, firings);
                let c = tokens(&run);
                let all: Vec<&Firing> = run.firings.iter().collect();
                prop_assert_eq!(c.combined.tokens, brute_force(&run, &all));
                for (f, alone) in run.firings.iter().zip(&c.per_firing) {
                    prop_assert_eq!(*alone, brute_force(&run, &[f]));
                }
                for (guard, saved) in &c.by_guard {
                    let own: Vec<&Firing> = run.firings.iter().filter(|f| f.guard == *guard).collect();
                    prop_assert_eq!(saved.tokens, brute_force(&run, &own));
                }
            }
        }
    }
}
