//! `loop_intervention_wording`: a directive that tells the model to complete the task.
//!
//! ## What it checks
//! Reads every recorded directive. It fires (`completion_wording`, advisory) when the
//! directive's `requiredNextAction` names a completion tool, or when its text instructs
//! the model to call one: an imperative verb (`call`, `use`, `invoke`, ...) followed,
//! at most a couple of filler words later (`the`, `tool`), by a completion tool's name,
//! with no negation just before the verb (`do not call task_complete` is quiet). A
//! directive in a terminal-incomplete state is exempt: there the completion tool is the
//! sanctioned way to report the run incomplete (seed 001 WO-TD-02). What is
//! a completion tool comes from the harness vocabulary (`ToolKind::TaskComplete` in
//! `src/normalize/family.rs`), never from a name written in this guard.
//!
//! ## Why it matters
//! The loop intervention injected a mandatory `task_complete` directive after detecting
//! repetition, which pushed the model into partial or false completion. The fix tells it
//! to stop repeating the family, verify, reread the target once, ask the user, or report
//! incomplete instead.
//!
//! ## Seed
//! seed 002 (`002_527d73931b42d8b2.txt`), fix 2 "Replace Loop Escape Equals
//! `task_complete`".

use super::{Effect, Firings, Guard, GuardInfo, Metrics, RunMeta, Spec};
use crate::model::Directive;
use crate::normalize::family::tool_kind;
use crate::normalize::{NormEvent, RunState, Step, ToolKind};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Verbs that instruct a tool call when they come right before its name.
    pub imperative_verbs: Vec<String>,
    /// Words allowed between the verb and the tool name (`call the task_complete tool`).
    pub filler_words: Vec<String>,
    /// At most this many filler words between the verb and the tool name.
    pub max_fillers: usize,
    /// Words that negate a following verb (`do not call`, `never use`).
    pub negations: Vec<String>,
    /// How many words before the verb are searched for a negation.
    pub negation_window: usize,
    /// Directive states in which a completion call is the sanctioned way to report an
    /// incomplete run (seed 001 WO-TD-02: terminal incomplete permits `task_complete`
    /// only as an incomplete/blocker report).
    pub exempt_states: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect();
        Self {
            imperative_verbs: words(&["call", "use", "invoke", "run", "emit", "execute"]),
            filler_words: words(&["the", "a", "tool", "function", "now"]),
            max_fillers: 2,
            negations: words(&["not", "never", "don", "dont", "avoid", "without", "no"]),
            negation_window: 3,
            exempt_states: words(&["terminal_incomplete"]),
        }
    }
}

pub struct LoopInterventionWording {
    settings: Settings,
    directives: u64,
    flagged: u64,
}

impl Spec for LoopInterventionWording {
    const INFO: GuardInfo = GuardInfo {
        id: "loop_intervention_wording",
        work_order: "fix 2",
        seed: "002 fix 2",
        summary: "a loop directive that tells the model to call task_complete",
    };
    type Settings = Settings;

    fn new(settings: Settings) -> Self {
        Self {
            settings,
            directives: 0,
            flagged: 0,
        }
    }
}

impl Guard for LoopInterventionWording {
    fn begin_run(&mut self, _run: &RunMeta<'_>) {
        self.directives = 0;
        self.flagged = 0;
    }

    fn observe(&mut self, event: &NormEvent<'_>, _run: &RunState, firings: &mut Firings) {
        let Step::Directive(directive) = &event.step else {
            return;
        };
        self.directives += 1;
        let Some(reason) = self.completion_instruction(directive) else {
            return;
        };
        self.flagged += 1;
        let firing = firings.fire(
            event.turn,
            event.agent,
            "completion_wording",
            Effect::Advisory,
        );
        if let Some(family) = &directive.family {
            firing.family(family.clone());
        }
        firing.detail(reason);
    }

    fn finish_run(&mut self, _run: &RunMeta<'_>, _: &RunState, _: &mut Firings) -> Metrics {
        let mut metrics = Metrics::new();
        metrics.insert("directives".into(), self.directives.into());
        metrics.insert("completion_worded".into(), self.flagged.into());
        metrics
    }
}

/// Whether the harness vocabulary says `word` names a completion tool.
fn is_completion_tool(word: &str) -> bool {
    tool_kind(word, &serde_json::Map::new()) == ToolKind::TaskComplete
}

impl LoopInterventionWording {
    /// What in the directive tells the model to complete, if anything.
    fn completion_instruction(&self, directive: &Directive) -> Option<String> {
        let state = directive.state.as_deref().unwrap_or_default();
        if self.settings.exempt_states.iter().any(|s| s == state) {
            return None;
        }
        let required = directive.required_next_action.trim();
        if is_completion_tool(required) {
            return Some(format!("requiredNextAction={required}"));
        }
        let text = directive.text.as_deref()?;
        let words = words(text);
        let at = (0..words.len()).find(|&i| self.instructs_call(&words, i))?;
        let verb = (0..at)
            .rev()
            .find(|&j| self.is_verb(&words[j]))
            .unwrap_or(at);
        Some(format!("text: \"{}\"", words[verb..=at].join(" ")))
    }

    fn is_verb(&self, word: &str) -> bool {
        self.settings.imperative_verbs.iter().any(|v| v == word)
    }

    /// Word `i` is a completion tool named as the object of a non-negated imperative.
    fn instructs_call(&self, words: &[String], i: usize) -> bool {
        if !is_completion_tool(&words[i]) {
            return false;
        }
        // Walk back over fillers to the verb; any other word means it is not the object.
        let mut j = i;
        let verb = loop {
            let Some(prev) = j.checked_sub(1) else {
                return false;
            };
            j = prev;
            if self.is_verb(&words[j]) {
                break j;
            }
            let filler = self.settings.filler_words.contains(&words[j]);
            if !filler || i - j > self.settings.max_fillers {
                return false;
            }
        };
        let from = verb.saturating_sub(self.settings.negation_window);
        !words[from..verb]
            .iter()
            .any(|w| self.settings.negations.contains(w))
    }
}

/// Lower-cased words: letters, digits and `_` (tool names keep their underscores;
/// backquotes, `=` and punctuation separate).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}
