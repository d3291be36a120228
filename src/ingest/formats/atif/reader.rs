//! Reading one ATIF document into the builder: its steps in order, their calls and
//! results, and its embedded sub-agent trajectories as threads of their own.
//!
//! Usage is planned before anything is read ([`Reader::run`]): the run's recorded cost
//! covers the sub-agents too, so what it adds to the steps' costs is known only once every
//! trajectory's requests are.

use super::metrics::{self, Figures, Totals};
use super::{tables, Tables, MAX_DEPTH};
use crate::ingest::error::{FieldError, ParseError, Policy, ProblemKind};
use crate::ingest::events::Copied;
use crate::ingest::formats::builder::{canonical_tool, error_class, Builder};
use crate::ingest::formats::swe_agent::wording;
use crate::ingest::formats::values::{object, text_of, typed, typed_at};
use crate::ingest::LoadedRun;
use crate::model::{tokens_from_chars, Request};
use crate::normalize::family::{tool_kind, ToolKind};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

type Object = Map<String, Value>;

pub struct Reader {
    pub b: Builder,
    policy: Policy,
    shown: String,
    /// Each trajectory's requests in step order, by its field prefix (`""` for the root).
    plans: BTreeMap<String, VecDeque<Figures>>,
    /// The main agent's last recorded prompt: the size a compaction starts from.
    last_prompt: u64,
    copied: Copied,
}

/// One step as read: where it is, what it says, whose it is.
struct Step<'d> {
    obj: &'d Object,
    field: String,
    source: &'d str,
    agent: &'d str,
}

impl Reader {
    pub fn new(shown: &str, policy: Policy) -> Self {
        Self {
            b: Builder::new(shown),
            policy,
            shown: shown.to_string(),
            plans: BTreeMap::new(),
            last_prompt: 0,
            copied: Copied::default(),
        }
    }

    /// Records a problem; under `--strict` it is the error.
    pub fn problem(&mut self, field: &str, kind: ProblemKind) -> Result<(), ParseError> {
        let error = ParseError {
            path: self.shown.clone(),
            line: None,
            field: (!field.is_empty()).then(|| field.to_string()),
            kind,
        };
        self.b.problems.record(self.policy, error)
    }

    fn field_problem(&mut self, e: FieldError) -> Result<(), ParseError> {
        self.problem(&e.field, e.kind)
    }

    /// A field read by the shared readers ([`typed`]): one of the wrong type is a problem
    /// and counts as absent.
    fn or_absent<T>(
        &mut self,
        read: Result<Option<T>, FieldError>,
    ) -> Result<Option<T>, ParseError> {
        match read {
            Ok(v) => Ok(v),
            Err(e) => self.field_problem(e).map(|()| None),
        }
    }

    /// The text of a step's `message` or a result's `content` at `field`: a string or an
    /// array of parts ([`text_of`]); another type is a problem and counts as no text.
    fn text(&mut self, v: Option<&Value>, field: &str) -> Result<String, ParseError> {
        let parts = |v: &Value| (v.is_string() || v.is_array()).then_some(());
        match self.or_absent(typed(v, field, "string or array", parts))? {
            Some(()) => Ok(text_of(v)),
            None => Ok(String::new()),
        }
    }

    /// A document that cannot be read at all: one problem, no events.
    pub fn fail(mut self, field: &str, kind: ProblemKind) -> Result<LoadedRun, ParseError> {
        self.problem(field, kind)?;
        Ok(self.finish())
    }

    pub fn finish(mut self) -> LoadedRun {
        if self.copied.entries > 0 {
            self.b.stats.copied = Some(self.copied);
        }
        self.b.finish()
    }

    /// The root trajectory: its requests (and its sub-agents') planned with the run's
    /// totals, then read.
    pub fn run(&mut self, doc: &Object) -> Result<(), ParseError> {
        let mut plans = Vec::new();
        let totals = self.plan(doc, "", 0, &mut plans)?;
        let mut all: Vec<&mut Figures> = plans.iter_mut().flat_map(|(_, p)| p.iter_mut()).collect();
        metrics::fill_cost(&mut all, totals.cost);
        self.plans = plans.into_iter().map(|(k, p)| (k, p.into())).collect();
        self.b.session_start(None);
        self.trajectory(doc, "", "main", 0)
    }

