//! The events of one session: assistant responses become requests and calls, user lines
//! results and prompts, boundaries compactions, in the order the log wrote them.

use super::lines::{
    assistant_blocks, content_text, cost_of, exit_code, merge_usage, opt_count_in, usage_of,
    user_items, Bad, Block, Item,
};
use super::stream;
use super::threads::Threads;
use super::{ARG_KEYS, ERRORS, TOOLS};
use crate::ingest::error::ProblemKind;
use crate::ingest::formats::builder::{canonical_tool, error_class, Builder};
use crate::ingest::formats::values::{opt_str, typed};
use crate::ingest::LoadedRun;
use crate::model::{self, tokens_from_chars, At, Event, EventKind, Todo, Usage};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

/// The assistant message being read: its lines may continue on the next line.
struct Open {
    id: String,
    agent: String,
    usage: Option<Usage>,
    /// `message.model`, the model that answered.
    model: Option<String>,
    /// The line's `costUSD`, which some Claude Code versions write beside the message.
    cost_usd: Option<f64>,
    blocks: Vec<Block>,
}

/// A response already given a turn: the turn, and its usage as written so far.
struct Request {
    turn: u32,
    usage: Option<Usage>,
}

pub struct Importer {
    pub b: Builder,
    open: Option<Open>,
    /// Assistant message ids already given a turn.
    requests: HashMap<String, Request>,
    /// Requests whose usage grew on lines after their turn was written, by turn: (agent,
    /// usage over all their lines). Their usage events are revised at the end.
    grown: BTreeMap<u32, (String, Usage)>,
    threads: Threads,
    /// Canonical tool of each call id, to judge its result.
    tools: HashMap<String, String>,
    /// A compaction boundary waiting for its summary line: (preTokens, content).
    boundary: Option<(u64, String)>,
    last_prompt: u64,
    started: bool,
    /// The run's cost as stream-json `result` lines record it, spread over the requests at
    /// the end.
    recorded_cost: Option<f64>,
}

impl Importer {
    pub fn new(source: &str) -> Self {
        Self {
            b: Builder::new(source),
            open: None,
            requests: HashMap::new(),
            grown: BTreeMap::new(),
            threads: Threads::default(),
            tools: HashMap::new(),
            boundary: None,
            last_prompt: 0,
            started: false,
            recorded_cost: None,
        }
    }

    /// One parsed line; nothing is applied unless the whole line is valid (its thread
    /// aside: [`Threads::join`]).
    pub fn line(&mut self, v: &Value) -> Result<(), Bad> {
        let obj = v.as_object().ok_or(Bad::line(ProblemKind::NotAnObject))?;
        let placed = self.threads.place(obj);
        let agent = placed.agent.clone();
        let applied = self.apply(obj, agent);
        self.threads.join(placed);
        applied
    }

    fn apply(&mut self, obj: &Map<String, Value>, agent: String) -> Result<(), Bad> {
        let kind = match obj.get("type") {
            Some(Value::String(s)) => s.as_str(),
            None | Some(Value::Null) => return Err(Bad::missing("type")),
            Some(other) => return Err(Bad::wrong("type", "string", other)),
        };
        let message = || match obj.get("message") {
            Some(Value::Object(m)) => Ok(m),
            None | Some(Value::Null) => Err(Bad::missing("message")),
            Some(other) => Err(Bad::wrong("message", "object", other)),
        };
        // Every line's working directory and uuid; one of the wrong type makes the line a
        // problem, as any other bad field does.
        let line_cwd = opt_str(obj.get("cwd"), "cwd")?;
        let uuid = opt_str(obj.get("uuid"), "uuid")?;
        let compact_summary = typed(
            obj.get("isCompactSummary"),
            "isCompactSummary",
            "boolean",
            Value::as_bool,
        )? == Some(true);
        if kind == "assistant" {
            let m = message()?;
            let mut blocks = assistant_blocks(m)?;
            // A call runs in its line's working directory (the session's shell keeps `cd`s).
            for block in &mut blocks {
                if let Block::Call { cwd, .. } = block {
                    *cwd = line_cwd.map(str::to_string);
                }
            }
            let usage = usage_of(m)?;
            let cost_usd = cost_of(obj)?;
            let id = opt_str(m.get("id"), "message.id")?.or(uuid);
            let model = opt_str(m.get("model"), "message.model")?;
            let synthetic = model == Some("<synthetic>");
            for block in &blocks {
                if let Block::Call { id, name, args, .. } = block {
                    self.threads.called(id, name, args);
                }
            }
            self.start(line_cwd);
            self.flush_boundary();
            if !synthetic {
                let open = Open {
                    id: id.unwrap_or_default().to_string(),
                    agent,
                    usage,
                    model: model.map(str::to_string),
                    cost_usd,
                    blocks,
                };
                self.assistant(open);
            }
            return Ok(());
        }
        let (summary, items) = match kind {
            "user" if compact_summary => (Some(content_text(message()?)?), None),
            "user" => (None, Some(user_items(message()?)?)),
            _ => (None, None),
        };
        let boundary = match kind {
            "system" => self.boundary_of(obj)?,
            _ => None,
        };
        if matches!(kind, "user" | "system") {
            self.start(line_cwd);
            self.close();
        }
        if let Some(text) = summary {
            let before = self.boundary.take().map_or(self.last_prompt, |(b, _)| b);
            let after = tokens_from_chars(text.chars().count() as u64);
            self.b.compaction(before, after, &text);
            return Ok(());
        }
        if let Some(items) = items {
            self.flush_boundary();
            self.user(&agent, items);
            return Ok(());
        }
        match kind {
            "system" if boundary.is_some() => {
                self.flush_boundary();
                let (before, content) = boundary.unwrap_or_default();
                self.boundary = Some((before.unwrap_or(self.last_prompt), content));
            }
            "system" | "summary" => {}
            "result" => self.result(obj)?,
            other => {
                *self
                    .b
                    .stats
                    .unknown_types
                    .entry(other.to_string())
                    .or_default() += 1
            }
        }
        Ok(())
    }

