//! `verified_completion`: a completion claim the todo tree's evidence does not support.
//!
//! ## What it checks
//! At every completion claim of the main agent (a `task_complete` record with a completed
//! status, or a successful call of a completion tool) it checks three things and holds the
//! claim (`hold_completion`, advisory) when any is unmet:
//! 1. no verification failure is unresolved (a failed verifying result whose family has
//!    not succeeded since);
//! 2. every todo of the latest list is completed;
//! 3. every declared `verifyCommand` of the latest list ran and passed after the last
//!    successful mutation, matched structurally on canonical shell forms: the exact
//!    command, or `verify && echo ...` (no `||` after it); `verify && echo ok || echo
//!    failed` never counts (it exits 0 either way); a conjunctive verifier `a && b` is met
//!    by separately passing runs of `a` and of `b`. Reading or listing an artifact is not
//!    a run of the verifier, so it never clears one. A run cut by a display filter
//!    (`| tail`) whose output reports failures has not passed, whatever its exit status.
//!
//! It also reports the first turn at which the tree was fully verified (`verified_turn`):
//! where the harness could have completed the run itself, without another model turn.
//!
//! ## Why it matters
//! A live run marked its last todo completed with a combined `verifyCommand` it had never
//! run exactly; artifact inspection then cleared the missing verifier and the model
//! overclaimed completion. Another run had everything verified and still waited for a
//! model-generated `task_complete`.
//!
//! ## Seed
//! seed 002 (`002_527d73931b42d8b2.txt`), fix 16 "Truth-Based Terminal Completion After
//! Verified Todo Closure" and fix 17 "Keep Verify-Command Evidence Separate From Artifact
//! Evidence".

mod command;

use super::{
    default_completed_statuses, Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec,
};
use crate::model::Todo;
use crate::normalize::{CallInfo, NormEvent, Outcome, RunState, Step, ToolKind};
use command::Forms;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Statuses (lower-cased) that claim success, for `task_complete` and for todos.
    pub completed_statuses: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            completed_statuses: default_completed_statuses(),
        }
    }
}

/// A point in the run: stream position (orders events within a turn) and turn.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    pos: u64,
    turn: u32,
}

pub struct VerifiedCompletion {
    settings: Settings,
    position: u64,
    last_mutation: Option<Stamp>,
    /// Families whose last verifying result failed, with where.
    verification_failures: BTreeMap<String, Stamp>,
    /// Canonical forms (and `&&` components) of the last reliable passing run.
    proven: BTreeMap<String, Stamp>,
    /// Canonical forms of the last failing run.
    failed: BTreeMap<String, Stamp>,
    /// Forms run only ahead of a `||`, whose exit status was masked.
    masked: BTreeMap<String, u32>,
    /// Declared verifiers of the latest list: canonical form -> (forms, todo id).
    verifiers: BTreeMap<String, (Forms, String)>,
    /// Open todos of the latest list, as `id (status)`.
    open_todos: Vec<String>,
    todo_count: usize,
    last_claim_turn: Option<u32>,
    claims: u64,
    held: u64,
    verified_turn: Option<u32>,
}

impl Spec for VerifiedCompletion {
    const INFO: GuardInfo = GuardInfo {
        id: "verified_completion",
        work_order: "fixes 16-17",
        seed: "002 fixes 16, 17",
        summary: "a completion claim over open todos, failed checks or an unmet verifyCommand",
    };
    type Settings = Settings;

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            position: 0,
            last_mutation: None,
            verification_failures: BTreeMap::new(),
            proven: BTreeMap::new(),
            failed: BTreeMap::new(),
            masked: BTreeMap::new(),
            verifiers: BTreeMap::new(),
            open_todos: Vec::new(),
            todo_count: 0,
            last_claim_turn: None,
            claims: 0,
            held: 0,
            verified_turn: None,
        }
    }
}

