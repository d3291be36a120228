//! The order the work is done in (issue #13): projects in parallel; within a project, the
//! runs ahead of the one being replayed read and parsed in parallel (a bounded look-ahead,
//! read in session order by whichever thread is free), each replayed strictly in session
//! order as soon as it is read and its turn comes; and each result handed on in input
//! order as soon as everything before it is done. A project starts only within a window of
//! the first one not yet handed on in full, and a project behind that one stops reading
//! ahead while too many finished runs wait for their turn ([`runs_waiting`]), resuming
//! when the first one moves. Output never depends on the thread count, and memory holds
//! the look-ahead of each busy project and a bounded number of waiting results, not the
//! corpus and not a whole project.
//!
//! A project whose recorded convergence ledger holds rounds that replaying its runs does
//! not rebuild (runs pruned from the recording) is replayed a second time with those rounds
//! carried into its first run (seed 000 WO-3), and the first replay's results are dropped:
//! such a project's results are held until that is known (as what will be handed on, and
//! counted with the waiting ones). Projects without a recorded ledger are read once and
//! handed on run by run.

use super::{settle_guard_failures, Lineup, ProjectReplayer, ReplayError, RunReplay};
use crate::config::Config;
use crate::ingest::{self, Policy, Problems, ProjectSource};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Replays every project and hands each run, turned into a `T` by `map` on a worker
/// thread (not in the project's in-order path), to `deliver` in input order (projects in order, each project's runs
/// in session order). `progress` is called once per replayed run. On an error (a bad
/// record under [`Policy::Strict`], a bad setting), the error of the first project in
/// input order that has one is returned; runs may have been delivered before it.
pub fn replay_each<T: Send>(
    projects: &[ProjectSource],
    config: &Config,
    policy: Policy,
    progress: &(dyn Fn() + Sync),
    map: &(dyn Fn(RunReplay) -> T + Sync),
    deliver: &mut (dyn FnMut(T) + Send),
) -> Result<(), ReplayError> {
    replay_lineup(
        projects,
        &Lineup::one(config),
        policy,
        progress,
        map,
        deliver,
    )
}

/// [`replay_each`] with the guards of `lineup` (a sweep's lanes: each run read once for
/// every grid point).
pub fn replay_lineup<T: Send>(
    projects: &[ProjectSource],
    lineup: &Lineup,
    policy: Policy,
    progress: &(dyn Fn() + Sync),
    map: &(dyn Fn(RunReplay) -> T + Sync),
    deliver: &mut (dyn FnMut(T) + Send),
) -> Result<(), ReplayError> {
    lineup.build()?;
    let work = Work {
        projects,
        lineup,
        policy,
        progress,
        map,
        outcomes: projects.iter().map(|_| Mutex::new(None)).collect(),
        state: Mutex::new(State {
            order: InOrder::new(projects, deliver),
            next_start: 0,
            limit: projects.len(),
            paused: Vec::new(),
            held: 0,
            held_by: vec![0; projects.len()],
        }),
        window: projects_ahead(),
        waiting_cap: runs_waiting(),
    };
    rayon::scope(|scope| work.start_ready(scope));
    match work
        .outcomes
        .into_iter()
        .find_map(|o| o.into_inner().ok().flatten())
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Projects that may be under way beyond the first one not yet handed on in full: enough
/// to keep every thread busy, few enough that the runs waiting for their turn stay few.
fn projects_ahead() -> usize {
    2 * rayon::current_num_threads().max(1)
}

/// Runs that may wait for their turn before a project that is not the first one not yet
/// handed on stops reading ahead, and pauses once the runs it reads are replayed, until
/// that one moves: enough to keep a thread busy past the first project for a while, few
/// enough that memory does not grow with the length of the projects (issue #13).
fn runs_waiting() -> usize {
    16 * rayon::current_num_threads().max(1)
}

/// One replay of many projects: what each project needs, which starts next, and the runs
/// waiting to be handed on. No thread ever waits for a turn: a project is started (spawned)
/// when the window moves, by whoever moved it, and a paused project is resumed the same way.
struct Work<'a, 'd, T> {
    projects: &'a [ProjectSource],
    lineup: &'a Lineup,
    policy: Policy,
    progress: &'a (dyn Fn() + Sync),
    map: &'a (dyn Fn(RunReplay) -> T + Sync),
    /// Each project's error, if it failed.
    outcomes: Vec<Mutex<Option<ReplayError>>>,
    state: Mutex<State<'d, T>>,
    window: usize,
    waiting_cap: usize,
}

struct State<'d, T> {
    order: InOrder<'d, T>,
    next_start: usize,
    /// Projects from here on are not started: one before them failed.
    limit: usize,
    /// Projects paused because too many runs wait for their turn.
    paused: Vec<ProjectTask<T>>,
    /// Runs held by first passes (projects with a recorded convergence ledger), which wait
    /// for their turn as much as `order`'s do: in all, and per project.
    held: usize,
    held_by: Vec<usize>,
}

