//! `context_folding`: a subtask closed by a passing verification folds to one line.
//!
//! ## What it checks
//! The main agent's tool activity is cut into subtasks: one opens at the first tool call
//! after the previous fold (or the run start) and closes at a successful verification.
//! At the close, everything the segment put into the context (its tool-call arguments and
//! results) would have been replaced by a one-line outcome such as `turns 3-7: shell:cargo
//! test passed`. It fires `fold_subtask` there, suppressing the segment's weight minus the
//! line at every later request until a compaction, and measures the active window (carried
//! characters unfolded vs folded) right after the third fold.
//!
//! ## Why it matters
//! A single 380 KB myactuator frame held "duplicate" ×276 and "error" ×423: finished-subtask
//! noise crowding out the live type contract (seed 000, WO-4 root-cause tie). Folding
//! finished subtasks keeps the active window small (the seed's "10× smaller").
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), WO-4 "Context-Folding (10× smaller active
//! context)"; the fold trigger is WO-1's boundary-verifier success, replayed as a passing
//! verification.

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::model::tokens_from_chars;
use crate::normalize::{CallInfo, NormEvent, RunState, Step};
use serde::{Deserialize, Serialize};

/// The agent whose context is folded; sub-agents keep their own windows.
const MAIN: &str = "main";
/// The fold after which the active-window ratio is measured (the seed's "3 completed
/// subtasks").
const MEASURED_FOLD: u64 = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Characters of the one-line outcome that replaces a folded segment.
    pub one_line_chars: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            one_line_chars: 120,
        }
    }
}

/// The subtask being worked on: opened by a tool call, not yet verified.
#[derive(Debug, Default)]
struct Segment {
    opened: Option<u32>,
    /// Characters it still carries (reset by a compaction, which drops them anyway).
    chars: u64,
    results: u64,
}

pub struct ContextFolding {
    settings: Settings,
    segment: Segment,
    /// Carried characters since the last compaction, as recorded.
    unfolded: u64,
    /// Of those, characters the folds since the last compaction would have removed.
    saved: u64,
    folds: u64,
    outcomes: Vec<String>,
    ratio_x100: Option<u64>,
}

impl Spec for ContextFolding {
    const INFO: GuardInfo = GuardInfo {
        id: "context_folding",
        work_order: "WO-4",
        seed: "000 WO-4",
        summary: "a subtask closed by a passing verification folds to one line",
    };
    type Settings = Settings;

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            segment: Segment::default(),
            unfolded: 0,
            saved: 0,
            folds: 0,
            outcomes: Vec::new(),
            ratio_x100: None,
        }
    }
}

impl Guard for ContextFolding {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        if event.agent != MAIN {
            return;
        }
        match &event.step {
            Step::Call(call) => self.carry(event.turn, call.args_chars),
            Step::Result { call, outcome, .. } => {
                self.carry(event.turn, outcome.chars);
                self.segment.results += 1;
                if outcome.check_passed() {
                    self.fold(event.turn, call, firings);
                }
            }
            Step::Compaction { .. } => {
                // What was carried is gone; the open subtask keeps its start and count.
                self.unfolded = 0;
                self.saved = 0;
                self.segment.chars = 0;
            }
            _ => {}
        }
    }

    fn finish_run(
        &mut self,
        _run: &RunMeta<'_>,
        _state: &RunState,
        _firings: &mut Firings,
    ) -> Metrics {
        let mut m = Metrics::new();
        m.insert("subtasks_folded".into(), self.folds.into());
        m.insert("folded_outcomes".into(), self.outcomes.clone().into());
        if let Some(ratio) = self.ratio_x100 {
            m.insert("active_window_ratio_x100".into(), ratio.into());
        }
        m
    }
}

impl ContextFolding {
    /// Adds what a call or result put into the context, opening a subtask if none is open.
    fn carry(&mut self, turn: u32, chars: u64) {
        self.segment.opened.get_or_insert(turn);
        self.segment.chars += chars;
        self.unfolded += chars;
    }

    /// Closes the open subtask at its passing verification.
    fn fold(&mut self, turn: u32, call: &CallInfo, firings: &mut Firings) {
        let segment = std::mem::take(&mut self.segment);
        let opened = segment.opened.unwrap_or(turn);
        let family = &call.families.action;
        let saved = segment.chars.saturating_sub(self.settings.one_line_chars);
        self.saved += saved;
        self.folds += 1;
        self.outcomes
            .push(format!("turns {opened}-{turn}: {family} passed"));
        firings
            .fire(
                turn,
                MAIN,
                "fold_subtask",
                Effect::Suppress {
                    tokens: tokens_from_chars(saved),
                },
            )
            .family(family.clone())
            .detail(format!(
                "turns {opened}-{turn} folded: {} results, {family} passed",
                segment.results
            ));
        if self.folds == MEASURED_FOLD {
            self.ratio_x100 = self.window_ratio_x100();
        }
    }

    /// Unfolded carried characters per folded one, ×100; `None` when nothing is left.
    fn window_ratio_x100(&self) -> Option<u64> {
        let folded = self.unfolded.saturating_sub(self.saved);
        (folded > 0).then(|| {
            (u128::from(self.unfolded) * 100 / u128::from(folded)).min(u128::from(u64::MAX)) as u64
        })
    }
}
