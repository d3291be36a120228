//! Normalization: turns recorded events into the annotated stream the guards read.
//!
//! Each tool call gets its kind and families (seed 000 WO-9, seed 001 WO-TD-03); each
//! result is joined to its call and gets its error class, diagnostic signal, mutation and
//! verification flags. [`RunState`] is what the run has done so far, which guards may
//! consult (e.g. to resolve a frame's tool message to its call).

pub mod family;
pub mod outcome;
pub mod shell;

use crate::model::*;
pub use family::{Families, ToolKind};
pub use outcome::ErrorClass;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// A tool call with its identity worked out.
#[derive(Debug, Clone, PartialEq)]
pub struct CallInfo {
    pub call_id: String,
    pub tool: String,
    pub kind: ToolKind,
    pub families: Families,
    pub turn: u32,
    pub agent: String,
    /// Tool plus canonical (key-sorted) arguments: identical calls share it.
    pub canonical: String,
    /// Length of the arguments' JSON (bytes): what the call put into the context.
    pub args_chars: u64,
    /// The arguments as recorded (file contents of writes, edit texts), for guards that
    /// read what a call wrote.
    pub args: serde_json::Map<String, serde_json::Value>,
    /// The working directory the call ran in, if known.
    pub cwd: Option<String>,
}

/// What a result means, whatever the harness wrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    pub success: bool,
    pub error_class: Option<ErrorClass>,
    /// Generic error count from the output (root refinement), if it carries one.
    pub signal: Option<u32>,
    /// The call changed files.
    pub mutation: bool,
    /// The call checked the work (a verifier that passed or failed).
    pub verification: bool,
    /// Characters the result added to the context.
    pub chars: u64,
    /// Other families this success proves: the parts of a successful `a && b` chain.
    pub implies: Vec<String>,
}

impl Outcome {
    /// Every family a successful result resolves: its own and the ones it implies.
    pub fn resolves<'a>(&'a self, call: &'a CallInfo) -> impl Iterator<Item = &'a String> + 'a {
        let own = self.success.then_some(&call.families.action);
        own.into_iter()
            .chain(self.implies.iter().filter(move |_| self.success))
    }
}

