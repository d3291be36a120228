//! The convergence state machine shared by `convergence_breaker` and `diagnostic_delta`.
//!
//! Seed 000, WO-3: `totalRounds` of one failure family, carried across the sessions of a
//! project, mapped to tiers `healthy < 2 <= converging_warn < 3 <= stalled < 5 <= abandon`;
//! `resolve()` clears a family on success (WO-9 9c); the family is the canonical action
//! family without error class (9b). What counts as *progress* (which decays the count)
//! is the one thing the two guards disagree on, so it is a parameter here:
//! WO-3's productive mutation, or the root refinement's falling diagnostic signal.
//!
//! The store: when the project's recorded `convergence-ledger.json` holds more rounds of a
//! family than replaying the recorded runs rebuilds (older runs pruned), and the family
//! failed in the recording without ever restarting, the difference is carried into the
//! project's first run (WO-3: "a fresh breaker seeded from the store
//! trips on round 1"), and the first run's metrics and firing details say so.

use super::{Effect, Firings, Metrics, RunMeta};
use crate::hash::{HashMap, HashSet};
use crate::model::LedgerFamily;
use crate::normalize::family::ledger_family;
use crate::normalize::{NormEvent, RunState, Signal, Step};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The agent whose carry the store holds.
const MAIN: &str = "main";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Healthy,
    ConvergingWarn,
    Stalled,
    Abandon,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Healthy => "healthy",
            Self::ConvergingWarn => "converging_warn",
            Self::Stalled => "stalled",
            Self::Abandon => "abandon",
        }
    }
}

/// Tier boundaries in total rounds (seed 000 WO-3 defaults: 2, 3, 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Thresholds {
    pub converging_warn: u32,
    pub stalled: u32,
    pub abandon: u32,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            converging_warn: 2,
            stalled: 3,
            abandon: 5,
        }
    }
}

impl Thresholds {
    /// Tiers in order and at least one round each (seed 000 WO-3: `healthy < 2 <=
    /// converging_warn < 3 <= stalled < 5 <= abandon`).
    pub fn check(&self) -> Result<(), String> {
        super::at_least("converging_warn", self.converging_warn.into(), 1)?;
        let order = [
            ("converging_warn", self.converging_warn),
            ("stalled", self.stalled),
            ("abandon", self.abandon),
        ];
        for pair in order.windows(2) {
            let ((low, a), (high, b)) = (pair[0], pair[1]);
            if a > b {
                return Err(format!("`{low}` ({a}) must not exceed `{high}` ({b})"));
            }
        }
        Ok(())
    }

    pub fn tier(&self, rounds: u32) -> Tier {
        if rounds >= self.abandon {
            Tier::Abandon
        } else if rounds >= self.stalled {
            Tier::Stalled
        } else if rounds >= self.converging_warn {
            Tier::ConvergingWarn
        } else {
            Tier::Healthy
        }
    }
}

/// What decays a family's round count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// WO-3 as first shipped: any productive mutation since the family's last failure.
    Mutation,
    /// Root refinement: progress is read from the failures' own diagnostics.
    DiagnosticDelta(Delta),
}

/// How the root refinement reads progress (`diagnostic_delta`'s settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delta {
    /// Rounds added when the error count rises ("worsening escalates fastest").
    pub worsening_step: u32,
    pub rule: DeltaRule,
    /// Count uncaught exceptions' last lines in the signal (not in seed 000's list).
    pub exceptions: bool,
    /// An install between failures counts as a productive change in the mutation
    /// fallback of [`DeltaRule::Count`].
    pub install_is_progress: bool,
}

/// What a failure's diagnostics must show to count as progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeltaRule {
    /// Seed 000: the error count dropped (progress), rose (`worsening_step` rounds) or
    /// stayed (a round); without comparable counts on both sides (a reported total on
    /// each, or a line count of unfiltered output on each), the mutation rule.
    #[default]
    Count,
    /// A falling count resets; else a diagnostic already seen since the family's last
    /// success adds a round whatever was changed between, and a new one holds the count
    /// (issue #28: a different missing module after each install is not a stall).
    Fingerprint,
}

/// What one failure does to its family's rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RoundStep {
    /// Progress: the failure starts a new trajectory at one round.
    Reset,
    /// Neither progress nor repetition: the count stays (one round if it had none).
    Hold,
    /// No progress: this many rounds more.
    Add(u32),
}

