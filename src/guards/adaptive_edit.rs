//! `adaptive_edit`: after repeated edit failures on one file, switch that file to a rewrite.
//!
//! ## What it checks
//! Counts, per file (the `path` family of edit-kind calls) and agent, the consecutive edit
//! failures whose error class is an edit failure (hash mismatch, stale `old_string`, not
//! found). At `switch_threshold` (2) it fires `rewrite`: the harness would have told the
//! model to rewrite the whole file from its current contents. Every further edit failure on
//! that file before it is successfully changed is one the rewrite would have avoided:
//! `avoided_edit_failure`, whose call and result would never have entered the context. A
//! successful mutation of the file (an edit or a write, or any result that lists the file
//! among its changed `paths`) resets the count and re-arms the guard.
//!
//! ## Why it matters
//! A weak model bangs on a brittle primitive: in the myactuator run a `file_edit` with an
//! `expected_hash` was rejected and retried 8 times identically, and 965 edits failed as
//! `not_found` (seed 000, WO-8 "Root-cause tie").
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), WO-8 "Adaptive Edit Strategy (HarnessBridge-lite:
//! auto-switch edit→rewrite)", and "The failure signature" (`file_edit` hash-mismatch
//! retried 8× identically).

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::hash::{value_mut, HashMap};
use crate::model::tokens_from_chars;
use crate::normalize::{CallInfo, ErrorClass, NormEvent, Outcome, RunState, Step, ToolKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Consecutive edit failures on one file that switch it to a rewrite (`switchThreshold`);
    /// applied as at least 1.
    pub switch_threshold: u32,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            switch_threshold: 2,
        }
    }
}

/// The failures of one agent on one file since the file last changed.
#[derive(Debug, Default)]
struct Streak {
    failures: u32,
    classes: BTreeSet<&'static str>,
    /// Turn of the `rewrite` firing, once the threshold was reached.
    rewrite_at: Option<u32>,
}

pub struct AdaptiveEdit {
    settings: Settings,
    /// (file, agent) -> streak. Keyed by agent too: the guidance reaches one agent's loop.
    streaks: BTreeMap<(String, String), Streak>,
    /// File -> turn of its latest successful read: what the rewrite could start from.
    reads: HashMap<String, u32>,
    rewrites: u64,
    avoided: u64,
    tokens_suppressed: u64,
}

impl Spec for AdaptiveEdit {
    const INFO: GuardInfo = GuardInfo {
        id: "adaptive_edit",
        work_order: "WO-8",
        seed: "000 WO-8",
        summary: "consecutive edit failures on one file reach switch_threshold (2): rewrite",
    };
    type Settings = Settings;

    fn check(s: &Settings) -> Result<(), String> {
        super::at_least("switch_threshold", s.switch_threshold.into(), 1)
    }

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            streaks: BTreeMap::new(),
            reads: HashMap::default(),
            rewrites: 0,
            avoided: 0,
            tokens_suppressed: 0,
        }
    }
}

impl Guard for AdaptiveEdit {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, run: &RunState, firings: &mut Firings) {
        let Step::Result { call, outcome, raw } = &event.step else {
            return;
        };
        if outcome.mutation {
            for path in call.changed_paths(&raw.paths, run.cwd()) {
                // The file changed: earlier failures no longer describe it.
                self.streaks.retain(|(file, _), _| *file != path);
            }
        }
        if outcome.success {
            if call.kind == ToolKind::Read {
                if let Some(path) = &call.families.path {
                    *value_mut(&mut self.reads, path) = event.turn;
                }
            }
            return;
        }
        let (Some(path), Some(class)) = (&call.families.path, outcome.error_class) else {
            return;
        };
        if call.kind == ToolKind::Edit && class.is_edit_failure() {
            self.edit_failed(event, path, class, call, outcome, firings);
        }
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _state: &RunState, _f: &mut Firings) -> Metrics {
        let mut metrics = Metrics::new();
        metrics.insert("rewrites".into(), self.rewrites.into());
        metrics.insert("avoided_failures".into(), self.avoided.into());
        metrics.insert("tokens_suppressed".into(), self.tokens_suppressed.into());
        metrics
    }
}

impl AdaptiveEdit {
    fn edit_failed(
        &mut self,
        event: &NormEvent<'_>,
        path: &str,
        class: ErrorClass,
        call: &CallInfo,
        outcome: &Outcome,
        firings: &mut Firings,
    ) {
        let threshold = self.settings.switch_threshold;
        let key = (path.to_string(), event.agent.to_string());
        let streak = self.streaks.entry(key).or_default();
        streak.failures = streak.failures.saturating_add(1);
        streak.classes.insert(class.as_str());
        if let Some(rewrite_at) = streak.rewrite_at {
            // Past the switch the model would have been rewriting, not editing.
            let tokens = tokens_from_chars(outcome.chars.saturating_add(call.args_chars));
            let detail = format!(
                "edit failure {} ({}) after rewrite at turn {rewrite_at}",
                streak.failures,
                class.as_str()
            );
            firings
                .fire(
                    event.turn,
                    event.agent,
                    "avoided_edit_failure",
                    Effect::Suppress { tokens },
                )
                .family(path)
                .detail(detail)
                .subject(&*call.call_id);
            self.avoided += 1;
            self.tokens_suppressed = self.tokens_suppressed.saturating_add(tokens);
        } else if streak.failures >= threshold {
            streak.rewrite_at = Some(event.turn);
            let classes: Vec<&str> = streak.classes.iter().copied().collect();
            let base = match self.reads.get(path) {
                Some(turn) => format!("base: read at turn {turn}"),
                None => "base: unknown".to_string(),
            };
            let detail = format!(
                "{} consecutive edit failures ({}); rewrite from current contents; {base}",
                streak.failures,
                classes.join(", ")
            );
            firings
                .fire(event.turn, event.agent, "rewrite", Effect::Advisory)
                .family(path)
                .detail(detail);
            self.rewrites += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::CallShape;

    fn call(kind: ToolKind, path: &str) -> CallInfo {
        let mut args = serde_json::Map::new();
        args.insert("path".into(), path.into());
        CallInfo {
            call_id: "c".into(),
            turn: 1,
            agent: "main".into(),
            shape: CallShape {
                tool: "t".into(),
                kind,
                families: crate::normalize::family::families(kind, "t", &args, None, Some("/w")),
                canonical: String::new(),
                args_chars: 0,
                cwd: Some("/w".into()),
                shell: None,
            }
            .into(),
            args: args.into(),
        }
    }

    #[test]
    fn recorded_paths_are_keyed_like_families() {
        let c = call(ToolKind::Shell, "");
        let paths = c.changed_paths(&["/w/src/a.rs".into(), "./b.rs".into()], Some("/w"));
        assert_eq!(paths, BTreeSet::from(["b.rs".into(), "src/a.rs".into()]));
        let e = call(ToolKind::Edit, "/w/src/c.rs");
        assert!(e.changed_paths(&[], Some("/w")).contains("src/c.rs"));
    }
}
