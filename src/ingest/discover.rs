//! Finding projects and their runs under the paths the user gave.
//!
//! `.omnius/` directories are projects whose runs are sessions, ordered by the
//! epoch-millisecond prefix of their id (issue #2, "Input format") so cross-session carry
//! flows forward in time. Other formats are files recognised by structure
//! ([`super::formats::detect`]): session logs group by directory (a Claude Code project
//! folder), ordered by their first timestamp; trajectory files are a project each.

use super::files::{open_regular, Limits};
use super::formats::{detect, InputFormat};
use super::lines::LineReader;
use glob::Pattern;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One project: a directory holding `.omnius/`, a folder of session logs, or one
/// trajectory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectSource {
    /// The project as the user would name it (input-relative, `/`-separated).
    pub name: String,
    /// Where its runs live: the `.omnius` directory, or the folder holding the files.
    /// Nothing is ever written below it.
    pub root: PathBuf,
    pub format: InputFormat,
    pub runs: Vec<RunSource>,
    /// The size caps its files are read with.
    pub limits: Limits,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSource {
    pub run_id: String,
    /// The run's directory (`.omnius`) or file (other formats).
    pub path: PathBuf,
    pub format: InputFormat,
    /// The size caps its files are read with.
    pub limits: Limits,
}

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{0}: no such file or directory")]
    Missing(String),
    #[error("{path}: cannot read: {message}")]
    Io { path: String, message: String },
}

/// Every project under `paths`, sorted by name, each listed once; files of other formats
/// are recognised by structure.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<ProjectSource>, DiscoverError> {
    discover_as(paths, None)
}

/// As [`discover`], with every candidate file read as `forced` when given.
pub fn discover_as(
    paths: &[PathBuf],
    forced: Option<InputFormat>,
) -> Result<Vec<ProjectSource>, DiscoverError> {
    discover_with(paths, forced, Limits::default())
}

/// As [`discover_as`], the runs to be read with the size caps `limits`.
pub fn discover_with(
    paths: &[PathBuf],
    forced: Option<InputFormat>,
    limits: Limits,
) -> Result<Vec<ProjectSource>, DiscoverError> {
    let mut projects = omnius_projects(paths, limits)?;
    if forced != Some(InputFormat::Omnius) {
        projects.extend(file_projects(paths, forced, limits)?);
    }
    projects.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(projects)
}

fn omnius_projects(paths: &[PathBuf], limits: Limits) -> Result<Vec<ProjectSource>, DiscoverError> {
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
        let runs = runs_of(&omnius, limits)?;
        projects.push(ProjectSource {
            name,
            root: omnius,
            format: InputFormat::Omnius,
            runs,
            limits,
        });
    }
    Ok(projects)
}

/// Directories never searched for recorded runs: `.omnius` has its own reader, the rest
/// are build output and dependencies.
const SKIPPED_DIRS: [&str; 5] = [".omnius", ".git", "target", "node_modules", ".venv"];

/// Candidate files below `path` (or `path` itself), in sorted order.
fn candidate_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "jsonl" | "json" | "traj") {
            out.push(path.to_path_buf());
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    let mut children: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    children.sort();
    for child in children {
        let skipped = child.is_dir()
            && child
                .file_name()
                .is_some_and(|n| SKIPPED_DIRS.iter().any(|s| n == *s));
        if !skipped {
            candidate_files(&child, out);
        }
    }
}

fn file_projects(
    paths: &[PathBuf],
    forced: Option<InputFormat>,
    limits: Limits,
) -> Result<Vec<ProjectSource>, DiscoverError> {
    let mut files = Vec::new();
    for path in paths {
        candidate_files(path, &mut files);
    }
    files.sort();
    files.dedup();
    // Session logs: one project per folder. Trajectories: one project per file.
    let mut sessions: BTreeMap<(PathBuf, InputFormat), Vec<(String, RunSource)>> = BTreeMap::new();
    let mut projects = Vec::new();
    for file in files {
        let Some(format) = forced.or_else(|| detect(&file)) else {
            continue;
        };
        let stem = run_stem(&file);
        let run = RunSource {
            run_id: stem.clone(),
            path: file.clone(),
            format,
            limits,
        };
        let folder = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        if format.is_session_log() {
            let order = first_timestamp(&file, &limits).unwrap_or_default();
            sessions
                .entry((folder, format))
                .or_default()
                .push((order, run));
        } else {
            projects.push(ProjectSource {
                name: display(&folder.join(&stem)),
                root: folder,
                format,
                runs: vec![run],
                limits,
            });
        }
    }
    for ((folder, format), mut runs) in sessions {
        runs.sort_by(|a, b| (&a.0, &a.1.run_id).cmp(&(&b.0, &b.1.run_id)));
        let name = display(&folder);
        projects.push(ProjectSource {
            name: if name.is_empty() { ".".into() } else { name },
            root: folder,
            format,
            runs: runs.into_iter().map(|(_, r)| r).collect(),
            limits,
        });
    }
    Ok(projects)
}

/// A run id from a file name: without `.jsonl`, `.json`, `.traj` (and `.traj.json`).
fn run_stem(file: &Path) -> String {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = name.as_str();
    for ext in [".jsonl", ".json", ".traj"] {
        stem = stem.strip_suffix(ext).unwrap_or(stem);
    }
    stem.to_string()
}

/// The first `"timestamp"` string in a session log's first 16 lines, for ordering
/// sessions (lines over the cap are passed over).
fn first_timestamp(file: &Path, limits: &Limits) -> Option<String> {
    let (file, _) = open_regular(file, "").ok()?;
    let mut lines = LineReader::new(std::io::BufReader::new(file), limits.max_line);
    for _ in 0..16 {
        let line = lines.next_line()?.ok()?;
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(line.bytes) else {
            continue;
        };
        if let Some(t) = v.get("timestamp").and_then(|t| t.as_str()) {
            return Some(t.to_string());
        }
    }
    None
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
fn runs_of(omnius: &Path, limits: Limits) -> Result<Vec<RunSource>, DiscoverError> {
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
            path: e.path(),
            format: InputFormat::Omnius,
            limits,
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