#[derive(Debug, Clone, Default)]
struct Track {
    rounds: u32,
    /// The last reliable signal of the family's failures.
    last_signal: Option<Signal>,
    /// The fingerprints of the family's failures since its last success.
    seen: HashSet<u64>,
    /// The breaker's mutation counter at this family's last failure.
    mutations_at_failure: u64,
    /// Highest tier already reported on the current trajectory.
    reported: Option<Tier>,
    /// Rounds of `rounds` seeded from the recorded store, until the trajectory restarts.
    from_store: u32,
}

/// A family crossing into `stalled` or `abandon`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    pub family: String,
    pub tier: Tier,
    pub rounds: u32,
    /// Rounds carried in from the recorded store (runs no longer in the recording).
    pub from_store: u32,
}

/// The breaker: one per project, so the carry survives session boundaries.
#[derive(Debug, Clone)]
pub struct Breaker {
    thresholds: Thresholds,
    progress: Progress,
    /// Keyed by (agent, family): a sub-agent's loop is its own trajectory.
    tracks: HashMap<(String, String), Track>,
    mutations: HashMap<String, u64>,
    /// Families whose count restarted (resolved, or decayed by progress): what the
    /// replay rebuilt for them says nothing about runs before the recording.
    restarted: HashSet<(String, String)>,
}

impl Breaker {
    pub fn new(thresholds: Thresholds, progress: Progress) -> Self {
        Self {
            thresholds,
            progress,
            tracks: HashMap::default(),
            mutations: HashMap::default(),
            restarted: HashSet::default(),
        }
    }

    /// Feeds one event; returns an escalation when a family newly reaches stalled or abandon.
    pub fn observe(&mut self, event: &NormEvent<'_>) -> Option<Escalation> {
        let Step::Result { call, outcome, .. } = &event.step else {
            return None;
        };
        let agent = event.agent.to_string();
        // Written files or installed packages: what the next run sees has changed (a
        // `sed -i x && make | tail` whose output overturned its status still edited).
        let installs_count = match self.progress {
            Progress::DiagnosticDelta(d) => d.install_is_progress,
            Progress::Mutation => true,
        };
        if outcome.mutation || (installs_count && outcome.environment) {
            *self.mutations.entry(agent.clone()).or_default() += 1;
        }
        if outcome.success {
            // resolve(): the work this family stood for now succeeds (and, for a passing
            // `a && b`, the work of `a` and of `b`).
            for family in outcome.resolves(call) {
                let key = (agent.clone(), family.clone());
                if self.tracks.remove(&key).is_some() {
                    self.restarted.insert(key);
                }
            }
            return None;
        }
        let key = (agent.clone(), call.families.action.clone());
        let mutations = self.mutations.get(&agent).copied().unwrap_or(0);
        let track = self.tracks.entry(key.clone()).or_default();
        let mutated = track.rounds > 0 && mutations > track.mutations_at_failure;
        let by_mutation = if mutated {
            RoundStep::Reset
        } else {
            RoundStep::Add(1)
        };
        let signal = match self.progress {
            Progress::Mutation => None,
            Progress::DiagnosticDelta(d) => {
                outcome.signal.and_then(|s| s.root_refinement(d.exceptions))
            }
        };
        let step = match self.progress {
            Progress::Mutation => by_mutation,
            Progress::DiagnosticDelta(d) => {
                // Only like with like: two reported totals, or two line counts of output
                // nothing cut. A count read through `| tail` may only be a shorter view.
                let compared = track
                    .last_signal
                    .zip(signal)
                    .and_then(|(before, now)| before.compare(&now));
                let worse = RoundStep::Add(d.worsening_step.max(1));
                match (d.rule, compared) {
                    (_, Some(Ordering::Less)) => RoundStep::Reset,
                    (DeltaRule::Count, Some(Ordering::Greater)) => worse,
                    (DeltaRule::Count, Some(Ordering::Equal)) => RoundStep::Add(1),
                    (DeltaRule::Count, None) => by_mutation,
                    // A failure that says nothing (no text) cannot be told apart from
                    // the last one: the mutation rule decides, as without a signal.
                    (DeltaRule::Fingerprint, _) => match outcome.fingerprint {
                        None => by_mutation,
                        Some(f) if track.seen.insert(f) => RoundStep::Hold,
                        Some(_) if compared == Some(Ordering::Greater) => worse,
                        Some(_) => RoundStep::Add(1),
                    },
                }
            }
        };
        match step {
            // Progress resets the cliff: this failure starts a new trajectory.
            RoundStep::Reset if track.rounds > 0 => {
                track.rounds = 1;
                track.reported = None;
                track.from_store = 0;
                self.restarted.insert(key);
            }
            RoundStep::Reset | RoundStep::Hold => track.rounds = track.rounds.max(1),
            RoundStep::Add(n) => track.rounds = track.rounds.saturating_add(n),
        }
        // A filtered line count is never the baseline a later count is compared with.
        match signal {
            Some(s) if !s.is_reliable() => {}
            other => track.last_signal = other,
        }
        track.mutations_at_failure = mutations;
        let tier = self.thresholds.tier(track.rounds);
        if tier >= Tier::Stalled && track.reported < Some(tier) {
            track.reported = Some(tier);
            return Some(Escalation {
                family: call.families.action.clone(),
                tier,
                rounds: track.rounds,
                from_store: track.from_store,
            });
        }
        None
    }

