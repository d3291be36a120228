//! Walking the messages of one trajectory in order: a state machine over the actions
//! that wait for their observations (the tables it applies are in the parent module).

use super::fields::{self, Action};
use super::{ERRORS, OUTCOMES, SUBMIT_MARKERS, TOOLS};
use crate::ingest::error::{FieldError, ParseError, Policy, ProblemKind};
use crate::ingest::formats::builder::{canonical_tool, error_class, Builder};
use crate::ingest::formats::values;
use crate::ingest::LoadedRun;
use crate::model::Request;
use serde_json::{Map, Value};

/// An action waiting for its observation.
struct Pending {
    call_id: String,
    action: Action,
    /// Carries the submission marker: emitted as a call only if a result shows it ran
    /// without ending the run.
    submit: bool,
}

pub struct Reader {
    pub b: Builder,
    shown: String,
    policy: Policy,
    pending: Vec<Pending>,
    /// The last message was an assistant message with no action (a format error follows).
    bare_assistant: bool,
    completed: bool,
    /// `info.exit_status`, replaced by an `exit` message's.
    pub exit_status: Option<String>,
    /// `info.submission`, replaced by an `exit` message's.
    pub submission: String,
    /// The configured model (`info.config.model.model_name`), for requests whose response
    /// names none.
    pub model: Option<String>,
}

impl Reader {
    pub fn new(shown: String, policy: Policy) -> Self {
        Self {
            b: Builder::new(&shown),
            shown,
            policy,
            pending: Vec::new(),
            bare_assistant: false,
            completed: false,
            exit_status: None,
            submission: String::new(),
            model: None,
        }
    }

    pub fn problem(&mut self, field: String, kind: ProblemKind) -> Result<(), ParseError> {
        let error = ParseError {
            path: self.shown.clone(),
            line: None,
            field: Some(field),
            kind,
        };
        self.b.problems.record(self.policy, error)
    }

    /// The document as a whole is unreadable: one problem, no events.
    pub fn fail(
        mut self,
        field: Option<String>,
        kind: ProblemKind,
    ) -> Result<LoadedRun, ParseError> {
        let error = ParseError {
            path: self.shown.clone(),
            line: None,
            field,
            kind,
        };
        self.b.problems.record(self.policy, error)?;
        Ok(self.b.finish())
    }

    /// A field of message `i` (of the trajectory when `None`) read as `found`: a problem is
    /// recorded, located, and the field is then absent.
    pub fn checked<T>(
        &mut self,
        i: Option<usize>,
        found: Result<Option<T>, FieldError>,
    ) -> Result<Option<T>, ParseError> {
        match found {
            Ok(v) => Ok(v),
            Err(e) => {
                let field = match i {
                    Some(i) => format!("messages[{i}].{}", e.field),
                    None => e.field,
                };
                self.problem(field, e.kind).map(|()| None)
            }
        }
    }

    pub fn message(&mut self, i: usize, m: &Map<String, Value>) -> Result<(), ParseError> {
        // What a message is comes from these: one of the wrong type is a problem, and the
        // message is not read.
        let head = || -> Result<_, FieldError> {
            Ok((
                values::opt_str(m.get("role"), "role")?,
                values::opt_str(m.get("type"), "type")?,
                values::opt_str(m.get("object"), "object")?,
            ))
        };
        let (role, kind, object) = match head() {
            Ok(head) => head,
            Err(e) => return self.problem(format!("messages[{i}].{}", e.field), e.kind),
        };
        let extra = m.get("extra");
        self.checked(
            Some(i),
            values::typed(extra, "extra", "object", values::object),
        )?;
        if role == Some("assistant") || object == Some("response") {
            return self.assistant(i, m);
        }
        if role == Some("tool") || kind == Some("function_call_output") {
            let key = |a: &'static str, b: &'static str| if m.contains_key(a) { a } else { b };
            let id_key = key("tool_call_id", "call_id");
            let id = self.checked(Some(i), values::opt_str(m.get(id_key), id_key))?;
            let text_key = key("content", "output");
            let text = fields::content_text(m.get(text_key), text_key);
            let text = self.checked(Some(i), text.map(Some))?.unwrap_or_default();
            let at = self
                .pending
                .iter()
                .position(|p| id.is_some() && p.action.id.as_deref() == id);
            return match at {
                Some(at) => {
                    let rc = self.returncode(i, m, &text)?;
                    self.result(i, at, m, rc, &text, true)
                }
                None => {
                    // An answer to no recorded action: kept, its call unknown.
                    let success = self.returncode(i, m, &text)? == Some(0);
                    self.observation(id.unwrap_or_default(), success, &text);
                    Ok(())
                }
            };
        }
        let bare = std::mem::take(&mut self.bare_assistant);
        let text = fields::content_text(m.get("content"), "content");
        let text = self.checked(Some(i), text.map(Some))?.unwrap_or_default();
        let extra_str = |key: &str| {
            let field = format!("extra.{key}");
            values::opt_str(extra.and_then(|e| e.get(key)), &field)
        };
        match role {
            Some("system") => self.b.message("system", &text, None),
            Some("user") => {
                if let Some(at) = self.pending.iter().position(|p| p.action.id.is_none()) {
                    let rc = self.returncode(i, m, &text)?;
                    if self.pending[at].submit && rc.is_none() {
                        // 1.0 saves the submission as a user message.
                        self.pending.remove(at);
                        self.complete();
                        return Ok(());
                    }
                    return self.result(i, at, m, rc, &text, false);
                }
                let interrupt = self.checked(Some(i), extra_str("interrupt_type"))?;
                if interrupt == Some("FormatError") && !bare {
                    // Since 2.x keeps the response of a request it rejects here (with its
                    // usage and cost); earlier versions lost it.
                    let request = self.request_of(i, m)?;
                    self.b.model_request("main", request);
                }
                self.b.message("user", &text, None);
            }
            Some("exit") => {
                if let Some(status) = self.checked(Some(i), extra_str("exit_status"))? {
                    self.exit_status = Some(status.to_string());
                }
                if let Some(s) = self.checked(Some(i), extra_str("submission"))? {
                    self.submission = s.to_string();
                }
                self.pending.retain(|p| !p.submit);
                self.complete();
            }
            Some(other) => {
                *self
                    .b
                    .stats
                    .unknown_types
                    .entry(format!("role:{other}"))
                    .or_default() += 1
            }
            None => self.problem(format!("messages[{i}].role"), ProblemKind::MissingField)?,
        }
        Ok(())
    }

