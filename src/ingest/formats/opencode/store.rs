//! OpenCode's stored sessions, from the SQLite store ([`database`]) or the legacy JSON
//! storage ([`storage`]): which sessions a store holds (discovery), and one session read
//! whole, with its child sessions as sub-agent threads (a run).
//!
//! A fork (`Session.fork`) copies its original's messages and parts into a new session,
//! keeping their `time.created`: a message created before its own session was is such a
//! copy. It builds the context and is counted under `input.copied`, never as a request
//! again (tokscale issue #446: counting the copies multiplied a forked day's tokens 8x).

mod database;
mod storage;

use super::session::{Children, Session, StoredMessage};
use crate::ingest::error::{ParseError, Policy, ProblemKind};
use crate::ingest::formats::builder::Builder;
use crate::ingest::formats::Sniffed;
use crate::ingest::{Copied, Limits, LoadedRun};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use database::judge as judge_database;
pub use database::MAGIC;
pub use storage::{is_storage, judge as judge_storage};

/// One session as a store lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub id: String,
    pub parent: Option<String>,
    /// `time.created`, epoch milliseconds.
    pub created: i64,
    /// The folder OpenCode ran in.
    pub directory: Option<String>,
    /// The session's project: its worktree where the store records one, else its id.
    pub project: String,
}

/// Where OpenCode's sessions are read from.
trait Store {
    /// The store as shown in reports and problems.
    fn shown(&self) -> &str;
    /// Every session, children included, oldest first; a session record that cannot be
    /// read is pushed to `problems`, and left out.
    fn sessions(&self, problems: &mut Vec<ParseError>) -> Result<Vec<SessionRow>, ParseError>;
    /// A session's messages with their parts, in order; a record that cannot be read is a
    /// problem recorded on `b` under `policy`, and skipped.
    fn messages(
        &self,
        session: &str,
        b: &mut Builder,
        policy: Policy,
    ) -> Result<Vec<StoredMessage>, ParseError>;
    /// The session whose message a fork's first copied message (created at `created`) was
    /// copied from: one of `candidates`, the sessions created before the fork.
    fn copied_from(&self, created: i64, candidates: &[&SessionRow]) -> Option<String>;
}

/// A root session a store holds: a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub id: String,
    pub created: i64,
    /// The project, as hindsight names it: `opencode:<worktree>`.
    pub project: String,
}

fn open(path: &Path, limits: &Limits) -> Result<Box<dyn Store>, ParseError> {
    if path.is_dir() {
        Ok(Box::new(storage::Storage::open(path, limits)?))
    } else {
        Ok(Box::new(database::Database::open(path)?))
    }
}

/// The runs an OpenCode store (a database file or a storage folder) holds: its root
/// sessions, oldest first, and the session records that could not be read. Child sessions
/// are threads of their root, not runs.
pub fn sessions(
    path: &Path,
    limits: &Limits,
    problems: &mut Vec<ParseError>,
) -> Result<Vec<Listed>, ParseError> {
    let store = open(path, limits)?;
    Ok(store
        .sessions(problems)?
        .into_iter()
        .filter(|s| s.parent.is_none())
        .map(|s| Listed {
            project: format!("opencode:{}", s.project),
            id: s.id,
            created: s.created,
        })
        .collect())
}

/// Reads root session `id` of the store at `path` as one run: its messages on the main
/// thread, each child session (and theirs) on a `subagent:<session id>` thread.
pub fn import(
    path: &Path,
    id: &str,
    policy: Policy,
    limits: &Limits,
) -> Result<LoadedRun, ParseError> {
    let store = open(path, limits)?;
    let all = listed(path, store.as_ref())?;
    let Some(root) = all.iter().find(|s| s.id == id) else {
        return Err(ParseError {
            path: store.shown().to_string(),
            line: None,
            field: None,
            kind: ProblemKind::BadValue(format!("holds no session `{id}`")),
        });
    };
    let mut b = Builder::new(store.shown());
    b.session_start(root.directory.clone());
    let mut reader = Reader {
        store: store.as_ref(),
        all: &all,
        policy,
        visited: HashSet::new(),
    };
    reader.session(&mut b, root, "main")?;
    Ok(b.finish())
}

