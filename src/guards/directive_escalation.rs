//! `directive_escalation`: ignored recovery directives end the run as terminal incomplete.
//!
//! ## What it checks
//! Every recorded directive (except those already in a terminal state) is a recovery
//! directive. The directives one agent got at one turn (one per blocked call of one
//! response) are one directive: the model saw them together, in its next request. It is
//! satisfied by a successful read, a mutation or any verification attempt made at a later
//! turn (a call of the response that drew the directive never saw it); a call the harness
//! refused never satisfies it. A directive is ignored when a later model request passed it
//! by: a new directive at a later turn while it is still unsatisfied. When
//! `ignored_threshold` directives in a row have been ignored, the harness would have forced
//! `report_incomplete`: `terminal_incomplete` ends the run at that turn.
//! Afterwards it counts the tool calls the terminal state would have blocked and the
//! completion reports it would still have allowed.
//!
//! ## Why it matters
//! The dropbear run ignored 27 focus directives and kept accumulating blocked tool calls
//! through turn 28 while its context grew from about 73k to 92.7k tokens: the supervisor
//! kept asking for the same action and never forced a terminal path (seed 001).
//!
//! ## Seed
//! seed 001 (`001_d7c440e7b9955800.txt`), WO-TD-02. The seed names no threshold; the
//! default 3 follows seed 000's convergence cliff ("a trajectory that has not converged in
//! ~3 rounds essentially never does").

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::model::Directive;
use crate::normalize::family::compact;
use crate::normalize::{CallInfo, NormEvent, Outcome, RunState, Step, ToolKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The agent whose terminal state ends the run; a sub-agent's only ends itself.
const MAIN: &str = "main";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Consecutive ignored directives that force `terminal_incomplete`; at least 1.
    pub ignored_threshold: u32,
    /// Directive states that are already terminal: not recovery directives.
    pub terminal_states: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            ignored_threshold: 3,
            terminal_states: vec!["terminal_incomplete".into()],
        }
    }
}

/// One agent's directive track.
#[derive(Debug, Default)]
struct Track {
    /// The turn of the latest recovery directive, while nothing has satisfied it.
    pending: Option<u32>,
    /// The turn of the latest directive, satisfied or not (directives of one turn are one).
    last_turn: Option<u32>,
    /// Directives ignored in a row.
    ignored: u32,
    terminal: bool,
}

#[derive(Debug, Default)]
struct Counts {
    /// Directive records, and the directives the model saw (one per agent and turn).
    records: u64,
    directives: u64,
    satisfied: u64,
    ignored: u64,
    blocked_after_terminal: u64,
    /// (agent, turn) of completion reports after the terminal state.
    reports: BTreeSet<(String, u32)>,
}

pub struct DirectiveEscalation {
    settings: Settings,
    tracks: BTreeMap<String, Track>,
    counts: Counts,
    terminal_turn: Option<u32>,
}

impl Spec for DirectiveEscalation {
    const INFO: GuardInfo = GuardInfo {
        id: "directive_escalation",
        work_order: "WO-TD-02",
        seed: "001 WO-TD-02",
        summary: "recovery directives ignored 3 times in a row: terminal_incomplete",
    };
    type Settings = Settings;

    fn check(s: &Settings) -> Result<(), String> {
        super::at_least("ignored_threshold", s.ignored_threshold.into(), 1)
    }

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            tracks: BTreeMap::new(),
            counts: Counts::default(),
            terminal_turn: None,
        }
    }
}

impl Guard for DirectiveEscalation {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        *self = Self::new(self.settings.clone());
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        match &event.step {
            Step::Directive(d) => self.directive(event, d, firings),
            Step::Call(call) => self.call(call),
            Step::Result { call, outcome, .. } => self.result(call, outcome),
            Step::TaskComplete { .. } if self.is_terminal(event.agent) => {
                self.counts
                    .reports
                    .insert((event.agent.to_string(), event.turn));
            }
            _ => {}
        }
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _state: &RunState, _f: &mut Firings) -> Metrics {
        let c = &self.counts;
        let mut metrics = Metrics::new();
        metrics.insert("directive_records".into(), c.records.into());
        metrics.insert("directives".into(), c.directives.into());
        metrics.insert("satisfied".into(), c.satisfied.into());
        metrics.insert("ignored".into(), c.ignored.into());
        metrics.insert(
            "blocked_after_terminal".into(),
            c.blocked_after_terminal.into(),
        );
        metrics.insert("reports_allowed".into(), c.reports.len().into());
        if let Some(turn) = self.terminal_turn {
            metrics.insert("terminal_turn".into(), turn.into());
        }
        metrics
    }
}

impl DirectiveEscalation {
    fn is_terminal(&self, agent: &str) -> bool {
        self.tracks.get(agent).is_some_and(|t| t.terminal)
    }

    fn directive(&mut self, event: &NormEvent<'_>, d: &Directive, firings: &mut Firings) {
        let state = d.state.as_deref().unwrap_or_default();
        if self.settings.terminal_states.iter().any(|s| s == state) {
            return;
        }
        let threshold = self.settings.ignored_threshold;
        self.counts.records += 1;
        let track = self.tracks.entry(event.agent.to_string()).or_default();
        if track.last_turn == Some(event.turn) {
            // One more record of the directive the model will see once.
            return;
        }
        track.last_turn = Some(event.turn);
        self.counts.directives += 1;
        if track.terminal {
            return;
        }
        // A later model request passed the pending directive by without satisfying it.
        let ignored_previous = track.pending.is_some();
        track.pending = Some(event.turn);
        if !ignored_previous {
            return;
        }
        track.ignored += 1;
        self.counts.ignored += 1;
        if track.ignored < threshold {
            return;
        }
        track.terminal = true;
        let ignored = track.ignored;
        // Only the main agent's terminal state ends the run; a sub-agent's ends the
        // sub-agent and stays advisory, so terminal firings are about the run.
        let effect = if event.agent == MAIN {
            self.terminal_turn.get_or_insert(event.turn);
            Effect::Terminal
        } else {
            Effect::Advisory
        };
        let firing = firings.fire(event.turn, event.agent, "terminal_incomplete", effect);
        firing.detail(format!("{ignored} directives ignored; report_incomplete"));
        if let Some(family) = d.family.as_deref() {
            firing.family(compact(family, 120));
        }
    }

    /// After the terminal state only a completion report may run.
    fn call(&mut self, call: &CallInfo) {
        if !self.is_terminal(&call.agent) {
            return;
        }
        if call.kind == ToolKind::TaskComplete {
            self.counts
                .reports
                .insert((call.agent.to_string(), call.turn));
        } else {
            self.counts.blocked_after_terminal += 1;
        }
    }

    /// A read, a mutation or a verification attempt answers the pending directive; a call
    /// the harness refused did nothing, whatever its flags say.
    fn result(&mut self, call: &CallInfo, outcome: &Outcome) {
        let satisfies = outcome.answers_directive(call);
        let Some(track) = self.tracks.get_mut(&*call.agent) else {
            return;
        };
        // Only a call made after the model saw the directive answers it.
        let answered = track.pending.is_some_and(|turn| call.turn > turn);
        if !satisfies || track.terminal || !answered {
            return;
        }
        track.pending = None;
        track.ignored = 0;
        self.counts.satisfied += 1;
    }
}
