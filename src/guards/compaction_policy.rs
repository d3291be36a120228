//! `compaction_policy`: compaction judged by a rubric, SNR computed, pinned items kept.
//!
//! ## What it checks
//! Three things. (a) Every frame recorded with `signalToNoise: null` gets a ratio: the share
//! of its characters that evidence folding (the shared `plan_frame` rule) would keep.
//! (b) Each recorded compaction is judged by the rubric: `hold` when the agent's last few
//! results are all one family that is still failing (mid-derivation, stuck), `fire` when a
//! verification passed since the previous compaction (subtask resolved), otherwise
//! `threshold-only`; a compaction that happened while the rubric said hold fires
//! `compaction_while_stuck`. (c) The first frame after a compaction must still contain the
//! pinned items, the task (the first user message) and the open todos; if one is gone it
//! fires `dropped_pinned`, which the seed's validator would have rolled back.
//!
//! ## Why it matters
//! The myactuator compaction fired on a token threshold alone with `signalToNoiseRatio`
//! `null` (never computed), and the locked type contract was at risk at each compaction
//! (seed 000, WO-5 root-cause tie).
//!
//! ## Seed
//! seed 000 (`000_053cae7e53b598d3.txt`), WO-5 "Decision-Based Compaction + Validation";
//! seed 001 (`001_d7c440e7b9955800.txt`), WO-TD-05 (the signal-to-noise ratio carried into
//! the focus snapshot).

use super::evidence::plan_frame;
use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::model::{Frame, Todo};
use crate::normalize::{NormEvent, RunState, Step};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

/// Characters of one dropped item quoted in a firing's detail, and items listed.
const QUOTE_CHARS: usize = 60;
const QUOTED_ITEMS: usize = 3;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Results of one failing family in a row that make a compaction a `hold`
    /// (0 never holds).
    pub hold_window: usize,
    /// Marker that opens a harness evidence block in a system message (as
    /// `evidence_folding`'s).
    pub evidence_marker: String,
    /// A pinned text longer than this must survive by its first this-many characters.
    pub pin_prefix_chars: usize,
    /// Todo statuses that are no longer open, so not pinned.
    pub closed_todo_statuses: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            hold_window: 3,
            evidence_marker: "[RUN EVIDENCE]".into(),
            pin_prefix_chars: 120,
            closed_todo_statuses: vec!["completed".into(), "cancelled".into()],
        }
    }
}

/// What must be in the first frame after a compaction.
#[derive(Debug, Clone)]
struct Pending {
    compaction_turn: u32,
    /// (label, text) pairs: `task` or `todo`.
    pins: Vec<(&'static str, String)>,
}

/// One agent's view: its context is compacted and pinned on its own.
#[derive(Debug, Default)]
struct AgentState {
    /// (family, success) of the last `hold_window` results.
    recent: VecDeque<(String, bool)>,
    verified_since_compaction: bool,
    open_todos: Vec<String>,
    /// The first user message of the agent's first frame, once a frame was seen.
    task: Option<Option<String>>,
    pending: Option<Pending>,
}

#[derive(Debug, Default)]
struct Counts {
    compactions: u64,
    held: u64,
    fire: u64,
    threshold_only: u64,
    pins_dropped: u64,
    frames_without_snr: u64,
    snr_min_x1000: Option<u64>,
    snr_sum_x1000: u64,
}

pub struct CompactionPolicy {
    settings: Settings,
    agents: BTreeMap<String, AgentState>,
    counts: Counts,
}

impl Spec for CompactionPolicy {
    const INFO: GuardInfo = GuardInfo {
        id: "compaction_policy",
        work_order: "WO-5",
        seed: "000 WO-5; 001 WO-TD-05",
        summary: "compaction by rubric (hold when stuck); SNR computed; pinned items survive",
    };
    type Settings = Settings;

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            agents: BTreeMap::new(),
            counts: Counts::default(),
        }
    }
}