impl<T> State<'_, T> {
    fn hold(&mut self, p: usize, runs: usize) {
        self.held += runs;
        self.held_by[p] += runs;
    }

    fn release(&mut self, p: usize, runs: usize) {
        self.held -= runs;
        self.held_by[p] -= runs;
    }

    /// Whether project `p` should pause: it is not the first one not yet handed on, and
    /// the runs waiting for their turn (but those the first one holds itself) are at the
    /// cap.
    fn should_pause(&self, p: usize, cap: usize) -> bool {
        let head = self.order.next.0;
        let held_by_head = self.held_by.get(head).copied().unwrap_or(0);
        p != head && self.order.waiting.len() + self.held - held_by_head >= cap
    }
}

impl<'a, 'd, T: Send> Work<'a, 'd, T> {
    /// Starts every project not yet started that is within the window of the first one
    /// not yet handed on in full, and resumes the paused projects that may go on.
    fn start_ready<'s>(&'s self, scope: &rayon::Scope<'s>) {
        let (ready, resumed) = {
            let mut state = lock(&self.state);
            let end = state.limit.min(state.order.next.0 + self.window);
            let ready = state.next_start..end.max(state.next_start);
            state.next_start = ready.end;
            let paused = std::mem::take(&mut state.paused);
            let (stay, resumed): (Vec<_>, Vec<_>) = paused
                .into_iter()
                .partition(|task| state.should_pause(task.p, self.waiting_cap));
            state.paused = stay;
            (ready, resumed)
        };
        for p in ready {
            scope.spawn(move |scope| self.project(scope, p));
        }
        for task in resumed {
            scope.spawn(move |scope| self.run(scope, task));
        }
    }

    fn project<'s>(&'s self, scope: &rayon::Scope<'s>, p: usize) {
        match ProjectTask::new(p, &self.projects[p], self.lineup, self.policy) {
            Ok(task) => self.run(scope, task),
            Err(e) => self.failed(scope, p, e),
        }
    }

    /// Replays `task` until its project is done, it fails, or it pauses.
    fn run<'s>(&'s self, scope: &rayon::Scope<'s>, mut task: ProjectTask<T>) {
        let p = task.p;
        let project = &self.projects[p];
        loop {
            let ProjectTask {
                pass,
                replayer,
                sessions,
                ..
            } = &mut task;
            // A second pass is not counted again.
            let progress: &(dyn Fn() + Sync) = match pass {
                Pass::Seeded => &|| {},
                _ => self.progress,
            };
            let held = match pass {
                Pass::First { held, .. } => Some(Mutex::new(held)),
                Pass::Only | Pass::Seeded => None,
            };
            let each = |i, run| match &held {
                // Held as what will be handed on, not as the replay: the smaller.
                Some(held) => {
                    let item = (self.map)(run);
                    lock(held).push((i, item));
                    lock(&self.state).hold(p, 1);
                }
                None => self.hand_on(scope, p, i, run),
            };
            let pause = || lock(&self.state).should_pause(p, self.waiting_cap);
            let step = replay_sessions(
                project,
                replayer,
                sessions,
                self.policy,
                progress,
                &each,
                &pause,
            );
            match step {
                Err(e) => {
                    lock(&self.state).release(p, task.held().len());
                    return self.failed(scope, p, e);
                }
                Ok(Step::Paused) => {
                    let mut state = lock(&self.state);
                    // Checked again under the lock that resuming takes, so a project never
                    // stays paused after the move that lets it go on.
                    if state.should_pause(p, self.waiting_cap) {
                        state.paused.push(task);
                        return;
                    }
                }
                Ok(Step::Done) => {
                    let next = task.next_pass(project, self.lineup);
                    let held = task.held();
                    lock(&self.state).release(p, held.len());
                    match next {
                        Ok(Some(next)) => task = next,
                        Ok(None) => {
                            for (i, item) in held {
                                self.put(scope, p, i, item);
                            }
                            return self.start_ready(scope);
                        }
                        Err(e) => return self.failed(scope, p, e),
                    }
                }
            }
        }
    }

    /// Hands run `i` of project `p` on (or keeps it for its turn).
    fn hand_on<'s>(&'s self, scope: &rayon::Scope<'s>, p: usize, i: usize, run: RunReplay) {
        self.put(scope, p, i, (self.map)(run));
    }

    fn put<'s>(&'s self, scope: &rayon::Scope<'s>, p: usize, i: usize, item: T) {
        let moved = {
            let mut state = lock(&self.state);
            let head = state.order.next;
            state.order.put((p, i), item);
            state.order.next != head
        };
        if moved {
            self.start_ready(scope);
        }
    }

    fn failed<'s>(&'s self, scope: &rayon::Scope<'s>, p: usize, e: ReplayError) {
        *lock(&self.outcomes[p]) = Some(e);
        // No later project starts: an earlier one may still fail, and its error is the
        // one reported, whatever the thread count.
        {
            let mut state = lock(&self.state);
            state.limit = state.limit.min(p);
        }
        self.start_ready(scope);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A project's replay part way through: which pass, its guards' state, and where its
