//! The importer's state over one history: whose turn it is, which call an observation
//! answers, the cumulative usage readings, the outcome.

use super::map::{self, text, Tokens};
use super::{ERRORS, TOOLS};
use crate::ingest::error::{FieldError, ParseError, Policy, ProblemKind};
use crate::ingest::formats::builder::{canonical_tool, error_class, Builder};
use crate::ingest::formats::values::{lookup, object, opt_str, str_at, typed, typed_at, wrong};
use crate::ingest::LoadedRun;
use crate::model::{tokens_from_chars, Request};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Agent actions that are neither a model's tool call nor its message.
pub(super) const BOOKKEEPING: &str = "system condensation condensation_request summarize change_agent_state recall null pause resume stop start";
/// Action and observation types this importer knows; others are counted as unknown.
pub(super) const KNOWN_ACTIONS: &str = "message run run_ipython edit read write browse browse_interactive finish reject think delegate mcp call_tool_mcp task_tracking";
pub(super) const KNOWN_OBSERVATIONS: &str = "run run_ipython edit read write browse error think delegate mcp task_tracking user_rejected success null agent_state_changed condense recall chat message";

/// The tool name of a call OpenHands rejected before running it (no action was kept).
pub const REJECTED: &str = "rejected_call";

pub(super) fn listed(list: &str, kind: &str) -> bool {
    list.split(' ').any(|k| k == kind)
}

/// A cumulative reading of an action's `llm_metrics`: `accumulated_token_usage` and
/// `accumulated_cost` (absent in older versions), over the run so far, condenser calls
/// included (OpenHands combines the agent's and the condenser's metrics).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Reading {
    tokens: Tokens,
    cost: Option<f64>,
}

impl Reading {
    /// Before any request.
    const START: Reading = Reading {
        tokens: Tokens {
            prompt: 0,
            completion: 0,
            cache_read: 0,
            cache_write: 0,
        },
        cost: Some(0.0),
    };

    /// Whether `self` continues `earlier`'s counter (prompt and completion did not go down).
    fn continues(&self, earlier: &Reading) -> bool {
        self.tokens.prompt >= earlier.tokens.prompt
            && self.tokens.completion >= earlier.tokens.completion
    }

    /// What was used since `earlier`, a reading this one continues; the cost only when both
    /// readings record one.
    fn since(&self, earlier: &Reading) -> Reading {
        let cost = match (self.cost, earlier.cost) {
            (Some(now), Some(then)) => Some((now - then).max(0.0)),
            _ => None,
        };
        Reading {
            tokens: self.tokens.since(&earlier.tokens),
            cost,
        }
    }
}

/// One agent's place in the history: the main agent, or a delegate until its result.
struct Agent {
    name: String,
    /// The `delegate` call that started it.
    call: Option<String>,
    /// Its last cumulative reading, and whether it is the parent's.
    cumulative: Option<Reading>,
    shared: bool,
    last_response: Option<String>,
}

pub struct Import {
    pub b: Builder,
    shown: String,
    /// The line of an evaluation output the history is on, for locating problems.
    line: Option<u64>,
    policy: Policy,
    /// Some agent action carries LLM metadata: only those (and messages) are requests.
    pub marked: bool,
    agents: Vec<Agent>,
    /// Action id → (call id, agent); tool call id → the same.
    calls: HashMap<i64, (String, String)>,
    by_tool_call: HashMap<String, (String, String)>,
    /// An evaluation's `metrics.token_usages`: each response's usage and model, by id.
    pub recorded: HashMap<String, (Tokens, Option<String>)>,
    last_prompt: u64,
    just_compacted: bool,
    outcome: bool,
    agent_state: Option<String>,
    last_error: String,
}

impl Import {
    pub fn new(shown: &str, policy: Policy, line: Option<u64>) -> Self {
        let main = Agent {
            name: "main".into(),
            call: None,
            cumulative: None,
            shared: false,
            last_response: None,
        };
        Self {
            b: Builder::new(shown),
            shown: shown.to_string(),
            line,
            policy,
            marked: false,
            agents: vec![main],
            calls: HashMap::new(),
            by_tool_call: HashMap::new(),
            recorded: HashMap::new(),
            last_prompt: 0,
            just_compacted: false,
            outcome: false,
            agent_state: None,
            last_error: String::new(),
        }
    }

