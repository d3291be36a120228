//! The event stream: what the built-in guards observe of a run, one JSON line per step
//! (issue #15; the interface is docs/EVENTS.md, `"schema": 1`).
//!
//! This module owns the stream's shape, and nothing else does: one small serde struct per
//! line type, built from the annotated step a guard gets ([`NormEvent`]) and the run
//! state beside it, never from the raw record, so a line says no more and no less than a
//! guard could know. Absent optional fields are left out, never written as `null`. Who
//! drives the stream (in which order the steps come: [`crate::replay::walk`]) is not
//! decided here.

use crate::model::{tokens_from_chars, Frame, LedgerFamily, LedgerStatus, Todo, Usage};
use crate::normalize::{CallInfo, NormEvent, RunState, Signal, Step};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The version of the stream's shape, on every line. A field added keeps it; a field
/// removed, renamed or retyped bumps it.
pub const SCHEMA: u32 = 1;

/// Characters of a tool output kept at each end (`output_head`, `output_tail`).
pub const OUTPUT_EDGE: usize = 200;

/// One line of the stream.
#[derive(Debug, Serialize)]
pub struct Line<'a> {
    schema: u32,
    #[serde(flatten)]
    body: Body<'a>,
}

impl Line<'_> {
    /// Appends the line, as compact JSON and a newline, to `out`.
    pub fn write(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        out.push(b'\n');
        Ok(())
    }
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Body<'a> {
    RunStart(RunStart<'a>),
    SessionStart(SessionStart<'a>),
    ModelTurn(ModelTurn<'a>),
    ToolCall(Call<'a>),
    ToolResult(Box<ResultLine<'a>>),
    Directive(Directive<'a>),
    Dedup(Dedup<'a>),
    Todos(Todos<'a>),
    CompletionClaim(Claim<'a>),
    Compaction(Compaction<'a>),
    Frame(FrameLine<'a>),
    Unknown(Unknown<'a>),
    RunEnd(RunEnd<'a>),
}

/// What a run is, before its first step: what the guards are told at its start.
#[derive(Debug, Clone, Copy)]
pub struct RunInfo<'a> {
    pub project: &'a str,
    pub run_id: &'a str,
    /// 0 for the project's first session.
    pub session_index: usize,
    /// The input format (`omnius`, `claude-code`, ...).
    pub format: &'a str,
    pub completion_ledger: Option<LedgerStatus>,
    /// The highest turn of any record or frame of the run.
    pub last_turn: u32,
    /// What each guard that carries state across sessions held when the run began, by
    /// guard id (only guards holding something).
    pub carry_in: &'a BTreeMap<String, Vec<LedgerFamily>>,
    /// For an external guard only: the `state` its last done marker gave (docs/EVENTS.md
    /// "Protocol").
    pub state: Option<&'a serde_json::Value>,
}

#[derive(Debug, Serialize)]
struct RunStart<'a> {
    project: &'a str,
    run_id: &'a str,
    session_index: usize,
    format: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_ledger: Option<&'static str>,
    last_turn: u32,
    carry_in: BTreeMap<&'a str, Vec<Carried<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'a serde_json::Value>,
}

#[derive(Debug, Serialize)]
struct Carried<'a> {
    family: &'a str,
    rounds: u32,
}

/// The `run_start` line of `run`.
pub fn run_start<'a>(run: &RunInfo<'a>) -> Line<'a> {
    let carry_in = run
        .carry_in
        .iter()
        .map(|(guard, families)| {
            let families = families
                .iter()
                .map(|f| Carried {
                    family: &f.family,
                    rounds: f.rounds,
                })
                .collect();
            (guard.as_str(), families)
        })
        .collect();
    line(Body::RunStart(RunStart {
        project: run.project,
        run_id: run.run_id,
        session_index: run.session_index,
        format: run.format,
        completion_ledger: run.completion_ledger.map(LedgerStatus::as_str),
        last_turn: run.last_turn,
        carry_in,
        state: run.state,
    }))
}

/// What a run's `run_end` line says besides the turns its steps carried.
#[derive(Debug, Clone, Copy)]
pub struct RunTotals<'a> {
    pub project: &'a str,
    pub run_id: &'a str,
    /// Records the importer read.
    pub records: u64,
    /// Bad records skipped (lenient mode).
    pub skipped: u64,
    /// Results whose call was never recorded.
    pub orphan_results: u64,
}

#[derive(Debug, Serialize)]
struct RunEnd<'a> {
    project: &'a str,
    run_id: &'a str,
    turns: u64,
    records: u64,
    skipped: u64,
    orphan_results: u64,
}

/// One run's lines as they are written, for `hindsight events` and for an external
/// guard alike: its `run_start`, a line per step, its `run_end`. Knows the turns the
/// steps carried (what `run_end` counts, and what a guard may fire on).
#[derive(Debug, Default)]
pub struct RunLines {
    turns: BTreeSet<u32>,
}

impl RunLines {
    /// Writes the run's `run_start` line to `out`.
    pub fn start(run: &RunInfo<'_>, out: &mut Vec<u8>) -> Self {
        write(&run_start(run), out);
        Self::default()
    }

    /// Writes the line of one step of `project`'s run `run_id`, with the run state after it.
    pub fn step(
        &mut self,
        project: &str,
        run_id: &str,
        norm: &NormEvent<'_>,
        state: &RunState,
        out: &mut Vec<u8>,
    ) {
        self.turns.insert(norm.turn);
        write(&step(project, run_id, norm, state), out);
    }

    /// Writes the run's `run_end` line.
    pub fn end(&self, totals: &RunTotals<'_>, out: &mut Vec<u8>) {
        let end = line(Body::RunEnd(RunEnd {
            project: totals.project,
            run_id: totals.run_id,
            turns: self.turns.len() as u64,
            records: totals.records,
            skipped: totals.skipped,
            orphan_results: totals.orphan_results,
        }));
        write(&end, out);
    }

    pub fn has_turn(&self, turn: u32) -> bool {
        self.turns.contains(&turn)
    }

    /// The first and last turn the steps carried.
    pub fn turn_range(&self) -> Option<(u32, u32)> {
        Some((*self.turns.first()?, *self.turns.last()?))
    }
}

/// Appends `line` to `out`: every line holds plain data serde writes without fail (maps
/// with string keys, no non-finite numbers: `signal_to_noise` is read from JSON).
fn write(line: &Line<'_>, out: &mut Vec<u8>) {
    line.write(out)
        .expect("an event line always serializes to a Vec");
}

/// Where a step sits: its run, turn, agent and (for recorded events, not frames) session.
#[derive(Debug, Serialize)]
struct At<'a> {
    project: &'a str,
    run_id: &'a str,
    turn: u32,
    agent: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<u32>,
}

#[derive(Debug, Serialize)]
struct SessionStart<'a> {
    #[serde(flatten)]
    at: At<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct ModelTurn<'a> {
    #[serde(flatten)]
    at: At<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<UsageLine>,
}

#[derive(Debug, Serialize)]
struct UsageLine {
    input: u64,
    cache_write: u64,
    cache_read: u64,
    output: u64,
    source: &'static str,
}

impl From<&Usage> for UsageLine {
    fn from(u: &Usage) -> Self {
        Self {
            input: u.input,
            cache_write: u.cache_write,
            cache_read: u.cache_read,
            output: u.output,
            source: u.source.as_str(),
        }
    }
}

#[derive(Debug, Serialize)]
struct Call<'a> {
    #[serde(flatten)]
    at: At<'a>,
    call_id: &'a str,
    tool: &'a str,
    kind: &'static str,
    family: &'a str,
    raw_family: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    edit_target: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<&'a str>,
    written_paths: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<&'a str>,
    args_chars: u64,
    args: &'a serde_json::Map<String, serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shell: Option<ShellLine>,
}

#[derive(Debug, Serialize)]
struct ShellLine {
    viewer: bool,
    installs: bool,
    status_masked: bool,
    output_filtered: bool,
}

#[derive(Debug, Serialize)]
struct ResultLine<'a> {
    #[serde(flatten)]
    at: At<'a>,
    call_id: &'a str,
    tool: &'a str,
    family: &'a str,
    success: bool,
    recorded_success: bool,
    masked_failure: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_class: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded_error_class: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal: Option<SignalLine>,
    mutation: bool,
    mutation_inferred: bool,
    code_change: bool,
    environment: bool,
    verification: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    check: Option<&'static str>,
    chars: u64,
    implies: &'a [String],
    paths: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_head: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_tail: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct SignalLine {
    count: u32,
    /// Of `count`, uncaught exceptions' last lines (not in seed 000's list).
    #[serde(skip_serializing_if = "Option::is_none")]
    exceptions: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reported: Option<u32>,
    filtered: bool,
    from_checker: bool,
}

impl From<&Signal> for SignalLine {
    fn from(s: &Signal) -> Self {
        Self {
            count: s.count,
            exceptions: (s.exceptions > 0).then_some(s.exceptions),
            reported: s.reported,
            filtered: s.filtered,
            from_checker: s.from_checker,
        }
    }
}

#[derive(Debug, Serialize)]
struct Directive<'a> {
    #[serde(flatten)]
    at: At<'a>,
    source: &'a str,
    required_next_action: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    family: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct Dedup<'a> {
    #[serde(flatten)]
    at: At<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    call_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    call_family: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    family: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct Todos<'a> {
    #[serde(flatten)]
    at: At<'a>,
    todos: Vec<TodoLine<'a>>,
}

#[derive(Debug, Serialize)]
struct TodoLine<'a> {
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent_id: Option<&'a str>,
    status: &'a str,
    content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    verify_command: Option<&'a str>,
}

