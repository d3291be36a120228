//! `ledger_finalization`: what an `open` completion ledger should have said.
//!
//! ## What it checks
//! At the end of a run whose completion ledger is `open` (or was never written), it
//! derives the status from the evidence. Only checks after the last code change speak for
//! the code as it was left (a change supersedes what was checked before it; with no code
//! change, the whole run's checks count). The last check there with a verdict decides: a
//! failure makes the run `incomplete_verification`, a pass verifies it. Checks that ran
//! but said nothing readable (output with no verdict, or a run that could not start) make
//! it `unverifiable`; nothing run at all after a code change leaves it
//! `incomplete_verification` ("never verified"). A stale-edit family never resolved, or a
//! recorded terminal-incomplete state, make it `incomplete_verification` too. A clean
//! `task_complete` with none of those makes it `completed`; otherwise it stays `open`.
//!
//! A *code change* (`Outcome::code_change`) is a write to the project's code, not to the
//! run's scratch (new repro scripts, backups, temporary files, installed packages); a
//! *check* is an execution with a result (`Outcome::check`: pass, fail, could not start,
//! inconclusive; `normalize::check`). It reports the figures the verdict rests on.
//!
//! ## Why it matters
//! The telegram dropbear run ended with evidence of a mutation, stale-edit failures and
//! no verification, and its ledger still said `open` (seed 001, WO-TD-06). On shell agents
//! a ledger that counts every written file as a mutation and recognises few checks says
//! `incomplete_verification` on almost every run, and carries no information (issue #28).
//!
//! ## Seed
//! seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-06 ("missing verification after code
//! mutations"); seed 002 (`002_527d73931b42d8b2.txt`), context fix 4 "Make Completion
//! State Truth-Based".

use super::{
    default_completed_statuses, Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec,
};
use crate::model::LedgerStatus;
use crate::normalize::check::CheckResult;
use crate::normalize::{ErrorClass, NormEvent, RunState, Step};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// `task_complete` statuses that claim success.
    pub completed_statuses: Vec<String>,
    /// Directive states that mean the harness gave up on the run.
    pub terminal_states: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            completed_statuses: default_completed_statuses(),
            terminal_states: vec!["terminal_incomplete".into()],
        }
    }
}

pub struct LedgerFinalization {
    settings: Settings,
    /// (position in the stream, turn) of the last code change and of the last passing
    /// check: positions order events within one turn.
    last_code_change: Option<(u64, u32)>,
    last_verified: Option<(u64, u32)>,
    /// The turn of the last write of any kind (code or scratch).
    last_mutation: Option<u32>,
    position: u64,
    /// Check results since the last code change (since the run began when none).
    window: Window,
    /// Stale-edit families not yet resolved, with the turn of their first failure.
    stale: BTreeMap<String, u32>,
    terminal: Option<u32>,
    claimed_complete: bool,
    /// Calls that wrote files, those inferred from shell grammar, and those that changed
    /// the project's code.
    mutations: u64,
    inferred_mutations: u64,
    code_changes: u64,
}

/// The checks since the last code change: how many of each result, and the last one that
/// said pass or fail.
#[derive(Default)]
struct Window {
    counts: BTreeMap<&'static str, u64>,
    last_verdict: Option<(CheckResult, String, u32)>,
}

impl Window {
    fn record(&mut self, result: CheckResult, family: &str, turn: u32) {
        *self.counts.entry(result.as_str()).or_default() += 1;
        if result.is_verdict() {
            self.last_verdict = Some((result, family.to_string(), turn));
        }
    }

    /// Checks that ran but said nothing readable.
    fn unreadable(&self) -> u64 {
        [CheckResult::Inconclusive, CheckResult::CouldNotStart]
            .iter()
            .map(|r| self.counts.get(r.as_str()).copied().unwrap_or(0))
            .sum()
    }

    fn counts_json(&self) -> serde_json::Value {
        let mut all = serde_json::Map::new();
        for r in [
            CheckResult::Pass,
            CheckResult::Fail,
            CheckResult::CouldNotStart,
            CheckResult::Inconclusive,
        ] {
            let n = self.counts.get(r.as_str()).copied().unwrap_or(0);
            all.insert(r.as_str().into(), n.into());
        }
        all.into()
    }
}

impl Spec for LedgerFinalization {
    const INFO: GuardInfo = GuardInfo {
        id: "ledger_finalization",
        work_order: "WO-TD-06",
        seed: "001 WO-TD-06; 002 fix 4",
        summary: "an open ledger finalizes from evidence (incomplete_verification)",
    };
    type Settings = Settings;

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            last_code_change: None,
            last_verified: None,
            last_mutation: None,
            position: 0,
            window: Window::default(),
            stale: BTreeMap::new(),
            terminal: None,
            claimed_complete: false,
            mutations: 0,
            inferred_mutations: 0,
            code_changes: 0,
        }
    }
}

