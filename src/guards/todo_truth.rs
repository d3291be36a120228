//! `todo_truth`: a todo marked `completed` that the tool evidence does not support.
//!
//! ## What it checks
//! Follows the main agent's todo list through every `todo_write`. When a todo becomes
//! completed it looks at the todo's evidence window: from the `todo_write` where the todo
//! was first seen open (else the `todo_write` before the one that completes it) to the one
//! that completes it. A canonical action family that failed inside that window and has
//! not succeeded since means the todo should have been downgraded to `blocked`
//! (`downgrade_to_blocked`). A parent marked completed while one of its children
//! (`parentId`) is still pending, in progress, blocked or anything else not completed is
//! an overclaim too (`parent_over_open_child`). Both are advisory: the harness would
//! have corrected the todo and told the model to rework the subtask.
//!
//! ## Why it matters
//! A live agent marked "Teach each object ..." completed although every call of the
//! family doing that work had failed; with nested todos, parents overclaimed their
//! children's work. A todo tree that lies feeds every later completion decision.
//!
//! ## Seed
//! seed 002 (`002_527d73931b42d8b2.txt`), fix 9 "Truth-Reconcile Active Todos From Tool
//! Evidence" and fix 10 "First-Class Nested Todo Decomposition".

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::hash::{value_mut, HashMap};
use crate::model::Todo;
use crate::normalize::{NormEvent, RunState, Step, ToolKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Todo statuses that mean done (compared lower-cased); every other status is open.
    pub completed_statuses: Vec<String>,
    /// Characters of a todo's content quoted in a firing's detail.
    pub content_chars: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            completed_statuses: ["completed", "complete", "done"].map(String::from).to_vec(),
            content_chars: 60,
        }
    }
}

/// The results of one canonical action family, by stream position.
#[derive(Debug, Default)]
struct FamilyEvidence {
    /// Positions of failed results, increasing.
    failures: Vec<u64>,
    last_success: Option<u64>,
    /// Some failure was a verification (a checker's verdict, not just a tool error).
    verifying: bool,
}

impl FamilyEvidence {
    /// Failures at or after `start`, when the last of them has no success after it.
    fn unresolved_since(&self, start: u64) -> Option<(usize, u64)> {
        let last_failure = *self.failures.last()?;
        let count = self.failures.len() - self.failures.partition_point(|&p| p < start);
        let resolved = self.last_success.is_some_and(|s| s > last_failure);
        (count > 0 && !resolved).then_some((count, last_failure))
    }
}

/// What the guard remembers about one todo id across writes.
#[derive(Debug, Clone, Copy)]
struct Mark {
    done: bool,
    /// Position of the write that (re)opened it, or that its window starts from.
    opened_at: u64,
}

pub struct TodoTruth {
    settings: Settings,
    position: u64,
    families: HashMap<String, FamilyEvidence>,
    /// The families whose last failure has no success after it, by the position of that
    /// failure: a completion looks only at those that failed inside its window, so a run
    /// of many families costs what its windows hold, not families times completions.
    unresolved: BTreeMap<u64, String>,
    /// Every todo id seen in this run: a todo left out of one write keeps its history.
    marks: BTreeMap<String, Mark>,
    last_write: Option<u64>,
    todos_completed: u64,
    downgraded: u64,
    parents_downgraded: u64,
}

impl Spec for TodoTruth {
    const INFO: GuardInfo = GuardInfo {
        id: "todo_truth",
        work_order: "fixes 9-10",
        seed: "002 fixes 9, 10",
        summary: "a todo completed over failed evidence, or a parent over an open child",
    };
    type Settings = Settings;

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            position: 0,
            families: HashMap::default(),
            unresolved: BTreeMap::new(),
            marks: BTreeMap::new(),
            last_write: None,
            todos_completed: 0,
            downgraded: 0,
            parents_downgraded: 0,
        }
    }
}

impl Guard for TodoTruth {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        self.position += 1;
        // A sub-agent's list and calls are its own trajectory, not the main todo tree.
        if event.agent != "main" {
            return;
        }
        match &event.step {
            Step::Result { call, outcome, .. } => {
                // Writing todos or claiming completion is bookkeeping, not work evidence.
                if matches!(call.kind, ToolKind::TodoWrite | ToolKind::TaskComplete) {
                    return;
                }
                if outcome.success {
                    // Its own family and, for `a && b`, the parts it proves.
                    for family in outcome.resolves(call) {
                        let evidence = value_mut(&mut self.families, family);
                        evidence.last_success = Some(self.position);
                        if let Some(&failed) = evidence.failures.last() {
                            self.unresolved.remove(&failed);
                        }
                    }
                } else {
                    let family = &call.families.action;
                    let evidence = value_mut(&mut self.families, family);
                    if let Some(&failed) = evidence.failures.last() {
                        self.unresolved.remove(&failed);
                    }
                    evidence.failures.push(self.position);
                    evidence.verifying |= outcome.verification;
                    self.unresolved.insert(self.position, family.clone());
                }
            }
            Step::Todos(list) => self.on_write(list, event, firings),
            _ => {}
        }
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _: &RunState, _: &mut Firings) -> Metrics {
        let mut metrics = Metrics::new();
        metrics.insert("todos_completed".into(), self.todos_completed.into());
        metrics.insert("downgraded".into(), self.downgraded.into());
        metrics.insert("parents_downgraded".into(), self.parents_downgraded.into());
        metrics
    }
}

