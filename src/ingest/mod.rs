//! Ingest: reads `.omnius/` dumps from disk into the event model.
//!
//! The only layer that touches the filesystem for input. It never writes. Each run is
//! loaded on its own (events streamed a line at a time, frames one document at a time),
//! so memory follows the largest run, not the corpus.

pub mod discover;
pub mod error;
pub mod events;
pub mod files;
pub mod formats;
pub mod frames;
pub mod json;
pub mod lines;
pub mod unique;
pub(crate) mod walk;

use crate::model::{Event, Frame, LedgerFamily, LedgerStatus};
pub use discover::{
    discover, discover_as, discover_with, display, omnius_of_run, Discovery, ProjectSource,
    RunSource, SkippedFile, Within,
};
pub use error::{ParseError, Policy, ProblemKind, Problems};
pub use events::{Abandoned, Copied, IngestStats};
pub use files::Limits;
use files::{io_problem, is_there, open_regular, read_document, read_document_with_room};
pub use formats::InputFormat;
use json::ThreadBuffers;
use std::io::BufReader;
use std::path::Path;

/// Everything recorded for one run.
#[derive(Debug, Clone, Default)]
pub struct LoadedRun {
    pub run_id: String,
    /// The format it was read from.
    pub format: InputFormat,
    pub events: Vec<Event>,
    /// Frames ordered by (turn, agent, file name).
    pub frames: Vec<Frame>,
    pub ledger: Option<LedgerStatus>,
    pub problems: Problems,
    pub stats: IngestStats,
}

/// Reads one run directory. Under [`Policy::Strict`] the first problem is returned as the error.
pub fn load_run(run: &RunSource, policy: Policy) -> Result<LoadedRun, ParseError> {
    if run.format != formats::InputFormat::Omnius {
        let imported = match &run.within {
            Within::Line(at) => {
                formats::import_line(&run.path, *at, &run.run_id, run.format, policy, &run.limits)
            }
            Within::Session(id) => {
                formats::import_session(&run.path, id, &run.run_id, run.format, policy, &run.limits)
            }
            Within::Whole => {
                formats::import_capped(&run.path, &run.run_id, run.format, policy, &run.limits)
            }
        };
        return unread_is_listed(imported, run, policy);
    }
    let mut loaded = LoadedRun {
        run_id: run.run_id.clone(),
        ..Default::default()
    };
    let limits = &run.limits;
    let events_path = run.path.join("events.jsonl");
    let shown = display(&events_path);
    match open_regular(&events_path, &shown) {
        Ok((file, _)) => {
            let reader = BufReader::with_capacity(256 * 1024, file);
            loaded.events = events::read_events_capped(
                reader,
                &shown,
                policy,
                limits.max_line,
                &mut loaded.problems,
                &mut loaded.stats,
            )?;
        }
        Err(e) => loaded.problems.record(policy, e)?,
    }
    let mut buffers = ThreadBuffers::take();
    loaded.frames = load_frames(
        &run.path.join("context"),
        policy,
        limits,
        &mut loaded.problems,
        &mut buffers,
    )?;
    let ledger_path = run.path.join("completion-ledger.json");
    // A dangling link is there, and unreadable: a problem, not a missing ledger.
    if is_there(&ledger_path) {
        let shown = display(&ledger_path);
        match read_document(&ledger_path, &shown, limits)
            .and_then(|mut bytes| frames::parse_completion_ledger(&mut bytes, &shown, &mut buffers))
        {
            Ok(status) => loaded.ledger = Some(status),
            Err(e) => loaded.problems.record(policy, e)?,
        }
    }
    Ok(loaded)
}

/// A recording that cannot be read at all (over the document cap, unreadable, replaced by
/// a FIFO since discovery) is, in lenient mode, a run with no events and that one problem:
/// listed like an `events.jsonl` that cannot be read, while every other run is replayed
/// (issue #32, B). Strict mode keeps the error.
fn unread_is_listed(
    imported: Result<LoadedRun, ParseError>,
    run: &RunSource,
    policy: Policy,
) -> Result<LoadedRun, ParseError> {
    match imported {
        Err(e) if policy == Policy::Lenient => {
            let mut loaded = LoadedRun {
                run_id: run.run_id.clone(),
                format: run.format,
                ..Default::default()
            };
            loaded.problems.record(policy, e)?;
            Ok(loaded)
        }
        imported => imported,
    }
}

fn load_frames(
    dir: &Path,
    policy: Policy,
    limits: &Limits,
    problems: &mut Problems,
    buffers: &mut simd_json::Buffers,
) -> Result<Vec<Frame>, ParseError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // No `context/` is normal: the run recorded no frames.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !is_there(dir) => {
            return Ok(Vec::new())
        }
        Err(e) => {
            problems.record(policy, io_problem(dir, &display(dir), &e))?;
            return Ok(Vec::new());
        }
    };
    let mut paths = Vec::new();
    for entry in entries {
        match entry {
            Ok(entry) => paths.push(entry.path()),
            Err(e) => problems.record(policy, io_problem(dir, &display(dir), &e))?,
        }
    }
    paths.retain(|p| p.extension().is_some_and(|x| x == "json"));
    paths.sort();
    let mut frames = Vec::with_capacity(paths.len());
    for path in paths {
        let shown = display(&path);
        let parsed = read_document_with_room(&path, &shown, limits, simd_json::INPUT_PADDING)
            .and_then(|bytes| frames::parse_frame_owned(bytes, &shown, buffers));
        match parsed {
            Ok(frame) => frames.push(frame),
            Err(e) => problems.record(policy, e)?,
        }
    }
    frames.sort_by(|a, b| (a.turn, &a.agent, &a.source).cmp(&(b.turn, &b.agent, &b.source)));
    Ok(frames)
}

/// The project's recorded `convergence-ledger.json`, if any.
pub fn load_convergence_ledger(
    omnius: &Path,
    policy: Policy,
    limits: &Limits,
    problems: &mut Problems,
) -> Result<Vec<LedgerFamily>, ParseError> {
    let path = omnius.join("convergence-ledger.json");
    if !is_there(&path) {
        return Ok(Vec::new());
    }
    let shown = display(&path);
    let mut buffers = ThreadBuffers::take();
    match read_document(&path, &shown, limits)
        .and_then(|mut bytes| frames::parse_convergence_ledger(&mut bytes, &shown, &mut buffers))
    {
        Ok(families) => Ok(families),
        Err(e) => {
            problems.record(policy, e)?;
            Ok(Vec::new())
        }
    }
}