impl Guard for LedgerFinalization {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, _firings: &mut Firings) {
        self.position += 1;
        let here = (self.position, event.turn);
        match &event.step {
            Step::Result { call, outcome, .. } => {
                let family = &call.families.action;
                // A write happened even when the output overturned the call's verdict.
                if outcome.mutation {
                    self.last_mutation = Some(event.turn);
                    self.mutations += 1;
                    self.inferred_mutations += u64::from(outcome.mutation_inferred);
                }
                // A change of the code supersedes every check before it; a check in the
                // same line (`sed -i ... && pytest`) ran after it.
                if outcome.code_change {
                    self.last_code_change = Some(here);
                    self.code_changes += 1;
                    self.window = Window::default();
                }
                if let Some(result) = outcome.check {
                    self.window.record(result, family, event.turn);
                }
                if outcome.success {
                    for resolved in outcome.resolves(call) {
                        self.stale.remove(resolved);
                    }
                    if outcome.check_passed() {
                        self.last_verified = Some(here);
                        // A passing check after the failures shows the current truth.
                        self.stale.clear();
                    }
                } else if outcome.error_class == Some(ErrorClass::StaleEdit) {
                    self.stale.entry(family.clone()).or_insert(event.turn);
                }
            }
            Step::Directive(d) => {
                let state = d.state.as_deref().unwrap_or_default();
                if self.settings.terminal_states.iter().any(|s| s == state) {
                    self.terminal.get_or_insert(event.turn);
                }
            }
            Step::TaskComplete { status, .. } => {
                self.claimed_complete =
                    self.settings.completed_statuses.iter().any(|s| s == status);
            }
            _ => {}
        }
    }

    fn finish_run(
        &mut self,
        run: &RunMeta<'_>,
        _state: &RunState,
        firings: &mut Firings,
    ) -> Metrics {
        let reasons = self.unresolved();
        let unverifiable = self.unverifiable();
        let recorded = run.completion_ledger.unwrap_or(LedgerStatus::Missing);
        let finalized = match recorded {
            LedgerStatus::Open | LedgerStatus::Missing if !reasons.is_empty() => {
                LedgerStatus::IncompleteVerification
            }
            LedgerStatus::Open | LedgerStatus::Missing if unverifiable.is_some() => {
                LedgerStatus::Unverifiable
            }
            LedgerStatus::Open | LedgerStatus::Missing if self.claimed_complete => {
                LedgerStatus::Completed
            }
            other => other,
        };
        if finalized != recorded {
            let firing = firings.fire(
                run.last_turn,
                "main",
                format!("finalize_{finalized}"),
                Effect::Advisory,
            );
            if !reasons.is_empty() {
                firing.detail(reasons.join("; "));
            } else if let Some(why) = unverifiable {
                firing.detail(why);
            }
        }
        let turn = |at: Option<(u64, u32)>| at.map(|(_, t)| t);
        let mut metrics = Metrics::new();
        metrics.insert("finalized".into(), finalized.as_str().into());
        metrics.insert("unresolved".into(), reasons.len().into());
        // Figures a reviewer checks the verdict against: every write, those read from
        // shell grammar rather than recorded by the harness, and those that changed code.
        metrics.insert("mutations".into(), self.mutations.into());
        metrics.insert("inferred_mutations".into(), self.inferred_mutations.into());
        metrics.insert("code_changes".into(), self.code_changes.into());
        metrics.insert("last_mutation_turn".into(), self.last_mutation.into());
        metrics.insert(
            "last_code_change_turn".into(),
            turn(self.last_code_change).into(),
        );
        metrics.insert("last_verified_turn".into(), turn(self.last_verified).into());
        metrics.insert("checks_after_change".into(), self.window.counts_json());
        metrics
    }
}

impl LedgerFinalization {
    /// The evidence that keeps the run from being cleanly complete, in a stable order.
    fn unresolved(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        match (&self.window.last_verdict, self.last_code_change) {
            (Some((CheckResult::Fail, family, turn)), _) => {
                reasons.push(format!("last check failed at turn {turn}: {family}"));
            }
            (None, Some((_, t))) if self.window.unreadable() == 0 => {
                reasons.push(match self.last_verified {
                    Some((_, v)) => {
                        format!(
                            "code mutation at turn {t} after the last passing check at turn {v}"
                        )
                    }
                    None => format!("code mutation at turn {t} never verified"),
                });
            }
            _ => {}
        }
        for (family, turn) in &self.stale {
            reasons.push(format!("stale edit unresolved since turn {turn}: {family}"));
        }
        if let Some(t) = self.terminal {
            reasons.push(format!("terminal incomplete at turn {t}"));
        }
        reasons
    }

    /// Why the run is `unverifiable`, if it is: after its last code change something ran,
    /// but no output said pass or fail.
    fn unverifiable(&self) -> Option<String> {
        let (_, turn) = self.last_code_change?;
        if self.window.last_verdict.is_some() || self.window.unreadable() == 0 {
            return None;
        }
        let count = |r: CheckResult| self.window.counts.get(r.as_str()).copied().unwrap_or(0);
        Some(format!(
            "checked, but the output carries no verdict: after the code change at turn \
             {turn}, {} inconclusive, {} could not start",
            count(CheckResult::Inconclusive),
            count(CheckResult::CouldNotStart)
        ))
    }
}
