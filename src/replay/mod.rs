//! The replay engine: feeds each run's normalized stream through every guard.
//!
//! Projects are independent and replayed in parallel (rayon); the runs of one project
//! are its sessions, replayed in order through one set of guard instances so the
//! breaker's cross-session carry flows from one to the next (issue #2, seed 000 WO-3),
//! while the next ones are read in parallel ([`schedule`]). Results come back in input
//! order, so output never depends on the thread count.

use crate::config::{Config, ConfigError};
use crate::guards::{Entry, Firing, Firings, Guard, Metrics, RunMeta, SeriesPoint};
use crate::ingest::{
    IngestStats, LoadedRun, ParseError, Policy, ProblemKind, Problems, ProjectSource,
};
use crate::model::{tokens_from_chars, EventKind, LedgerFamily, LedgerStatus, Request};
use crate::normalize::{NormEvent, RunState, Step};
use std::collections::BTreeMap;

mod lineup;
mod schedule;
pub use lineup::Lineup;
pub use schedule::{replay_each, replay_lineup};

/// Token facts of one turn (one model request), as recorded; the cost model works from
/// these.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnUsage {
    pub turn: u32,
    /// The agent thread whose request this is: the sub-agent any of the turn's records
    /// names, else `main` (a harness may record a sub-agent's usage without its name).
    pub agent: String,
    /// The log records a model request here: a request record, or a tool call the model
    /// made. Frames, results and directives alone are not requests (docs/COUNTERFACTUAL.md).
    pub request: bool,
    /// What the request records (usage by kind, model, cost), summed when a turn holds
    /// several request records.
    pub recorded: Request,
    /// Sum of the turn's frames' `estimatedTokens` (or their characters), if any frame.
    pub frame: Option<u64>,
    /// Context characters the turn's agent carried: its tool arguments and results since
    /// its last compaction.
    pub carried_chars: u64,
}

/// A compaction of one agent's context, recorded at a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    pub turn: u32,
    pub agent: String,
}