impl Guard for CompactionPolicy {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(std::mem::take(&mut self.settings));
    }

    fn observe(&mut self, event: &NormEvent<'_>, run: &RunState, firings: &mut Firings) {
        let window = self.settings.hold_window;
        match &event.step {
            Step::Result { call, outcome, .. } => {
                let agent = self.agent(event.agent);
                agent
                    .recent
                    .push_back((call.families.action.clone(), outcome.success));
                while agent.recent.len() > window {
                    agent.recent.pop_front();
                }
                if outcome.check_passed() {
                    agent.verified_since_compaction = true;
                }
            }
            Step::Todos(todos) => {
                let open = open_todos(todos, &self.settings.closed_todo_statuses);
                self.agent(event.agent).open_todos = open;
            }
            Step::Compaction { .. } => self.judge(event, firings),
            Step::Frame(frame) => {
                self.measure_snr(frame, run);
                self.validate(frame, firings);
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
        let c = &self.counts;
        let mut m = Metrics::new();
        m.insert("compactions".into(), c.compactions.into());
        m.insert("held".into(), c.held.into());
        m.insert("rubric_fire".into(), c.fire.into());
        m.insert("threshold_only".into(), c.threshold_only.into());
        m.insert("pins_dropped".into(), c.pins_dropped.into());
        m.insert("frames_without_snr".into(), c.frames_without_snr.into());
        if let Some(min) = c.snr_min_x1000 {
            m.insert("snr_min_x1000".into(), min.into());
            let mean = c.snr_sum_x1000 / c.frames_without_snr.max(1);
            m.insert("snr_mean_x1000".into(), mean.into());
        }
        m
    }
}

impl CompactionPolicy {
    fn agent(&mut self, agent: &str) -> &mut AgentState {
        self.agents.entry(agent.to_string()).or_default()
    }

    /// The rubric at a recorded compaction; the pins it must keep are noted for the next
    /// frame.
    fn judge(&mut self, event: &NormEvent<'_>, firings: &mut Firings) {
        let window = self.settings.hold_window;
        let agent = self.agents.entry(event.agent.to_string()).or_default();
        self.counts.compactions += 1;
        if let Some(family) = stuck_family(&agent.recent, window) {
            self.counts.held += 1;
            firings
                .fire(
                    event.turn,
                    event.agent,
                    "compaction_while_stuck",
                    Effect::Advisory,
                )
                .family(family.clone())
                .detail(format!(
                    "rubric says hold: the last {window} results are {family}, still failing"
                ));
        } else if agent.verified_since_compaction {
            self.counts.fire += 1;
        } else {
            self.counts.threshold_only += 1;
        }
        agent.verified_since_compaction = false;
        // The todos as they stood at the compaction; the task is added when checked, so a
        // frame recorded at the compaction's own turn can still supply it.
        agent.pending = Some(Pending {
            compaction_turn: event.turn,
            pins: agent
                .open_todos
                .iter()
                .map(|t| ("todo", t.clone()))
                .collect(),
        });
    }

    /// SNR for a frame the harness left without one: the share of characters kept.
    fn measure_snr(&mut self, frame: &Frame, run: &RunState) {
        if frame.signal_to_noise.is_some() {
            return;
        }
        let total = frame.chars();
        let folded = plan_frame(frame, run, &self.settings.evidence_marker)
            .folded_chars
            .min(total);
        let x1000 = if total == 0 {
            0
        } else {
            ((u128::from(total - folded) * 1000) / u128::from(total)) as u64
        };
        let c = &mut self.counts;
        c.frames_without_snr += 1;
        c.snr_sum_x1000 += x1000;
        c.snr_min_x1000 = Some(c.snr_min_x1000.map_or(x1000, |m| m.min(x1000)));
    }

    /// The first frame after a compaction must still hold every pin (the validator).
    fn validate(&mut self, frame: &Frame, firings: &mut Firings) {
        let prefix = self.settings.pin_prefix_chars;
        let agent = self.agents.entry(frame.agent.clone()).or_default();
        let due = agent
            .pending
            .as_ref()
            .is_some_and(|p| frame.turn > p.compaction_turn);
        if due {
            if let Some(mut pending) = agent.pending.take() {
                if let Some(Some(task)) = &agent.task {
                    pending.pins.insert(0, ("task", task.clone()));
                }
                let dropped = dropped_pins(frame, &pending.pins, prefix);
                if !dropped.is_empty() {
                    self.counts.pins_dropped += dropped.len() as u64;
                    firings
                        .fire(frame.turn, &frame.agent, "dropped_pinned", Effect::Advisory)
                        .detail(dropped_detail(pending.compaction_turn, &dropped));
                }
            }
        }
        if agent.task.is_none() {
            let first_user = frame.messages.iter().find(|m| m.role == "user");
            agent.task = Some(first_user.map(|m| m.content.to_string()));
        }
    }
}

/// The family of the last `window` results when they are all one family whose latest
/// result failed.
fn stuck_family(recent: &VecDeque<(String, bool)>, window: usize) -> Option<&String> {
    let (family, last_ok) = recent.back()?;
    let same = recent.iter().all(|(f, _)| f == family);
    (window > 0 && recent.len() >= window && same && !last_ok).then_some(family)
}

/// Contents of the todos that are still open, in their recorded order.
fn open_todos(todos: &[Todo], closed: &[String]) -> Vec<String> {
    todos
        .iter()
        .filter(|t| !closed.iter().any(|s| s.eq_ignore_ascii_case(&t.status)))
        .filter(|t| !t.content.trim().is_empty())
        .map(|t| t.content.clone())
        .collect()
}

/// The pins the frame no longer contains (whitespace-collapsed substring match; a long
/// pin by its prefix).
fn dropped_pins<'p>(
    frame: &Frame,
    pins: &'p [(&'static str, String)],
    prefix: usize,
) -> Vec<&'p (&'static str, String)> {
    if pins.is_empty() {
        return Vec::new();
    }
    let text: Vec<String> = frame
        .messages
        .iter()
        .map(|m| collapse(&m.content))
        .collect();
    let haystack = text.join(" ");
    pins.iter()
        .filter(|(_, pin)| {
            let needle: String = collapse(pin).chars().take(prefix.max(1)).collect();
            !needle.is_empty() && !haystack.contains(&needle)
        })
        .collect()
}

fn dropped_detail(compaction_turn: u32, dropped: &[&(&'static str, String)]) -> String {
    let mut items: Vec<String> = dropped
        .iter()
        .take(QUOTED_ITEMS)
        .map(|(label, text)| format!("{label} \"{}\"", quote(text)))
        .collect();
    if dropped.len() > QUOTED_ITEMS {
        items.push(format!("+{} more", dropped.len() - QUOTED_ITEMS));
    }
    format!(
        "compaction at turn {compaction_turn} dropped {}: {}",
        dropped.len(),
        items.join("; ")
    )
}

/// A pin as quoted in a detail: collapsed and cut to [`QUOTE_CHARS`].
fn quote(text: &str) -> String {
    let collapsed = collapse(text);
    if collapsed.chars().count() <= QUOTE_CHARS {
        return collapsed;
    }
    let cut: String = collapsed.chars().take(QUOTE_CHARS).collect();
    format!("{cut}...")
}

/// Text with every run of whitespace turned into one space, trimmed.
fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