    /// Carries `rounds` of `family` in, as the harness's store would on construction.
    pub fn seed(&mut self, agent: &str, family: &str, rounds: u32) {
        let track = self
            .tracks
            .entry((agent.to_string(), family.to_string()))
            .or_default();
        track.rounds = track.rounds.saturating_add(rounds);
        track.from_store = track.from_store.saturating_add(rounds);
    }

    /// The rounds of a family that has failed and never restarted since the first run:
    /// the only families whose rebuilt count a recorded store can be compared with.
    pub fn unbroken_rounds(&self, agent: &str, family: &str) -> Option<u32> {
        let key = (agent.to_string(), family.to_string());
        let track = self.tracks.get(&key)?;
        (!self.restarted.contains(&key)).then_some(track.rounds)
    }

    /// Every family with rounds, by name (a sub-agent's as `agent: family`, as the
    /// convergence chart names them): what the next session of the project starts with.
    pub fn carried(&self) -> Vec<LedgerFamily> {
        let mut carried: Vec<LedgerFamily> = self
            .tracks
            .iter()
            .filter(|(_, t)| t.rounds > 0)
            .map(|((agent, family), t)| LedgerFamily {
                family: series_name(agent, family),
                rounds: t.rounds,
            })
            .collect();
        carried.sort_by(|a, b| a.family.cmp(&b.family));
        carried
    }

    /// Current rounds of a family (for tests and reports).
    pub fn rounds(&self, agent: &str, family: &str) -> u32 {
        self.tracks
            .get(&(agent.to_string(), family.to_string()))
            .map_or(0, |t| t.rounds)
    }
}

/// The rounds of the family a result belongs to, before the breaker sees it.
pub fn rounds_of(breaker: &Breaker, event: &NormEvent<'_>) -> u32 {
    match &event.step {
        Step::Result { call, .. } => breaker.rounds(event.agent, &call.families.action),
        _ => 0,
    }
}

/// The rounds of a family after a failure of it, or after the success that resolves it
/// (0): the series the convergence chart draws against the tier thresholds. Families that
/// never failed are not plotted.
pub fn plot_rounds(breaker: &Breaker, before: u32, event: &NormEvent<'_>, firings: &mut Firings) {
    if let Step::Result { call, outcome, .. } = &event.step {
        if outcome.success && before == 0 {
            return;
        }
        let family = &call.families.action;
        let rounds = breaker.rounds(event.agent, family);
        firings.plot(
            series_name(event.agent, family),
            event.turn,
            u64::from(rounds),
        );
    }
}

/// A family as the rounds series names it: the main agent's by itself, a sub-agent's
/// prefixed with the agent.
fn series_name(agent: &str, family: &str) -> String {
    if agent == MAIN {
        family.to_string()
    } else {
        format!("{agent}: {family}")
    }
}

/// How both breaker guards report an escalation: `stalled` advises, `abandon` ends the run.
pub fn fire_escalation(event: &NormEvent<'_>, e: &Escalation, firings: &mut Firings) {
    let (effect, next) = match e.tier {
        // Only the main agent's abandon ends the run; a sub-agent's ends the sub-agent and
        // stays advisory, so terminal firings (and the gate's verdicts on them) are about
        // the run.
        Tier::Abandon if event.agent == "main" => {
            (Effect::Terminal, "terminal_incomplete + report_incomplete")
        }
        Tier::Abandon => (Effect::Advisory, "abandon the sub-agent's trajectory"),
        _ => (
            Effect::Advisory,
            "stop patching; regenerate or run_verification",
        ),
    };
    let rounds = match e.from_store {
        0 => format!("{} rounds", e.rounds),
        n => format!(
            "{} rounds ({n} carried from the recorded convergence ledger)",
            e.rounds
        ),
    };
    firings
        .fire(event.turn, event.agent, e.tier.as_str(), effect)
        .family(e.family.clone())
        .detail(format!("{rounds}; {next}"));
}

