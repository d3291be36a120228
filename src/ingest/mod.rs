//! Ingest: reads `.omnius/` dumps from disk into the event model.
//!
//! The only layer that touches the filesystem for input. It never writes. Each run is
//! loaded on its own (events streamed a line at a time, frames one document at a time),
//! so memory follows the largest run, not the corpus.

pub mod discover;
pub mod error;
pub mod events;
pub mod formats;
pub mod frames;
pub mod json;
pub mod unique;

use crate::model::{Event, Frame, LedgerFamily, LedgerStatus};
pub use discover::{discover, discover_as, display, ProjectSource, RunSource};
pub use error::{ParseError, Policy, ProblemKind, Problems};
pub use events::IngestStats;
pub use formats::InputFormat;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// Everything recorded for one run.
#[derive(Debug, Clone, Default)]
pub struct LoadedRun {
    pub run_id: String,
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
        return formats::import(&run.path, &run.run_id, run.format, policy);
    }
    let mut loaded = LoadedRun {
        run_id: run.run_id.clone(),
        ..Default::default()
    };
    let events_path = run.path.join("events.jsonl");
    let shown = display(&events_path);
    match File::open(&events_path) {
        Ok(file) => {
            let reader = BufReader::with_capacity(256 * 1024, file);
            loaded.events = events::read_events(
                reader,
                &shown,
                policy,
                &mut loaded.problems,
                &mut loaded.stats,
            )?;
        }
        Err(e) => loaded.problems.record(policy, open_problem(&shown, &e))?,
    }
    let mut buffers = simd_json::Buffers::default();
    loaded.frames = load_frames(
        &run.path.join("context"),
        policy,
        &mut loaded.problems,
        &mut buffers,
    )?;
    let ledger_path = run.path.join("completion-ledger.json");
    if ledger_path.exists() {
        let shown = display(&ledger_path);
        match read_document(&ledger_path, &shown)
            .and_then(|mut bytes| frames::parse_completion_ledger(&mut bytes, &shown, &mut buffers))
        {
            Ok(status) => loaded.ledger = Some(status),
            Err(e) => loaded.problems.record(policy, e)?,
        }
    }
    Ok(loaded)
}

fn open_problem(shown: &str, e: &std::io::Error) -> ParseError {
    ParseError {
        path: shown.to_string(),
        line: None,
        field: None,
        kind: if e.kind() == std::io::ErrorKind::NotFound {
            ProblemKind::MissingFile
        } else {
            ProblemKind::Io(e.to_string())
        },
    }
}

fn read_document(path: &Path, shown: &str) -> Result<Vec<u8>, ParseError> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| open_problem(shown, &e))?;
    Ok(bytes)
}

fn load_frames(
    dir: &Path,
    policy: Policy,
    problems: &mut Problems,
    buffers: &mut simd_json::Buffers,
) -> Result<Vec<Frame>, ParseError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // No `context/` is normal: the run recorded no frames.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            problems.record(policy, open_problem(&display(dir), &e))?;
            return Ok(Vec::new());
        }
    };
    let mut paths: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut frames = Vec::with_capacity(paths.len());
    for path in paths {
        let shown = display(&path);
        let parsed = read_document(&path, &shown)
            .and_then(|mut bytes| frames::parse_frame(&mut bytes, &shown, buffers));
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
    problems: &mut Problems,
) -> Result<Vec<LedgerFamily>, ParseError> {
    let path = omnius.join("convergence-ledger.json");
    if !path.exists() {
        return Ok(Vec::new());
    }
    let shown = display(&path);
    let mut buffers = simd_json::Buffers::default();
    match read_document(&path, &shown)
        .and_then(|mut bytes| frames::parse_convergence_ledger(&mut bytes, &shown, &mut buffers))
    {
        Ok(families) => Ok(families),
        Err(e) => {
            problems.record(policy, e)?;
            Ok(Vec::new())
        }
    }
}