impl TodoTruth {
    fn is_done(&self, status: &str) -> bool {
        let status = status.trim().to_ascii_lowercase();
        self.settings.completed_statuses.contains(&status)
    }

    /// Applies one write (the whole current list) and checks every newly completed todo.
    fn on_write(&mut self, list: &[Todo], event: &NormEvent<'_>, firings: &mut Firings) {
        let here = self.position;
        let previous_write = self.last_write.unwrap_or(0);
        self.last_write = Some(here);
        let mut newly_done: Vec<(&Todo, u64)> = Vec::new();
        let mut seen = BTreeSet::new();
        for todo in list {
            // A duplicated id counts once: its first entry in the write.
            if !seen.insert(todo.id.as_str()) {
                continue;
            }
            let done = self.is_done(&todo.status);
            let before = self.marks.get(&todo.id).copied();
            let mark = match (before, done) {
                (Some(m), _) if m.done == done => m,
                (_, false) => Mark {
                    done: false,
                    opened_at: here,
                },
                (before, true) => {
                    let start = before.map_or(previous_write, |m| m.opened_at);
                    newly_done.push((todo, start));
                    Mark {
                        done: true,
                        opened_at: start,
                    }
                }
            };
            self.marks.insert(todo.id.clone(), mark);
        }
        for (todo, start) in newly_done {
            self.todos_completed += 1;
            self.check_evidence(todo, start, event, firings);
            self.check_children(todo, list, event, firings);
        }
    }

    /// Fix 9: a failed family in the todo's window with no later success.
    fn check_evidence(&mut self, todo: &Todo, start: u64, ev: &NormEvent<'_>, f: &mut Firings) {
        // The unresolved families whose last failure is in the window are exactly those
        // with a failure in it and no success since.
        let unresolved: Vec<(&String, bool, usize, u64)> = self
            .unresolved
            .range(start..)
            .filter_map(|(_, family)| {
                let e = self.families.get(family)?;
                let (n, at) = e.unresolved_since(start)?;
                Some((family, e.verifying, n, at))
            })
            .collect();
        // A failed check outweighs a failed tool call; then the most failures in the
        // window, then the most recent (positions are unique, so there is no tie), names
        // the firing.
        let Some(&(family, _, count, _)) =
            unresolved.iter().max_by_key(|(_, v, n, at)| (*v, *n, *at))
        else {
            return;
        };
        let mut detail = format!(
            "todo {} {} completed over {count} failed call(s) of this family in its window, \
             no later success",
            todo.id,
            self.quote(&todo.content)
        );
        if unresolved.len() > 1 {
            detail.push_str(&format!(
                "; other unresolved families: {}",
                unresolved.len() - 1
            ));
        }
        f.fire(ev.turn, ev.agent, "downgrade_to_blocked", Effect::Advisory)
            .family(family.clone())
            .detail(detail);
        self.downgraded += 1;
    }

    /// Fix 10: a parent cannot be completed while any child is still open.
    fn check_children(&mut self, todo: &Todo, list: &[Todo], ev: &NormEvent<'_>, f: &mut Firings) {
        let open: Vec<String> = list
            .iter()
            .filter(|c| c.parent_id.as_deref() == Some(todo.id.as_str()) && c.id != todo.id)
            .filter(|c| !self.is_done(&c.status))
            .map(|c| format!("{} ({})", c.id, c.status))
            .collect();
        if open.is_empty() {
            return;
        }
        let detail = format!(
            "todo {} {} completed with open children: {}",
            todo.id,
            self.quote(&todo.content),
            open.join(", ")
        );
        f.fire(
            ev.turn,
            ev.agent,
            "parent_over_open_child",
            Effect::Advisory,
        )
        .detail(detail);
        self.parents_downgraded += 1;
    }

    /// The todo's content, quoted and cut to the configured length.
    fn quote(&self, content: &str) -> String {
        let max = self.settings.content_chars;
        let mut text: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.chars().count() > max {
            text = text.chars().take(max).collect::<String>() + "…";
        }
        format!("\"{text}\"")
    }
}
