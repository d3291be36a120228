//! The order the work is done in (issue #13): projects in parallel; within a project, the
//! next runs read and parsed in parallel (a window of look-ahead) while the current one is
//! replayed, strictly in session order; and each result handed on in input order as soon
//! as everything before it is done. A project starts only within a window of the first
//! one not yet handed on in full, so the finished runs waiting for their turn stay few.
//! Output never depends on the thread count, and memory holds a window of loaded runs
//! per busy project and a window of projects' results, not the corpus.
//!
//! A project whose recorded convergence ledger holds rounds that replaying its runs does
//! not rebuild (runs pruned from the recording) is replayed a second time with those rounds
//! carried into its first run (seed 000 WO-3), and the first replay's results are dropped:
//! such a project's results are held until that is known. Projects without a recorded
//! ledger are read once and handed on run by run.

use super::{ProjectReplayer, ReplayError, RunReplay};
use crate::config::Config;
use crate::ingest::{self, LoadedRun, ParseError, Policy, Problems, ProjectSource};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Replays every project and hands each run, turned into a `T` by `map` on the worker
/// that replayed it, to `deliver` in input order (projects in order, each project's runs
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
    config.build()?;
    let work = Work {
        projects,
        config,
        policy,
        progress,
        map,
        outcomes: projects.iter().map(|_| Mutex::new(None)).collect(),
        state: Mutex::new(State {
            order: InOrder::new(projects, deliver),
            next_start: 0,
            limit: projects.len(),
        }),
        window: projects_ahead(),
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

/// One replay of many projects: what each project needs, which starts next, and the runs
/// waiting to be handed on. No thread ever waits for a turn: a project is started (spawned)
/// when the window moves, by whoever moved it.
struct Work<'a, 'd, T> {
    projects: &'a [ProjectSource],
    config: &'a Config,
    policy: Policy,
    progress: &'a (dyn Fn() + Sync),
    map: &'a (dyn Fn(RunReplay) -> T + Sync),
    /// Each project's error, if it failed.
    outcomes: Vec<Mutex<Option<ReplayError>>>,
    state: Mutex<State<'d, T>>,
    window: usize,
}

struct State<'d, T> {
    order: InOrder<'d, T>,
    next_start: usize,
    /// Projects from here on are not started: one before them failed.
    limit: usize,
}

impl<'a, 'd, T: Send> Work<'a, 'd, T> {
    /// Starts every project not yet started that is within the window of the first one
    /// not yet handed on in full.
    fn start_ready<'s>(&'s self, scope: &rayon::Scope<'s>) {
        let ready = {
            let mut state = lock(&self.state);
            let end = state.limit.min(state.order.next.0 + self.window);
            let ready = state.next_start..end.max(state.next_start);
            state.next_start = ready.end;
            ready
        };
        for p in ready {
            scope.spawn(move |scope| self.project(scope, p));
        }
    }

    fn project<'s>(&'s self, scope: &rayon::Scope<'s>, p: usize) {
        let hand_on = |i: usize, run: RunReplay| {
            let item = (self.map)(run);
            let moved = {
                let mut state = lock(&self.state);
                let head = state.order.next.0;
                state.order.put((p, i), item);
                state.order.next.0 != head
            };
            if moved {
                self.start_ready(scope);
            }
        };
        let project = &self.projects[p];
        let replayed = replay_project(project, self.config, self.policy, self.progress, &hand_on);
        if let Err(e) = replayed {
            *lock(&self.outcomes[p]) = Some(e);
            // No later project starts: an earlier one may still fail, and its error is the
            // one reported, whatever the thread count.
            let mut state = lock(&self.state);
            state.limit = state.limit.min(p);
        }
        self.start_ready(scope);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One project: its sessions in order through one set of guards, replayed a second time
/// with the recorded store's rounds carried in when they are not rebuilt.
fn replay_project(
    project: &ProjectSource,
    config: &Config,
    policy: Policy,
    progress: &(dyn Fn() + Sync),
    hand_on: &(dyn Fn(usize, RunReplay) + Sync),
) -> Result<(), ReplayError> {
    let mut problems = Problems::default();
    let ledger = if project.format == ingest::InputFormat::Omnius {
        ingest::load_convergence_ledger(&project.root, policy, &project.limits, &mut problems)?
    } else {
        Vec::new()
    };
    let mut replayer = ProjectReplayer::new(&project.name, config, ledger)?;
    if replayer.convergence_ledger.is_empty() {
        // Nothing recorded to carry in: one pass, each run handed on as it is done.
        let mut each = |i, run| hand_on(i, run);
        return replay_sessions(
            project,
            &mut replayer,
            policy,
            problems,
            progress,
            &mut each,
        );
    }
    let mut held = Vec::with_capacity(project.runs.len());
    let mut keep = |_, run| held.push(run);
    replay_sessions(
        project,
        &mut replayer,
        policy,
        problems.clone(),
        progress,
        &mut keep,
    )?;
    let gaps = replayer.store_gaps();
    if gaps.iter().all(Vec::is_empty) {
        for (i, run) in held.into_iter().enumerate() {
            hand_on(i, run);
        }
        return Ok(());
    }
    drop(held);
    let mut seeded = ProjectReplayer::new(&project.name, config, replayer.convergence_ledger)?;
    seeded.seed_from_store(&gaps);
    let mut each = |i, run| hand_on(i, run);
    replay_sessions(project, &mut seeded, policy, problems, &|| {}, &mut each)
}

/// Runs read ahead of the one being replayed: one per thread keeps every thread parsing
/// while one replays, and bounds what a project holds to two windows of runs.
fn look_ahead() -> usize {
    rayon::current_num_threads().max(1)
}

/// Replays `project`'s runs in session order, reading the next window of runs in parallel
/// while the current window is replayed. The project's own problems (its convergence
/// ledger's) go on its first run.
fn replay_sessions(
    project: &ProjectSource,
    replayer: &mut ProjectReplayer,
    policy: Policy,
    mut problems: Problems,
    progress: &(dyn Fn() + Sync),
    each: &mut (dyn FnMut(usize, RunReplay) + Send),
) -> Result<(), ReplayError> {
    let runs = &project.runs;
    let window = look_ahead();
    let load = |from: usize| -> Vec<Result<LoadedRun, ParseError>> {
        let to = from.saturating_add(window).min(runs.len());
        runs[from.min(to)..to]
            .par_iter()
            .map(|source| ingest::load_run(source, policy))
            .collect()
    };
    let (mut from, mut batch) = (0, load(0));
    while !batch.is_empty() {
        let next_from = from + batch.len();
        let (replayed, next) = rayon::join(
            || -> Result<(), ReplayError> {
                for (i, loaded) in batch.into_iter().enumerate() {
                    let mut replay = replayer.replay(&loaded?);
                    replay.problems.absorb(std::mem::take(&mut problems));
                    each(from + i, replay);
                    progress();
                }
                Ok(())
            },
            || load(next_from),
        );
        replayed?;
        (from, batch) = (next_from, next);
    }
    Ok(())
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
                    line: None,
                })
                .collect(),
            limits: Limits::default(),
        }
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