impl Guard for VerifiedCompletion {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, run: &RunState, firings: &mut Firings) {
        self.position += 1;
        if event.agent != "main" {
            return;
        }
        let here = Stamp {
            pos: self.position,
            turn: event.turn,
        };
        match &event.step {
            Step::Result { call, outcome, .. } if call.kind == ToolKind::TaskComplete => {
                let status = call.args.get("status").and_then(|v| v.as_str());
                if outcome.success && status.is_none_or(|s| self.is_completed(s)) {
                    self.claim(event, firings);
                }
            }
            Step::Result { call, outcome, .. } => {
                self.record(call, outcome, here);
                self.note_verified(event.turn);
            }
            Step::Todos(list) => {
                self.set_todos(list, run.cwd());
                self.note_verified(event.turn);
            }
            Step::TaskComplete { status, .. } if self.is_completed(status) => {
                self.claim(event, firings);
            }
            _ => {}
        }
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _: &RunState, _: &mut Firings) -> Metrics {
        let met = self
            .verifiers
            .values()
            .filter(|(forms, _)| self.verifier_met(forms))
            .count();
        let mut metrics = Metrics::new();
        metrics.insert("claims".into(), self.claims.into());
        metrics.insert("held".into(), self.held.into());
        metrics.insert("verifiers_declared".into(), self.verifiers.len().into());
        metrics.insert("verifiers_met".into(), met.into());
        metrics.insert("verified_turn".into(), self.verified_turn.into());
        metrics
    }
}

impl VerifiedCompletion {
    /// A check that passed after a code change speaks for the code as it now is: failures
    /// from before that change were about code that is gone (issue #28; the ledger's
    /// window, docs/GUARDS.md *ledger_finalization*). A failure with no code change
    /// after it stays until its own family passes.
    fn supersede_failures(&mut self, pass: Stamp) {
        if let Some(change) = self.last_mutation.filter(|c| c.pos < pass.pos) {
            self.verification_failures
                .retain(|_, failed| failed.pos > change.pos);
        }
    }

    fn is_completed(&self, status: &str) -> bool {
        let status = status.trim().to_ascii_lowercase();
        self.settings.completed_statuses.contains(&status)
    }

    fn record(&mut self, call: &CallInfo, outcome: &Outcome, here: Stamp) {
        let family = call.families.action.as_str();
        // The shared verdict (a masked exit status its own output contradicts is not a
        // success), and a run whose output reports failures has not passed either.
        let passed = outcome.success && !outcome.reports_failures();
        // A fresh check must follow the last change to the code; scratch writes (a
        // repro script, a backup) need none.
        if outcome.code_change {
            self.last_mutation = Some(here);
        }
        if passed {
            // A passing `a && b` also resolves earlier failures of `a` and of `b`.
            for resolved in outcome.resolves(call) {
                self.verification_failures.remove(resolved);
            }
            if outcome.check_passed() {
                self.supersede_failures(here);
            }
        } else if outcome.verification {
            self.verification_failures.insert(family.to_string(), here);
        }
        let shell = call.kind == ToolKind::Shell;
        let Some(canonical) = call.families.command.as_deref().filter(|_| shell) else {
            return;
        };
        let forms = Forms::of(canonical, call.cwd.as_deref());
        if let Some(masked) = forms.masked {
            self.masked.insert(masked, here.turn);
        }
        if passed {
            for form in std::iter::once(forms.whole).chain(forms.conjuncts) {
                self.proven.insert(form, here);
            }
        } else {
            self.failed.insert(forms.whole, here);
        }
    }

    fn set_todos(&mut self, list: &[Todo], cwd: Option<&str>) {
        self.todo_count = list.len();
        self.open_todos = list
            .iter()
            .filter(|t| !self.is_completed(&t.status))
            .map(|t| format!("{} ({})", t.id, t.status))
            .collect();
        self.verifiers.clear();
        for todo in list {
            let Some(raw) = todo.verify_command.as_deref() else {
                continue;
            };
            let forms = Forms::of(raw, cwd);
            if !forms.whole.is_empty() && !self.verifiers.contains_key(&forms.whole) {
                self.verifiers
                    .insert(forms.whole.clone(), (forms, todo.id.clone()));
            }
        }
    }

    /// Fix 16: the first point where the harness could have completed the run itself.
    fn note_verified(&mut self, turn: u32) {
        if self.verified_turn.is_none()
            && self.todo_count > 0
            && !self.verifiers.is_empty()
            && self.met()
        {
            self.verified_turn = Some(turn);
        }
    }

    fn claim(&mut self, event: &NormEvent<'_>, firings: &mut Firings) {
        // A completion tool call and its `task_complete` record are one claim.
        if self.last_claim_turn == Some(event.turn) {
            return;
        }
        self.last_claim_turn = Some(event.turn);
        self.claims += 1;
        let unmet = self.unmet();
        if unmet.is_empty() {
            return;
        }
        self.held += 1;
        firings
            .fire(event.turn, event.agent, "hold_completion", Effect::Advisory)
            .detail(unmet.join("; "));
    }

