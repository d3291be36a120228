//! `diagnostic_delta`: the breaker with progress measured by the verification signal.
//!
//! ## What it checks
//! The same tiers and carry as `convergence_breaker`, but a failure only counts as
//! progress when its own output's error count (`error:`, `error TS`, `error[`, `N failed`,
//! `FAIL`: seed 000's list and nothing more) dropped since the family's previous failure;
//! a rising count adds `worsening_step` rounds. Without a signal on both sides it falls
//! back to the productive-mutation rule. So a futile edit loop (edit, rebuild, same
//! errors) escalates, and a loop whose error count falls does not.
//!
//! Two named variants, off by default, for a review to measure on its own labels (issue
//! #28): `progress = "fingerprint"` reads progress from which diagnostic each failure ends
//! in (a diagnostic seen before since the family's last success adds a round whatever was
//! changed between; a new one holds the count; a falling count still resets), and
//! `count_exceptions = true` counts uncaught exceptions' last lines (`KeyError: 'x'`),
//! which the seed's list does not name. `install_is_progress` (on) says whether a package
//! install between two failures is a productive change in the count rule's fallback.
//!
//! ## Why it matters
//! After WO-9 the myactuator model edited ~1000x without converging; mutation-based decay
//! treated each edit as progress and the breaker never fired (seed 000, root refinement).
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), "Root refinement — progress = verification delta".

use super::convergence::{
    breaker_guard, Breaker, BreakerGuard, Delta, DeltaRule, Progress, Thresholds,
};
use super::{GuardInfo, Spec};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    pub converging_warn: u32,
    pub stalled: u32,
    pub abandon: u32,
    /// Rounds added when the error count rises ("worsening escalates fastest").
    pub worsening_step: u32,
    /// What a failure's diagnostics must show to count as progress: `count` (the seed's)
    /// or `fingerprint`.
    pub progress: DeltaRule,
    /// Count uncaught exceptions' last lines in the error count (not in the seed's list).
    pub count_exceptions: bool,
    /// A package install between two failures is a productive change (the count rule's
    /// fallback to the mutation rule).
    pub install_is_progress: bool,
}

impl Default for Settings {
    fn default() -> Self {
        let t = Thresholds::default();
        Self {
            converging_warn: t.converging_warn,
            stalled: t.stalled,
            abandon: t.abandon,
            worsening_step: 2,
            progress: DeltaRule::Count,
            count_exceptions: false,
            install_is_progress: true,
        }
    }
}

impl Settings {
    fn thresholds(&self) -> Thresholds {
        Thresholds {
            converging_warn: self.converging_warn,
            stalled: self.stalled,
            abandon: self.abandon,
        }
    }
}

pub struct DiagnosticDelta {
    breaker: BreakerGuard,
}

impl Spec for DiagnosticDelta {
    const INFO: GuardInfo = GuardInfo {
        id: "diagnostic_delta",
        work_order: "root refinement",
        seed: "000 Root refinement",
        summary: "breaker whose progress is a falling error count, not edit activity",
    };
    type Settings = Settings;

    fn check(s: &Settings) -> Result<(), String> {
        s.thresholds().check()?;
        super::at_least("worsening_step", s.worsening_step.into(), 1)
    }

    fn new(s: Settings) -> Self {
        let thresholds = s.thresholds();
        Self {
            breaker: BreakerGuard::new(Breaker::new(
                thresholds,
                Progress::DiagnosticDelta(Delta {
                    worsening_step: s.worsening_step,
                    rule: s.progress,
                    exceptions: s.count_exceptions,
                    install_is_progress: s.install_is_progress,
                }),
            )),
        }
    }
}

breaker_guard!(DiagnosticDelta);
