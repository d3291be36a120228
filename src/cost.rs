//! The counterfactual cost model (docs/COUNTERFACTUAL.md).
//!
//! A turn costs its `model_usage` tokens, else its frames' `estimatedTokens`, else the
//! characters it carried divided by [`crate::model::CHARS_PER_TOKEN`]. A terminal firing
//! at turn T saves every turn after T; a suppressed call saves its result's tokens at
//! every later request until a recorded compaction; a fold saves its frame's difference.
//! Savings are per-turn reductions capped at what the turn cost, so the combined figure
//! (all guards, the earliest terminal firing truncating the rest) is not the sum.

use crate::guards::{Effect, Firing};
use crate::model::sum_tokens;
use crate::replay::{RunReplay, TurnUsage};
use std::collections::BTreeMap;

/// Token accounting of one run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunCost {
    pub tokens_total: u64,
    /// Tokens each firing would have saved on its own, in firing order.
    pub per_firing: Vec<u64>,
    /// Each guard alone, the others as recorded.
    pub by_guard: BTreeMap<&'static str, u64>,
    /// Every guard together.
    pub combined: u64,
    /// The turn of the earliest terminal firing, if any.
    pub cut_at: Option<u32>,
}

/// What a turn cost, by the model's order of preference.
pub fn turn_tokens(t: &TurnUsage) -> u64 {
    t.usage
        .or(t.frame)
        .unwrap_or_else(|| crate::model::tokens_from_chars(t.carried_chars))
}

pub fn cost(run: &RunReplay) -> RunCost {
    let tokens: Vec<u64> = run.turns.iter().map(turn_tokens).collect();
    let turns: Vec<u32> = run.turns.iter().map(|t| t.turn).collect();
    let compactions: Vec<u32> = run
        .turns
        .iter()
        .filter(|t| t.compaction)
        .map(|t| t.turn)
        .collect();
    let timeline = Timeline {
        turns: &turns,
        tokens: &tokens,
        compactions: &compactions,
    };
    let per_firing = run
        .firings
        .iter()
        .map(|f| timeline.saved(std::slice::from_ref(f)))
        .collect();
    let mut by_guard: BTreeMap<&'static str, Vec<Firing>> = BTreeMap::new();
    for f in &run.firings {
        by_guard.entry(f.guard).or_default().push(f.clone());
    }
    RunCost {
        tokens_total: sum_tokens(tokens.iter().copied()),
        per_firing,
        by_guard: by_guard
            .iter()
            .map(|(g, fs)| (*g, timeline.saved(fs)))
            .collect(),
        combined: timeline.saved(&run.firings),
        cut_at: first_terminal(&run.firings),
    }
}

fn first_terminal(firings: &[Firing]) -> Option<u32> {
    firings
        .iter()
        .filter(|f| f.effect == Effect::Terminal)
        .map(|f| f.turn)
        .min()
}

struct Timeline<'a> {
    turns: &'a [u32],
    tokens: &'a [u64],
    compactions: &'a [u32],
}

impl Timeline<'_> {
    /// Tokens saved if exactly `firings` had acted.
    fn saved(&self, firings: &[Firing]) -> u64 {
        let cut = first_terminal(firings);
        sum_tokens(self.turns.iter().zip(self.tokens).map(|(&turn, &cost)| {
            if cut.is_some_and(|c| turn > c) {
                return cost;
            }
            self.reduction_at(firings, turn).min(cost)
        }))
    }

    /// What `firings` take off the request at `turn`: one result suppressed by several
    /// guards (the same subject) is taken off once, at the largest of their figures.
    fn reduction_at(&self, firings: &[Firing], turn: u32) -> u64 {
        let mut by_subject: BTreeMap<&str, u64> = BTreeMap::new();
        let mut total: u64 = 0;
        for f in firings {
            let r = self.reduction(f, turn);
            match (&f.subject, r) {
                (_, 0) => {}
                (Some(s), r) => {
                    let best = by_subject.entry(s.as_str()).or_default();
                    *best = (*best).max(r);
                }
                (None, r) => total = total.saturating_add(r),
            }
        }
        by_subject.values().fold(total, |t, r| t.saturating_add(*r))
    }

    /// What one non-terminal firing takes off the request at `turn`.
    fn reduction(&self, f: &Firing, turn: u32) -> u64 {
        match f.effect {
            Effect::Shrink { tokens } if turn == f.turn => tokens,
            Effect::Suppress { tokens } if turn > f.turn && turn < self.next_compaction(f.turn) => {
                tokens
            }
            _ => 0,
        }
    }

    /// The first compaction after `turn`; a result is no longer carried from then on.
    fn next_compaction(&self, turn: u32) -> u32 {
        self.compactions
            .iter()
            .copied()
            .find(|&c| c > turn)
            .unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turns(costs: &[(u32, u64)], compactions: &[u32]) -> Vec<TurnUsage> {
        costs
            .iter()
            .map(|&(turn, c)| TurnUsage {
                turn,
                usage: Some(c),
                compaction: compactions.contains(&turn),
                ..Default::default()
            })
            .collect()
    }

    fn firing(guard: &'static str, turn: u32, effect: Effect) -> Firing {
        Firing {
            turn,
            guard,
            work_order: "WO",
            agent: "main".into(),
            action: "x".into(),
            family: None,
            effect,
            detail: None,
            subject: None,
        }
    }

    fn run(costs: &[(u32, u64)], compactions: &[u32], firings: Vec<Firing>) -> RunReplay {
        RunReplay {
            turns: turns(costs, compactions),
            firings,
            ..Default::default()
        }
    }

    #[test]
    fn terminal_saves_every_later_turn() {
        let r = run(
            &[(1, 10), (2, 20), (3, 30)],
            &[],
            vec![firing("a", 1, Effect::Terminal)],
        );
        let c = cost(&r);
        assert_eq!(c.tokens_total, 60);
        assert_eq!(c.per_firing, vec![50]);
        assert_eq!(c.combined, 50);
        assert_eq!(c.cut_at, Some(1));
    }

    #[test]
    fn suppression_is_carried_until_compaction() {
        let r = run(
            &[(1, 100), (2, 100), (3, 100), (4, 100)],
            &[3],
            vec![firing("a", 1, Effect::Suppress { tokens: 10 })],
        );
        assert_eq!(cost(&r).per_firing, vec![10]);
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
        let c = cost(&r);
        assert_eq!(c.by_guard["a"], 200);
        assert_eq!(c.by_guard["b"], 70);
        // The terminal cut makes the fold at turn 2 moot; only turn 1's fold adds.
        assert_eq!(c.combined, 230);
    }

    #[test]
    fn one_result_suppressed_by_two_guards_counts_once() {
        let mut a = firing("a", 1, Effect::Suppress { tokens: 30 });
        let mut b = firing("b", 1, Effect::Suppress { tokens: 20 });
        a.subject = Some("call_7".into());
        b.subject = Some("call_7".into());
        let r = run(&[(1, 100), (2, 100), (3, 100)], &[], vec![a, b]);
        let c = cost(&r);
        assert_eq!((c.by_guard["a"], c.by_guard["b"]), (60, 40));
        assert_eq!(c.combined, 60);
    }

    #[test]
    fn sums_stop_at_the_largest_count_instead_of_wrapping() {
        let r = run(
            &[(1, u64::MAX), (2, 5)],
            &[],
            vec![firing("a", 1, Effect::Terminal)],
        );
        let c = cost(&r);
        assert_eq!(c.tokens_total, u64::MAX);
        assert_eq!(c.combined, 5);
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
        assert_eq!(cost(&r).combined, 10);
    }
}