    /// A stream-json `result` line: the run's outcome, after the last response's calls, and
    /// its recorded cost (summed if a file holds several runs' lines).
    fn result(&mut self, obj: &Map<String, Value>) -> Result<(), Bad> {
        let outcome = stream::outcome(obj)?;
        self.close();
        self.flush_boundary();
        if let Some(cost) = outcome.cost_usd {
            *self.recorded_cost.get_or_insert(0.0) += cost;
        }
        self.b.complete(&outcome.status, &outcome.summary);
        Ok(())
    }

    /// A `system` line's compaction boundary (subtype `compact_boundary`): its
    /// `compactMetadata.preTokens`, if recorded, and its `content`. Read whole before
    /// anything of the line is applied.
    fn boundary_of(&self, obj: &Map<String, Value>) -> Result<Option<(Option<u64>, String)>, Bad> {
        if opt_str(obj.get("subtype"), "subtype")? != Some("compact_boundary") {
            return Ok(None);
        }
        // A stream writes `compact_metadata.pre_tokens`.
        let meta_key = match obj.contains_key("compactMetadata") {
            true => "compactMetadata",
            false => "compact_metadata",
        };
        let before = match typed(obj.get(meta_key), meta_key, "object", Value::as_object)? {
            Some(meta) => {
                let pre_key = match meta.contains_key("preTokens") {
                    true => "preTokens",
                    false => "pre_tokens",
                };
                opt_count_in(meta, meta_key, pre_key)?
            }
            None => None,
        };
        let content = opt_str(obj.get("content"), "content")?.unwrap_or("Conversation compacted");
        Ok(Some((before, content.to_string())))
    }

    /// The session starts at its first message line, in that line's `cwd`.
    fn start(&mut self, cwd: Option<&str>) {
        if !self.started {
            self.started = true;
            self.b.session_start(cwd.map(str::to_string));
        }
    }

    fn assistant(&mut self, line: Open) {
        let same = |o: &&mut Open| o.id == line.id && !line.id.is_empty();
        if let Some(open) = self.open.as_mut().filter(same) {
            open.usage = merge_usage(open.usage, line.usage);
            open.model = open.model.take().or(line.model);
            open.cost_usd = match (open.cost_usd, line.cost_usd) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            open.blocks.extend(line.blocks);
            return;
        }
        self.close();
        if let Some(request) = self.requests.get_mut(&line.id) {
            // The same response again after other lines: no new request, and its usage is
            // still the largest of each field over all its lines.
            let merged = merge_usage(request.usage, line.usage);
            if let (Some(usage), true) = (merged, merged != request.usage) {
                request.usage = merged;
                self.grown.insert(request.turn, (line.agent.clone(), usage));
            }
            self.emit(&line.agent, line.blocks);
        } else {
            self.open = Some(line);
        }
    }