/// sessions stand. It moves between threads when it pauses and resumes.
///
/// A project whose recorded convergence ledger is empty is replayed once, each run handed
/// on as it is done. Otherwise its runs are held through a first pass; if the store holds
/// rounds that pass did not rebuild, a second pass seeded with them is the one handed on.
struct ProjectTask<T> {
    p: usize,
    pass: Pass<T>,
    replayer: ProjectReplayer,
    sessions: Sessions,
}

enum Pass<T> {
    Only,
    /// The runs held (each with its place in the project), and the project's own problems
    /// (its convergence ledger's) for the first run of a second pass.
    First {
        held: Vec<(usize, T)>,
        problems: Problems,
    },
    Seeded,
}

enum Step {
    Done,
    Paused,
}

impl<T> ProjectTask<T> {
    fn new(
        p: usize,
        project: &ProjectSource,
        lineup: &Lineup,
        policy: Policy,
    ) -> Result<Self, ReplayError> {
        let mut problems = Problems::default();
        let ledger = if project.format == ingest::InputFormat::Omnius {
            ingest::load_convergence_ledger(&project.root, policy, &project.limits, &mut problems)?
        } else {
            Vec::new()
        };
        let replayer = ProjectReplayer::with_lineup(&project.name, lineup, ledger)?;
        let pass = if replayer.convergence_ledger.is_empty() {
            Pass::Only
        } else {
            Pass::First {
                held: Vec::with_capacity(project.runs.len()),
                problems: problems.clone(),
            }
        };
        Ok(Self {
            p,
            pass,
            replayer,
            sessions: Sessions::new(problems),
        })
    }

