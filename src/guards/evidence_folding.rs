//! `evidence_folding`: how much each context frame would shrink if evidence were folded.
//!
//! ## What it checks
//! For every context-window frame it folds tool evidence by family, keeping the latest
//! success, the latest mutation, the latest verification and the first and last
//! unresolved failure of each family, and collapses repeated synthetic blocks (identical
//! system messages once numbers are masked, such as focus-supervisor failures) into one
//! counted summary. It fires `fold` for each frame that would shrink, with the tokens
//! that frame's request would have saved, and reports retained and folded counts.
//!
//! ## Why it matters
//! The dropbear run's final frame held dozens of `[RUN EVIDENCE]` and focus-supervisor
//! messages; main context grew from ~73k to ~92.7k tokens (seed 001, Evidence Snapshot).
//!
//! ## Seed
//! seed 001 (`001_d7c440e7b9955800.txt`), WO-TD-04.

use super::evidence::{frame_tokens, plan_frame, FoldPlan, SUMMARY_CHARS};
use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::normalize::{NormEvent, RunState, Step};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Marker that opens a harness evidence block in a system message.
    pub evidence_marker: String,
    /// A frame fires only when folding would save at least this many tokens.
    pub min_tokens: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            evidence_marker: "[RUN EVIDENCE]".into(),
            min_tokens: 1,
        }
    }
}

pub struct EvidenceFolding {
    settings: Settings,
    totals: FoldPlan,
    frames: u64,
    frames_folded: u64,
    tokens: u64,
}

impl Spec for EvidenceFolding {
    const INFO: GuardInfo = GuardInfo {
        id: "evidence_folding",
        work_order: "WO-TD-04",
        seed: "001 WO-TD-04",
        summary: "evidence folded by family; repeated synthetic blocks collapse to one",
    };
    type Settings = Settings;

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            totals: FoldPlan::default(),
            frames: 0,
            frames_folded: 0,
            tokens: 0,
        }
    }
}

impl Guard for EvidenceFolding {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, run: &RunState, firings: &mut Firings) {
        let Step::Frame(frame) = &event.step else {
            return;
        };
        self.frames += 1;
        let plan = plan_frame(frame, run, &self.settings.evidence_marker);
        let saved_chars = plan
            .folded_chars
            .saturating_sub(plan.summaries * SUMMARY_CHARS);
        let tokens = frame_tokens(frame, saved_chars);
        self.totals.retained += plan.retained;
        self.totals.folded += plan.folded;
        self.totals.repeats += plan.repeats;
        if plan.folded == 0 || tokens < self.settings.min_tokens.max(1) {
            return;
        }
        self.frames_folded += 1;
        self.tokens = self.tokens.saturating_add(tokens);
        firings
            .fire(frame.turn, &frame.agent, "fold", Effect::Shrink { tokens })
            .detail(format!(
                "retained {}, folded {} (repeated blocks: {})",
                plan.retained, plan.folded, plan.repeats
            ));
    }

    fn finish_run(
        &mut self,
        _run: &RunMeta<'_>,
        _state: &RunState,
        _firings: &mut Firings,
    ) -> Metrics {
        let mut m = Metrics::new();
        m.insert("frames".into(), self.frames.into());
        m.insert("frames_folded".into(), self.frames_folded.into());
        m.insert("retained".into(), self.totals.retained.into());
        m.insert("folded".into(), self.totals.folded.into());
        m.insert("repeated_blocks".into(), self.totals.repeats.into());
        m.insert("tokens_shrunk".into(), self.tokens.into());
        m
    }
}