impl<'a> From<&'a Todo> for TodoLine<'a> {
    fn from(t: &'a Todo) -> Self {
        Self {
            id: &t.id,
            parent_id: t.parent_id.as_deref(),
            status: &t.status,
            content: &t.content,
            verify_command: t.verify_command.as_deref(),
        }
    }
}

#[derive(Debug, Serialize)]
struct Claim<'a> {
    #[serde(flatten)]
    at: At<'a>,
    status: &'a str,
    summary: &'a str,
}

#[derive(Debug, Serialize)]
struct Compaction<'a> {
    #[serde(flatten)]
    at: At<'a>,
    before_tokens: u64,
    after_tokens: u64,
}

#[derive(Debug, Serialize)]
struct FrameLine<'a> {
    #[serde(flatten)]
    at: At<'a>,
    messages: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_tokens: Option<u64>,
    tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt_chars: Option<u64>,
    chars: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    signal_to_noise: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Unknown<'a> {
    #[serde(flatten)]
    at: At<'a>,
}

fn line(body: Body<'_>) -> Line<'_> {
    Line {
        schema: SCHEMA,
        body,
    }
}

/// The line of one step of `project`'s run `run_id`, with the run state after it.
pub fn step<'a>(
    project: &'a str,
    run_id: &'a str,
    norm: &'a NormEvent<'a>,
    state: &'a RunState,
) -> Line<'a> {
    let at = At {
        project,
        run_id,
        turn: norm.turn,
        agent: norm.agent,
        session: (!matches!(norm.step, Step::Frame(_))).then_some(norm.session),
    };
    line(match &norm.step {
        Step::SessionStart => Body::SessionStart(SessionStart {
            at,
            cwd: state.cwd(),
        }),
        Step::Request(usage) => Body::ModelTurn(ModelTurn {
            at,
            usage: usage.map(UsageLine::from),
        }),
        Step::Call(call) => Body::ToolCall(call_line(at, call)),
        Step::Result { call, outcome, raw } => {
            let (head, tail) = raw.output.as_deref().map(edges).unzip();
            Body::ToolResult(Box::new(ResultLine {
                at,
                call_id: &raw.call_id,
                tool: &call.tool,
                family: &call.families.action,
                success: outcome.success,
                recorded_success: raw.success,
                masked_failure: outcome.masked_failure,
                error_class: outcome.error_class.map(|c| c.as_str()),
                recorded_error_class: raw.error_class.as_deref(),
                signal: outcome.signal.as_ref().map(SignalLine::from),
                mutation: outcome.mutation,
                mutation_inferred: outcome.mutation_inferred,
                code_change: outcome.code_change,
                environment: outcome.environment,
                verification: outcome.verification,
                check: outcome.check.map(|c| c.as_str()),
                chars: outcome.chars,
                implies: &outcome.implies,
                paths: &raw.paths,
                duration_ms: raw.duration_ms,
                output_head: head,
                output_tail: tail.flatten(),
            }))
        }
        Step::Directive(d) => Body::Directive(Directive {
            at,
            source: &d.source,
            required_next_action: &d.required_next_action,
            family: d.family.as_deref(),
            state: d.state.as_deref(),
            text: d.text.as_deref(),
        }),
        Step::Dedup { call, family } => Body::Dedup(Dedup {
            at,
            call_id: call.as_ref().map(|c| &*c.call_id),
            call_family: call.as_ref().map(|c| c.families.action.as_str()),
            family: *family,
        }),
        Step::Compaction {
            before_tokens,
            after_tokens,
        } => Body::Compaction(Compaction {
            at,
            before_tokens: *before_tokens,
            after_tokens: *after_tokens,
        }),
        Step::Todos(todos) => Body::Todos(Todos {
            at,
            todos: todos.iter().map(TodoLine::from).collect(),
        }),
        Step::TaskComplete { status, summary } => Body::CompletionClaim(Claim {
            at,
            status,
            summary,
        }),
        Step::Frame(frame) => Body::Frame(frame_line(at, frame)),
        Step::Unknown => Body::Unknown(Unknown { at }),
    })
}

