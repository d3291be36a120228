//! `convergence_breaker`: the hard cliff on repeated failures of one action family.
//!
//! ## What it checks
//! Counts the rounds of each canonical action family (seed 000 WO-9 9a/9b: normalized
//! command, no error class) across the sessions of a project. At `stalled` (3 rounds) it
//! would have told the model to stop patching and replan; at `abandon` (5) it would have
//! ended the run as `terminal_incomplete`. A later success of the family resolves it
//! (9c); a productive mutation since the family's last failure decays the count: files
//! written (by an edit tool, or by a shell command whose grammar writes them: `sed -i`,
//! a here-document, a script that opens a file for writing) or packages installed. Rounds
//! the project's recorded store holds beyond what its runs rebuild are carried in.
//!
//! ## Why it matters
//! Without it the myactuator run repeated `forced_replan` forever: 15,342 dedup events,
//! 15,505 tool failures (seed 000, "The failure signature").
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), WO-3 and WO-9 9b/9c. Progress here is WO-3's
//! mutation rule; `diagnostic_delta` replays the root refinement's signal rule.

use super::convergence::{breaker_guard, Breaker, BreakerGuard, Progress, Thresholds};
use super::{GuardInfo, Spec};

pub struct ConvergenceBreaker {
    breaker: BreakerGuard,
}

impl Spec for ConvergenceBreaker {
    const INFO: GuardInfo = GuardInfo {
        id: "convergence_breaker",
        work_order: "WO-3",
        seed: "000 WO-3, WO-9 9b/9c",
        summary: "rounds of one canonical action family reach stalled (3) then abandon (5)",
    };
    type Settings = Thresholds;

    fn check(settings: &Thresholds) -> Result<(), String> {
        settings.check()
    }

    fn new(settings: Thresholds) -> Self {
        Self {
            breaker: BreakerGuard::new(Breaker::new(settings, Progress::Mutation)),
        }
    }
}

breaker_guard!(ConvergenceBreaker);