    /// Each request's recorded figures, for `doc` and its embedded sub-agents (as `(prefix,
    /// figures)`), with this trajectory's `final_metrics` filling tokens none records.
    fn plan(
        &mut self,
        doc: &Object,
        prefix: &str,
        depth: usize,
        out: &mut Vec<(String, Vec<Figures>)>,
    ) -> Result<Totals, ParseError> {
        let steps = doc.get("steps").and_then(Value::as_array);
        let mut requests = Vec::new();
        for (i, step) in steps.into_iter().flatten().enumerate() {
            let Some(step) = step.as_object().filter(|s| is_request(s)) else {
                continue;
            };
            let figures = match step.get("metrics").filter(|m| !m.is_null()) {
                None => (None, None),
                Some(m) => match metrics::step(m, &format!("{prefix}steps[{i}].metrics")) {
                    Ok(f) => f,
                    Err(e) => self.field_problem(e).map(|()| (None, None))?,
                },
            };
            requests.push(figures);
        }
        let totals =
            match metrics::totals(doc.get("final_metrics"), &format!("{prefix}final_metrics")) {
                Ok(t) => t,
                Err(e) => self.field_problem(e).map(|()| Totals::default())?,
            };
        metrics::fill_tokens(&mut requests, &totals);
        out.push((prefix.to_string(), requests));
        if depth < MAX_DEPTH {
            for (j, sub) in subagents(doc) {
                let inner = format!("{prefix}subagent_trajectories[{j}].");
                self.plan(sub, &inner, depth + 1, out)?;
            }
        }
        Ok(totals)
    }

    /// The steps of one trajectory, under `agent`; sub-agents it embeds are read where a
    /// result refers to them, the rest after its last step.
    fn trajectory(
        &mut self,
        doc: &Object,
        prefix: &str,
        agent: &str,
        depth: usize,
    ) -> Result<(), ParseError> {
        let steps = match doc.get("steps") {
            Some(Value::Array(steps)) => steps,
            None | Some(Value::Null) => {
                return self.problem(&format!("{prefix}steps"), ProblemKind::MissingField)
            }
            Some(other) => {
                return self.field_problem(metrics::wrong(format!("{prefix}steps"), "array", other))
            }
        };
        let at = format!("{prefix}agent");
        let owner = self.or_absent(typed(doc.get("agent"), &at, "object", object))?;
        let name = self.or_absent(typed_at(owner, &at, &["name"], "string", Value::as_str))?;
        let tables = tables(name.unwrap_or(""));
        let model = self.or_absent(typed_at(
            owner,
            &at,
            &["model_name"],
            "string",
            Value::as_str,
        ))?;
        let model = model.filter(|m| !m.is_empty());
        let at = format!("{prefix}session_id");
        let session = self.or_absent(typed(doc.get("session_id"), &at, "string", Value::as_str))?;
        let session = session.unwrap_or("");
        let embedded: Vec<(usize, &Object)> = subagents(doc).collect();
        let mut read = BTreeSet::new();
        for (i, raw) in steps.iter().enumerate() {
            self.b.record();
            let field = format!("{prefix}steps[{i}]");
            let Some(obj) = raw.as_object() else {
                self.problem(&field, ProblemKind::NotAnObject)?;
                continue;
            };
            let source = match obj.get("source") {
                Some(Value::String(s)) if matches!(s.as_str(), "agent" | "user" | "system") => s,
                None | Some(Value::Null) => {
                    self.problem(&format!("{field}.source"), ProblemKind::MissingField)?;
                    continue;
                }
                Some(other) => {
                    let why = format!("expected `system`, `user` or `agent`, found {other}");
                    self.problem(&format!("{field}.source"), ProblemKind::BadValue(why))?;
                    continue;
                }
            };
            let step = Step {
                obj,
                field,
                source,
                agent,
            };
            if obj.get("is_copied_context") == Some(&Value::Bool(true)) {
                self.copy(&step, session)?;
                continue;
            }
            self.step(&step, prefix, &tables, model)?;
            for id in referred(obj) {
                if let Some(&(j, sub)) = embedded.iter().find(|(_, s)| trajectory_id(s) == Some(id))
                {
                    if read.insert(j) {
                        self.subagent(sub, prefix, j, depth)?;
                    }
                }
            }
        }
        for (j, sub) in embedded {
            if !read.contains(&j) {
                self.subagent(sub, prefix, j, depth)?;
            }
        }
        Ok(())
    }