/// Everything one run's replay produced.
#[derive(Debug, Clone, Default)]
pub struct RunReplay {
    pub project: String,
    pub run_id: String,
    /// The input format the run was read from (`omnius`, `mini-swe-agent`, ...): its
    /// harness, for scores broken out by harness.
    pub format: String,
    pub session_index: usize,
    pub turns: Vec<TurnUsage>,
    pub compactions: Vec<Compaction>,
    pub firings: Vec<Firing>,
    /// Guard metrics by guard id.
    pub metrics: BTreeMap<String, Metrics>,
    /// Guard series by guard id (for charts; not part of the JSON report).
    pub series: BTreeMap<String, Vec<SeriesPoint>>,
    pub ledger_recorded: Option<LedgerStatus>,
    /// What the guards that carry state across sessions held when this run began, by
    /// guard id (only guards holding something): the rounds a resumed session starts
    /// with (seed 000 WO-3 "carry"). Not part of the JSON report.
    pub carry_in: BTreeMap<String, Vec<LedgerFamily>>,
    /// A sweep's replay ([`Lineup::sweep`]): the firings of the swept guards at each grid
    /// point, in point order, each sorted as `firings` is; `firings` holds the other
    /// guards'. Empty for a plain replay.
    pub swept: Vec<Vec<Firing>>,
    pub problems: Problems,
    pub stats: IngestStats,
    /// Why a guard could not judge this run (an external guard that failed); its results
    /// for the run are left out. The schedule turns each into a located problem.
    pub guard_failures: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Input(#[from] ParseError),
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// Replays every project; `progress` is called once per finished run. The runs come
/// back in input order ([`schedule::replay_each`] delivers them one by one instead).
pub fn replay_all(
    projects: &[ProjectSource],
    config: &Config,
    policy: Policy,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<RunReplay>, ReplayError> {
    let mut runs = Vec::new();
    replay_each(projects, config, policy, progress, &|r| r, &mut |r| {
        runs.push(r)
    })?;
    Ok(runs)
}

/// Replays the sessions of one project in order, through one set of guards; the runs
/// come back in session order (see [`schedule`] for when a project is replayed twice).
pub fn replay_project(
    project: &ProjectSource,
    config: &Config,
    policy: Policy,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<RunReplay>, ReplayError> {
    replay_all(std::slice::from_ref(project), config, policy, progress)
}

/// One project's guards, fed its runs (sessions) one at a time, in order; runs may come
/// from disk or be built in memory.
pub struct ProjectReplayer {
    name: String,
    guards: Vec<(Entry, Box<dyn Guard>)>,
    /// Each guard's lane ([`Lineup`]), and how many lanes there are.
    lane_of: Vec<usize>,
    lanes: usize,
    convergence_ledger: Vec<LedgerFamily>,
    session_index: usize,
    guard_policy: Policy,
}

impl ProjectReplayer {
    pub fn new(
        name: &str,
        config: &Config,
        convergence_ledger: Vec<LedgerFamily>,
    ) -> Result<Self, ConfigError> {
        Self::with_lineup(name, &Lineup::one(config), convergence_ledger)
    }

    /// [`ProjectReplayer::new`] with the guards of `lineup`, lane by lane.
    pub fn with_lineup(
        name: &str,
        lineup: &Lineup,
        convergence_ledger: Vec<LedgerFamily>,
    ) -> Result<Self, ConfigError> {
        let (lane_of, guards) = lineup
            .build()?
            .into_iter()
            .map(|l| (l.lane, (l.entry, l.guard)))
            .unzip();
        Ok(Self {
            name: name.to_string(),
            guards,
            lane_of,
            lanes: lineup.lanes(),
            convergence_ledger,
            session_index: 0,
            guard_policy: if lineup.lenient_guards() {
                Policy::Lenient
            } else {
                Policy::Strict
            },
        })
    }

    /// How a guard that cannot judge a run is treated ([`settle_guard_failures`]).
    pub fn guard_policy(&self) -> Policy {
        self.guard_policy
    }

    /// After the project's runs: what its recorded store holds beyond what each guard
    /// rebuilt (empty for guards that carry nothing).
    pub fn store_gaps(&self) -> Vec<Vec<LedgerFamily>> {
        if self.convergence_ledger.is_empty() {
            return vec![Vec::new(); self.guards.len()];
        }
        self.guards
            .iter()
            .map(|(_, g)| g.store_gap(&self.convergence_ledger).unwrap_or_default())
            .collect()
    }

    /// Before the first run: carries each guard's gap in (see [`ProjectReplayer::store_gaps`]).
    pub fn seed_from_store(&mut self, gaps: &[Vec<LedgerFamily>]) {
        for ((_, guard), gap) in self.guards.iter_mut().zip(gaps) {
            if !gap.is_empty() {
                guard.seed_from_store(gap);
            }
        }
    }

    /// Replays the project's next session, consuming it as it goes ([`walk_owned`]).
    pub fn replay(&mut self, mut run: LoadedRun) -> RunReplay {
        let run_id = std::mem::take(&mut run.run_id);
        let mut carry_in = self.carried_by_lane();
        let last_turn = last_turn(&run);
        let metas: Vec<RunMeta> = carry_in
            .iter()
            .map(|carry_in| RunMeta {
                project: &self.name,
                run_id: &run_id,
                session_index: self.session_index,
                format: run.format.as_str(),
                completion_ledger: run.ledger,
                convergence_ledger: &self.convergence_ledger,
                last_turn,
                carry_in,
                records: run.stats.records,
                skipped: run.problems.count,
            })
            .collect();
        let mut replay = replay_run(run, &metas, &mut self.guards, &self.lane_of);
        replay.carry_in = std::mem::take(&mut carry_in[0]);
        self.session_index += 1;
        replay
    }

    /// What the guards that carry state across sessions hold, by guard id, as each lane
    /// sees it: lane 0's guards', and for a grid point also its own swept guards'.
    fn carried_by_lane(&self) -> Vec<BTreeMap<String, Vec<LedgerFamily>>> {
        let mut lanes = vec![BTreeMap::new(); self.lanes];
        for ((e, g), &lane) in self.guards.iter().zip(&self.lane_of) {
            let Some(carried) = g.carried().filter(|c| !c.is_empty()) else {
                continue;
            };
            if lane == 0 {
                // Every lane sees lane 0's guards; a plain replay's one lane takes it whole.
                for each in lanes.iter_mut().skip(1) {
                    each.insert(e.info.id.to_string(), carried.clone());
                }
                lanes[0].insert(e.info.id.to_string(), carried);
            } else {
                lanes[lane].insert(e.info.id.to_string(), carried);
            }
        }
        lanes
    }
}

/// Turns the guard failures of a replayed run (read from `path`) into located problems:
/// the first one is the error under [`Policy::Strict`] (the default for guards), else
/// each is recorded (`--lenient-guards`) and the run keeps the other guards' results.
pub fn settle_guard_failures(
    replay: &mut RunReplay,
    path: &std::path::Path,
    policy: Policy,
) -> Result<(), ParseError> {
    for message in std::mem::take(&mut replay.guard_failures) {
        let error = ParseError {
            path: crate::ingest::display(path),
            line: None,
            field: None,
            kind: ProblemKind::Guard(message),
        };
        match policy {
            Policy::Strict => return Err(error),
            Policy::Lenient => replay.problems.record_guard(error),
        }
    }
    Ok(())
}

/// The highest turn of any record or frame of `run` (0 for an empty run).
pub fn last_turn(run: &LoadedRun) -> u32 {
    let events = run.events.iter().map(|e| e.at.turn);
    let frames = run.frames.iter().map(|f| f.turn);
    events.chain(frames).max().unwrap_or(0)
}

/// Feeds one loaded run to the guards: events in recorded order (stably by turn), each
/// turn's frames after its events. The run is consumed as it is walked ([`walk_owned`]).
/// Each guard is told of the run as its lane sees it (`metas[lane]`); lane 0's results
/// are the run's, the other lanes' firings go to [`RunReplay::swept`].
fn replay_run(
    run: LoadedRun,
    metas: &[RunMeta<'_>],
    guards: &mut [(Entry, Box<dyn Guard>)],
    lane_of: &[usize],
) -> RunReplay {
    let meta = &metas[0];
    let mut sinks: Vec<Firings> = guards.iter().map(|(e, _)| Firings::new(e.info)).collect();
    for ((_, guard), &lane) in guards.iter_mut().zip(lane_of) {
        guard.begin_run(&metas[lane]);
    }
    let mut usage = UsageAccumulator::default();
    let LoadedRun {
        events,
        frames,
        ledger,
        problems,
        stats,
        ..
    } = run;
    let state = walk_owned(events, frames, |norm, event, state| {
        match (event, &norm.step) {
            (Some(event), _) => usage.event(norm, event),
            (None, Step::Frame(frame)) => usage.frame(frame),
            (None, _) => {}
        }
        feed(guards, &mut sinks, norm, state);
    });
    let mut metrics = BTreeMap::new();
    let mut lanes: Vec<Vec<Firing>> = vec![Vec::new(); metas.len()];
    let mut series = BTreeMap::new();
    let mut guard_failures = Vec::new();
    for (((entry, guard), mut sink), &lane) in guards.iter_mut().zip(sinks).zip(lane_of) {
        let m = guard.finish_run(&metas[lane], &state, &mut sink);
        if let Some(failure) = guard.take_failure() {
            guard_failures.push(failure);
            continue;
        }
        let (fired, plotted) = sink.into_parts();
        lanes[lane].extend(fired);
        // A grid point's metrics and series are not reported: only its firings are scored.
        if lane > 0 {
            continue;
        }
        if !m.is_empty() {
            metrics.insert(entry.info.id.to_string(), m);
        }
        if !plotted.is_empty() {
            series.insert(entry.info.id.to_string(), plotted);
        }
    }
    lanes.iter_mut().for_each(|l| l.sort());
    let mut lanes = lanes.into_iter();
    let firings = lanes.next().unwrap_or_default();
    RunReplay {
        project: meta.project.to_string(),
        run_id: meta.run_id.to_string(),
        format: meta.format.to_string(),
        session_index: meta.session_index,
        turns: usage.turns,
        compactions: usage.compactions,
        firings,
        metrics,
        series,
        ledger_recorded: ledger,
        carry_in: BTreeMap::new(),
        swept: lanes.collect(),
        problems,
        stats,
        guard_failures,
    }
}

/// Feeds one loaded run's annotated stream to `visit`, in the one order every reader of a
/// run sees it (the guards, and `hindsight explain`): events in recorded order, stably by
/// turn, each turn's frames after that turn's events and before the next turn's. `visit`
/// gets each step with its recorded event (`None` for a frame) and the run state after it;
/// the state at the end is returned.
pub fn walk<'r>(
    run: &'r LoadedRun,
    mut visit: impl FnMut(&NormEvent<'r>, Option<&'r crate::model::Event>, &RunState),
) -> RunState {
    let mut state = RunState::new();
    let mut order: Vec<usize> = (0..run.events.len()).collect();
    order.sort_by_key(|&i| run.events[i].at.turn);
    let events = order.iter().map(|&i| &run.events[i]);
    for step in in_stream_order(events, run.frames.iter()) {
        match step {
            Walked::Event(event) => {
                let norm = state.step(event);
                visit(&norm, Some(event), &state);
            }
            Walked::Frame(frame) => visit(&state.frame(frame), None, &state),
        }
    }
    state
}

/// [`walk`] over a run's records and frames taken by value: each is dropped once it has
/// been visited. A replay needs nothing of a record after the guards have seen it, so a
/// long run's outputs and frame texts are given back while its guards' tables and the
/// run state still grow, instead of all being held at once (issue #13: a 1M-line run's
/// memory is what its time grew with).
pub fn walk_owned(
    mut events: Vec<crate::model::Event>,
    frames: Vec<crate::model::Frame>,
    mut visit: impl FnMut(&NormEvent<'_>, Option<&crate::model::Event>, &RunState),
) -> RunState {
    let mut state = RunState::new();
    // A stable sort, as [`walk`]'s; most recordings are in turn order already, and then no
    // scratch copy of the records is made.
    if !events.is_sorted_by_key(|e| e.at.turn) {
        events.sort_by_key(|e| e.at.turn);
    }
    for step in in_stream_order(events.into_iter(), frames.into_iter()) {
        match step {
            Walked::Event(event) => {
                let norm = state.step(&event);
                visit(&norm, Some(&event), &state);
            }
            Walked::Frame(frame) => visit(&state.frame(&frame), None, &state),
        }
    }
    state
}

/// One step of a walk: a record or a frame.
enum Walked<E, F> {
    Event(E),
    Frame(F),
}

/// Records (already in turn order) and frames (ordered by turn) merged into the walk's
/// order: a turn's frames after its records and before the next turn's.
fn in_stream_order<E, F>(
    events: impl Iterator<Item = E>,
    frames: impl Iterator<Item = F>,
) -> impl Iterator<Item = Walked<E, F>>
where
    E: std::borrow::Borrow<crate::model::Event>,
    F: std::borrow::Borrow<crate::model::Frame>,
{
    let mut events = events.peekable();
    let mut frames = frames.peekable();
    std::iter::from_fn(move || {
        let next_turn = events.peek().map(|e| e.borrow().at.turn);
        match frames.next_if(|f| next_turn.is_none_or(|t| f.borrow().turn < t)) {
            Some(frame) => Some(Walked::Frame(frame)),
            None => events.next().map(Walked::Event),
        }
    })
}

fn feed(
    guards: &mut [(Entry, Box<dyn Guard>)],
    sinks: &mut [Firings],
    event: &crate::normalize::NormEvent<'_>,
    state: &RunState,
) {
    for ((_, guard), sink) in guards.iter_mut().zip(sinks.iter_mut()) {
        guard.observe(event, state, sink);
    }
}

/// Collects per-turn token facts while the stream goes by.
#[derive(Default)]
struct UsageAccumulator {
    /// One entry per turn, in turn order. The stream comes in turn order ([`walk`]), so a
    /// record's turn is the last entry's or a new one after it: a run's turns are a list,
    /// not an ordered map of them (a 1M-line run has 300k turns, issue #13).
    turns: Vec<TurnUsage>,
    compactions: Vec<Compaction>,
    /// Characters each agent's context carries since its last compaction.
    carried_chars: crate::hash::HashMap<String, u64>,
}

impl UsageAccumulator {
    /// The turn's entry, seen from a record of `agent`.
    fn turn(&mut self, turn: u32, agent: &str) -> &mut TurnUsage {
        let carried = self.carried_chars.get(agent).copied().unwrap_or(0);
        let t = self.entry(turn);
        if t.agent == MAIN && agent != MAIN {
            t.agent = agent.to_string();
        }
        if t.agent == agent {
            t.carried_chars = t.carried_chars.max(carried);
        }
        t
    }

    /// The entry of `turn`, made when the turn is new.
    fn entry(&mut self, turn: u32) -> &mut TurnUsage {
        let at = match self.turns.last() {
            Some(last) if last.turn == turn => self.turns.len() - 1,
            // Never in [`walk`]'s order; kept right for any caller.
            Some(last) if last.turn > turn => self.turns.partition_point(|t| t.turn < turn),
            _ => self.turns.len(),
        };
        if self.turns.get(at).is_none_or(|t| t.turn != turn) {
            let new = TurnUsage {
                turn,
                agent: MAIN.to_string(),
                ..Default::default()
            };
            self.turns.insert(at, new);
        }
        &mut self.turns[at]
    }

    fn carry(&mut self, agent: &str, chars: u64) {
        let c = crate::hash::value_mut(&mut self.carried_chars, agent);
        *c = c.saturating_add(chars);
    }

    fn event(&mut self, norm: &NormEvent<'_>, event: &crate::model::Event) {
        let (turn, agent) = (event.at.turn, event.at.agent.as_str());
        match &event.kind {
            EventKind::ModelRequest(r) => {
                let t = self.turn(turn, agent);
                t.request = true;
                t.recorded = merge_requests(&t.recorded, r);
            }
            EventKind::ToolCall(_) => {
                if let Step::Call(call) = &norm.step {
                    self.carry(agent, call.args_chars);
                }
                self.turn(turn, agent).request = true;
            }
            EventKind::ToolResult(result) => {
                self.carry(agent, result.chars());
                self.turn(turn, agent);
            }
            EventKind::Compaction { .. } => {
                self.carried_chars.remove(agent);
                self.compactions.push(Compaction {
                    turn,
                    agent: agent.to_string(),
                });
            }
            _ => {}
        }
    }

    fn frame(&mut self, frame: &crate::model::Frame) {
        let tokens = frame
            .estimated_tokens
            .unwrap_or_else(|| tokens_from_chars(frame.chars()));
        let t = self.turn(frame.turn, &frame.agent);
        t.frame = Some(t.frame.unwrap_or(0).saturating_add(tokens));
    }
}

const MAIN: &str = "main";

/// Two request records of one turn as one: usage and cost summed, the first model kept.
fn merge_requests(a: &Request, b: &Request) -> Request {
    let sum = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => Some(x + y),
        (x, y) => x.or(y),
    };
    Request {
        usage: match (a.usage, b.usage) {
            (Some(x), Some(y)) => Some(x.add(&y)),
            (x, y) => x.or(y),
        },
        model: a.model.clone().or_else(|| b.model.clone()),
        cost_usd: sum(a.cost_usd, b.cost_usd),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{At, Event, Frame};

    fn record(turn: u32, seq: u64) -> Event {
        Event {
            at: At {
                turn,
                seq,
                session: 0,
                agent: MAIN.to_string(),
            },
            kind: EventKind::Compaction {
                before_tokens: seq,
                after_tokens: 0,
            },
        }
    }

    fn frame(turn: u32, source: &str) -> Frame {
        Frame {
            turn,
            agent: MAIN.to_string(),
            estimated_tokens: None,
            system_prompt_chars: None,
            messages: Vec::new(),
            signal_to_noise: None,
            source: source.to_string(),
        }
    }

    /// What a walk visits, as `(turn, record seq or frame file)`.
    fn visited(walk: impl FnOnce(&mut dyn FnMut(&NormEvent<'_>, Option<&Event>))) -> Vec<String> {
        let mut seen = Vec::new();
        walk(&mut |norm, event| {
            seen.push(match (event, &norm.step) {
                (Some(e), _) => format!("{} record {}", norm.turn, e.at.seq),
                (None, Step::Frame(f)) => format!("{} frame {}", norm.turn, f.source),
                (None, _) => format!("{} other", norm.turn),
            })
        });
        seen
    }

    #[test]
    fn a_consumed_run_is_walked_in_the_same_order_as_a_borrowed_one() {
        // Records out of turn order (a sub-agent's written late), frames before, between,
        // at and after the records' turns.
        let run = LoadedRun {
            events: [(2, 0), (1, 1), (2, 2), (4, 3), (1, 4)]
                .map(|(turn, seq)| record(turn, seq))
                .to_vec(),
            frames: [(0, "a"), (1, "b"), (2, "c"), (2, "d"), (3, "e"), (6, "f")]
                .map(|(turn, source)| frame(turn, source))
                .to_vec(),
            ..Default::default()
        };
        let borrowed = visited(|v| {
            walk(&run, |n, e, _| v(n, e));
        });
        let run_copy = run.clone();
        let owned = visited(|v| {
            walk_owned(run_copy.events, run_copy.frames, |n, e, _| v(n, e));
        });
        let expected = [
            "0 frame a",
            "1 record 1",
            "1 record 4",
            "1 frame b",
            "2 record 0",
            "2 record 2",
            "2 frame c",
            "2 frame d",
            "3 frame e",
            "4 record 3",
            "6 frame f",
        ];
        assert_eq!(borrowed, expected);
        assert_eq!(owned, expected);
    }

    #[test]
    fn turns_stay_one_entry_each_in_turn_order_whatever_order_they_come_in() {
        let mut usage = UsageAccumulator::default();
        for (turn, agent) in [
            (1, MAIN),
            (3, MAIN),
            (3, "task-1"),
            (2, MAIN),
            (5, MAIN),
            (1, MAIN),
        ] {
            usage.turn(turn, agent);
        }
        let turns: Vec<(u32, &str)> = usage
            .turns
            .iter()
            .map(|t| (t.turn, t.agent.as_str()))
            .collect();
        // A sub-agent's record names the turn's agent; a turn seen twice is one entry.
        assert_eq!(turns, [(1, MAIN), (2, MAIN), (3, "task-1"), (5, MAIN)]);
    }
}
