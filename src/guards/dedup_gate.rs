//! `dedup_gate`: an identical call repeated with nothing changed in between.
//!
//! ## What it checks
//! Per agent and working directory, the canonical form of every call (tool plus key-sorted
//! arguments). A call equal to an earlier call of the run, with no change of state since
//! that earlier call's result (no file written, by a tool or a shell command, and no
//! package installed), would have been blocked before dispatch: the gate hands back the
//! earlier result. Fires `block_duplicate` at the repeat's result; that result (and its
//! arguments) would not have entered the context. When the
//! recorded repeat came out differently (state changed outside any recorded mutation), the
//! block would have hidden that: it fires `harmful_block` instead, advisory and unpriced.
//! The replayed blocks are compared with the `dedup` records the harness itself wrote.
//!
//! ## Why it matters
//! The myactuator telemetry holds 15,342 duplicate-call dedup events (seed 000, "The failure
//! signature"); the cross-turn duplicate-call gate (`src/dedup-gate.ts` in the integration
//! map) is what stops them. Replaying it shows which repeats it catches, what they cost, and
//! where it disagrees with what the harness recorded.
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), "The failure signature these work orders attack"
//! (duplicate-call dedup events: 15,342) and "Verified integration map (anchors)"
//! (`src/dedup-gate.ts`, cross-turn duplicate-call gate).

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::hash::HashMap;
use crate::model::tokens_from_chars;
use crate::normalize::{CallInfo, CallShape, ErrorClass, NormEvent, Outcome, RunState, Step};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// Who made a call, where, and what it was (agent, working directory, canonical call): the
/// same call by another agent or in another directory is not a repeat. It holds the call's
/// shared agent name and shape, so a look-up copies no string; every call of a run is
/// looked up, and a table keyed by copies, ordered by string comparison, grew faster than
/// the run (issue #13).
#[derive(Debug, Clone)]
struct Key {
    agent: Arc<str>,
    shape: Arc<CallShape>,
}

impl Key {
    fn of(call: &CallInfo) -> Self {
        Self {
            agent: Arc::clone(&call.agent),
            shape: Arc::clone(&call.shape),
        }
    }

    fn parts(&self) -> (&str, &str, &str) {
        let cwd = self.shape.cwd.as_deref().unwrap_or_default();
        (&self.agent, cwd, &self.shape.canonical)
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.parts().hash(state);
    }
}

/// No thresholds: a call is a duplicate or it is not.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {}

/// The result a repeat would have been answered with.
#[derive(Debug)]
struct Earlier {
    /// Stream position of its result: mutations after it make a repeat legitimate.
    position: u64,
    turn: u32,
    success: bool,
    class: Option<ErrorClass>,
    repeats: u32,
}

/// A call judged a duplicate when it was made, waiting for its result.
#[derive(Debug)]
struct Blocked {
    key: Key,
    repeat: u32,
}

pub struct DedupGate {
    position: u64,
    /// Position of the last successful mutation the counterfactual run still made.
    last_mutation: Option<u64>,
    /// (agent, cwd, canonical call) -> the earlier result.
    earlier: HashMap<Key, Earlier>,
    pending: HashMap<Arc<str>, Blocked>,
    /// The calls blocked, in stream order (one may repeat in a log that reuses call ids).
    /// The calls themselves, shared, not copies of their ids: a stuck loop blocks one at
    /// every turn, and a set of that many strings cost more to free than to fill.
    blocked: Vec<Arc<CallInfo>>,
    /// Calls named by recorded `dedup` events (`None`: no resolvable call).
    recorded: Vec<Option<Arc<CallInfo>>>,
    outcome_differed: u64,
    tokens_suppressed: u64,
}

impl Spec for DedupGate {
    const INFO: GuardInfo = GuardInfo {
        id: "dedup_gate",
        work_order: "dedup gate",
        seed: "000 failure signature (dedup events); integration map dedup-gate.ts",
        summary: "an identical call with no mutation since the earlier one: blocked",
    };
    type Settings = Settings;

    fn new(_settings: Settings) -> Self {
        Self {
            position: 0,
            last_mutation: None,
            earlier: HashMap::default(),
            pending: HashMap::default(),
            blocked: Vec::new(),
            recorded: Vec::new(),
            outcome_differed: 0,
            tokens_suppressed: 0,
        }
    }
}