/// What both breaker guards do with the breaker: feed it, report its escalations and
/// rounds, and carry rounds in from the project's recorded store.
pub struct BreakerGuard {
    breaker: Breaker,
    /// The run's directory, for reading the store's keys in canonical form.
    cwd: Option<String>,
    /// What was seeded from the store, by family: the first run reports it.
    seeded: Vec<LedgerFamily>,
}

impl BreakerGuard {
    pub fn new(breaker: Breaker) -> Self {
        Self {
            breaker,
            cwd: None,
            seeded: Vec::new(),
        }
    }

    pub fn observe(&mut self, event: &NormEvent<'_>, run: &RunState, firings: &mut Firings) {
        if self.cwd.is_none() {
            self.cwd = run.cwd().map(str::to_string);
        }
        let before = rounds_of(&self.breaker, event);
        if let Some(escalation) = self.breaker.observe(event) {
            fire_escalation(event, &escalation, firings);
        }
        plot_rounds(&self.breaker, before, event, firings);
    }

    /// The first run says what it carried in from the store.
    pub fn finish_run(&mut self, run: &RunMeta<'_>) -> Metrics {
        let mut metrics = Metrics::new();
        if run.session_index == 0 && !self.seeded.is_empty() {
            let seeded: serde_json::Map<String, serde_json::Value> = self
                .seeded
                .iter()
                .map(|f| (f.family.clone(), f.rounds.into()))
                .collect();
            metrics.insert("carried_from_store".into(), seeded.into());
        }
        metrics
    }

    /// The store's rounds beyond the main agent's rebuilt ones, by canonical family (a
    /// family the harness keyed in several variants sums them). Only families that failed
    /// in the recording and never restarted count: a family the recording resolved or saw
    /// progress on has a store entry that is stale, not a carry from pruned runs, and one
    /// that never failed here would change nothing.
    pub fn store_gap(&self, ledger: &[LedgerFamily]) -> Vec<LedgerFamily> {
        let mut recorded: BTreeMap<String, u32> = BTreeMap::new();
        for f in ledger {
            let key = ledger_family(&f.family, self.cwd.as_deref());
            let rounds = recorded.entry(key).or_default();
            *rounds = rounds.saturating_add(f.rounds);
        }
        recorded
            .into_iter()
            .filter_map(|(family, rounds)| {
                let rebuilt = self.breaker.unbroken_rounds(MAIN, &family)?;
                (rounds > rebuilt).then(|| LedgerFamily {
                    family,
                    rounds: rounds - rebuilt,
                })
            })
            .collect()
    }

    /// What the next session starts with ([`Breaker::carried`]).
    pub fn carried(&self) -> Vec<LedgerFamily> {
        self.breaker.carried()
    }

    pub fn seed_from_store(&mut self, gap: &[LedgerFamily]) {
        for f in gap {
            self.breaker.seed(MAIN, &f.family, f.rounds);
        }
        self.seeded = gap.to_vec();
    }
}

/// Implements [`Guard`](super::Guard) for a breaker guard by handing everything to its
/// `breaker` field (a [`BreakerGuard`]): the two breaker guards differ only in their
/// progress rule.
macro_rules! breaker_guard {
    ($guard:ty) => {
        impl $crate::guards::Guard for $guard {
            fn observe(
                &mut self,
                event: &$crate::normalize::NormEvent<'_>,
                run: &$crate::normalize::RunState,
                firings: &mut $crate::guards::Firings,
            ) {
                self.breaker.observe(event, run, firings);
            }

            fn finish_run(
                &mut self,
                run: &$crate::guards::RunMeta<'_>,
                _: &$crate::normalize::RunState,
                _: &mut $crate::guards::Firings,
            ) -> $crate::guards::Metrics {
                self.breaker.finish_run(run)
            }

            fn store_gap(
                &self,
                ledger: &[$crate::model::LedgerFamily],
            ) -> Option<Vec<$crate::model::LedgerFamily>> {
                Some(self.breaker.store_gap(ledger))
            }

            fn seed_from_store(&mut self, gap: &[$crate::model::LedgerFamily]) {
                self.breaker.seed_from_store(gap);
            }

            fn carried(&self) -> Option<Vec<$crate::model::LedgerFamily>> {
                Some(self.breaker.carried())
            }
        }
    };
}
pub(crate) use breaker_guard;
