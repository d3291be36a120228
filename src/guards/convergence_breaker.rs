//! `convergence_breaker`: the hard cliff on repeated failures of one action family.
//!
//! ## What it checks
//! Counts the rounds of each canonical action family (seed 000 WO-9 9a/9b: normalized
//! command, no error class) across the sessions of a project. At `stalled` (3 rounds) it
//! would have told the model to stop patching and replan; at `abandon` (5) it would have
//! ended the run as `terminal_incomplete`. A later success of the family resolves it
//! (9c); a productive mutation since the family's last failure decays the count.
//!
//! ## Why it matters
//! Without it the myactuator run repeated `forced_replan` forever: 15,342 dedup events,
//! 15,505 tool failures (seed 000, "The failure signature").
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), WO-3 and WO-9 9b/9c. Progress here is WO-3's
//! mutation rule; `diagnostic_delta` replays the root refinement's signal rule.

use super::convergence::{Breaker, Progress, Thresholds, Tier};
use super::{Effect, Firings, Guard, GuardInfo, Spec};
use crate::normalize::{NormEvent, RunState};

pub struct ConvergenceBreaker {
    breaker: Breaker,
}

impl Spec for ConvergenceBreaker {
    const INFO: GuardInfo = GuardInfo {
        id: "convergence_breaker",
        work_order: "WO-3",
        seed: "000 WO-3, WO-9 9b/9c",
        summary: "rounds of one canonical action family reach stalled (3) then abandon (5)",
    };
    type Settings = Thresholds;

    fn new(settings: Thresholds) -> Self {
        Self {
            breaker: Breaker::new(settings, Progress::Mutation),
        }
    }
}

impl Guard for ConvergenceBreaker {
    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        let before = rounds_of(&self.breaker, event);
        if let Some(escalation) = self.breaker.observe(event) {
            fire_escalation(event, &escalation, firings);
        }
        plot_rounds(&self.breaker, before, event, firings);
    }
}

/// The rounds of the family a result belongs to, before the breaker sees it.
pub fn rounds_of(breaker: &super::convergence::Breaker, event: &NormEvent<'_>) -> u32 {
    match &event.step {
        crate::normalize::Step::Result { call, .. } => {
            breaker.rounds(event.agent, &call.families.action)
        }
        _ => 0,
    }
}

/// The rounds of a family after a failure of it, or after the success that resolves it
/// (0): the series the convergence chart draws against the tier thresholds. Families that
/// never failed are not plotted.
pub fn plot_rounds(
    breaker: &super::convergence::Breaker,
    before: u32,
    event: &NormEvent<'_>,
    firings: &mut Firings,
) {
    if let crate::normalize::Step::Result { call, outcome, .. } = &event.step {
        if outcome.success && before == 0 {
            return;
        }
        let family = &call.families.action;
        let rounds = breaker.rounds(event.agent, family);
        let name = if event.agent == "main" {
            family.clone()
        } else {
            format!("{}: {family}", event.agent)
        };
        firings.plot(name, event.turn, u64::from(rounds));
    }
}

/// How both breaker guards report an escalation: `stalled` advises, `abandon` ends the run.
pub fn fire_escalation(
    event: &NormEvent<'_>,
    e: &super::convergence::Escalation,
    firings: &mut Firings,
) {
    let (effect, next) = match e.tier {
        // Only the main agent's abandon ends the run; a sub-agent's ends the sub-agent,
        // whose share of the run's tokens the recording does not separate: unpriced.
        Tier::Abandon if event.agent == "main" => {
            (Effect::Terminal, "terminal_incomplete + report_incomplete")
        }
        Tier::Abandon => (Effect::Advisory, "abandon the sub-agent's trajectory"),
        _ => (
            Effect::Advisory,
            "stop patching; regenerate or run_verification",
        ),
    };
    firings
        .fire(event.turn, event.agent, e.tier.as_str(), effect)
        .family(e.family.clone())
        .detail(format!("{} rounds; {next}", e.rounds));
}
