//! `stale_edit_recovery`: repeated stale edits must read current truth, not retry.
//!
//! ## What it checks
//! Counts, per edit family (tool, path and normalized edit target), the failures whose
//! error class is `stale_edit` (`old_string not found` and its harness wordings) since the
//! family last succeeded or the file was last read. At the `threshold`-th failure it fires
//! the `read_authoritative_target` directive for that path. Until the directive is
//! satisfied by a successful read of the path (or the family succeeds), every later call
//! of the same edit family would have been blocked before dispatch: `block_stale_retry`,
//! which prices the retry's arguments and result as not carried. A different edit target
//! in the same file is a different family and is never blocked.
//!
//! ## Why it matters
//! In the dropbear run one successful edit removed the text a pre-mutation `old_string`
//! still named; the model retried it and collected `old_string not found` failures while
//! the supervisor forced `update_todos`, which blocked the one useful step, re-reading
//! the file (seed 001, Evidence Snapshot).
//!
//! ## Seed
//! seed 001 (`001_d7c440e7b9955800.txt`), WO-TD-01; seed 002 (`002_527d73931b42d8b2.txt`),
//! fix 3 "Hard-Block Stale Edit Loops".

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::model::tokens_from_chars;
use crate::normalize::{CallInfo, ErrorClass, NormEvent, Outcome, RunState, Step, ToolKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The directive WO-TD-01 requires (`requiredNextAction`).
pub const DIRECTIVE: &str = "read_authoritative_target";
/// The pre-dispatch block of seed 002 fix 3.
pub const BLOCK: &str = "block_stale_retry";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Stale failures of one edit family (since its last success or the last read of its
    /// file) that fire the directive; at least 1.
    pub threshold: u32,
}

impl Default for Settings {
    fn default() -> Self {
        // WO-TD-01: "Two `old_string not found` failures produce a ... directive."
        Self { threshold: 2 }
    }
}

/// An edit family as seen by one agent: a sub-agent's read does not inform the main agent.
type Key = (String, String);

#[derive(Debug, Default)]
struct Counts {
    directives: u64,
    satisfied: u64,
    blocked_retries: u64,
    recorded_other_directives: u64,
}

pub struct StaleEditRecovery {
    settings: Settings,
    /// Stale failures per family not yet answered by a read or a success, with the
    /// family's path.
    failures: BTreeMap<Key, (u32, Option<String>)>,
    /// Families under an active directive, with the path it names.
    active: BTreeMap<Key, Option<String>>,
    counts: Counts,
}

impl Spec for StaleEditRecovery {
    const INFO: GuardInfo = GuardInfo {
        id: "stale_edit_recovery",
        work_order: "WO-TD-01",
        seed: "001 WO-TD-01; 002 fix 3",
        summary: "repeated stale edits of one edit family: read_authoritative_target at the 2nd",
    };
    type Settings = Settings;

    fn check(s: &Settings) -> Result<(), String> {
        super::at_least("threshold", s.threshold.into(), 1)
    }

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            failures: BTreeMap::new(),
            active: BTreeMap::new(),
            counts: Counts::default(),
        }
    }
}

impl Guard for StaleEditRecovery {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(self.settings.clone());
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        match &event.step {
            Step::Result { call, outcome, .. } => match call.kind {
                ToolKind::Read if outcome.success => self.read(call),
                ToolKind::Edit => self.edit(call, outcome, firings),
                _ => {}
            },
            Step::Directive(d) => {
                // What the recorded harness demanded instead (the dropbear run's
                // `update_todos`) while the stale family needed a read.
                let ours = self.active.keys().any(|(agent, _)| agent == event.agent);
                if ours && d.required_next_action != DIRECTIVE {
                    self.counts.recorded_other_directives += 1;
                }
            }
            _ => {}
        }
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _state: &RunState, _f: &mut Firings) -> Metrics {
        let c = &self.counts;
        let mut metrics = Metrics::new();
        metrics.insert("directives".into(), c.directives.into());
        metrics.insert("satisfied".into(), c.satisfied.into());
        metrics.insert("blocked_retries".into(), c.blocked_retries.into());
        metrics.insert(
            "recorded_other_directives".into(),
            c.recorded_other_directives.into(),
        );
        metrics.insert("open_at_end".into(), self.active.len().into());
        metrics
    }
}

impl StaleEditRecovery {
    /// A successful read of a file shows its current text: it satisfies the directives
    /// naming that file and restarts the count of every edit family on it.
    fn read(&mut self, call: &CallInfo) {
        let Some(path) = call.families.path.as_deref() else {
            return;
        };
        let on_path = |key: &Key, p: Option<&str>| *key.0 == *call.agent && p == Some(path);
        let before = self.active.len();
        self.active.retain(|k, p| !on_path(k, p.as_deref()));
        self.counts.satisfied += (before - self.active.len()) as u64;
        self.failures.retain(|k, (_, p)| !on_path(k, p.as_deref()));
    }

    fn edit(&mut self, call: &CallInfo, outcome: &Outcome, firings: &mut Firings) {
        let key: Key = (call.agent.to_string(), call.families.action.clone());
        if let Some(path) = self.active.get(&key).cloned() {
            self.block(call, outcome, path.as_deref(), firings);
            if outcome.success {
                self.active.remove(&key);
            }
            return;
        }
        if outcome.success {
            self.failures.remove(&key);
            return;
        }
        if outcome.error_class != Some(ErrorClass::StaleEdit) {
            return;
        }
        let (count, _) = self
            .failures
            .entry(key.clone())
            .or_insert((0, call.families.path.clone()));
        *count += 1;
        if *count < self.settings.threshold {
            return;
        }
        let count = *count;
        self.failures.remove(&key);
        let path = call.families.path.clone();
        self.counts.directives += 1;
        firings
            .fire(call.turn, &call.agent, DIRECTIVE, Effect::Advisory)
            .family(key.1.clone())
            .detail(format!(
                "{count} stale edit failures; read {} once, verify whether the change is \
                 already there, or choose a different patch",
                shown(path.as_deref())
            ));
        self.active.insert(key, path);
    }

    /// The harness would have refused this call before dispatch. Only a retry that ran and
    /// failed is priced: blocking a call that in fact succeeded saves nothing honest, and a
    /// call the recorded harness already refused left its refusal in the context anyway.
    fn block(&mut self, call: &CallInfo, outcome: &Outcome, path: Option<&str>, f: &mut Firings) {
        self.counts.blocked_retries += 1;
        let refused = outcome.error_class == Some(ErrorClass::Blocked);
        let effect = if outcome.success || refused {
            Effect::Advisory
        } else {
            let args = call.args_chars;
            Effect::Suppress {
                tokens: tokens_from_chars(outcome.chars.saturating_add(args)),
            }
        };
        let mut detail = format!(
            "blocked before dispatch: read the current {} once, verify if already \
             satisfied, or choose a different patch",
            shown(path)
        );
        if outcome.success {
            detail.push_str(" (recorded call succeeded: not priced)");
        } else if refused {
            detail.push_str(" (recorded harness refused it too: not priced)");
        }
        f.fire(call.turn, &call.agent, BLOCK, effect)
            .family(call.families.action.clone())
            .detail(detail)
            .subject(&*call.call_id);
    }
}

fn shown(path: Option<&str>) -> &str {
    path.unwrap_or("the target")
}
