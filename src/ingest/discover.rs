//! Finding `.omnius/` projects and their runs under the paths the user gave.
//!
//! Runs of one project are sessions, ordered by the epoch-millisecond prefix of their
//! id (issue #2, "Input format") so cross-session carry flows forward in time.

use glob::Pattern;
use std::path::{Path, PathBuf};

/// One project: a directory holding `.omnius/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectSource {
    /// The project directory as the user would name it (input-relative, `/`-separated).
    pub name: String,
    pub omnius: PathBuf,
    pub runs: Vec<RunSource>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSource {
    pub run_id: String,
    pub dir: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{0}: no such file or directory")]
    Missing(String),
    #[error("{path}: cannot read: {message}")]
    Io { path: String, message: String },
}

/// Every project under `paths`, sorted by name, each listed once.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<ProjectSource>, DiscoverError> {
    let mut found: Vec<(PathBuf, String)> = Vec::new();
    for path in paths {
        if !path.exists() {
            return Err(DiscoverError::Missing(display(path)));
        }
        for omnius in omnius_dirs(path)? {
            let project_dir = omnius.parent().unwrap_or(Path::new("."));
            let name = display(project_dir);
            found.push((omnius, if name.is_empty() { ".".into() } else { name }));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut projects = Vec::new();
    for (omnius, name) in found {
        let key = omnius.canonicalize().unwrap_or_else(|_| omnius.clone());
        if !seen.insert(key) {
            continue;
        }
        let runs = runs_of(&omnius)?;
        projects.push(ProjectSource { name, omnius, runs });
    }
    projects.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(projects)
}

/// `path` itself if it is a `.omnius` directory, else every `.omnius` directory below it.
fn omnius_dirs(path: &Path) -> Result<Vec<PathBuf>, DiscoverError> {
    if path.file_name().is_some_and(|n| n == ".omnius") && path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let root = Pattern::escape(&path.to_string_lossy());
    let mut dirs: Vec<PathBuf> = Vec::new();
    for pattern in [format!("{root}/.omnius"), format!("{root}/**/.omnius")] {
        let entries = glob::glob(&pattern).map_err(|e| DiscoverError::Io {
            path: display(path),
            message: e.to_string(),
        })?;
        // Unreadable subdirectories are skipped here and surface as run-level problems.
        dirs.extend(entries.filter_map(Result::ok).filter(|p| p.is_dir()));
    }
    dirs.sort();
    dirs.dedup();
    Ok(dirs)
}

/// The run directories of a project, oldest session first.
fn runs_of(omnius: &Path) -> Result<Vec<RunSource>, DiscoverError> {
    let runs_dir = omnius.join("runs");
    if !runs_dir.is_dir() {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(&runs_dir).map_err(|e| DiscoverError::Io {
        path: display(&runs_dir),
        message: e.to_string(),
    })?;
    let mut runs: Vec<RunSource> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| RunSource {
            run_id: e.file_name().to_string_lossy().into_owned(),
            dir: e.path(),
        })
        .collect();
    runs.sort_by_key(|r| session_order(&r.run_id));
    Ok(runs)
}

/// Sort key of a run id: its leading epoch milliseconds, then the id itself.
pub fn session_order(run_id: &str) -> (u64, String) {
    let digits: String = run_id.chars().take_while(char::is_ascii_digit).collect();
    (digits.parse().unwrap_or(u64::MAX), run_id.to_string())
}

/// A path as shown in reports: `/`-separated, without a leading `./`.
pub fn display(path: &Path) -> String {
    let s = path.to_string_lossy().replace('\\', "/");
    let s = s.strip_prefix("./").unwrap_or(&s).trim_end_matches('/');
    s.to_string()
}