    /// An embedded sub-agent trajectory, as the agent `subagent:<trajectory_id>`.
    fn subagent(
        &mut self,
        sub: &Object,
        prefix: &str,
        j: usize,
        depth: usize,
    ) -> Result<(), ParseError> {
        if depth >= MAX_DEPTH {
            return Ok(());
        }
        let agent = format!("subagent:{}", trajectory_id(sub).unwrap_or(&j.to_string()));
        let inner = format!("{prefix}subagent_trajectories[{j}].");
        self.trajectory(sub, &inner, &agent, depth + 1)
    }

    fn step(
        &mut self,
        step: &Step<'_>,
        prefix: &str,
        tables: &Tables,
        model: Option<&str>,
    ) -> Result<(), ParseError> {
        let main = step.agent == "main";
        let text = self.text(step.obj.get("message"), &format!("{}.message", step.field))?;
        if step.source != "agent" {
            if main && compaction(step.obj) {
                let summary = match results_text(step.obj) {
                    s if s.is_empty() => text,
                    s => s,
                };
                let after = tokens_from_chars(summary.chars().count() as u64);
                self.b.compaction(self.last_prompt, after, &summary);
            } else if main {
                self.b.message(step.source, &text, None);
            }
            return Ok(());
        }
        if is_request(step.obj) {
            let (usage, cost_usd) = self
                .plans
                .get_mut(prefix)
                .and_then(VecDeque::pop_front)
                .unwrap_or_default();
            if let (true, Some(u)) = (main, usage) {
                self.last_prompt = u.prompt();
            }
            let at = format!("{}.model_name", step.field);
            let own = typed(step.obj.get("model_name"), &at, "string", Value::as_str);
            let model = self.or_absent(own)?.filter(|m| !m.is_empty()).or(model);
            let request = Request {
                usage,
                model: model.map(str::to_string),
                cost_usd,
            };
            self.b.model_request(step.agent, request);
        }
        if main && !text.trim().is_empty() {
            self.b.message("assistant", &text, None);
        }
        let calls = self.calls(step, tables)?;
        self.results(step, tables, calls)
    }

    /// The step's tool calls, recorded, by id: the canonical name and arguments.
    fn calls(
        &mut self,
        step: &Step<'_>,
        tables: &Tables,
    ) -> Result<BTreeMap<String, (String, Object)>, ParseError> {
        let mut calls = BTreeMap::new();
        let list = match step.obj.get("tool_calls") {
            None | Some(Value::Null) => return Ok(calls),
            Some(Value::Array(list)) => list,
            Some(other) => {
                let field = format!("{}.tool_calls", step.field);
                self.field_problem(metrics::wrong(&field, "array", other))?;
                return Ok(calls);
            }
        };
        for (k, call) in list.iter().enumerate() {
            let field = format!("{}.tool_calls[{k}]", step.field);
            let (id, name, args) = match call_parts(call, &field) {
                Ok(parts) => parts,
                Err(e) => {
                    self.field_problem(e)?;
                    continue;
                }
            };
            let tool = canonical_tool(tables.tools, name);
            let mut args = args.clone();
            for (from, to) in tables.args {
                if let Some(v) = args.remove(*from) {
                    args.entry(to.to_string()).or_insert(v);
                }
            }
            if step.agent == "main" {
                let shown = format!("{name} {}", Value::Object(args.clone()));
                self.b.message("assistant", &shown, None);
            }
            self.b.call(step.agent, id, tool.clone(), args.clone());
            calls.insert(id.to_string(), (tool, args));
        }
        Ok(calls)
    }

