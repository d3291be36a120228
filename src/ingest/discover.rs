//! Finding projects and their runs under the paths the user gave.
//!
//! `.omnius/` directories are projects whose runs are sessions, ordered by the
//! epoch-millisecond prefix of their id (issue #2, "Input format") so cross-session carry
//! flows forward in time. Other formats are files recognised by structure
//! ([`super::formats::detect`]): session logs group by directory (a Claude Code project
//! folder), ordered by their first timestamp; trajectory files are a project each.
//!
//! The walk ([`super::walk`]) visits each directory once. What cannot be read is not
//! dropped: every such path is a located problem in [`Discovery::problems`], and the rest
//! is still found (issue #11).

use super::error::{ParseError, ProblemKind};
use super::files::{io_problem, kind_name, open_regular, problem, Limits};
use super::formats::{
    atif, codex, detect_file, gemini_cli, opencode, openhands, Detected, InputFormat, Sniffed,
};
use super::lines::{LineAt, LineReader};
use super::walk::walk;
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
    /// Where in `path` the run is, when `path` holds several.
    pub within: Within,
    /// Replayed but not reported: the project's other sessions when one run folder of it
    /// is given as a path, replayed for what they carry into it (issue #32, L).
    pub unreported: bool,
}

impl RunSource {
    /// The file a reader opens to see the run, and the line the run is on when the file
    /// holds one run per line (an OpenHands evaluation output): an `.omnius` run's
    /// `events.jsonl`, else the run's own file (an OpenCode store, database or storage
    /// folder, for each of its sessions). The path is as discovered: relative when the
    /// path given was.
    pub fn log(&self) -> (PathBuf, Option<u64>) {
        match &self.within {
            _ if self.format == InputFormat::Omnius => (self.path.join("events.jsonl"), None),
            Within::Line(at) => (self.path.clone(), Some(at.number)),
            Within::Whole | Within::Session(_) => (self.path.clone(), None),
        }
    }
}

/// Where in its file or folder a run is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Within {
    /// The whole file or directory.
    #[default]
    Whole,
    /// One line: the file holds one run per line (an OpenHands evaluation output).
    Line(LineAt),
    /// One root session of a store that holds many (an OpenCode database or storage
    /// folder), by id.
    Session(String),
}

/// A file that looks like a recorded run of some format but lacks its distinctive
/// structure (docs/FORMAT.md, *Detection and grouping*): it is not read, and it is listed
/// (`input.skipped_files`) and warned about, never passed over in silence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SkippedFile {
    pub path: String,
    /// The format it resembles (`--input-format` reads it as that format anyway).
    pub format: String,
    pub reason: String,
}

#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    #[error("{0}: no such file or directory")]
    Missing(String),
    /// A path that could not be read, from the functions that stop on the first one.
    #[error(transparent)]
    Unreadable(#[from] ParseError),
}

/// What discovery found: the projects, and every path it could not read.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// Sorted by name, each listed once.
    pub projects: Vec<ProjectSource>,
    /// Paths skipped because they could not be read, in the order found.
    pub problems: Vec<ParseError>,
    /// Look-alike files, not read, in path order.
    pub skipped_files: Vec<SkippedFile>,
    /// JSON Lines files no format claims, not read, in path order (issue #30, item 7);
    /// `format` is the nearest format, or `none`.
    pub unrecognised: Vec<SkippedFile>,
}

/// Every project under `paths`, sorted by name, each listed once; files of other formats
/// are recognised by structure. A path that cannot be read is an error here;
/// [`discover_with`] hands such paths back with what was found.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<ProjectSource>, DiscoverError> {
    discover_as(paths, None)
}

/// As [`discover`], with every candidate file read as `forced` when given.
pub fn discover_as(
    paths: &[PathBuf],
    forced: Option<InputFormat>,
) -> Result<Vec<ProjectSource>, DiscoverError> {
    let found = discover_with(paths, forced, Limits::default())?;
    match found.problems.into_iter().next() {
        Some(problem) => Err(DiscoverError::Unreadable(problem)),
        None => Ok(found.projects),
    }
}

