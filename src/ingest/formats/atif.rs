//! ATIF trajectories (`trajectory.json`, Harbor's Agent Trajectory Interchange Format,
//! `ATIF-v1.0` to `ATIF-v1.7`), alone or as the run of a Harbor trial folder
//! (`<job>/<task>__<id>/agent/trajectory.json`; issue #30, item 2).
//!
//! One JSON document per run: `{schema_version, session_id, agent {name, version,
//! model_name}, steps[], final_metrics?, subagent_trajectories?, continued_trajectory_ref?,
//! notes?, extra?}`. Each step has `step_id`, `source` (`system`, `user`, `agent`), a
//! `message` (a string, or text and image parts), and on agent steps `model_name`,
//! `tool_calls[]` (`tool_call_id`, `function_name`, `arguments`), `observation.results[]`
//! (`source_call_id`, `content`, `subagent_trajectory_ref`, `extra`), `metrics`
//! (`prompt_tokens` counting the cached ones, `cached_tokens`, `completion_tokens`,
//! `cost_usd`, `extra`) and `llm_call_count`. Converters from many agents write it (the
//! definitions: harbor's `src/harbor/models/trajectories/` and RFC 0001).
//!
//! Mapping ([`reader`]):
//! - system and user steps join the history; an agent step is one model request (a turn)
//!   unless `llm_call_count` is 0 (a deterministic dispatch, no model call); its message
//!   joins the history, then its calls and their results, matched by id.
//! - tools: named by the table of the agent that wrote the trajectory ([`tables`]: Claude
//!   Code's, OpenHands', SWE-agent's), else passed through and judged by shape.
//! - failures: ATIF has no error field. A result whose `extra` carries the converter's flag
//!   (`is_error`, `tool_result_is_error`, `success`) is judged by it; otherwise a shell
//!   call's output is judged by the anchored wordings SWE-agent's importer uses (shell
//!   output without an exit code, the same problem), and any other call succeeded.
//! - usage ([`metrics`]): a step's `metrics` are recorded usage by kind; without any, the
//!   request has none. `final_metrics` only fills what the steps leave out: totals when no
//!   step has metrics, and the cost the steps did not record, spread over the requests.
//! - `is_copied_context` steps seed the history and are no new requests; a system step with
//!   `extra.context_management` of type `compaction` (or boundary `replace`) is a
//!   compaction; embedded `subagent_trajectories` are sub-agent threads.
//!
//! Not read: outcomes (ATIF records none: a Harbor trial's reward is a label, docs/GATE.md),
//! timestamps, reasoning, token ids and logprobs, images, sub-agent trajectories kept in
//! other files, and continuation files (`continued_trajectory_ref`: each file is a run).

mod detect;
mod metrics;
mod reader;
pub mod trial;

pub use detect::{judge, sniff};

use super::builder::{ErrorTable, ToolTable};
use super::{claude_code, openhands, read_document, swe_agent};
use crate::ingest::error::{ParseError, Policy, ProblemKind};
use crate::ingest::{unique, Limits, LoadedRun};
use reader::Reader;
use serde_json::Value;
use std::path::Path;

/// What an agent's own importer knows of its names: tools, argument keys, error wordings.
pub(crate) struct Tables {
    pub tools: ToolTable,
    pub args: &'static [(&'static str, &'static str)],
    pub errors: ErrorTable,
}

/// The tables of the agent that wrote the trajectory (`agent.name`), for the agents whose
/// own names ATIF keeps and hindsight already reads. Other agents' names pass through
/// (Codex's `shell`, mini-swe-agent's `bash` are canonical already) and are judged by
/// their arguments.
fn tables(agent: &str) -> Tables {
    let (tools, args, errors): (ToolTable, &'static [(&str, &str)], ErrorTable) =
        match agent.to_ascii_lowercase().as_str() {
            "claude-code" => (
                claude_code::TOOLS,
                &claude_code::ARG_KEYS,
                claude_code::ERRORS,
            ),
            "openhands" => (openhands::TOOLS, &[], openhands::ERRORS),
            "swe-agent" => (swe_agent::TOOLS, &[], &[]),
            _ => (&[], &[], &[]),
        };
    Tables {
        tools,
        args,
        errors,
    }
}

/// Sub-agent trajectories nested deeper than this are not read (a document cannot loop,
/// but its depth is the producer's).
const MAX_DEPTH: usize = 8;

pub fn import(path: &Path, policy: Policy, limits: &Limits) -> Result<LoadedRun, ParseError> {
    let (shown, bytes) = read_document(path, limits)?;
    let mut reader = Reader::new(&shown, policy);
    reader.b.stats.bytes = bytes.len() as u64;
    let doc: Value = match unique::from_slice(&bytes) {
        Ok(doc) => doc,
        Err(e) => {
            let e = e.into_field_error(true);
            return reader.fail(&e.field, e.kind);
        }
    };
    let Some(doc) = doc.as_object() else {
        return reader.fail("", ProblemKind::NotAnObject);
    };
    reader.run(doc)?;
    Ok(reader.finish())
}