    /// The step's observation: each result answers the call its `source_call_id` names; a
    /// result that names none is text the agent was shown.
    fn results(
        &mut self,
        step: &Step<'_>,
        tables: &Tables,
        mut calls: BTreeMap<String, (String, Object)>,
    ) -> Result<(), ParseError> {
        let main = step.agent == "main";
        let field = format!("{}.observation", step.field);
        let results = match step.obj.get("observation") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Object(o)) => match o.get("results") {
                Some(Value::Array(r)) => r,
                None | Some(Value::Null) => {
                    return self.problem(&format!("{field}.results"), ProblemKind::MissingField)
                }
                Some(other) => {
                    let e = metrics::wrong(format!("{field}.results"), "array", other);
                    return self.field_problem(e);
                }
            },
            Some(other) => return self.field_problem(metrics::wrong(&field, "object", other)),
        };
        for (r, result) in results.iter().enumerate() {
            let at = format!("{field}.results[{r}]");
            let Some(result) = result.as_object() else {
                self.problem(&at, ProblemKind::NotAnObject)?;
                continue;
            };
            let output = self.text(result.get("content"), &format!("{at}.content"))?;
            let id = match result.get("source_call_id") {
                None | Some(Value::Null) => None,
                Some(Value::String(id)) => Some(id.as_str()),
                Some(other) => {
                    let e = metrics::wrong(format!("{at}.source_call_id"), "string", other);
                    self.field_problem(e)?;
                    continue;
                }
            };
            match id.map(|id| (id, calls.remove(id))) {
                Some((id, Some((tool, args)))) => {
                    let extra = flagged_failure(result.get("extra"), &format!("{at}.extra"));
                    let flagged = self.or_absent(extra)?;
                    let (success, class) = verdict(flagged, &tool, &args, &output, tables);
                    self.b.result(step.agent, id, success, &output, class);
                }
                Some((id, None)) => {
                    let why =
                        format!("`{id}` names no tool call of this step (or one answered already)");
                    self.problem(&format!("{at}.source_call_id"), ProblemKind::BadValue(why))?;
                }
                None if main && !output.trim().is_empty() => self.b.message("user", &output, None),
                None => {}
            }
        }
        Ok(())
    }

    /// A step copied from an earlier trajectory (`is_copied_context`): context the next
    /// requests carry, not a new request (counted in `input.copied`).
    fn copy(&mut self, step: &Step<'_>, session: &str) -> Result<(), ParseError> {
        if step.agent != "main" {
            return Ok(());
        }
        let role = match step.source {
            "agent" => "assistant",
            other => other,
        };
        let text = self.text(step.obj.get("message"), &format!("{}.message", step.field))?;
        self.b.message(role, &text, None);
        let results = results_text(step.obj);
        if !results.is_empty() {
            self.b.message("tool", &results, None);
        }
        if self.copied.entries == 0 {
            self.copied.from = session.to_string();
        }
        self.copied.entries += 1;
        if step.source == "agent" {
            self.copied.turns += 1;
            let tokens = step
                .obj
                .get("metrics")
                .and_then(|m| metrics::step(m, "").ok())
                .and_then(|(u, _)| u)
                .map_or(0, |u| u.total());
            self.copied.tokens += tokens;
        }
        Ok(())
    }
}

/// An agent step that stands for at least one model call: `llm_call_count` 0 is a
/// deterministic dispatch (no model asked), and a copied step was asked before.
fn is_request(step: &Object) -> bool {
    step.get("source").and_then(Value::as_str) == Some("agent")
        && step.get("is_copied_context") != Some(&Value::Bool(true))
        && step.get("llm_call_count").and_then(Value::as_u64) != Some(0)
}