    /// The pass after this one, if there is one.
    fn next_pass(
        &mut self,
        project: &ProjectSource,
        lineup: &Lineup,
    ) -> Result<Option<ProjectTask<T>>, ReplayError> {
        let Pass::First { problems, .. } = &mut self.pass else {
            return Ok(None);
        };
        let gaps = self.replayer.store_gaps();
        if gaps.iter().all(Vec::is_empty) {
            return Ok(None);
        }
        let ledger = std::mem::take(&mut self.replayer.convergence_ledger);
        let mut seeded = ProjectReplayer::with_lineup(&project.name, lineup, ledger)?;
        seeded.seed_from_store(&gaps);
        Ok(Some(ProjectTask {
            p: self.p,
            pass: Pass::Seeded,
            replayer: seeded,
            sessions: Sessions::new(std::mem::take(problems)),
        }))
    }

    /// Takes the runs a first pass held, in session order (none for the other passes).
    fn held(&mut self) -> Vec<(usize, T)> {
        match &mut self.pass {
            Pass::First { held, .. } => {
                let mut held = std::mem::take(held);
                held.sort_unstable_by_key(|(i, _)| *i);
                held
            }
            _ => Vec::new(),
        }
    }
}

/// Runs read ahead of the one being replayed: one per thread, so every thread but the
/// replaying one has a run to read, and one more, so the replaying thread finds its next
/// run read, or one to read itself, when it is done with one. This bounds what a project
/// holds.
fn look_ahead() -> usize {
    rayon::current_num_threads().max(1) + 1
}

/// Where the replay of a project's sessions stands: the next run to replay, and the
/// problems that go on it.
struct Sessions {
    from: usize,
    problems: Problems,
}

impl Sessions {
    fn new(problems: Problems) -> Self {
        Self { from: 0, problems }
    }
}

/// Replays `project`'s runs in session order from where `sessions` stands, each run read
/// and parsed by whichever thread is free while the ones before it are replayed (a
/// pipeline: a run is replayed as soon as it is read and its turn comes), until every run
/// is replayed or `pause` says to read no further: then the runs already being read are
/// replayed and the project stops there for now, holding none.
fn replay_sessions(
    project: &ProjectSource,
    replayer: &mut ProjectReplayer,
    sessions: &mut Sessions,
    policy: Policy,
    progress: &(dyn Fn() + Sync),
    each: &(dyn Fn(usize, RunReplay) + Sync),
    pause: &(dyn Fn() -> bool + Sync),
) -> Result<Step, ReplayError> {
    let runs = &project.runs;
    let ahead = look_ahead();
    let handing_on = AtomicUsize::new(0);
    let reading = Reading::new(sessions.from, ahead);
    let load = |i: usize| ingest::load_run(&runs[i], policy);
    rayon::scope(|scope| {
        let allow = |end: usize| {
            while reading.allow(end.min(runs.len()), pause) {
                scope.spawn(|_| {
                    reading.read_next(&load);
                });
            }
        };
        allow(sessions.from + ahead);
        while let Some(loaded) = reading.take(sessions.from, &load) {
            let i = sessions.from;
            allow(i + 1 + ahead);
            let mut replay = replayer.replay(loaded?);
            settle_guard_failures(&mut replay, &runs[i].path, replayer.guard_policy())?;
            replay
                .problems
                .absorb(std::mem::take(&mut sessions.problems));
            // Turned into what is handed on (a report entry) off the replaying thread,
            // which the next run waits for; by this one when that work piles up.
            if handing_on.fetch_add(1, Ordering::Relaxed) < ahead {
                let handing_on = &handing_on;
                scope.spawn(move |_| {
                    each(i, replay);
                    handing_on.fetch_sub(1, Ordering::Relaxed);
                });
            } else {
                each(i, replay);
                handing_on.fetch_sub(1, Ordering::Relaxed);
            }
            progress();
            sessions.from = i + 1;
        }
        Ok(if sessions.from == runs.len() {
            Step::Done
        } else {
            Step::Paused
        })
    })
}

