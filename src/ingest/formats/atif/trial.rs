//! Harbor trial folders (`<job>/<task>__<id>/{config.json, result.json, agent/...}`): an
//! ATIF trajectory in a trial's `agent/` folder is the trial's run, named after the trial;
//! the agent's native log beside it is the same run in the agent's own format, so it is not
//! replayed again (issue #30, item 2).

use super::super::InputFormat;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The files Harbor writes at a trial folder's top, one of which names the trial.
const TRIAL_FILES: [&str; 2] = ["result.json", "config.json"];

/// The biggest trial file read to tell a trial folder (Harbor's are a few KiB).
const MAX_TRIAL_FILE: u64 = 4 << 20;

/// The Harbor trial an ATIF trajectory is the run of: the folder above its own, when
/// that folder holds a trial's `result.json` or `config.json` (an object with a string
/// `trial_name`).
pub fn trial_of(trajectory: &Path) -> Option<PathBuf> {
    let trial = trajectory.parent()?.parent()?;
    let names_trial = |file: &str| {
        let path = trial.join(file);
        let small = std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_TRIAL_FILE);
        small
            && crate::ingest::files::read_named_file(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .is_some_and(|v| v.get("trial_name").is_some_and(|n| n.is_string()))
    };
    TRIAL_FILES
        .iter()
        .any(|f| names_trial(f))
        .then(|| trial.to_path_buf())
}

/// Where the ATIF trajectories among `found` stand for their agents' native logs: each
/// trial folder of a trial's trajectory (anything under it), and the folder of a
/// trajectory outside a trial (a converted log kept beside its source; that folder only).
pub struct NativeScopes(Vec<(PathBuf, bool)>);

impl NativeScopes {
    pub fn of(found: &[(PathBuf, InputFormat)]) -> Self {
        Self(
            found
                .iter()
                .filter(|(_, f)| *f == InputFormat::Atif)
                .filter_map(|(file, _)| match trial_of(file) {
                    Some(trial) => Some((trial, true)),
                    None => Some((file.parent()?.to_path_buf(), false)),
                })
                .collect(),
        )
    }

    /// Whether `file` (not itself an ATIF trajectory) is a native log an ATIF trajectory
    /// already is.
    pub fn covers(&self, file: &Path) -> bool {
        self.0.iter().any(|(scope, deep)| match deep {
            true => file.starts_with(scope),
            false => file.parent() == Some(scope.as_path()),
        })
    }
}

/// The recorded runs of other formats that an ATIF trajectory among `found` already is
/// ([`NativeScopes`]).
pub fn native_logs(found: &[(PathBuf, InputFormat)]) -> BTreeSet<PathBuf> {
    let scopes = NativeScopes::of(found);
    found
        .iter()
        .filter(|(file, f)| *f != InputFormat::Atif && scopes.covers(file))
        .map(|(file, _)| file.clone())
        .collect()
}
