//! The branch of a pi session that is replayed, read in a first pass over the file.
//!
//! Since session version 2 every entry has an `id` and the `parentId` of the entry it
//! follows: one file holds a tree, and `/tree` (or `branch()`) continues the session from
//! an earlier entry, leaving the entries after it on a branch of their own. pi appends
//! each entry as a child of the current position, so the last entry of the file is where
//! the session ended: the replayed branch is the path from the root to that entry, and
//! every entry off it belongs to a branch the session left.

use crate::ingest::lines::LineReader;
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::io::BufRead;

/// What the first pass reads of an entry: nothing but its place in the tree.
#[derive(Deserialize)]
struct Link {
    #[serde(rename = "type")]
    kind: Option<String>,
    id: Option<String>,
    #[serde(rename = "parentId")]
    parent: Option<String>,
}

/// The ids of the entries on the path from the root to the file's last entry, when some
/// entries are off it. `None` when every entry is replayed in file order: a file whose
/// entries have no ids (version 1), a tree with no branch, or a path that cannot be
/// followed to a root (a parent not in the file, as when its line is damaged, or a loop).
/// Lines that do not parse are passed over here; the second pass reports them.
pub(super) fn replayed_branch<R: BufRead>(lines: &mut LineReader<R>) -> Option<HashSet<String>> {
    let mut parent_of: HashMap<String, Option<String>> = HashMap::new();
    let mut last = None;
    while let Some(Ok(line)) = lines.next_line() {
        if line.too_long {
            continue;
        }
        let Ok(link) = serde_json::from_slice::<Link>(line.bytes) else {
            continue;
        };
        if link.kind.as_deref() == Some("session") {
            continue;
        }
        // An entry without an id: a version 1 file, no tree.
        let id = link.id?;
        parent_of.insert(id.clone(), link.parent);
        last = Some(id);
    }
    let mut path = HashSet::new();
    let mut at = last?;
    loop {
        if !path.insert(at.clone()) {
            return None;
        }
        match parent_of.get(&at)? {
            None => break,
            Some(parent) => at = parent.clone(),
        }
    }
    (path.len() < parent_of.len()).then_some(path)
}