/// The runs of a project being read ahead of its replay: which may be read (up to `end`),
/// which one is read next (runs are taken in session order, so the one needed soonest is
/// read first), and a ring of slots the runs read wait in for their turn.
struct Reading<T> {
    claims: Mutex<Claims>,
    slots: Vec<Slot<T>>,
}

struct Claims {
    next: usize,
    end: usize,
}

impl<T> Reading<T> {
    fn new(from: usize, ahead: usize) -> Self {
        Self {
            claims: Mutex::new(Claims {
                next: from,
                end: from,
            }),
            slots: (0..ahead.max(1)).map(|_| Slot::default()).collect(),
        }
    }

    fn slot(&self, i: usize) -> &Slot<T> {
        &self.slots[i % self.slots.len()]
    }

    /// Lets one more run be read if it is before `end` and `pause` does not say to stop;
    /// says whether it did.
    fn allow(&self, end: usize, pause: &dyn Fn() -> bool) -> bool {
        let mut claims = lock(&self.claims);
        let more = claims.end < end && !pause();
        claims.end += usize::from(more);
        more
    }

    /// Reads the next run that may be read and no thread has taken yet, if there is one.
    fn read_next(&self, load: &dyn Fn(usize) -> T) -> bool {
        let i = {
            let mut claims = lock(&self.claims);
            if claims.next == claims.end {
                return false;
            }
            claims.next += 1;
            claims.next - 1
        };
        self.slot(i).fill(load(i));
        true
    }

    /// Run `i` once read, or `None` when it may not be read (the project pauses before
    /// it, or has no more runs). The replaying thread waits for its next run by reading
    /// the next ones itself; when every run allowed is being read by other threads, it
    /// does other work of the pool, else it sleeps until run `i` is in.
    fn take(&self, i: usize, load: &dyn Fn(usize) -> T) -> Option<T> {
        if i >= lock(&self.claims).end {
            return None;
        }
        let slot = self.slot(i);
        loop {
            if let Some(value) = slot.try_take() {
                return Some(value);
            }
            if self.read_next(load) || rayon::yield_now() == Some(rayon::Yield::Executed) {
                continue;
            }
            slot.wait();
        }
    }
}

/// A run read for its turn: filled by the thread that read it, taken by the one that
/// replays it.
struct Slot<T> {
    value: Mutex<Option<T>>,
    filled: Condvar,
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self {
            value: Mutex::new(None),
            filled: Condvar::new(),
        }
    }
}

impl<T> Slot<T> {
    fn fill(&self, value: T) {
        *lock(&self.value) = Some(value);
        self.filled.notify_one();
    }

    fn try_take(&self) -> Option<T> {
        lock(&self.value).take()
    }

    /// Sleeps until the slot is filled or, briefly, so that the waiting thread looks
    /// for other work again.
    fn wait(&self) {
        let value = lock(&self.value);
        if value.is_none() {
            let woken = self.filled.wait_timeout(value, Duration::from_micros(200));
            drop(woken.unwrap_or_else(std::sync::PoisonError::into_inner));
        }
    }
}

/// Hands items on in input order: an item that comes before its turn waits until every
/// item before it has been handed on.
struct InOrder<'d, T> {
    deliver: &'d mut (dyn FnMut(T) + Send),
    /// Runs per project.
    runs: Vec<usize>,
    /// (project, run) of the next item to hand on.
    next: (usize, usize),
    waiting: BTreeMap<(usize, usize), T>,
}

impl<'d, T> InOrder<'d, T> {
    fn new(projects: &[ProjectSource], deliver: &'d mut (dyn FnMut(T) + Send)) -> Self {
        let mut order = Self {
            deliver,
            runs: projects.iter().map(|p| p.runs.len()).collect(),
            next: (0, 0),
            waiting: BTreeMap::new(),
        };
        order.skip_finished_projects();
        order
    }

