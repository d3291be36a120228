//! `repeated_diagnostic`: the same failure, whatever command printed it.
//!
//! ## What it checks
//! Counts, per agent, the failures of shell commands by their diagnostic's fingerprint
//! (`Outcome::fingerprint`: the output's diagnostic lines, else its last lines, with
//! numbers, hexadecimal words and temporary paths masked), across every command, until a
//! check passes (`Outcome::check_passed`), which clears the agent's counts. A fingerprint
//! failing `stalled` times fires `stalled`; `abandon` times, `abandon`. Both advise unless
//! `terminal` is set, when the main agent's `abandon` ends the run like WO-3's. Edits and
//! installs between the failures change nothing: the point is that they did not change
//! what fails.
//!
//! ## Why it matters
//! Shell agents rename the script around one unchanged failure (`python test_fix.py`, then
//! `python test_fix2.py`, then `python test_final.py`, each ending in the same `KeyError`),
//! so every command family stays at one round and WO-3's breaker never reaches a tier.
//! Keyed by what fails rather than by what was typed, the loop is the one WO-3 was
//! written for: "the same family observed 5x" (issue #28).
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), WO-3 "Convergence Circuit-Breaker" (the tiers,
//! the cliff: a trajectory not converging in ~3 rounds needs a different one), keyed as
//! WO-9 9b asks ("stuck repeating this action, independent of which error each attempt
//! throws") turned around for shell agents: stuck on this error, independent of which
//! command each attempt runs.

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::hash::HashMap;
use crate::normalize::fingerprint::naming_line;
use crate::normalize::{ErrorClass, NormEvent, RunState, Step, ToolKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Failures of one diagnostic that make a stall.
    pub stalled: u32,
    /// Failures of one diagnostic that make the trajectory one to abandon.
    pub abandon: u32,
    /// The main agent's `abandon` ends the run (off: it advises, like `stalled`).
    pub terminal: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            stalled: 3,
            abandon: 5,
            terminal: false,
        }
    }
}

/// Characters of the diagnostic a firing quotes.
const QUOTED: usize = 120;

#[derive(Default)]
struct Count {
    failures: u32,
    /// The command families that printed it.
    families: BTreeSet<String>,
}

pub struct RepeatedDiagnostic {
    settings: Settings,
    /// (agent, fingerprint) -> failures since the agent's last passing check.
    counts: HashMap<(String, u64), Count>,
    /// Fingerprints that reached `stalled` this run.
    stalls: usize,
}

impl Spec for RepeatedDiagnostic {
    const INFO: GuardInfo = GuardInfo {
        id: "repeated_diagnostic",
        work_order: "WO-3 (by diagnostic)",
        seed: "000 WO-3; 9b",
        summary: "the same diagnostic failing again and again across any commands",
    };
    type Settings = Settings;

    fn check(s: &Settings) -> Result<(), String> {
        super::at_least("stalled", s.stalled.into(), 2)?;
        if s.stalled > s.abandon {
            return Err(format!(
                "`stalled` ({}) must not exceed `abandon` ({})",
                s.stalled, s.abandon
            ));
        }
        Ok(())
    }

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            counts: HashMap::default(),
            stalls: 0,
        }
    }
}

impl Guard for RepeatedDiagnostic {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        self.counts.clear();
        self.stalls = 0;
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        let Step::Result { call, outcome, raw } = &event.step else {
            return;
        };
        if outcome.check_passed() {
            self.counts.retain(|(agent, _), _| agent != event.agent);
            return;
        }
        // A command that ran and failed, and said how; a call the harness refused did
        // not run.
        let Some(fingerprint) = outcome.fingerprint else {
            return;
        };
        if call.kind != ToolKind::Shell || outcome.error_class == Some(ErrorClass::Blocked) {
            return;
        }
        let count = self
            .counts
            .entry((event.agent.to_string(), fingerprint))
            .or_default();
        count.failures += 1;
        count.families.insert(call.families.action.clone());
        let (action, effect) = if count.failures == self.settings.abandon {
            let ends_run = self.settings.terminal && event.agent == "main";
            let effect = if ends_run {
                Effect::Terminal
            } else {
                Effect::Advisory
            };
            ("abandon", effect)
        } else if count.failures == self.settings.stalled {
            self.stalls += 1;
            ("stalled", Effect::Advisory)
        } else {
            return;
        };
        let named = naming_line(raw.output.as_deref().unwrap_or("")).unwrap_or("");
        let quoted: String = named.chars().take(QUOTED).collect();
        let commands = count.families.len();
        firings
            .fire(event.turn, event.agent, action, effect)
            .family(format!("diagnostic:{quoted}"))
            .detail(format!(
                "{} failures ending in this diagnostic, from {commands} command{} \
                 since the last passing check; a different approach, not another variant",
                count.failures,
                if commands == 1 { "" } else { "s" }
            ));
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _: &RunState, _: &mut Firings) -> Metrics {
        let mut metrics = Metrics::new();
        metrics.insert("stalled_diagnostics".into(), self.stalls.into());
        metrics
    }
}