/// One step of the annotated stream.
#[derive(Debug, Clone)]
pub enum Step<'a> {
    SessionStart,
    Call(Arc<CallInfo>),
    Result {
        call: Arc<CallInfo>,
        outcome: Outcome,
        raw: &'a ToolResult,
    },
    Usage {
        prompt_tokens: u64,
        completion_tokens: u64,
    },
    Directive(&'a Directive),
    Dedup {
        call: Option<Arc<CallInfo>>,
        family: Option<&'a str>,
    },
    Compaction {
        before_tokens: u64,
        after_tokens: u64,
    },
    Todos(&'a [Todo]),
    TaskComplete {
        status: &'a str,
        summary: &'a str,
    },
    Frame(&'a Frame),
    Unknown,
}

#[derive(Debug, Clone)]
pub struct NormEvent<'a> {
    pub turn: u32,
    pub session: u32,
    pub agent: &'a str,
    pub step: Step<'a>,
}

/// What the run has done so far: calls by id, their outcomes, and the facts that make a
/// later call count as verification.
#[derive(Debug, Default)]
pub struct RunState {
    cwd: Option<String>,
    calls: HashMap<String, Arc<CallInfo>>,
    outcomes: HashMap<String, Outcome>,
    /// Normalized `verifyCommand`s declared by todos.
    declared_verifiers: BTreeSet<String>,
    /// Families whose output has carried a diagnostic signal: they are checkers.
    checker_families: BTreeSet<String>,
    /// Results whose call id was never seen.
    pub orphan_results: u64,
}

impl RunState {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn call(&self, call_id: &str) -> Option<&Arc<CallInfo>> {
        self.calls.get(call_id)
    }

    pub fn outcome(&self, call_id: &str) -> Option<&Outcome> {
        self.outcomes.get(call_id)
    }

    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    /// Annotates one recorded event (frames go through [`RunState::frame`]).
    pub fn step<'a>(&mut self, event: &'a Event) -> NormEvent<'a> {
        let step = match &event.kind {
            EventKind::SessionStart { cwd } => {
                if cwd.is_some() {
                    self.cwd.clone_from(cwd);
                }
                Step::SessionStart
            }
            EventKind::ToolCall(call) => Step::Call(self.observe_call(call, &event.at)),
            EventKind::ToolResult(result) => {
                let call = self.call_for(&result.call_id, &event.at);
                let outcome = self.observe_result(&call, result);
                Step::Result {
                    call,
                    outcome,
                    raw: result,
                }
            }
            EventKind::ModelUsage {
                prompt_tokens,
                completion_tokens,
            } => Step::Usage {
                prompt_tokens: *prompt_tokens,
                completion_tokens: *completion_tokens,
            },
            EventKind::Directive(d) => Step::Directive(d),
            EventKind::Dedup { call_id, family } => Step::Dedup {
                call: call_id.as_ref().and_then(|id| self.calls.get(id).cloned()),
                family: family.as_deref(),
            },
            EventKind::Compaction {
                before_tokens,
                after_tokens,
            } => Step::Compaction {
                before_tokens: *before_tokens,
                after_tokens: *after_tokens,
            },
            EventKind::TodoWrite { todos } => {
                for cmd in todos.iter().filter_map(|t| t.verify_command.as_deref()) {
                    let normalized = shell::normalize_shell_for_family(cmd, self.cwd.as_deref());
                    self.declared_verifiers.insert(normalized);
                }
                Step::Todos(todos)
            }
            EventKind::TaskComplete { status, summary } => Step::TaskComplete { status, summary },
            EventKind::Unknown { .. } => Step::Unknown,
        };
        NormEvent {
            turn: event.at.turn,
            session: event.at.session,
            agent: &event.at.agent,
            step,
        }
    }

    pub fn frame<'a>(&self, frame: &'a Frame) -> NormEvent<'a> {
        NormEvent {
            turn: frame.turn,
            session: 0,
            agent: &frame.agent,
            step: Step::Frame(frame),
        }
    }

    fn observe_call(&mut self, call: &ToolCall, at: &At) -> Arc<CallInfo> {
        if self.cwd.is_none() {
            self.cwd.clone_from(&call.cwd);
        }
        let cwd = call.cwd.as_deref().or(self.cwd.as_deref());
        let kind = family::tool_kind(&call.tool, &call.args);
        // Serialized once: the canonical identity and the context weight both come from it.
        let args_json = serde_json::Value::Object(call.args.clone()).to_string();
        let info = Arc::new(CallInfo {
            call_id: call.call_id.clone(),
            tool: call.tool.clone(),
            kind,
            families: family::families(kind, &call.tool, &call.args, cwd),
            turn: at.turn,
            agent: at.agent.clone(),
            canonical: format!("{}:{args_json}", call.tool),
            args_chars: args_json.len() as u64,
            args: call.args.clone(),
            cwd: cwd.map(str::to_string),
        });
        self.calls.insert(call.call_id.clone(), Arc::clone(&info));
        info
    }

    /// The call a result answers; a result with no recorded call still gets an identity.
    fn call_for(&mut self, call_id: &str, at: &At) -> Arc<CallInfo> {
        if let Some(call) = self.calls.get(call_id) {
            return Arc::clone(call);
        }
        self.orphan_results += 1;
        let family = format!("unknown:{call_id}");
        Arc::new(CallInfo {
            call_id: call_id.to_string(),
            tool: "unknown".into(),
            kind: ToolKind::Other,
            families: Families {
                action: family.clone(),
                raw_action: family.clone(),
                path: None,
                edit_target: None,
                command: None,
                output_filtered: false,
            },
            turn: at.turn,
            agent: at.agent.clone(),
            canonical: family,
            args_chars: 0,
            args: serde_json::Map::new(),
            cwd: self.cwd.clone(),
        })
    }

    /// The parts of a successful `&&` chain, as families.
    fn implied_families(&self, call: &CallInfo, success: bool) -> Vec<String> {
        if !success || call.kind != ToolKind::Shell {
            return Vec::new();
        }
        let raw = family::command_of(&call.args).unwrap_or("");
        let cwd = call.cwd.as_deref().or(self.cwd.as_deref());
        shell::conjuncts(raw, cwd)
            .unwrap_or_default()
            .iter()
            .map(|part| family::shell_family(part))
            .filter(|f| f != &call.families.action)
            .collect()
    }

    fn observe_result(&mut self, call: &CallInfo, result: &ToolResult) -> Outcome {
        let output = result.output.as_deref();
        let signal = output.and_then(outcome::failure_signal);
        let family = &call.families.action;
        if signal.is_some() {
            self.checker_families.insert(family.clone());
        }
        let verification = result.verification.unwrap_or_else(|| {
            call.kind == ToolKind::Shell
                && (call
                    .families
                    .command
                    .as_ref()
                    .is_some_and(|c| self.declared_verifiers.contains(c))
                    || self.checker_families.contains(family)
                    || (result.success && output.is_some_and(outcome::pass_signal)))
        });
        let outcome = Outcome {
            success: result.success,
            error_class: (!result.success)
                .then(|| outcome::classify(result.error_class.as_deref(), output)),
            signal,
            mutation: result
                .mutation
                .unwrap_or(result.success && call.kind.mutates_files()),
            verification,
            chars: result.chars(),
            implies: self.implied_families(call, result.success),
        };
        self.outcomes
            .insert(result.call_id.clone(), outcome.clone());
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_are_measured_as_serialized_json() {
        let mut args = serde_json::Map::new();
        args.insert("path".into(), "a".into());
        let event = Event {
            at: At {
                turn: 1,
                seq: 1,
                session: 1,
                agent: "main".into(),
            },
            kind: EventKind::ToolCall(ToolCall {
                call_id: "c".into(),
                tool: "file_edit".into(),
                args,
                cwd: None,
            }),
        };
        let mut state = RunState::new();
        let Step::Call(call) = state.step(&event).step else {
            panic!("a call");
        };
        assert_eq!(call.args_chars, r#"{"path":"a"}"#.len() as u64);
        assert_eq!(call.canonical, r#"file_edit:{"path":"a"}"#);
    }
}
