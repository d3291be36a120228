//! External guards: a harness's own guard code, run as a child process and replayed like a
//! built-in guard (issue #15; the protocol is docs/EVENTS.md "Protocol").
//!
//! An external guard is declared with `--guard ID=COMMAND` or in the `--config` file's
//! `external` section, and installed once per process before any replay: from then on the
//! catalogue ([`super::registry`]) lists it beside the built-in guards, so its firings go
//! through the same cost model, gate, sweep, charts and explain pages.
//!
//! What this module owns: the declaration, the pool of running guard processes (one per
//! worker thread at most, kept for the whole replay, one pool per settings object so a
//! sweep can vary them), and [`External`], the [`Guard`] that streams a run's events to a
//! process and turns its replies into firings. A guard's carried state travels through
//! hindsight (the `state` of its done marker comes back in the next session's
//! `run_start`), so any process can serve any run and results never depend on which one
//! did.

mod process;
pub mod protocol;

use super::{Effect, Entry, Firings, Guard, GuardInfo, Metrics, RunMeta};
use crate::events::{RunInfo, RunLines, RunTotals};
use crate::model::LedgerFamily;
use crate::normalize::{NormEvent, RunState};
use process::{GuardProcess, Next};
use protocol::{Hello, Reply, PROTOCOL};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How long a guard may stay silent (neither reading nor answering) before it is judged
/// hung, unless its declaration or `--guard-timeout` says otherwise.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 30.0;

/// Bytes of event lines gathered before they are handed to the guard's writer.
const CHUNK: usize = 64 << 10;

/// How an external guard is declared in the `--config` file (`"external": {"ID": {...}}`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Declaration {
    /// Run through the shell (`sh -c`), in hindsight's working directory.
    pub command: String,
    /// The work order it implements, as reports name it.
    #[serde(default)]
    pub work_order: Option<String>,
    /// What it fires on, for `hindsight guards`.
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub timeout_seconds: Option<f64>,
    /// Its settings: sent in the hello, overridden by `--set ID.key=value`, swept by
    /// `--param ID.key=...`.
    #[serde(default)]
    pub settings: Option<Value>,
}

impl Declaration {
    /// A guard declared on the command line: a command and nothing else.
    pub fn command(command: &str) -> Self {
        Self {
            command: command.to_string(),
            work_order: None,
            summary: None,
            timeout_seconds: None,
            settings: None,
        }
    }
}

/// An installed external guard: its catalogue line, how to start it, and its idle
/// processes.
pub struct ExternalSpec {
    pub info: GuardInfo,
    pub command: String,
    /// The settings object its declaration gives (`{}` when none).
    pub defaults: Value,
    pub timeout: Duration,
    /// Idle processes with the settings they were greeted with, oldest first.
    idle: Mutex<Vec<(String, GuardProcess)>>,
}

impl std::fmt::Debug for ExternalSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalSpec")
            .field("info", &self.info)
            .field("command", &self.command)
            .finish_non_exhaustive()
    }
}

static INSTALLED: OnceLock<Vec<Arc<ExternalSpec>>> = OnceLock::new();

/// The external guards this process was started with (none until [`install`]).
pub fn installed() -> &'static [Arc<ExternalSpec>] {
    INSTALLED.get().map_or(&[], Vec::as_slice)
}

/// Installs the declared guards, by id; once per process, before any replay. `built_in`
/// are the ids an external guard may not take. `timeout` (seconds) overrides every
/// declaration's.
pub fn install(
    declared: BTreeMap<String, Declaration>,
    timeout: Option<f64>,
    built_in: &[&str],
) -> Result<(), String> {
    let specs = declared
        .into_iter()
        .map(|(id, d)| spec(&id, d, timeout, built_in))
        .collect::<Result<Vec<_>, String>>()?;
    if specs.is_empty() {
        return Ok(());
    }
    let same = |installed: &[Arc<ExternalSpec>]| {
        installed.len() == specs.len()
            && installed
                .iter()
                .zip(&specs)
                .all(|(a, b)| a.info.id == b.info.id && a.command == b.command)
    };
    match INSTALLED.get() {
        Some(installed) if same(installed) => Ok(()),
        Some(_) => Err("other external guards are already installed in this process".into()),
        None => INSTALLED
            .set(specs)
            .map_err(|_| "external guards were installed twice at once".to_string()),
    }
}

