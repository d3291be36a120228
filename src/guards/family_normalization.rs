//! `family_normalization`: how many failure families the canonicalizer collapses.
//!
//! ## What it checks
//! For every failed call it compares the family the harness keyed before WO-9 (raw
//! command with whitespace collapsed, plus the error class) with the canonical action
//! family (9a normalized command, no error class, 9b). It fires `merge` when a failure
//! whose raw family is new joins a canonical family that already has another variant:
//! the point where the pre-WO-9 breaker was evaded by a cosmetic variation.
//!
//! ## Why it matters
//! The 35B model slipped the breaker by varying `... 2>&1 | tail -100`, `... 2>&1`, and an
//! absolute `cd`: three families each stuck at `rounds=1` (seed 000, WO-9 "Origin").
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), WO-9 9a/9b; seed 001 WO-TD-03 (edit families).

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::normalize::family::ledger_family;
use crate::normalize::{NormEvent, RunState, Step};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {}

#[derive(Default)]
pub struct FamilyNormalization {
    /// canonical family -> raw failure families seen under it, this run.
    variants: BTreeMap<String, BTreeSet<String>>,
}

impl Spec for FamilyNormalization {
    const INFO: GuardInfo = GuardInfo {
        id: "family_normalization",
        work_order: "WO-9",
        seed: "000 WO-9 9a/9b; 001 WO-TD-03",
        summary: "cosmetic command variants collapse into one canonical family",
    };
    type Settings = Settings;

    fn new(_: Settings) -> Self {
        Self::default()
    }
}

impl Guard for FamilyNormalization {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        self.variants.clear();
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        let Step::Result { call, outcome, .. } = &event.step else {
            return;
        };
        let Some(class) = outcome.error_class else {
            return;
        };
        let raw = format!("{}:{}", call.families.raw_action, class.as_str());
        let seen = self
            .variants
            .entry(call.families.action.clone())
            .or_default();
        if seen.insert(raw) && seen.len() > 1 {
            let count = seen.len();
            firings
                .fire(event.turn, event.agent, "merge", Effect::Advisory)
                .family(call.families.action.clone())
                .detail(format!("{count} raw variants share this family"));
        }
    }

    fn finish_run(
        &mut self,
        run: &RunMeta<'_>,
        state: &RunState,
        _firings: &mut Firings,
    ) -> Metrics {
        let raw: usize = self.variants.values().map(BTreeSet::len).sum();
        let mut metrics = Metrics::new();
        metrics.insert("raw_families".into(), raw.into());
        metrics.insert("canonical_families".into(), self.variants.len().into());
        if run.session_index == 0 && !run.convergence_ledger.is_empty() {
            let canonical: BTreeSet<String> = run
                .convergence_ledger
                .iter()
                .map(|f| ledger_family(&f.family, state.cwd()))
                .collect();
            metrics.insert(
                "recorded_ledger_families".into(),
                run.convergence_ledger.len().into(),
            );
            metrics.insert("recorded_ledger_canonical".into(), canonical.len().into());
        }
        metrics
    }
}