fn call_line<'a>(at: At<'a>, call: &'a CallInfo) -> Call<'a> {
    Call {
        at,
        call_id: &call.call_id,
        tool: &call.tool,
        kind: call.kind.as_str(),
        family: &call.families.action,
        raw_family: &call.families.raw_action,
        path: call.families.path.as_deref(),
        edit_target: call.families.edit_target.as_deref(),
        command: call.families.command.as_deref(),
        written_paths: call.written_paths().map(String::as_str).collect(),
        cwd: call.cwd.as_deref(),
        args_chars: call.args_chars,
        args: &call.args,
        shell: call.shell.as_ref().map(|s| ShellLine {
            viewer: s.viewer,
            installs: s.installs,
            status_masked: s.status_masked,
            output_filtered: s.output_filtered,
        }),
    }
}

fn frame_line<'a>(at: At<'a>, frame: &'a Frame) -> FrameLine<'a> {
    let chars = frame.chars();
    FrameLine {
        at,
        messages: frame.messages.len(),
        estimated_tokens: frame.estimated_tokens,
        tokens: frame
            .estimated_tokens
            .unwrap_or_else(|| tokens_from_chars(chars)),
        system_prompt_chars: frame.system_prompt_chars,
        chars,
        signal_to_noise: frame.signal_to_noise,
    }
}