    pub fn problem(&mut self, at: &str, e: FieldError) -> Result<(), ParseError> {
        let field = [at, e.field.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(".");
        let error = ParseError {
            path: self.shown.clone(),
            line: self.line,
            field: (!field.is_empty()).then_some(field),
            kind: e.kind,
        };
        self.b.problems.record(self.policy, error)
    }

    /// A field of the history document read as `found`: a problem is recorded, and the
    /// field is then absent.
    pub fn checked<T>(
        &mut self,
        found: Result<Option<T>, FieldError>,
    ) -> Result<Option<T>, ParseError> {
        match found {
            Ok(v) => Ok(v),
            Err(e) => self.problem("", e).map(|()| None),
        }
    }

    pub fn fail(mut self, field: &str, kind: ProblemKind) -> Result<LoadedRun, ParseError> {
        self.problem(field, FieldError::new("", kind))?;
        Ok(self.b.finish())
    }

    fn agent(&self) -> String {
        self.agents
            .last()
            .map_or_else(|| "main".into(), |a| a.name.clone())
    }

    pub fn event(&mut self, event: &Value) -> Result<(), FieldError> {
        let obj = event
            .as_object()
            .ok_or_else(|| FieldError::new("", ProblemKind::NotAnObject))?;
        let source = text(obj, "source")?
            .ok_or_else(|| FieldError::new("source", ProblemKind::MissingField))?;
        let head = Head::of(obj)?;
        if let Some(kind) = text(obj, "action")? {
            let args = match obj.get("args") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(args)) => args.clone(),
                Some(v) => return Err(wrong("args", "object", v)),
            };
            if !listed(KNOWN_ACTIONS, kind) && !listed(BOOKKEEPING, kind) {
                *self
                    .b
                    .stats
                    .unknown_types
                    .entry(format!("action.{kind}"))
                    .or_default() += 1;
            }
            match (source, kind) {
                ("user", "message") => {
                    let content = arg(&args, "content")?.unwrap_or_default();
                    self.b.message("user", content, None)
                }
                ("agent", "message") => {
                    let content = arg(&args, "content")?.unwrap_or_default();
                    self.request(obj, kind, &head)?;
                    if self.agents.len() == 1 {
                        self.b.message("assistant", content, None);
                    }
                }
                ("agent", "system") => {
                    let content = arg(&args, "content")?.unwrap_or_default();
                    self.b.message("system", content, None)
                }
                ("agent", "condensation" | "summarize") => {
                    let summary = arg(&args, "summary")?.unwrap_or_default();
                    self.b.compaction(
                        self.last_prompt,
                        tokens_from_chars(summary.chars().count() as u64),
                        summary,
                    );
                    self.just_compacted = true;
                    return Ok(());
                }
                ("agent", k) if !listed(BOOKKEEPING, k) => self.call(obj, kind, &args, &head)?,
                _ => {}
            }
            self.just_compacted = false;
            Ok(())
        } else if let Some(kind) = text(obj, "observation")? {
            if !listed(KNOWN_OBSERVATIONS, kind) {
                *self
                    .b
                    .stats
                    .unknown_types
                    .entry(format!("observation.{kind}"))
                    .or_default() += 1;
            }
            self.observation(obj, kind, &head)
        } else {
            Err(FieldError::new("action", ProblemKind::MissingField))
        }
    }

    /// Starts a turn when `action` came from a new model request, with its usage by kind,
    /// model and cost. Usage: the response's own `usage`, else the evaluation's
    /// `metrics.token_usages` entry for the response id, else the difference of the
    /// cumulative reading since the agent's previous one. Model: the response's, else the
    /// usage entry's, else the cumulative reading's. Cost: the difference of
    /// `accumulated_cost` (OpenHands keeps no cost per response id), condenser calls since
    /// the previous request included. Every field is read before anything changes.
    fn request(
        &mut self,
        action: &Map<String, Value>,
        kind: &str,
        head: &Head<'_>,
    ) -> Result<(), FieldError> {
        let metrics = typed(action.get("llm_metrics"), "llm_metrics", "object", object)?;
        if self.marked && head.meta.is_none() && metrics.is_none() && kind != "message" {
            return Ok(());
        }
        const ACCUMULATED: &str = "llm_metrics.accumulated_token_usage";
        let accumulated = typed_at(
            metrics,
            "llm_metrics",
            &["accumulated_token_usage"],
            "object",
            object,
        )?;
        let cumulative = match accumulated {
            Some(u) => Some(Reading {
                tokens: map::usage(u, ACCUMULATED)?,
                cost: accumulated_cost(metrics)?,
            }),
            None => None,
        };
        const RESPONSE: &str = "tool_call_metadata.model_response";
        let response = typed_at(
            head.meta,
            "tool_call_metadata",
            &["model_response"],
            "object",
            object,
        )?;
        let response_id = str_at(response, RESPONSE, &["id"])?;
        let own = match typed_at(response, RESPONSE, &["usage"], "object", object)? {
            Some(u) => Some(map::usage(u, &format!("{RESPONSE}.usage"))?),
            None => None,
        };
        let response_model = map::model(
            lookup(response, RESPONSE, &["model"])?,
            &format!("{RESPONSE}.model"),
        )?;
        let accumulated_model = map::model(
            lookup(accumulated, ACCUMULATED, &["model"])?,
            &format!("{ACCUMULATED}.model"),
        )?;
        let key = response_id.map(str::to_string).or_else(|| {
            cumulative.map(|r| format!("accumulated:{}:{}", r.tokens.prompt, r.tokens.completion))
        });
        let agent = self.agents.last_mut().expect("main agent");
        if key.is_some() && key == agent.last_response {
            return Ok(());
        }
        agent.last_response = key;
        let listed = response_id.and_then(|id| self.recorded.get(id));
        let exact = own.or(listed.map(|(tokens, _)| *tokens));
        let model = response_model
            .or_else(|| listed.and_then(|(_, model)| model.clone()))
            .or(accumulated_model);
        let delta = cumulative.map(|now| self.delta(now));
        let usage = exact
            .or(delta.map(|d| d.tokens))
            .map(|tokens| tokens.usage());
        if let Some(usage) = usage {
            self.last_prompt = usage.prompt();
        }
        let request = Request {
            usage,
            model,
            cost_usd: delta.and_then(|d| d.cost),
        };
        self.b.model_request(&self.agent(), request);
        Ok(())
    }

    /// What was used since the current agent's last cumulative reading. A delegate's first
    /// reading at or above its parent's is the parent's counter continued (OpenHands shares
    /// it).
    fn delta(&mut self, now: Reading) -> Reading {
        let depth = self.agents.len();
        let parent = depth.checked_sub(2).and_then(|i| self.agents[i].cumulative);
        let agent = &mut self.agents[depth - 1];
        let base = agent.cumulative.unwrap_or_else(|| match parent {
            Some(p) if now.continues(&p) => {
                agent.shared = true;
                p
            }
            _ => Reading::START,
        });
        agent.cumulative = Some(now);
        if now.continues(&base) {
            now.since(&base)
        } else {
            now
        }
    }

    fn call(
        &mut self,
        action: &Map<String, Value>,
        kind: &str,
        args: &Map<String, Value>,
        head: &Head<'_>,
    ) -> Result<(), FieldError> {
        // What the call records is read whole before anything of it is applied.
        let tool_args = head
            .meta
            .and_then(Value::as_object)
            .and_then(map::tool_call_args);
        let (name, call_args) = map::call_of(kind, args, tool_args.as_ref())?;
        let thought = match kind {
            "think" => None,
            _ => arg(args, "thought")?.filter(|t| !t.trim().is_empty()),
        };
        let outcome = match kind {
            "finish" | "reject" => Some(map::outcome(kind, args)?),
            _ => None,
        };
        let todos = match kind {
            "task_tracking" if arg(args, "command")? != Some("view") => {
                let items = typed(
                    args.get("task_list"),
                    "args.task_list",
                    "array",
                    Value::as_array,
                )?;
                let todos = items.map(|items| map::todos(items)).transpose();
                todos.map_err(|e| crate::ingest::json::nested("args", e))?
            }
            _ => None,
        };
        let delegate = match kind {
            "delegate" => Some(arg(args, "agent")?.unwrap_or("agent")),
            _ => None,
        };
        self.request(action, kind, head)?;
        let call_id = head
            .tool_call_id
            .map_or_else(|| format!("oh-{}", head.id.unwrap_or(-1)), str::to_string);
        let agent = self.agent();
        if let (Some(thought), "main") = (thought, agent.as_str()) {
            self.b.message("assistant", thought, None);
        }
        self.b.call(
            &agent,
            &call_id,
            canonical_tool(TOOLS, &name),
            call_args.clone(),
        );
        if let Some(id) = head.id {
            self.calls.insert(id, (call_id.clone(), agent.clone()));
        }
        if let Some(t) = head.tool_call_id {
            self.by_tool_call
                .insert(t.to_string(), (call_id.clone(), agent.clone()));
        }
        if let (Some((status, summary)), "main") = (outcome, agent.as_str()) {
            self.b.complete(status, summary);
            self.outcome = true;
        }
        if let Some(todos) = todos {
            self.b.todos(&agent, todos);
        }
        if let Some(name) = delegate {
            self.agents.push(Agent {
                name: format!("delegate:{name}"),
                call: Some(call_id),
                cumulative: None,
                shared: false,
                last_response: None,
            });
        }
        Ok(())
    }

    fn observation(
        &mut self,
        obs: &Map<String, Value>,
        kind: &str,
        head: &Head<'_>,
    ) -> Result<(), FieldError> {
        let content = text(obs, "content")?.unwrap_or_default();
        let observed = map::Observed::of(obs)?;
        match kind {
            "agent_state_changed" => {
                self.agent_state = observed.agent_state.map(str::to_string);
                return Ok(());
            }
            "condense" if !self.just_compacted => {
                self.b.compaction(
                    self.last_prompt,
                    tokens_from_chars(content.chars().count() as u64),
                    content,
                );
                return Ok(());
            }
            "condense" | "null" => return Ok(()),
            _ => {}
        }
        let linked = observed
            .cause
            .and_then(|c| self.calls.get(&c))
            .or_else(|| self.by_tool_call.get(head.tool_call_id?))
            .cloned();
        if kind == "delegate" {
            self.end_delegate(linked.as_ref().map(|(call, _)| call.as_str()));
        }
        if kind == "error" {
            self.last_error = content.to_string();
        }
        match linked {
            Some((call_id, agent)) => {
                let success = map::succeeded(kind, &observed, content);
                let class = (!success).then(|| error_class(ERRORS, content)).flatten();
                self.b.result(&agent, &call_id, success, content, class);
            }
            None if kind == "error" && text(obs, "source")? == Some("agent") => {
                self.rejected(head.id, content)
            }
            None if !content.is_empty() && self.agents.len() == 1 => {
                self.b.message("user", content, None)
            }
            None => {}
        }
        Ok(())
    }

    /// An agent `error` observation that answers no action: the model's tool call was
    /// rejected before it ran (a parameter outside the tool's schema, an unknown tool, a
    /// reply the agent could not turn into an action). OpenHands keeps no action for it and
    /// does not count the response's usage, so it is no request: it is a failed call of the
    /// current turn (a turn without usage when no request came before), named
    /// [`REJECTED`], with no arguments.
    fn rejected(&mut self, id: Option<i64>, content: &str) {
        let agent = self.agent();
        if self.b.turn() == 0 {
            self.b.model_request(&agent, Request::default());
        }
        let call_id = format!("oh-{}", id.unwrap_or(-1));
        self.b
            .call(&agent, &call_id, REJECTED.to_string(), Map::new());
        self.b.result(
            &agent,
            &call_id,
            false,
            content,
            error_class(ERRORS, content),
        );
    }

    /// Closes the delegate started by `call` (the innermost one when unknown), and any
    /// delegate it left open; a parent sharing the counter continues from its reading.
    fn end_delegate(&mut self, call: Option<&str>) {
        let Some(depth) = self
            .agents
            .iter()
            .rposition(|a| a.call.is_some() && (call.is_none() || a.call.as_deref() == call))
        else {
            return;
        };
        while self.agents.len() > depth {
            let done = self.agents.pop().expect("delegate");
            let parent = self.agents.last_mut().expect("main agent");
            if done.shared && done.cumulative.is_some() {
                parent.cumulative = done.cumulative;
            }
        }
    }

    pub fn outcome_at_end(&mut self, error: Option<&str>) {
        if self.outcome {
            return;
        }
        match self.agent_state.as_deref() {
            Some(state @ ("error" | "stopped")) => {
                let summary = error.unwrap_or(&self.last_error).to_string();
                self.b.complete(state, &summary);
            }
            _ => {
                if let Some(error) = error {
                    self.b.complete("error", error);
                }
            }
        }
    }
}