    /// Ends the open assistant message: its request, then its text and calls.
    fn close(&mut self) {
        let Some(open) = self.open.take() else {
            return;
        };
        if let (Some(usage), "main") = (open.usage, open.agent.as_str()) {
            self.last_prompt = usage.prompt();
        }
        let request = model::Request {
            usage: open.usage,
            model: open.model,
            cost_usd: open.cost_usd,
        };
        self.b.model_request(&open.agent, request);
        if !open.id.is_empty() {
            let request = Request {
                turn: self.b.turn(),
                usage: open.usage,
            };
            self.requests.insert(open.id, request);
        }
        self.emit(&open.agent, open.blocks);
    }

    fn emit(&mut self, agent: &str, blocks: Vec<Block>) {
        let main = agent == "main";
        for block in blocks {
            match block {
                Block::Text(text) if main => self.b.message("assistant", &text, None),
                Block::Text(_) => {}
                Block::Call {
                    id,
                    name,
                    mut args,
                    cwd,
                } => {
                    if main {
                        let shown = format!("{name} {}", Value::Object(args.clone()));
                        self.b.message("assistant", &shown, None);
                    }
                    for (from, to) in ARG_KEYS {
                        if !args.contains_key(to) {
                            if let Some(v) = args.remove(from) {
                                args.insert(to.to_string(), v);
                            }
                        }
                    }
                    let tool = canonical_tool(TOOLS, &name);
                    let todos = (tool == "todo_write").then(|| todos_of(&args)).flatten();
                    self.tools.insert(id.clone(), tool.clone());
                    self.b.call_in(agent, &id, tool, args, cwd);
                    if let Some(todos) = todos {
                        self.b.todos(agent, todos);
                    }
                }
            }
        }
    }

    fn user(&mut self, agent: &str, items: Vec<Item>) {
        for item in items {
            match item {
                Item::Text(text) if agent == "main" => self.b.message("user", &text, None),
                Item::Text(_) => {}
                Item::Result {
                    id,
                    output,
                    is_error,
                } => {
                    self.threads.answered(&id);
                    let shell = self.tools.get(&id).is_some_and(|t| t == "shell");
                    let failed = is_error || (shell && exit_code(&output).is_some_and(|c| c != 0));
                    let class = if failed {
                        error_class(ERRORS, &output)
                    } else {
                        None
                    };
                    self.b.result(agent, &id, !failed, &output, class);
                }
            }
        }
    }

    /// A boundary whose summary line never came is a compaction on its own.
    fn flush_boundary(&mut self) {
        if let Some((before, content)) = self.boundary.take() {
            self.b.compaction(
                before,
                tokens_from_chars(content.chars().count() as u64),
                &content,
            );
        }
    }

    pub fn finish(mut self) -> LoadedRun {
        self.close();
        self.flush_boundary();
        let mut run = self.b.finish();
        for (turn, (agent, usage)) in self.grown {
            revise(&mut run.events, turn, &agent, usage);
        }
        if let Some(total) = self.recorded_cost {
            stream::spread(&mut run.events, total);
        }
        run
    }
}

/// Gives the request of `turn` the usage of all its lines (some came after its turn was
/// written): its request event's usage is replaced, or a request added first in its turn
/// if it had none.
fn revise(events: &mut Vec<Event>, turn: u32, agent: &str, usage: Usage) {
    let recorded = events.iter_mut().find_map(|e| match &mut e.kind {
        EventKind::ModelRequest(request) if e.at.turn == turn => Some(request),
        _ => None,
    });
    if let Some(request) = recorded {
        request.usage = Some(usage);
        return;
    }
    let kind = EventKind::ModelRequest(model::Request {
        usage: Some(usage),
        ..model::Request::default()
    });
    let at = events
        .iter()
        .position(|e| e.at.turn >= turn)
        .unwrap_or(events.len());
    let event = Event {
        at: At {
            turn,
            seq: 0,
            session: 1,
            agent: agent.to_string(),
        },
        kind,
    };
    events.insert(at, event);
    for (i, event) in events.iter_mut().enumerate().skip(at) {
        event.at.seq = i as u64 + 1;
    }
}

/// The todo list of a `TodoWrite` input; `None` when it has none.
fn todos_of(args: &Map<String, Value>) -> Option<Vec<Todo>> {
    let items = args.get("todos")?.as_array()?;
    let todos = items
        .iter()
        .filter_map(Value::as_object)
        .map(|t| {
            let text = |k: &str| {
                t.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let id = match t.get("id") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                _ => text("content"),
            };
            Todo {
                id,
                parent_id: None,
                status: text("status"),
                content: text("content"),
                verify_command: None,
            }
        })
        .collect();
    Some(todos)
}