fn spec(
    id: &str,
    d: Declaration,
    timeout: Option<f64>,
    built_in: &[&str],
) -> Result<Arc<ExternalSpec>, String> {
    let valid = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !valid {
        return Err(format!(
            "external guard id `{id}`: use lowercase letters, digits, `_` and `-`"
        ));
    }
    if built_in.contains(&id) {
        return Err(format!(
            "external guard id `{id}` is a built-in guard's: choose another"
        ));
    }
    if d.command.trim().is_empty() {
        return Err(format!("external guard `{id}`: the command is empty"));
    }
    let seconds = timeout
        .or(d.timeout_seconds)
        .unwrap_or(DEFAULT_TIMEOUT_SECONDS);
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
        return Err(format!(
            "external guard `{id}`: timeout {seconds} s: give 0 < seconds <= 86400"
        ));
    }
    let defaults = d
        .settings
        .unwrap_or_else(|| Value::Object(Default::default()));
    if !defaults.is_object() {
        return Err(format!(
            "external guard `{id}`: `settings` must be a JSON object"
        ));
    }
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    Ok(Arc::new(ExternalSpec {
        info: GuardInfo {
            id: leak(id.to_string()),
            work_order: leak(d.work_order.unwrap_or_else(|| "external".into())),
            seed: "external guard",
            summary: leak(d.summary.unwrap_or_else(|| d.command.clone())),
        },
        command: d.command,
        defaults,
        timeout: Duration::from_secs_f64(seconds),
        idle: Mutex::new(Vec::new()),
    }))
}

/// Closes every idle guard process: stdin closed, a moment to exit, then killed.
pub fn shutdown() {
    for spec in installed() {
        let idle = std::mem::take(&mut *spec.idle.lock().unwrap_or_else(|e| e.into_inner()));
        for (_, process) in idle {
            process.close(Duration::from_secs(5));
        }
    }
}

impl ExternalSpec {
    /// A catalogue entry for this guard.
    pub fn entry(self: &Arc<Self>) -> Entry {
        Entry::external(self.clone())
    }

    /// A guard instance with `overrides` over the declared settings.
    pub fn build(self: &Arc<Self>, overrides: Option<&Value>) -> Result<Box<dyn Guard>, String> {
        let mut settings = self.defaults.clone();
        match (overrides, &mut settings) {
            (None, _) => {}
            (Some(Value::Object(over)), Value::Object(base)) => {
                base.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            (Some(_), _) => return Err("settings must be a JSON object".into()),
        }
        Ok(Box::new(External {
            spec: self.clone(),
            key: settings.to_string(),
            settings,
            run: None,
            state: None,
            carry: Vec::new(),
            failure: None,
        }))
    }

    /// An idle process greeted with `settings`, or a new one.
    fn lease(&self, key: &str, settings: &Value) -> Result<GuardProcess, String> {
        {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = idle.iter().position(|(k, _)| k == key) {
                return Ok(idle.remove(i).1);
            }
        }
        let process = GuardProcess::spawn(self.info.id, &self.command)?;
        let hello = Hello {
            schema: crate::events::SCHEMA,
            kind: "hello",
            protocol: PROTOCOL,
            guard: self.info.id,
            settings,
        };
        let mut line = serde_json::to_vec(&hello).map_err(|e| e.to_string())?;
        line.push(b'\n');
        process.send(line);
        Ok(process)
    }

    /// Puts a process back; beyond one idle process per worker thread, the oldest ones
    /// (a sweep's earlier settings) are closed.
    fn release(&self, key: String, process: GuardProcess) {
        let surplus: Vec<GuardProcess> = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            idle.push((key, process));
            let over = idle
                .len()
                .saturating_sub(rayon::current_num_threads().max(1));
            idle.drain(..over).map(|(_, p)| p).collect()
        };
        for process in surplus {
            process.close(Duration::from_secs(5));
        }
    }
}

/// An external guard replayed over one project: each run's events go to a leased
/// process, its replies come back as firings at the end of the run.
pub struct External {
    spec: Arc<ExternalSpec>,
    settings: Value,
    /// The settings as JSON text: the pool's key.
    key: String,
    run: Option<OnWire>,
    /// What the guard's last done marker asked to be handed back.
    state: Option<Value>,
    carry: Vec<LedgerFamily>,
    failure: Option<String>,
}

/// The run being streamed to the guard.
struct OnWire {
    process: Result<GuardProcess, String>,
    lines: RunLines,
    buf: Vec<u8>,
    project: String,
    run_id: String,
}

/// What a guard answered for one run, checked: each firing with its effect.
#[derive(Default)]
struct Answer {
    firings: Vec<(protocol::FiringReply, Effect)>,
    points: Vec<protocol::PointReply>,
    done: protocol::DoneReply,
}