    fn put(&mut self, at: (usize, usize), item: T) {
        if at != self.next {
            self.waiting.insert(at, item);
            return;
        }
        (self.deliver)(item);
        self.advance();
        while let Some(item) = self.waiting.remove(&self.next) {
            (self.deliver)(item);
            self.advance();
        }
    }

    fn advance(&mut self) {
        self.next.1 += 1;
        self.skip_finished_projects();
    }

    fn skip_finished_projects(&mut self) {
        while self.next.0 < self.runs.len() && self.next.1 >= self.runs[self.next.0] {
            self.next = (self.next.0 + 1, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::{InputFormat, Limits};
    use std::path::PathBuf;

    fn project(runs: usize) -> ProjectSource {
        ProjectSource {
            name: String::new(),
            root: PathBuf::new(),
            format: InputFormat::Omnius,
            runs: (0..runs)
                .map(|i| ingest::RunSource {
                    run_id: i.to_string(),
                    path: PathBuf::new(),
                    format: InputFormat::Omnius,
                    limits: Limits::default(),
                    within: ingest::discover::Within::Whole,
                    unreported: false,
                })
                .collect(),
            limits: Limits::default(),
        }
    }

    /// Reads `runs` runs through a [`Reading`] on a pool of `threads`, the replaying
    /// thread taking each in turn, with `pause` asked before each run is let in; gives
    /// what was taken, and the most runs ever read but not yet taken.
    fn read_through(
        threads: usize,
        runs: usize,
        pause: &(dyn Fn() -> bool + Sync),
    ) -> (Vec<usize>, usize) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let ahead = look_ahead();
            let reading = Reading::new(0, ahead);
            let (read, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let taken = AtomicUsize::new(0);
            let load = |i: usize| {
                let ahead_of_replay =
                    read.fetch_add(1, Ordering::SeqCst) + 1 - taken.load(Ordering::SeqCst);
                most.fetch_max(ahead_of_replay, Ordering::SeqCst);
                // Runs of uneven sizes, so threads finish out of order.
                std::thread::sleep(Duration::from_micros(50 * (i as u64 % 3)));
                i
            };
            let mut got = Vec::new();
            rayon::scope(|scope| {
                let allow = |end: usize| {
                    while reading.allow(end.min(runs), pause) {
                        scope.spawn(|_| {
                            reading.read_next(&load);
                        });
                    }
                };
                allow(ahead);
                while let Some(run) = reading.take(got.len(), &load) {
                    taken.fetch_add(1, Ordering::SeqCst);
                    allow(got.len() + 1 + ahead);
                    got.push(run);
                }
            });
            (got, most.into_inner())
        })
    }

    #[test]
    fn every_run_is_taken_in_session_order_and_the_look_ahead_bounds_the_runs_read() {
        for threads in [1, 2, 4] {
            let (got, most) = read_through(threads, 40, &|| false);
            assert_eq!(got, (0..40).collect::<Vec<_>>(), "{threads} threads");
            assert!(
                most <= threads + 1,
                "{threads} threads: {most} runs read ahead"
            );
        }
    }

    #[test]
    fn a_pause_stops_the_reading_after_the_runs_already_let_in() {
        let asked = AtomicUsize::new(0);
        // Five runs are let in, then the project pauses.
        let pause = || asked.fetch_add(1, Ordering::SeqCst) >= 5;
        let (got, _) = read_through(2, 40, &pause);
        assert_eq!(got, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn items_are_handed_on_in_input_order_whatever_order_they_finish_in() {
        let projects = [project(2), project(0), project(3)];
        let mut got = Vec::new();
        let mut deliver = |x: (usize, usize)| got.push(x);
        let mut order = InOrder::new(&projects, &mut deliver);
        for at in [(2, 1), (0, 1), (2, 0), (0, 0), (2, 2)] {
            order.put(at, at);
        }
        assert!(order.waiting.is_empty());
        drop(order);
        assert_eq!(got, [(0, 0), (0, 1), (2, 0), (2, 1), (2, 2)]);
    }
}