impl Guard for DedupGate {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(Settings {});
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        self.position += 1;
        match &event.step {
            Step::Call(call) => self.on_call(call),
            Step::Result { call, outcome, .. } => self.on_result(event, call, outcome, firings),
            Step::Dedup { call, .. } => self.recorded.push(call.clone()),
            _ => {}
        }
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _state: &RunState, _f: &mut Firings) -> Metrics {
        let mut blocked: Vec<&str> = self.blocked.iter().map(|c| &*c.call_id).collect();
        blocked.sort_unstable();
        blocked.dedup();
        let named: BTreeSet<&str> = self
            .recorded
            .iter()
            .flatten()
            .map(|c| &*c.call_id)
            .collect();
        let agree = self
            .recorded
            .iter()
            .flatten()
            .filter(|c| blocked.binary_search(&&*c.call_id).is_ok())
            .count();
        let only_replayed = blocked.iter().filter(|id| !named.contains(*id)).count();
        let mut m = Metrics::new();
        m.insert("replayed".into(), blocked.len().into());
        m.insert("recorded".into(), self.recorded.len().into());
        m.insert("agree".into(), agree.into());
        m.insert(
            "only_recorded".into(),
            self.recorded.len().saturating_sub(agree).into(),
        );
        m.insert("only_replayed".into(), only_replayed.into());
        m.insert("outcome_differed".into(), self.outcome_differed.into());
        m.insert("tokens_suppressed".into(), self.tokens_suppressed.into());
        m
    }
}

impl DedupGate {
    /// Decided before dispatch, as the gate would: only what came before the call counts.
    fn on_call(&mut self, call: &CallInfo) {
        let key = Key::of(call);
        let Some(earlier) = self.earlier.get_mut(&key) else {
            return;
        };
        // A mutation at or after the earlier result (including the earlier call's own)
        // means the repeat runs against a different state: not a duplicate.
        if self.last_mutation.is_some_and(|m| m >= earlier.position) {
            return;
        }
        earlier.repeats = earlier.repeats.saturating_add(1);
        let repeat = earlier.repeats;
        self.pending
            .insert(Arc::clone(&call.call_id), Blocked { key, repeat });
    }

    fn on_result(
        &mut self,
        event: &NormEvent<'_>,
        call: &Arc<CallInfo>,
        outcome: &Outcome,
        firings: &mut Firings,
    ) {
        let Some(blocked) = self.pending.remove(&call.call_id) else {
            self.remember(call, outcome, event.turn);
            return;
        };
        // A blocked call never ran, so its mutation (if any) never happened.
        let Some(earlier) = self.earlier.get(&blocked.key) else {
            return;
        };
        let tokens = tokens_from_chars(outcome.chars.saturating_add(call.args_chars));
        let detail = format!(
            "repeat {} of the call at turn {}; no mutation since; earlier result returned",
            blocked.repeat, earlier.turn
        );
        if earlier.success != outcome.success || earlier.class != outcome.error_class {
            // The recorded repeat came out differently: state changed outside any recorded
            // mutation (a service started, a flake cleared), and the gate would have hidden
            // it by answering with the earlier result. That block would have hurt the run,
            // so it is reported, unpriced, under its own action.
            self.outcome_differed += 1;
            firings
                .fire(event.turn, event.agent, "harmful_block", Effect::Advisory)
                .family(call.families.action.clone())
                .detail(format!(
                    "{detail}; but the recorded repeat came out differently ({} then {})",
                    outcome_label(earlier.success, earlier.class),
                    outcome_label(outcome.success, outcome.error_class)
                ));
            return;
        }
        firings
            .fire(
                event.turn,
                event.agent,
                "block_duplicate",
                Effect::Suppress { tokens },
            )
            .family(call.families.action.clone())
            .detail(detail)
            .subject(&*call.call_id);
        self.blocked.push(Arc::clone(call));
        self.tokens_suppressed = self.tokens_suppressed.saturating_add(tokens);
    }

    /// A call that ran: its result is what a later identical call would be answered with.
    fn remember(&mut self, call: &CallInfo, outcome: &Outcome, turn: u32) {
        if outcome.changes_state() {
            self.last_mutation = Some(self.position);
        }
        self.earlier.insert(
            Key::of(call),
            Earlier {
                position: self.position,
                turn,
                success: outcome.success,
                class: outcome.error_class,
                repeats: 0,
            },
        );
    }
}

fn outcome_label(success: bool, class: Option<ErrorClass>) -> &'static str {
    match (success, class) {
        (true, _) => "success",
        (false, Some(c)) => c.as_str(),
        (false, None) => "failure",
    }
}