impl External {
    fn id(&self) -> &'static str {
        self.spec.info.id
    }

    /// Hands the gathered lines to the guard once there are enough of them (`all`: now).
    fn flush(process: &GuardProcess, buf: &mut Vec<u8>, all: bool) {
        if all || buf.len() >= CHUNK {
            process.send(std::mem::take(buf));
        }
    }

    /// Reads the guard's replies up to its done marker and checks each.
    fn answer(&self, process: &mut GuardProcess, lines: &RunLines) -> Result<Answer, String> {
        let mut answer = Answer::default();
        loop {
            let line = match process.next(self.spec.timeout) {
                Next::Line(line) => line,
                Next::Silent => {
                    return Err(format!(
                        "no done marker: silent for {} s after the run's end (timeout)",
                        self.spec.timeout.as_secs_f64()
                    ))
                }
                Next::Gone(why) => return Err(format!("no done marker: the guard {why}")),
                Next::TooLong(what) => {
                    return Err(format!("reply line {}: {what}", process.lines_read))
                }
            };
            let at = process.lines_read;
            let located = |e: String| format!("reply line {at}: {e}");
            match protocol::parse(&line).map_err(located)? {
                Reply::Firing(f) => {
                    let effect = f.effect().map_err(located)?;
                    check_turn(f.turn, lines).map_err(located)?;
                    answer.firings.push((f, effect));
                }
                Reply::Point(p) => {
                    check_turn(p.turn, lines).map_err(located)?;
                    answer.points.push(p);
                }
                Reply::Done(done) => {
                    answer.done = done;
                    return Ok(answer);
                }
            }
        }
    }
}

/// A firing or point must name a turn the run has.
fn check_turn(turn: u32, lines: &RunLines) -> Result<(), String> {
    if lines.has_turn(turn) {
        return Ok(());
    }
    Err(match lines.turn_range() {
        Some((first, last)) => {
            format!("turn {turn} is not a turn of the run (its turns run from {first} to {last})")
        }
        None => format!("turn {turn} is not a turn of the run (it has none)"),
    })
}

impl Guard for External {
    fn begin_run(&mut self, meta: &RunMeta<'_>) {
        self.failure = None;
        let mut buf = Vec::new();
        let info = RunInfo {
            state: self.state.as_ref(),
            ..meta.info()
        };
        let lines = RunLines::start(&info, &mut buf);
        let process = self.spec.lease(&self.key, &self.settings);
        self.run = Some(OnWire {
            process,
            lines,
            buf,
            project: meta.project.to_string(),
            run_id: meta.run_id.to_string(),
        });
    }

    fn observe(&mut self, event: &NormEvent<'_>, state: &RunState, _: &mut Firings) {
        // A guard that could not be started is told nothing: the run's failure is known.
        if let Some(OnWire {
            process: Ok(process),
            lines,
            buf,
            project,
            run_id,
        }) = &mut self.run
        {
            lines.step(project, run_id, event, state, buf);
            Self::flush(process, buf, false);
        }
    }

    fn finish_run(&mut self, meta: &RunMeta<'_>, state: &RunState, sink: &mut Firings) -> Metrics {
        let Some(mut run) = self.run.take() else {
            return Metrics::new();
        };
        let totals = RunTotals {
            project: meta.project,
            run_id: meta.run_id,
            records: meta.records,
            skipped: meta.skipped,
            orphan_results: state.orphan_results,
        };
        let mut process = match run.process {
            Ok(process) => process,
            Err(e) => {
                self.failure = Some(e);
                return Metrics::new();
            }
        };
        run.lines.end(&totals, &mut run.buf);
        Self::flush(&process, &mut run.buf, true);
        match self.answer(&mut process, &run.lines) {
            Ok(answer) => {
                self.spec.release(self.key.clone(), process);
                self.apply(answer, sink)
            }
            Err(e) => {
                process.kill();
                self.failure = Some(e);
                Metrics::new()
            }
        }
    }

    fn carried(&self) -> Option<Vec<LedgerFamily>> {
        Some(self.carry.clone())
    }

    fn take_failure(&mut self) -> Option<String> {
        let id = self.id();
        self.failure
            .take()
            .map(|e| format!("external guard `{id}`: {e}"))
    }
}

impl External {
    /// Records a checked answer: firings and points into `sink`, the carry and state for
    /// the next session; returns the metrics.
    fn apply(&mut self, answer: Answer, sink: &mut Firings) -> Metrics {
        for (f, effect) in answer.firings {
            let firing = sink.fire(f.turn, &f.agent, f.action, effect);
            if let Some(family) = f.family {
                firing.family(family);
            }
            if let Some(detail) = f.detail {
                firing.detail(detail);
            }
            if let Some(subject) = f.subject {
                firing.subject(subject);
            }
        }
        for p in answer.points {
            sink.plot(p.series, p.turn, p.value);
        }
        self.carry = answer.done.carry;
        self.carry.sort_by(|a, b| a.family.cmp(&b.family));
        self.state = answer.done.state.map(Value::Object);
        answer.done.metrics
    }
}