/// The first [`OUTPUT_EDGE`] characters of `output`, and the last [`OUTPUT_EDGE`] of the
/// rest (none when nothing is left): head and tail never overlap, and together they are
/// the whole output when it is at most twice [`OUTPUT_EDGE`] characters long.
pub fn edges(output: &str) -> (&str, Option<&str>) {
    let head_end = output
        .char_indices()
        .nth(OUTPUT_EDGE)
        .map_or(output.len(), |(i, _)| i);
    let (head, rest) = output.split_at(head_end);
    if rest.is_empty() {
        return (head, None);
    }
    let skip = rest.chars().count().saturating_sub(OUTPUT_EDGE);
    let tail_start = rest.char_indices().nth(skip).map_or(rest.len(), |(i, _)| i);
    (head, Some(&rest[tail_start..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_split_without_overlap() {
        assert_eq!(edges(""), ("", None));
        assert_eq!(edges("abc"), ("abc", None));
        let long: String = "é".repeat(OUTPUT_EDGE) + "xyz";
        let (head, tail) = edges(&long);
        assert_eq!(head.chars().count(), OUTPUT_EDGE);
        assert_eq!(tail, Some("xyz"));
        let longer: String = "a".repeat(OUTPUT_EDGE) + &"b".repeat(50) + &"c".repeat(OUTPUT_EDGE);
        let (head, tail) = edges(&longer);
        assert_eq!(head, "a".repeat(OUTPUT_EDGE));
        assert_eq!(tail, Some("c".repeat(OUTPUT_EDGE).as_str()));
    }
}
