//! Sections 3 and 5 from the replay: every firing with what it saves alone, the earliest
//! terminal cut, each guard's saving, and where a reader starts (the family that reached the
//! highest convergence tier, seed 000 `000_053cae7e53b598d3.txt` WO-3; the earliest
//! terminal guard).

use super::Run;
use crate::cost::{spent_after, Prices};
use crate::report::FiringReport;
use serde::Serialize;
use std::collections::BTreeMap;

/// Section 3: what would have fired and what it would have saved.
#[derive(Debug, Clone, Serialize)]
pub struct Fired {
    /// Every firing, in turn order, with what it would have saved alone.
    pub firings: Vec<FiringReport>,
    /// The earliest terminal cut of the main agent.
    pub cut: Option<Cut>,
    /// Each guard that fired, alone, in registry order.
    pub by_guard: Vec<GuardSaving>,
    pub combined_tokens: u64,
    pub combined_cost_usd: Option<f64>,
}

/// One firing, named.
#[derive(Debug, Clone, Serialize)]
pub struct FiringRef {
    pub turn: u32,
    pub agent: String,
    pub guard: String,
    pub action: String,
    pub family: Option<String>,
    pub detail: Option<String>,
}

/// A terminal cut: the firings that end the run at a turn, and what they save.
#[derive(Debug, Clone, Serialize)]
pub struct Cut {
    pub turn: u32,
    pub firings: Vec<FiringRef>,
    /// Every request after the turn, of every thread.
    pub tokens_saved: u64,
    pub cost_saved_usd: Option<f64>,
}

/// What one guard would have saved alone.
#[derive(Debug, Clone, Serialize)]
pub struct GuardSaving {
    pub guard: String,
    pub work_order: String,
    pub firings: usize,
    pub tokens_saved: u64,
    pub cost_saved_usd: Option<f64>,
}

/// Section 5: where a reader starts, stated from the firings.
#[derive(Debug, Clone, Serialize)]
pub struct LookFirst {
    pub highest_tier: Option<TierReached>,
    /// The firings of the earliest terminal cut ([`Fired::cut`]).
    pub earliest_terminal: Vec<FiringRef>,
}

/// The family that reached the highest convergence tier, and the first firing on it.
#[derive(Debug, Clone, Serialize)]
pub struct TierReached {
    /// `abandon` or `stalled`.
    pub tier: String,
    pub family: String,
    pub agent: String,
    pub turn: u32,
    /// The guards whose breaker took it there at that turn.
    pub guards: Vec<String>,
    /// The earliest firings of any guard on that family.
    pub first_firings: Vec<FiringRef>,
}

/// A firing of the report, named.
pub(super) fn firing_ref(f: &FiringReport) -> FiringRef {
    FiringRef {
        turn: f.turn,
        agent: f.agent.clone(),
        guard: f.guard.clone(),
        action: f.action.clone(),
        family: f.family.clone(),
        detail: f.detail.clone(),
    }
}

/// Section 3 of `run`.
pub(super) fn fired(run: &Run<'_>, prices: &Prices) -> Fired {
    let r = run.report;
    let priced = r.cost_usd.is_some();
    let cut = r.savings.cut_at_turn.map(|turn| {
        let saved = spent_after(run.replay, prices, turn);
        Cut {
            turn,
            firings: r
                .firings
                .iter()
                .filter(|f| f.turn == turn && f.effect == "terminal")
                .map(firing_ref)
                .collect(),
            tokens_saved: saved.tokens,
            cost_saved_usd: priced.then(|| crate::report::dollars(saved.usd)),
        }
    });
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &r.firings {
        *counts.entry(f.guard.as_str()).or_default() += 1;
    }
    let by_guard = crate::guards::registry()
        .iter()
        .filter_map(|e| {
            let id = e.info.id;
            let firings = *counts.get(id)?;
            Some(GuardSaving {
                guard: id.to_string(),
                work_order: e.info.work_order.to_string(),
                firings,
                tokens_saved: r.savings.by_guard.get(id).copied().unwrap_or(0),
                cost_saved_usd: r.cost_saved_by(id),
            })
        })
        .collect();
    Fired {
        firings: r.firings.clone(),
        cut,
        by_guard,
        combined_tokens: r.savings.combined,
        combined_cost_usd: r.savings.cost_saved_usd.as_ref().map(|c| c.combined),
    }
}

/// The convergence tiers a firing's action can name, lowest first.
const TIERS: [crate::guards::convergence::Tier; 2] = [
    crate::guards::convergence::Tier::Stalled,
    crate::guards::convergence::Tier::Abandon,
];

/// Section 5, from the firings and the cut.
pub(super) fn look_first(firings: &[FiringReport], cut: Option<&Cut>) -> LookFirst {
    let tier_of = |f: &FiringReport| TIERS.iter().position(|t| t.as_str() == f.action);
    // Firings are in turn order: the first at the highest tier is where it was reached.
    let top = firings
        .iter()
        .filter(|f| f.family.is_some())
        .filter_map(|f| Some((tier_of(f)?, f)))
        .fold(
            None::<(usize, &FiringReport)>,
            |best, (tier, f)| match best {
                Some((t, _)) if t >= tier => best,
                _ => Some((tier, f)),
            },
        );
    let highest_tier = top.map(|(tier, reached)| {
        let family = reached.family.clone().unwrap_or_default();
        let on_family = |f: &&FiringReport| f.family.as_deref() == Some(family.as_str());
        let first_turn = firings.iter().filter(on_family).map(|f| f.turn).min();
        TierReached {
            tier: TIERS[tier].as_str().to_string(),
            agent: reached.agent.clone(),
            turn: reached.turn,
            guards: firings
                .iter()
                .filter(on_family)
                .filter(|f| f.turn == reached.turn && tier_of(f) == Some(tier))
                .map(|f| f.guard.clone())
                .collect(),
            first_firings: firings
                .iter()
                .filter(on_family)
                .filter(|f| Some(f.turn) == first_turn)
                .map(firing_ref)
                .collect(),
            family,
        }
    });
    LookFirst {
        highest_tier,
        earliest_terminal: cut.map(|c| c.firings.clone()).unwrap_or_default(),
    }
}