/// A step that replaces the context with a summary: `extra.context_management` of type
/// `compaction`, or with boundary `replace` (RFC 0001, section VII).
fn compaction(step: &Object) -> bool {
    let Some(cm) = step.get("extra").and_then(|e| e.get("context_management")) else {
        return false;
    };
    cm.get("type").and_then(Value::as_str) == Some("compaction")
        || cm.get("boundary").and_then(Value::as_str) == Some("replace")
}

/// A step's `observation.results` (none when absent or not an array).
fn observation_results(step: &Object) -> impl Iterator<Item = &Value> {
    step.get("observation")
        .and_then(|o| o.get("results"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The text of a step's observation results, joined.
fn results_text(step: &Object) -> String {
    observation_results(step)
        .map(|r| text_of(r.get("content")))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tool call's id, function name and arguments (`arguments` absent or null: none).
fn call_parts<'v>(
    call: &'v Value,
    field: &str,
) -> Result<(&'v str, &'v str, &'v Object), FieldError> {
    static EMPTY: std::sync::OnceLock<Object> = std::sync::OnceLock::new();
    let Some(call) = call.as_object() else {
        return Err(FieldError::new(field, ProblemKind::NotAnObject));
    };
    let string = |key: &str| match call.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.as_str()),
        None | Some(Value::Null) => Err(FieldError::new(
            format!("{field}.{key}"),
            ProblemKind::MissingField,
        )),
        Some(other) => Err(metrics::wrong(
            format!("{field}.{key}"),
            "non-empty string",
            other,
        )),
    };
    let id = string("tool_call_id")?;
    let name = string("function_name")?;
    let args = match call.get("arguments") {
        None | Some(Value::Null) => EMPTY.get_or_init(Object::new),
        Some(Value::Object(args)) => args,
        Some(other) => {
            return Err(metrics::wrong(
                format!("{field}.arguments"),
                "object",
                other,
            ))
        }
    };
    Ok((id, name, args))
}

/// Whether a result succeeded, and its error class. ATIF has no error field: the flag a
/// converter keeps in the result's `extra` decides where there is one; else a shell
/// call's output is judged by the anchored wordings of shell output without an exit code
/// (SWE-agent's); any other call succeeded.
fn verdict(
    flagged: Option<bool>,
    tool: &str,
    args: &Object,
    output: &str,
    tables: &Tables,
) -> (bool, Option<String>) {
    match flagged {
        Some(true) => (false, error_class(tables.errors, output)),
        Some(false) => (true, None),
        None if tool_kind(tool, args) == ToolKind::Shell => {
            let class = wording::failure(output);
            (class.is_none(), class)
        }
        None => (true, None),
    }
}

/// The converters' error flags in a result's `extra`: `is_error` (Copilot CLI's),
/// `tool_result_is_error` (Claude Code's), or `success` (Copilot's session events). An
/// `extra` that is no object, or a flag that is no boolean, is a problem at `at`.
fn flagged_failure(extra: Option<&Value>, at: &str) -> Result<Option<bool>, FieldError> {
    let flag = |k: &str| typed_at(extra, at, &[k], "boolean", Value::as_bool);
    if let Some(failed) = flag("is_error")? {
        return Ok(Some(failed));
    }
    if let Some(failed) = flag("tool_result_is_error")? {
        return Ok(Some(failed));
    }
    Ok(flag("success")?.map(|ok| !ok))
}

/// The embedded sub-agent trajectories, with their index.
fn subagents(doc: &Object) -> impl Iterator<Item = (usize, &Object)> {
    let list = doc.get("subagent_trajectories").and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(j, s)| Some((j, s.as_object()?)))
}

fn trajectory_id(doc: &Object) -> Option<&str> {
    doc.get("trajectory_id").and_then(Value::as_str)
}

/// The `trajectory_id`s a step's results refer to (`subagent_trajectory_ref`).
fn referred(step: &Object) -> Vec<&str> {
    observation_results(step)
        .filter_map(|r| r.get("subagent_trajectory_ref")?.as_array())
        .flatten()
        .filter_map(|r| r.get("trajectory_id")?.as_str())
        .collect()
}
