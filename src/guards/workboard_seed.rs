//! `workboard_seed`: a multi-step run working with no durable decomposition.
//!
//! ## What it checks
//! Watches the main agent. Once the run has reached `min_turns` turns and used
//! `min_families` distinct canonical action families, it is multi-step; if by then it has
//! written no todo list (no non-empty `todo_write` record, no todo-writing tool call),
//! the harness would have seeded a minimal nested todo skeleton: `seed_decomposition`,
//! advisory, once per run. A decomposition written later does not undo the firing: the
//! seed asks for it before freeform tool use.
//!
//! ## Why it matters
//! The telegram dropbear robotics/training run had an empty workboard despite needing
//! discovery, model repair, integration, training and verification; with no structured
//! state, completion review could not see what was unresolved.
//!
//! ## Seed
//! seed 001 (`001_d7c440e7b9955800.txt`), WO-TD-07 "Complex Tasks Must Seed A Durable
//! Workboard Or Todo Tree". The seed gives no numbers for "complex": `min_turns` (8) and
//! `min_families` (4) are hindsight's defaults, configurable.

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::hash::HashSet;
use crate::normalize::{NormEvent, RunState, Step, ToolKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Turns after which a run counts as multi-step (with `min_families`).
    pub min_turns: u32,
    /// Distinct canonical action families after which a run counts as multi-step.
    pub min_families: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            min_turns: 8,
            min_families: 4,
        }
    }
}

pub struct WorkboardSeed {
    settings: Settings,
    families: HashSet<String>,
    first_todo_turn: Option<u32>,
    todo_writes: u64,
    multi_step_turn: Option<u32>,
}

impl Spec for WorkboardSeed {
    const INFO: GuardInfo = GuardInfo {
        id: "workboard_seed",
        work_order: "WO-TD-07",
        seed: "001 WO-TD-07",
        summary: "a multi-step run that never had a decomposition",
    };
    type Settings = Settings;

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            families: HashSet::default(),
            first_todo_turn: None,
            todo_writes: 0,
            multi_step_turn: None,
        }
    }
}

impl Guard for WorkboardSeed {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        if event.agent != "main" {
            return;
        }
        match &event.step {
            Step::Todos(list) if !list.is_empty() => {
                self.todo_writes += 1;
                self.first_todo_turn.get_or_insert(event.turn);
            }
            Step::Call(call) if call.kind == ToolKind::TodoWrite => {
                // A call that writes an empty list decomposes nothing.
                let empty = call
                    .args
                    .get("todos")
                    .and_then(Value::as_array)
                    .is_some_and(Vec::is_empty);
                if !empty {
                    self.first_todo_turn.get_or_insert(event.turn);
                }
            }
            // Completing is not a step of the work. A family is copied only when new: every
            // call of a run comes by here.
            Step::Call(call)
                if call.kind != ToolKind::TaskComplete
                    && !self.families.contains(&call.families.action) =>
            {
                self.families.insert(call.families.action.clone());
            }
            _ => {}
        }
        self.check(event, firings);
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _: &RunState, _: &mut Firings) -> Metrics {
        let mut metrics = Metrics::new();
        let decomposed = u64::from(self.first_todo_turn.is_some());
        metrics.insert("decomposed".into(), decomposed.into());
        metrics.insert("first_todo_turn".into(), self.first_todo_turn.into());
        metrics.insert("todo_writes".into(), self.todo_writes.into());
        metrics.insert("multi_step_turn".into(), self.multi_step_turn.into());
        metrics.insert("families".into(), self.families.len().into());
        metrics
    }
}

impl WorkboardSeed {
    /// The first time the run is multi-step, fire if it has no decomposition yet.
    fn check(&mut self, event: &NormEvent<'_>, firings: &mut Firings) {
        let multi_step = event.turn >= self.settings.min_turns
            && self.families.len() >= self.settings.min_families;
        if self.multi_step_turn.is_some() || !multi_step {
            return;
        }
        self.multi_step_turn = Some(event.turn);
        if self.first_todo_turn.is_some() {
            return;
        }
        let detail = format!(
            "{} turns and {} action families with no todo list or workboard cards; \
             seed a nested todo skeleton before more freeform tool use",
            event.turn,
            self.families.len()
        );
        firings
            .fire(
                event.turn,
                event.agent,
                "seed_decomposition",
                Effect::Advisory,
            )
            .detail(detail);
    }
}