/// Every project under `paths` and every path that could not be read. Only a path given
/// that does not exist is an error.
pub fn discover_with(
    paths: &[PathBuf],
    forced: Option<InputFormat>,
    limits: Limits,
) -> Result<Discovery, DiscoverError> {
    let files = forced != Some(InputFormat::Omnius);
    let walked = walk(paths, files)?;
    let mut problems = walked.problems;
    let (mut skipped_files, mut unrecognised) = (Vec::new(), Vec::new());
    let mut projects = omnius_projects(walked.omnius, limits, &mut problems);
    if files {
        let mut found = Found {
            problems: &mut problems,
            skipped_files: &mut skipped_files,
            unrecognised: &mut unrecognised,
        };
        projects.extend(file_projects(
            walked.files,
            walked.stores,
            forced,
            limits,
            &mut found,
        ));
    }
    projects.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Discovery {
        projects,
        problems,
        skipped_files,
        unrecognised,
    })
}

fn omnius_projects(
    dirs: Vec<PathBuf>,
    limits: Limits,
    problems: &mut Vec<ParseError>,
) -> Vec<ProjectSource> {
    dirs.into_iter()
        .map(|omnius| {
            let project_dir = omnius.parent().unwrap_or(Path::new("."));
            let name = display(project_dir);
            let runs = runs_of(&omnius, limits, problems);
            ProjectSource {
                name: if name.is_empty() { ".".into() } else { name },
                root: omnius,
                format: InputFormat::Omnius,
                runs,
                limits,
            }
        })
        .collect()
}

/// The sessions of one project: the folder of its first file, and its runs by first
/// timestamp.
type SessionGroup = (PathBuf, Vec<(String, RunSource)>);

/// What the search of candidate files hands back besides projects.
struct Found<'a> {
    problems: &'a mut Vec<ParseError>,
    skipped_files: &'a mut Vec<SkippedFile>,
    unrecognised: &'a mut Vec<SkippedFile>,
}