    /// Whether nothing keeps the run from being complete: [`Self::unmet`] is empty. Checked
    /// after every result, so it builds no text (a run that keeps failing checks would
    /// otherwise pay for its whole list of failures at every step).
    fn met(&self) -> bool {
        self.verification_failures.is_empty()
            && self.open_todos.is_empty()
            && self
                .verifiers
                .values()
                .all(|(forms, _)| self.verifier_met(forms))
    }

    /// Everything that keeps the run from being complete, in a stable order.
    fn unmet(&self) -> Vec<String> {
        let mut items = Vec::new();
        if !self.verification_failures.is_empty() {
            let failures = self
                .verification_failures
                .iter()
                .map(|(family, at)| format!("{family} (turn {})", at.turn));
            items.push(format!(
                "unresolved verification failures: {}",
                list(failures)
            ));
        }
        if !self.open_todos.is_empty() {
            items.push(format!(
                "open todos: {}",
                list(self.open_todos.iter().cloned())
            ));
        }
        for (form, (forms, id)) in &self.verifiers {
            if let Some(gap) = self.verifier_gap(forms) {
                items.push(format!("verifyCommand `{form}` (todo {id}) {gap}"));
            }
        }
        items
    }

    /// The last reliable pass of `form`, when it is fresh: after the last mutation and
    /// not followed by a failure of the same form.
    fn fresh(&self, form: &str) -> Option<Stamp> {
        let pass = *self.proven.get(form)?;
        let after_mutation = self.last_mutation.is_none_or(|m| pass.pos >= m.pos);
        let failed_since = self.failed.get(form).is_some_and(|f| f.pos > pass.pos);
        (after_mutation && !failed_since).then_some(pass)
    }

    /// Whether a declared verifier is met: its command passed fresh, or each of its `&&`
    /// components did, with no failure of the whole since the earliest of them.
    fn verifier_met(&self, forms: &Forms) -> bool {
        if self.fresh(&forms.whole).is_some() {
            return true;
        }
        let parts: Vec<Option<Stamp>> = forms.conjuncts.iter().map(|c| self.fresh(c)).collect();
        if parts.is_empty() || !parts.iter().all(Option::is_some) {
            return false;
        }
        let earliest = parts.iter().flatten().map(|s| s.pos).min().unwrap_or(0);
        self.failed
            .get(&forms.whole)
            .is_none_or(|f| f.pos < earliest)
    }

    /// Why a declared verifier is not met, or `None` when it is.
    fn verifier_gap(&self, forms: &Forms) -> Option<String> {
        if self.verifier_met(forms) {
            return None;
        }
        let parts: Vec<Option<Stamp>> = forms.conjuncts.iter().map(|c| self.fresh(c)).collect();
        let whole_failed = self.failed.get(&forms.whole);
        let pass = self.proven.get(&forms.whole);
        Some(match (pass, whole_failed) {
            (p, Some(f)) if p.is_none_or(|p| f.pos > p.pos) => {
                format!("last run failed (turn {})", f.turn)
            }
            (Some(p), _) => format!(
                "stale: passed at turn {}, mutation at turn {}",
                p.turn,
                self.last_mutation.map_or(0, |m| m.turn)
            ),
            _ if self.masked.contains_key(&forms.whole) => {
                "only run behind `||` (exit status masked)".to_string()
            }
            _ if parts.iter().any(Option::is_some) => {
                let missing: Vec<String> = forms
                    .conjuncts
                    .iter()
                    .zip(&parts)
                    .filter(|(_, p)| p.is_none())
                    .map(|(c, _)| format!("`{c}`"))
                    .collect();
                format!(
                    "components not passed since the last mutation: {}",
                    missing.join(", ")
                )
            }
            _ => "not run".to_string(),
        })
    }
}

/// At most five entries, then a count of the rest (only the five shown are built).
fn list(items: impl ExactSizeIterator<Item = String>) -> String {
    const SHOWN: usize = 5;
    let total = items.len();
    let mut text = items.take(SHOWN).collect::<Vec<_>>().join(", ");
    if total > SHOWN {
        text.push_str(&format!(" (+{} more)", total - SHOWN));
    }
    text
}
