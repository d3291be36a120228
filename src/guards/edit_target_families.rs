//! `edit_target_families`: the distinct edits a coarse `tool:path` family would have blocked.
//!
//! ## What it checks
//! Replays the focus supervisor's old edit family, `<tool>:<path>`, beside the
//! target-specific one (`<tool>:<path>:<edit target>`, shared normalization). Once a coarse
//! family has `coarse_block_after` failed edits, the old key blocks every later edit of that
//! tool on that path. Each later edit whose target family is not one of the failing ones
//! would have been blocked by the coarse key but passes with target families: it fires
//! `let_through`, and counts whether the recorded call then succeeded.
//!
//! ## Why it matters
//! In the dropbear run one stale edit target contaminated the later, distinct joint edits
//! and line patches of the same XML file: the coarse key blocked productive work along
//! with the stale retry (seed 001, WO-TD-03 root cause).
//!
//! ## Seed
//! seed 001 (`001_d7c440e7b9955800.txt`), WO-TD-03. The default threshold is the focus
//! supervisor's escalation at family count >= 2 (seed 000, `000_053cae7e53b598d3.txt`, WO-3
//! "Root-cause tie").

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::normalize::{CallInfo, ErrorClass, NormEvent, Outcome, RunState, Step, ToolKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Failed edits of one coarse `tool:path` family after which the old key blocked every
    /// later edit of it; at least 1.
    pub coarse_block_after: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            coarse_block_after: 2,
        }
    }
}

/// A coarse family as seen by one agent: (agent, `tool:path`).
type CoarseKey = (String, String);

#[derive(Debug, Default)]
struct Coarse {
    failures: u32,
    /// The target families whose failures built the count.
    failing: BTreeSet<String>,
    /// The first of them, named in the detail.
    first: String,
}

#[derive(Debug, Default)]
struct Counts {
    let_through: u64,
    let_through_succeeded: u64,
}

pub struct EditTargetFamilies {
    settings: Settings,
    coarse: BTreeMap<CoarseKey, Coarse>,
    /// Calls let through, awaiting their result.
    pending: BTreeSet<std::sync::Arc<str>>,
    counts: Counts,
}

impl Spec for EditTargetFamilies {
    const INFO: GuardInfo = GuardInfo {
        id: "edit_target_families",
        work_order: "WO-TD-03",
        seed: "001 WO-TD-03",
        summary: "distinct edits a coarse tool:path family would have blocked",
    };
    type Settings = Settings;

    fn check(s: &Settings) -> Result<(), String> {
        super::at_least("coarse_block_after", s.coarse_block_after.into(), 1)
    }

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            coarse: BTreeMap::new(),
            pending: BTreeSet::new(),
            counts: Counts::default(),
        }
    }
}

impl Guard for EditTargetFamilies {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(self.settings.clone());
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        match &event.step {
            Step::Call(call) => self.call(call, firings),
            Step::Result { call, outcome, .. } => self.result(call, outcome),
            _ => {}
        }
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _state: &RunState, _f: &mut Firings) -> Metrics {
        let threshold = self.threshold();
        let locked = self
            .coarse
            .values()
            .filter(|c| c.failures >= threshold)
            .count();
        let mut metrics = Metrics::new();
        metrics.insert("coarse_blocks".into(), locked.into());
        metrics.insert("let_through".into(), self.counts.let_through.into());
        metrics.insert(
            "let_through_succeeded".into(),
            self.counts.let_through_succeeded.into(),
        );
        metrics
    }
}

impl EditTargetFamilies {
    fn threshold(&self) -> u32 {
        self.settings.coarse_block_after
    }

    fn call(&mut self, call: &CallInfo, firings: &mut Firings) {
        let threshold = self.threshold();
        let Some(key) = coarse_key(call) else {
            return;
        };
        let Some(coarse) = self.coarse.get(&key) else {
            return;
        };
        let family = &call.families.action;
        if coarse.failures < threshold || coarse.failing.contains(family) {
            return;
        }
        let first = &coarse.first;
        let more = match coarse.failing.len() {
            0 | 1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        // Both keys are bounded (edit targets are compacted), so the detail is too.
        let detail = format!(
            "coarse {} blocked after {} failures of {first}{more}",
            key.1, coarse.failures
        );
        firings
            .fire(call.turn, &call.agent, "let_through", Effect::Advisory)
            .family(family.clone())
            .detail(detail);
        self.counts.let_through += 1;
        self.pending.insert(call.call_id.clone());
    }

    fn result(&mut self, call: &CallInfo, outcome: &Outcome) {
        if self.pending.remove(&call.call_id) && outcome.success {
            self.counts.let_through_succeeded += 1;
        }
        // A call the harness refused never ran: it is not a failed edit.
        if outcome.success || outcome.error_class == Some(ErrorClass::Blocked) {
            return;
        }
        let Some(key) = coarse_key(call) else {
            return;
        };
        let coarse = self.coarse.entry(key).or_default();
        coarse.failures += 1;
        if coarse.failing.is_empty() {
            coarse.first.clone_from(&call.families.action);
        }
        coarse.failing.insert(call.families.action.clone());
    }
}

/// The pre-WO-TD-03 edit family: tool and path, no target. Only edits with a path have one.
fn coarse_key(call: &CallInfo) -> Option<CoarseKey> {
    if call.kind != ToolKind::Edit {
        return None;
    }
    let path = call.families.path.as_deref()?;
    let tool = call.tool.to_ascii_lowercase();
    Some((call.agent.to_string(), format!("{tool}:{path}")))
}