/// What any event may carry that the importer reads (its `id`, its tool call), checked
/// before anything of the event is applied: a field of the wrong type makes the event a
/// problem, never a field read as absent.
struct Head<'e> {
    id: Option<i64>,
    /// `tool_call_metadata`, an object.
    meta: Option<&'e Value>,
    tool_call_id: Option<&'e str>,
}

impl<'e> Head<'e> {
    fn of(event: &'e Map<String, Value>) -> Result<Self, FieldError> {
        let meta = typed(
            event.get("tool_call_metadata"),
            "tool_call_metadata",
            "object",
            object,
        )?;
        Ok(Self {
            id: typed(event.get("id"), "id", "integer", Value::as_i64)?,
            tool_call_id: str_at(meta, "tool_call_metadata", &["tool_call_id"])?,
            meta,
        })
    }
}

/// The string argument `key` of an action, located under `args`.
fn arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, FieldError> {
    opt_str(args.get(key), &format!("args.{key}"))
}

/// `llm_metrics.accumulated_cost`, in US dollars (absent before OpenHands recorded it).
fn accumulated_cost(metrics: Option<&Value>) -> Result<Option<f64>, FieldError> {
    match metrics.and_then(|m| m.get("accumulated_cost")) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(c) if c.is_finite() && c >= 0.0 => Ok(Some(c)),
            _ => Err(FieldError::new(
                "llm_metrics.accumulated_cost",
                ProblemKind::BadValue(format!("expected a non-negative number, found {v}")),
            )),
        },
    }
}
