//! `coherence_gate`: the patch ⇄ regenerate switch on the type layer's coherence.
//!
//! ## What it checks
//! It keeps the latest text of every C/C++ and TypeScript file the project's runs wrote
//! whole (successful edits are applied to a known text), scans each for top-level type
//! definitions and function declarations/definitions, and after every full-file write
//! computes a coherence score from duplicate shared type definitions, the parameter-count
//! match of implemented functions against their declarations, and the density of symbols
//! diagnostics report as unresolved. When the score falls below `regen_threshold` (first
//! time, or again after recovering) it fires `regenerate`; from then until a passing
//! verification it counts the incremental edits made to the incoherent files, which the
//! seed forbids.
//!
//! ## Why it matters
//! The myactuator base was below the coherence floor (the same config type defined three
//! times), so every patch was whack-a-mole; below the floor the type layer has to be
//! regenerated wholesale, not patched.
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), WO-2 "Contract-Coherence Regime Switch (patch ⇄
//! regenerate)" and the genericity invariant ("WO-2 scans C/C++ and TS").

mod score;

use super::boundary_verifier::decls::{self, conditional_compilation, is_interface, Lang};
use super::boundary_verifier::diagnostics::{parse, unresolved_name};
use super::boundary_verifier::written::{apply, full_text, replacements};
use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::normalize::{CallInfo, NormEvent, RunState, Step, ToolKind};
use score::{assess, Unit};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Below this coherence score the unit is regenerated, not patched (seed: 0.6).
    pub regen_threshold: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            regen_threshold: 0.6,
        }
    }
}

pub struct CoherenceGate {
    settings: Settings,
    /// The latest known text of each C/C++/TS file, by key path. Carried across the
    /// project's sessions: the files outlive the run that wrote them.
    units: BTreeMap<String, Unit>,
    /// Symbols the run's diagnostics reported unresolved since its last passing check.
    unresolved: BTreeSet<String>,
    /// The score is below the threshold (a `regenerate` was fired and not yet recovered).
    below: bool,
    /// Files a `regenerate` named, until a passing verification.
    incoherent: BTreeSet<String>,
    patches: u64,
    regenerates: u64,
    score: Option<f64>,
    min_score: Option<f64>,
}

impl Spec for CoherenceGate {
    const INFO: GuardInfo = GuardInfo {
        id: "coherence_gate",
        work_order: "WO-2",
        seed: "000 WO-2",
        summary: "full-file writes duplicate or mismatch types: coherence < 0.6 means regenerate",
    };
    type Settings = Settings;

    fn check(s: &Settings) -> Result<(), String> {
        super::within("regen_threshold", s.regen_threshold, 0.0, 1.0)
    }

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            units: BTreeMap::new(),
            unresolved: BTreeSet::new(),
            below: false,
            incoherent: BTreeSet::new(),
            patches: 0,
            regenerates: 0,
            score: None,
            min_score: None,
        }
    }
}

impl Guard for CoherenceGate {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        let units = std::mem::take(&mut self.units);
        *self = Self::new(std::mem::take(&mut self.settings));
        self.units = units;
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        match &event.step {
            // An incremental edit of a file the last `regenerate` named (WO-2 forbids it).
            Step::Call(call)
                if call.kind == ToolKind::Edit
                    && call
                        .families
                        .path
                        .as_ref()
                        .is_some_and(|p| self.incoherent.contains(p)) =>
            {
                self.patches += 1;
            }
            Step::Result { call, outcome, raw } => {
                if outcome.check_passed() {
                    self.incoherent.clear();
                    self.unresolved.clear();
                }
                if !outcome.success {
                    self.diagnosed(raw.output.as_deref().unwrap_or_default());
                } else if call.kind.mutates_files() {
                    self.written(call, event, firings);
                }
            }
            _ => {}
        }
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _s: &RunState, _f: &mut Firings) -> Metrics {
        let mut metrics = Metrics::new();
        let x100 = |s: f64| (s * 100.0).round() as u64;
        if let (Some(score), Some(min)) = (self.score, self.min_score) {
            let verdict = if score < self.settings.regen_threshold {
                "regenerate"
            } else {
                "patch"
            };
            metrics.insert("verdict".into(), verdict.into());
            metrics.insert("score_x100".into(), x100(score).into());
            metrics.insert("min_score_x100".into(), x100(min).into());
        }
        metrics.insert("regenerates".into(), self.regenerates.into());
        metrics.insert("patches_while_incoherent".into(), self.patches.into());
        metrics
    }
}

impl CoherenceGate {
    /// Remembers the symbols a failing check reports as unknown (component c).
    fn diagnosed(&mut self, output: &str) {
        for d in parse(output).iter().filter(|d| d.error) {
            if let Some(name) = unresolved_name(d.message) {
                self.unresolved.insert(name.to_string());
            }
        }
    }

    fn written(&mut self, call: &CallInfo, event: &NormEvent<'_>, firings: &mut Firings) {
        let Some(path) = call.families.path.clone() else {
            return;
        };
        if !matches!(Lang::of(&path), Some(Lang::C | Lang::Ts)) {
            return;
        }
        let text = match call.kind {
            ToolKind::Write => full_text(&call.args).map(str::to_string),
            // An edit keeps a known text current; an unknown or diverged text is dropped,
            // so no judgement rests on a stale copy. Only full writes are scored.
            _ => {
                let patched = self
                    .units
                    .get(&path)
                    .and_then(|u| apply(&u.text, &replacements(&call.args)));
                match patched {
                    Some(text) => self.remember(&path, text),
                    None => drop(self.units.remove(&path)),
                }
                return;
            }
        };
        let Some(text) = text else {
            return;
        };
        self.remember(&path, text);
        self.assess(&path, event, firings);
    }

    fn remember(&mut self, path: &str, text: String) {
        let decls = decls::scan(path, &text);
        for d in &decls {
            self.unresolved.remove(&d.name);
        }
        let unit = Unit {
            shared: is_interface(path),
            repeats: Lang::of(path) == Some(Lang::C) && !conditional_compilation(&text),
            text,
            decls,
        };
        self.units.insert(path.to_string(), unit);
    }

    fn assess(&mut self, path: &str, event: &NormEvent<'_>, firings: &mut Firings) {
        let Some(c) = assess(&self.units, &self.unresolved) else {
            return;
        };
        self.score = Some(c.score);
        self.min_score = Some(self.min_score.map_or(c.score, |m| m.min(c.score)));
        if c.score >= self.settings.regen_threshold {
            self.below = false;
            return;
        }
        if std::mem::replace(&mut self.below, true) {
            return;
        }
        self.regenerates += 1;
        let (family, what) = match &c.culprit {
            Some(culprit) => (
                culprit.name().to_string(),
                format!(": {}", culprit.describe()),
            ),
            None => (path.to_string(), String::new()),
        };
        firings
            .fire(event.turn, event.agent, "regenerate", Effect::Advisory)
            .family(family)
            .detail(format!("score {:.2}{what}", c.score));
        self.incoherent = c.files;
        self.incoherent.insert(path.to_string());
    }
}
