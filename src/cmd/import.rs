//! `hindsight import`: any supported input written as `.omnius/` trees (docs/FORMAT.md),
//! so runs from other harnesses can be read, trimmed and committed as fixtures.
//!
//! Each project gets a folder of its own under `--out` (no two projects ever share one),
//! and a folder an earlier import filled is never written into again, only replaced whole
//! with `--replace`, so runs, frames and ledgers of two imports never mix.

use super::input::{warn_skipped, Input};
use super::EXIT_OK;
use crate::ingest::{display, load_run, InputFormat, Policy, Problems, ProjectSource};
use crate::output::Entry;
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight import ~/.claude/projects/my-app --out fixtures/\n  \
    hindsight import trajectories/ --out imported/ --input-format mini-swe-agent\n  \
    hindsight import trajectories/ --out imported/ --replace\n\n\
    Each project becomes <OUT>/<folder>/.omnius/runs/<runId>/, and the command prints which \
    folder each project went to. <folder> is the project's path with its parts joined by \
    '-' (a/b-c becomes a-b-c). When several projects get the same folder (a-b/c and a/b-c, \
    or t/foo.traj and t/foo.json), they are ordered by the path they were read from: the \
    first keeps it, the others get -2, -3, ... (the first number no other folder uses; \
    names are compared without case).\n\n\
    A folder that exists and is not empty (or is a link) is refused, so an earlier import's \
    runs never mix with this one's. --replace removes it first, but only a folder that \
    holds nothing but .omnius/ (what import writes), or the link alone; a folder with \
    anything else in it is refused even then."
)]
// Import writes the recordings as they are and replays no guard: the replaying flags are
// not its own, so they are neither shown nor accepted (`run` refuses them).
#[command(
    mut_arg("config", |a| a.hide(true)),
    mut_arg("set", |a| a.hide(true)),
    mut_arg("prices", |a| a.hide(true)),
    mut_arg("guards", |a| a.hide(true)),
    mut_arg("guard_timeout", |a| a.hide(true)),
    mut_arg("lenient_guards", |a| a.hide(true))
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// The folder to write the `.omnius/` trees into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace project folders an earlier import wrote (ones holding only `.omnius/`)
    /// instead of refusing them.
    #[arg(long)]
    pub replace: bool,
}

pub fn run(args: Args) -> Result<u8> {
    let i = &args.input;
    let replaying = [
        ("--config", i.config.is_some()),
        ("--set", !i.set.is_empty()),
        ("--prices", i.prices.is_some()),
        ("--guard", !i.external.guards.is_empty()),
        ("--guard-timeout", i.external.guard_timeout.is_some()),
        ("--lenient-guards", i.lenient_guards),
    ];
    if let Some((flag, _)) = replaying.iter().find(|(_, given)| *given) {
        bail!("import replays no guard: {flag} is a flag of the replaying commands");
    }
    let projects = args.input.projects()?;
    if projects.is_empty() {
        bail!("no recorded runs found under the given paths");
    }
    let guard = args.input.guard(&projects, &[]);
    guard.check(&args.out)?;
    let targets: Vec<PathBuf> = folders(&projects)
        .iter()
        .map(|f| args.out.join(f))
        .collect();
    // Every folder is checked before anything is written.
    for target in &targets {
        guard.check_tree(target, Entry::Replaced)?;
        check_existing(target, args.replace)?;
    }
    guard.create_out_dir(&args.out)?;
    let mut problems = Vec::new();
    for (project, target) in projects.iter().zip(&targets) {
        if args.replace {
            remove(target)?;
        }
        guard.create_dir(target)?;
        write_project(project, target, args.input.policy(), &mut problems)?;
        let n = project.runs.len();
        let runs = if n == 1 { "run" } else { "runs" };
        let (what, target) = (read_from(project), display(target));
        eprintln!("imported {what} ({n} {runs}) into {target}");
    }
    warn_skipped(&problems);
    eprintln!(
        "imported {} runs of {} projects into {}",
        problems.len(),
        projects.len(),
        args.out.display()
    );
    Ok(EXIT_OK)
}