/// Every store's sessions, as first listed by this process's runs of it. Each run of a
/// store needs the whole list (its child sessions, a fork's original), and a store of N
/// root sessions is N runs: listed once, not once per run (N times N session records read
/// from a storage folder). Session records that cannot be read were reported by discovery.
static LISTED: Mutex<BTreeMap<PathBuf, Arc<Vec<SessionRow>>>> = Mutex::new(BTreeMap::new());

fn listed(path: &Path, store: &dyn Store) -> Result<Arc<Vec<SessionRow>>, ParseError> {
    let lock = || {
        LISTED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(rows) = lock().get(path) {
        return Ok(Arc::clone(rows));
    }
    // Listed without the lock held: runs of other stores go on meanwhile.
    let rows = Arc::new(store.sessions(&mut Vec::new())?);
    lock().insert(path.to_path_buf(), Arc::clone(&rows));
    Ok(rows)
}

struct Reader<'s> {
    store: &'s dyn Store,
    all: &'s [SessionRow],
    policy: Policy,
    /// Sessions read, so a child linked twice (or a cycle of parents) is read once.
    visited: HashSet<String>,
}

impl<'s> Reader<'s> {
    /// One session on thread `agent`: its messages, a `task` call's child inline before the
    /// call's result, and children no call links to after the session's last message.
    fn session(
        &mut self,
        b: &mut Builder,
        row: &SessionRow,
        agent: &str,
    ) -> Result<(), ParseError> {
        self.visited.insert(row.id.clone());
        let messages = self.store.messages(&row.id, b, self.policy)?;
        let copied: Vec<bool> = messages
            .iter()
            .map(|m| m.created().is_some_and(|t| t < row.created))
            .collect();
        if let Some(first) = messages.iter().zip(&copied).find(|(_, c)| **c) {
            let earlier: Vec<&SessionRow> = self
                .all
                .iter()
                .filter(|s| s.created < row.created && s.id != row.id)
                .collect();
            let from = first
                .0
                .created()
                .and_then(|t| self.store.copied_from(t, &earlier))
                .unwrap_or_default();
            b.stats.copied = Some(Copied {
                from,
                ..Copied::default()
            });
        }
        let children: Vec<&SessionRow> = self
            .all
            .iter()
            .filter(|s| s.parent.as_deref() == Some(row.id.as_str()))
            .collect();
        {
            let mut session = Session::new(b, agent, self.policy);
            let mut inline = |b: &mut Builder, id: &str| -> Result<bool, ParseError> {
                let Some(child) = children.iter().find(|c| c.id == id) else {
                    return Ok(false);
                };
                if self.visited.contains(id) {
                    return Ok(false);
                }
                self.session(b, child, &format!("subagent:{id}"))?;
                Ok(true)
            };
            let inline: &mut Children<'_> = &mut inline;
            for (m, copied) in messages.iter().zip(copied) {
                session.message(m, copied, inline)?;
            }
        }
        for child in children {
            if !self.visited.contains(&child.id) {
                self.session(b, child, &format!("subagent:{}", child.id))?;
            }
        }
        Ok(())
    }
}

/// Why a file or folder close to an OpenCode store is not read as one.
pub const LOOK_ALIKE_DATABASE: &str = "an SQLite database with `session` and `message` \
    tables, but not OpenCode's columns (`session.id`, `session.time_created`, `message.id`, \
    `message.session_id`, `message.data`, and a `part` table with `message_id` and `data`)";

pub const LOOK_ALIKE_STORAGE: &str = "a folder with `session/` and `message/` folders, but no \
    OpenCode session file in `session/<project>/` (a JSON object with a string `id` and a \
    numeric `time.created`)";

/// A judgement from whether a store has OpenCode's shape (`Match`), only the outline of one
/// (`LookAlike`), or nothing of it.
fn judged(outline: bool, shape: bool, why: &str) -> Sniffed {
    match (outline, shape) {
        (_, true) => Sniffed::Match,
        (true, false) => Sniffed::LookAlike(why.into()),
        (false, false) => Sniffed::No,
    }
}