    /// The return code of observation `i` ([`fields::returncode`]); a recorded one of the
    /// wrong type is a problem, and the text's is read instead.
    fn returncode(
        &mut self,
        i: usize,
        m: &Map<String, Value>,
        text: &str,
    ) -> Result<Option<i64>, ParseError> {
        let found = fields::returncode(m, text);
        Ok(match self.checked(Some(i), found.map(Some))? {
            Some(rc) => rc,
            None => fields::text_returncode(text),
        })
    }

    fn assistant(&mut self, i: usize, m: &Map<String, Value>) -> Result<(), ParseError> {
        // Actions of the previous response that never got an observation stay unanswered;
        // a held submission that did not end the run is still a call.
        for p in std::mem::take(&mut self.pending) {
            if p.submit {
                self.call(&p);
            }
        }
        let request = self.request_of(i, m)?;
        self.b.model_request("main", request);
        let text = fields::assistant_text(m).map(Some);
        let text = self.checked(Some(i), text)?.unwrap_or_default();
        self.b.message("assistant", &text, None);
        let actions = fields::actions(m, &text).or_else(|e| {
            let at = format!("messages[{i}].{}", e.field);
            self.problem(at, e.kind).map(|()| Vec::new())
        })?;
        self.bare_assistant = actions.is_empty();
        for (k, action) in actions.into_iter().enumerate() {
            let call_id = action.id.clone().unwrap_or_else(|| format!("m{i}.a{k}"));
            let command = action
                .args
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let submit = SUBMIT_MARKERS.iter().any(|marker| command.contains(marker));
            let pending = Pending {
                call_id,
                action,
                submit,
            };
            if !submit {
                self.call(&pending);
            }
            self.pending.push(pending);
        }
        Ok(())
    }

    /// What message `i` records of its request; a bad figure is a problem and is left out
    /// (the request still counts).
    fn request_of(&mut self, i: usize, m: &Map<String, Value>) -> Result<Request, ParseError> {
        match fields::request(m, self.model.as_deref()) {
            Ok(request) => Ok(request),
            Err(e) => {
                self.problem(format!("messages[{i}].{}", e.field), e.kind)?;
                Ok(Request {
                    model: self.model.clone(),
                    ..Request::default()
                })
            }
        }
    }

    fn call(&mut self, p: &Pending) {
        let tool = canonical_tool(TOOLS, &p.action.tool);
        self.b.call("main", &p.call_id, tool, p.action.args.clone());
    }

    /// The observation of pending action `at`, with its return code `rc`.
    fn result(
        &mut self,
        i: usize,
        at: usize,
        m: &Map<String, Value>,
        rc: Option<i64>,
        text: &str,
        tool: bool,
    ) -> Result<(), ParseError> {
        let p = self.pending.remove(at);
        if p.submit {
            self.call(&p);
        }
        let recorded = m.get("extra").and_then(|e| e.get("returncode"));
        // A return code of the wrong type was a problem already.
        if rc.is_none() && tool && recorded.is_none_or(Value::is_null) {
            self.problem(
                format!("messages[{i}].extra.returncode"),
                ProblemKind::MissingField,
            )?;
        }
        self.observation(&p.call_id, rc == Some(0), text);
        Ok(())
    }

    /// An observation: the result of `call_id`, the command's output unwrapped from the
    /// observation template ([`fields::unwrapped_output`]) while the history keeps what the
    /// model saw.
    fn observation(&mut self, call_id: &str, success: bool, text: &str) {
        let output = fields::unwrapped_output(text);
        let output = output.as_deref().unwrap_or(text);
        let class = (!success).then(|| error_class(ERRORS, output)).flatten();
        self.b
            .result_wrapped("main", call_id, success, output, text, class);
    }

    /// The run's outcome, once.
    fn complete(&mut self) {
        if self.completed {
            return;
        }
        let Some(status) = self.exit_status.clone() else {
            return;
        };
        self.completed = true;
        let mapped = OUTCOMES
            .iter()
            .find(|(from, _)| from.eq_ignore_ascii_case(&status))
            .map_or(status.as_str(), |(_, to)| to);
        self.b.complete(mapped, &self.submission);
    }

    pub fn finish(mut self) -> Result<LoadedRun, ParseError> {
        // A held submission or a recorded exit status without an `exit` message (1.0).
        self.complete();
        if !self.completed {
            for p in std::mem::take(&mut self.pending) {
                if p.submit {
                    self.call(&p);
                }
            }
        }
        Ok(self.b.finish())
    }
}