/// Writes the runs of `project` as `<folder>/.omnius/runs/`, keeping what each run's
/// reading skipped in `problems` (one entry per run).
fn write_project(
    project: &ProjectSource,
    folder: &Path,
    policy: Policy,
    problems: &mut Vec<Problems>,
) -> Result<()> {
    let omnius = folder.join(".omnius");
    for (index, source) in project.runs.iter().enumerate() {
        let mut run = load_run(source, policy)?;
        // `.omnius` orders sessions by the number their id starts with; other formats'
        // ids (uuids, instance names) get their session position in front.
        if project.format != InputFormat::Omnius {
            run.run_id = format!("{:04}-{}", index + 1, run.run_id);
        }
        crate::synth::write_loaded(&run, &omnius)
            .with_context(|| format!("{}: cannot write", omnius.display()))?;
        problems.push(run.problems);
    }
    Ok(())
}

/// Each project's folder under `--out`, in project order: its name as one folder name
/// ([`slug`]). Projects that share a folder name (compared without case) are ordered by
/// where they were read from; the first keeps it and the others get `-2`, `-3`, ...: the
/// first number whose name no other project's folder has.
fn folders(projects: &[ProjectSource]) -> Vec<String> {
    let slugs: Vec<String> = projects.iter().map(|p| slug(&p.name)).collect();
    let key = |name: &str| name.to_lowercase();
    let mut taken: BTreeSet<String> = slugs.iter().map(|s| key(s)).collect();
    let mut order: Vec<usize> = (0..projects.len()).collect();
    order.sort_by_key(|&i| (key(&slugs[i]), source(&projects[i]), projects[i].format));
    let mut kept = BTreeSet::new();
    let mut folders = vec![String::new(); projects.len()];
    for i in order {
        let slug = &slugs[i];
        folders[i] = if kept.insert(key(slug)) {
            slug.clone()
        } else {
            let free = (2..)
                .map(|n| format!("{slug}-{n}"))
                .find(|name| !taken.contains(&key(name)))
                .unwrap_or_default();
            taken.insert(key(&free));
            free
        };
    }
    folders
}

/// Where a project was read from: its folder, and for a trajectory the file itself.
fn source(project: &ProjectSource) -> (String, String) {
    let first = project.runs.first().map(|r| display(&r.path));
    (display(&project.root), first.unwrap_or_default())
}

/// A project as the import names it: by name, a trajectory by its file (two trajectories
/// `t/foo.traj` and `t/foo.json` are both named `t/foo`).
fn read_from(project: &ProjectSource) -> String {
    let trajectory = project.format != InputFormat::Omnius && !project.format.is_session_log();
    match project.runs.first() {
        Some(run) if trajectory => display(&run.path),
        _ => project.name.clone(),
    }
}

/// A project name as one folder name: its path's parts joined by `-`.
fn slug(name: &str) -> String {
    let parts: Vec<&str> = name
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    if parts.is_empty() {
        "project".into()
    } else {
        parts.join("-")
    }
}

/// Refuses a project folder that is there already and not empty, unless `replace` and it
/// is one import wrote (a directory holding only `.omnius/`) or a link (removed, never
/// followed).
fn check_existing(folder: &Path, replace: bool) -> Result<()> {
    let shown = display(folder);
    let meta = match fs::symlink_metadata(folder) {
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        other => other.with_context(|| format!("{shown}: cannot read"))?,
    };
    if meta.file_type().is_symlink() {
        if replace {
            return Ok(());
        }
        bail!("{shown}: exists (a symbolic link); refusing to write through it (--replace replaces the link)");
    }
    if !meta.is_dir() {
        bail!("{shown}: exists and is not a directory; refusing to replace it");
    }
    let names: Vec<_> = fs::read_dir(folder)
        .with_context(|| format!("{shown}: cannot read"))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .with_context(|| format!("{shown}: cannot read"))?;
    if names.is_empty() {
        return Ok(());
    }
    if !replace {
        bail!(
            "{shown}: exists and is not empty (an earlier import?); refusing to mix runs into \
             it (--replace replaces a folder import wrote)"
        );
    }
    let omnius_only = names.len() == 1
        && names[0] == ".omnius"
        && fs::symlink_metadata(folder.join(".omnius")).is_ok_and(|m| m.is_dir());
    if !omnius_only {
        bail!("{shown}: holds more than the `.omnius/` import writes; refusing to replace it");
    }
    Ok(())
}

/// Removes what [`check_existing`] let through: the folder's tree, or the link alone.
fn remove(folder: &Path) -> Result<()> {
    let removed = match fs::symlink_metadata(folder) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(folder),
        Ok(_) => fs::remove_file(folder),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    removed.with_context(|| format!("{}: cannot remove", display(folder)))
}