fn file_projects(
    mut files: Vec<PathBuf>,
    stores: Vec<PathBuf>,
    forced: Option<InputFormat>,
    limits: Limits,
    found: &mut Found<'_>,
) -> Vec<ProjectSource> {
    files.sort();
    files.dedup();
    let mut detected = detect_all(files, forced, limits, found);
    detected.extend(judge_stores(stores, forced, limits, found));
    // A Harbor trial's native log is the run its ATIF trajectory already is, also when it is
    // in a format hindsight does not read (it is then not listed as unrecognised either).
    let native = atif::trial::native_logs(&detected);
    let scopes = atif::trial::NativeScopes::of(&detected);
    found
        .unrecognised
        .retain(|f| !scopes.covers(Path::new(&f.path)));
    // Session logs: one project per folder. Trajectories: one project per file, and one per
    // instance of an evaluation output; an ATIF trajectory of a Harbor trial, one per trial.
    let mut sessions: BTreeMap<(String, InputFormat), SessionGroup> = BTreeMap::new();
    let mut projects = Vec::new();
    let (stored, detected): (Vec<_>, Vec<_>) = detected
        .into_iter()
        .filter(|(file, _)| !native.contains(file))
        .partition(|(_, format)| *format == InputFormat::OpenCode);
    for (name, order, run) in opencode_runs(stored, limits, found) {
        let folder = run.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        sessions
            .entry((name, InputFormat::OpenCode))
            .or_insert_with(|| (folder, Vec::new()))
            .1
            .push((order, run));
    }
    for (file, format) in detected {
        let stem = run_stem(&file);
        let folder = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        if format == InputFormat::Openhands {
            match openhands::instances(&file, &limits) {
                Ok(Some(instances)) => {
                    let name = display(&folder.join(&stem));
                    projects.extend(
                        instances.runs.into_iter().map(|instance| {
                            instance_project(&name, &folder, &file, instance, limits)
                        }),
                    );
                    found.problems.extend(instances.problems);
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    found.problems.push(e);
                    continue;
                }
            }
        }
        let trial = (format == InputFormat::Atif)
            .then(|| atif::trial::trial_of(&file))
            .flatten();
        if let Some(trial) = trial {
            projects.push(trial_project(trial, file, limits));
            continue;
        }
        // A Claude Code sub-agent's transcript is named under its session (`<S>/<agent>`).
        let owner = (format == InputFormat::ClaudeCode)
            .then(|| subagents_session(&folder))
            .flatten();
        let run = RunSource {
            run_id: match &owner {
                Some((_, session)) => format!("{session}/{stem}"),
                None => stem.clone(),
            },
            path: file.clone(),
            format,
            limits,
            within: Within::Whole,
            unreported: false,
        };
        if format.is_session_log() {
            let order = match format {
                InputFormat::GeminiCli => gemini_cli::recorded(&file, "startTime"),
                _ => first_timestamp(&file, &limits),
            }
            .unwrap_or_default();
            sessions
                .entry((session_group(&file, &folder, format, &limits), format))
                .or_insert_with(|| (folder, Vec::new()))
                .1
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
    for ((name, format), (folder, mut runs)) in sessions {
        runs.sort_by(|a, b| (&a.0, &a.1.run_id).cmp(&(&b.0, &b.1.run_id)));
        projects.push(ProjectSource {
            name: if name.is_empty() { ".".into() } else { name },
            root: folder,
            format,
            runs: runs.into_iter().map(|(_, r)| r).collect(),
            limits,
        });
    }
    projects
}

/// The project a session log belongs to, by name: its folder, except for a Codex rollout
/// that records its `cwd` (Codex files sessions by date, not by project), which joins the
/// other rollouts of that `cwd`, wherever they are filed; a Gemini CLI chat, which joins
/// its `projectHash`; and a Claude Code sub-agent transcript, which joins its session's
/// project ([`subagents_session`]).
fn session_group(file: &Path, folder: &Path, format: InputFormat, limits: &Limits) -> String {
    let recorded = match format {
        InputFormat::ClaudeCode => subagents_session(folder).map(|(project, _)| display(&project)),
        InputFormat::Codex => codex::recorded_cwd(file, limits).map(|cwd| format!("codex:{cwd}")),
        InputFormat::GeminiCli => {
            gemini_cli::recorded(file, "projectHash").map(|hash| format!("gemini-cli:{hash}"))
        }
        _ => None,
    };
    recorded.unwrap_or_else(|| display(folder))
}

/// A Claude Code session's sub-agents folder (`<project>/<session>/subagents/`, beside
/// `<project>/<session>.jsonl`, as Claude Code 2.1 writes it): the project folder and the
/// session's name. Its transcripts belong to that session's project, so the project's
/// cost includes its sub-agents (issue #30, item 6), instead of being a project apart.
fn subagents_session(folder: &Path) -> Option<(PathBuf, String)> {
    if folder.file_name()? != "subagents" {
        return None;
    }
    let session_dir = folder.parent()?;
    let session = session_dir.file_name()?.to_str()?.to_string();
    let project = session_dir.parent()?;
    project
        .join(format!("{session}.jsonl"))
        .is_file()
        .then(|| (project.to_path_buf(), session))
}

/// The folders with an OpenCode storage's outline that hold its sessions (all of them
/// under `--input-format opencode`, none under another format); a look-alike (no session
/// file) is handed back in `found`.
fn judge_stores(
    stores: Vec<PathBuf>,
    forced: Option<InputFormat>,
    limits: Limits,
    found: &mut Found<'_>,
) -> Vec<(PathBuf, InputFormat)> {
    let mut kept = Vec::new();
    for store in stores {
        match (forced, opencode::judge_storage(&store, &limits)) {
            (Some(InputFormat::OpenCode), _) | (None, Sniffed::Match) => {
                kept.push((store, InputFormat::OpenCode))
            }
            (None, Sniffed::LookAlike(reason)) => found.skipped_files.push(SkippedFile {
                path: display(&store),
                format: InputFormat::OpenCode.as_str().to_string(),
                reason,
            }),
            _ => {}
        }
    }
    kept
}

/// The runs of the OpenCode stores found (databases and storage folders): each root
/// session, in the project `opencode:<worktree>`, ordered by its creation time. A session
/// both a database and a storage folder hold (OpenCode copies its storage into the database
/// once, and leaves the folder) is read from the database.
fn opencode_runs(
    stores: Vec<(PathBuf, InputFormat)>,
    limits: Limits,
    found: &mut Found<'_>,
) -> Vec<(String, String, RunSource)> {
    let mut listed = Vec::new();
    for (store, _) in stores {
        match opencode::sessions(&store, &limits, found.problems) {
            Ok(sessions) => listed.extend(
                sessions
                    .into_iter()
                    .map(|s| (store.is_dir(), store.clone(), s)),
            ),
            Err(e) => found.problems.push(e),
        }
    }
    let in_databases: std::collections::HashSet<String> = listed
        .iter()
        .filter(|(folder, _, _)| !folder)
        .map(|(_, _, s)| s.id.clone())
        .collect();
    listed
        .into_iter()
        .filter(|(folder, _, s)| !(*folder && in_databases.contains(&s.id)))
        .map(|(_, store, s)| {
            let run = RunSource {
                run_id: s.id.clone(),
                path: store,
                format: InputFormat::OpenCode,
                limits,
                within: Within::Session(s.id),
                unreported: false,
            };
            (s.project, format!("{:020}", s.created), run)
        })
        .collect()
}

/// The format of each candidate file (`forced`, else detected); look-alikes and files that
/// cannot be judged are handed back in `found`.
fn detect_all(
    files: Vec<PathBuf>,
    forced: Option<InputFormat>,
    limits: Limits,
    found: &mut Found<'_>,
) -> Vec<(PathBuf, InputFormat)> {
    let mut detected = Vec::new();
    for file in files {
        let database = file.extension().is_some_and(|x| x == "db");
        let judged = match forced {
            // A database is only ever an OpenCode store: no other format reads one.
            Some(format) if database && format != InputFormat::OpenCode => continue,
            Some(format) => Ok(Detected::Format(format)),
            None => detect_file(&file, &limits),
        };
        match judged {
            Ok(Detected::Format(format)) => detected.push((file, format)),
            Ok(Detected::Other) => {}
            Ok(Detected::LookAlike { format, reason }) => {
                found.skipped_files.push(SkippedFile {
                    path: display(&file),
                    format: format.as_str().to_string(),
                    reason,
                });
            }
            Ok(Detected::Unrecognised { nearest, reason }) => {
                found.unrecognised.push(SkippedFile {
                    path: display(&file),
                    format: nearest.map_or("none", InputFormat::as_str).to_string(),
                    reason,
                });
            }
            Err(e) => found.problems.push(e),
        }
    }
    detected
}

/// A Harbor trial whose run is the ATIF trajectory `file`: a project named by the trial
/// folder (`<job>/<task>__<id>`), whose one run is named by the folder's own name.
fn trial_project(trial: PathBuf, file: PathBuf, limits: Limits) -> ProjectSource {
    let run_id = trial
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| run_stem(&file));
    ProjectSource {
        name: display(&trial),
        root: trial,
        format: InputFormat::Atif,
        runs: vec![RunSource {
            run_id,
            path: file,
            format: InputFormat::Atif,
            limits,
            within: Within::Whole,
            unreported: false,
        }],
        limits,
    }
}

/// One instance of an evaluation output: a project of its own, named
/// `<file without extension>/<instance id>`, whose one run is named by the instance id.
/// Instances are separate tasks, so no guard state carries from one to the next.
fn instance_project(
    name: &str,
    folder: &Path,
    file: &Path,
    instance: openhands::Instance,
    limits: Limits,
) -> ProjectSource {
    ProjectSource {
        name: format!("{name}/{}", instance.id),
        root: folder.to_path_buf(),
        format: InputFormat::Openhands,
        runs: vec![RunSource {
            run_id: instance.id,
            path: file.to_path_buf(),
            format: InputFormat::Openhands,
            limits,
            within: Within::Line(instance.at),
            unreported: false,
        }],
        limits,
    }
}

/// The `.omnius` directory of a run folder, `<project>/.omnius/runs/<id>` holding
/// `events.jsonl` (docs/FORMAT.md, *Layout*); `None` for any other path. Discovery looks
/// for `.omnius` directories, so a command given a run folder hands this on instead.
pub fn omnius_of_run(path: &Path) -> Option<PathBuf> {
    if !path.join("events.jsonl").is_file() {
        return None;
    }
    let runs = path.parent()?;
    let omnius = runs.parent()?;
    let named = |p: &Path, name: &str| p.file_name().is_some_and(|n| n == name);
    (named(runs, "runs") && named(omnius, ".omnius")).then(|| omnius.to_path_buf())
}

/// The run directories of a project, oldest session first. A `runs` that is there but
/// cannot be listed, and a run link that cannot be followed, are problems; a project
/// without `runs/` has no runs.
fn runs_of(omnius: &Path, limits: Limits, problems: &mut Vec<ParseError>) -> Vec<RunSource> {
    let runs_dir = omnius.join("runs");
    let shown = display(&runs_dir);
    // A `.omnius` that cannot be searched hides whether `runs` is there: that is a problem.
    match std::fs::symlink_metadata(&runs_dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            problems.push(io_problem(&runs_dir, &shown, &e));
            return Vec::new();
        }
        Ok(_) => {}
    }
    let entries = match std::fs::metadata(&runs_dir) {
        Ok(meta) if !meta.is_dir() => {
            let kind = ProblemKind::NotADirectory(kind_name(meta.file_type()));
            problems.push(problem(&shown, kind));
            return Vec::new();
        }
        Ok(_) => std::fs::read_dir(&runs_dir),
        Err(e) => Err(e),
    };
    let entries = match entries {
        Ok(entries) => entries,
        Err(e) => {
            problems.push(io_problem(&runs_dir, &shown, &e));
            return Vec::new();
        }
    };
    let mut runs = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                problems.push(problem(&shown, ProblemKind::Io(e.to_string())));
                continue;
            }
        };
        let path = entry.path();
        match std::fs::metadata(&path) {
            // Other files there are not runs.
            Ok(meta) if !meta.is_dir() => {}
            Ok(_) => runs.push(RunSource {
                run_id: entry.file_name().to_string_lossy().into_owned(),
                path,
                format: InputFormat::Omnius,
                limits,
                within: Within::Whole,
                unreported: false,
            }),
            Err(e) => problems.push(io_problem(&path, &display(&path), &e)),
        }
    }
    runs.sort_by_key(|r| session_order(&r.run_id));
    runs
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

/// Sort key of a run id: its leading epoch milliseconds, then the id itself.
pub fn session_order(run_id: &str) -> (u64, String) {
    let digits: String = run_id.chars().take_while(char::is_ascii_digit).collect();
    (digits.parse().unwrap_or(u64::MAX), run_id.to_string())
}

/// A path as shown in reports: `/`-separated, without a leading `./`. Only where `\` is a
/// separator (Windows) does it become `/`: elsewhere it is a character a folder's name may
/// hold, and `back\slash` is not the folder `slash` in `back` (issue #32, K).
pub fn display(path: &Path) -> String {
    let s = path.to_string_lossy();
    let s = if std::path::MAIN_SEPARATOR == '\\' {
        s.replace('\\', "/")
    } else {
        s.into_owned()
    };
    let s = s.strip_prefix("./").unwrap_or(&s).trim_end_matches('/');
    s.to_string()
}
