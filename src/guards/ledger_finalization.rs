//! `ledger_finalization`: what an `open` completion ledger should have said.
//!
//! ## What it checks
//! At the end of a run whose completion ledger is `open` (or was never written), it
//! derives the status from the evidence: a code mutation (by an edit tool or a shell
//! command that writes files) after the last passing check (or none at all), a stale-edit
//! family never resolved, a check whose last run failed (seed 002 fix 4: "unresolved
//! evidence"), or a recorded terminal-incomplete state make it `incomplete_verification`;
//! a clean `task_complete` with none of those makes it `completed`; otherwise it stays
//! `open`. A check passes only when its verdict is a success and its own output reports no
//! failure (`Outcome::check_passed`). It reports the figures the verdict rests on.
//!
//! ## Why it matters
//! The telegram dropbear run ended with evidence of a mutation, stale-edit failures and
//! no verification, and its ledger still said `open` (seed 001, WO-TD-06).
//!
//! ## Seed
//! seed 001 (`001_d7c440e7b9955800.txt`) WO-TD-06; seed 002 (`002_527d73931b42d8b2.txt`),
//! context fix 4 "Make Completion State Truth-Based".

use super::{
    default_completed_statuses, Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec,
};
use crate::model::LedgerStatus;
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
    /// (position in the stream, turn) of the last mutation and last passing verification:
    /// positions order events within one turn.
    last_mutation: Option<(u64, u32)>,
    last_verified: Option<(u64, u32)>,
    position: u64,
    /// Stale-edit families not yet resolved, with the turn of their first failure.
    stale: BTreeMap<String, u32>,
    /// Checks (verification families) whose last run failed, with their first failing turn.
    failing_checks: BTreeMap<String, u32>,
    terminal: Option<u32>,
    claimed_complete: bool,
    /// Calls that changed files, and how many of those were inferred from shell grammar.
    mutations: u64,
    inferred_mutations: u64,
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
            last_mutation: None,
            last_verified: None,
            position: 0,
            stale: BTreeMap::new(),
            failing_checks: BTreeMap::new(),
            terminal: None,
            claimed_complete: false,
            mutations: 0,
            inferred_mutations: 0,
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
                    self.last_mutation = Some(here);
                    self.mutations += 1;
                    self.inferred_mutations += u64::from(outcome.mutation_inferred);
                }
                if outcome.success {
                    for resolved in outcome.resolves(call) {
                        self.stale.remove(resolved);
                        self.failing_checks.remove(resolved);
                    }
                    if outcome.check_passed() {
                        self.last_verified = Some(here);
                        // A passing check after the failures shows the current truth.
                        self.stale.clear();
                    }
                } else if outcome.error_class == Some(ErrorClass::StaleEdit) {
                    self.stale.entry(family.clone()).or_insert(event.turn);
                } else if outcome.verification {
                    self.failing_checks
                        .entry(family.clone())
                        .or_insert(event.turn);
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
        let recorded = run.completion_ledger.unwrap_or(LedgerStatus::Missing);
        let finalized = match recorded {
            LedgerStatus::Open | LedgerStatus::Missing if !reasons.is_empty() => {
                LedgerStatus::IncompleteVerification
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
            }
        }
        let mut metrics = Metrics::new();
        metrics.insert("finalized".into(), finalized.as_str().into());
        metrics.insert("unresolved".into(), reasons.len().into());
        // Figures a reviewer checks the verdict against; inferred mutations are the ones
        // read from shell grammar rather than recorded by the harness.
        metrics.insert("mutations".into(), self.mutations.into());
        metrics.insert("inferred_mutations".into(), self.inferred_mutations.into());
        metrics.insert(
            "last_mutation_turn".into(),
            self.last_mutation.map(|(_, t)| t).into(),
        );
        metrics.insert(
            "last_verified_turn".into(),
            self.last_verified.map(|(_, t)| t).into(),
        );
        metrics
    }
}

impl LedgerFinalization {
    /// The evidence that keeps the run from being cleanly complete, in a stable order.
    fn unresolved(&self) -> Vec<String> {
        let mut reasons = Vec::new();
        match (self.last_mutation, self.last_verified) {
            (Some((m, mt)), Some((v, vt))) if m > v => reasons.push(format!(
                "mutation at turn {mt} after last verification at turn {vt}"
            )),
            (Some((_, mt)), None) => reasons.push(format!("mutation at turn {mt} never verified")),
            _ => {}
        }
        for (family, turn) in &self.stale {
            reasons.push(format!("stale edit unresolved since turn {turn}: {family}"));
        }
        for (family, turn) in &self.failing_checks {
            reasons.push(format!("verification failing since turn {turn}: {family}"));
        }
        if let Some(t) = self.terminal {
            reasons.push(format!("terminal incomplete at turn {t}"));
        }
        reasons
    }
}
