//! A large, deterministic, realistic `.omnius/` corpus: `hindsight synth`, and the corpus
//! the replay throughput benchmark measures (`scripts/bench.sh`, docs/PERFORMANCE.md).
//!
//! The corpus holds [`SynthOptions::projects`] projects, one per build ecosystem in turn
//! (PlatformIO, cargo, npm/tsc, mypy/pytest, go, cmake, gradle, a cargo workspace; the
//! ninth reuses the first as `firmware-motor-1`, and so on), each with
//! [`SynthOptions::runs_per_project`] sessions whose run ids are `<epochms>-<suffix>` with
//! increasing epochs, so they replay in order and the breaker's cross-session carry is
//! exercised (a session often resumes the build the previous one left failing).
//!
//! A session has 30-140 turns. They mix reads, searches, edits (including stale
//! `old_string not found` and hash-mismatch retries), builds and tests with cosmetic
//! variants (`2>&1 | tail -50`, `cd <cwd> && ...`) and compiler-like outputs of a few
//! hundred bytes to a few KB, focus-supervisor directives, dedup records, todos and
//! completions. Every turn records `model_usage`; every 3-7 turns a context frame is
//! written whose messages total 50-400 KB (a 24-144 KB system prompt, the latest tool
//! results, `[RUN EVIDENCE]` and focus blocks, a repository map and pinned files). Each
//! run has a completion ledger and each project with a build left failing a convergence
//! ledger.
//!
//! Everything goes through [`super::Run`], so the corpus is the format ingest reads. The
//! same options always produce the same bytes: the only randomness is a seeded
//! splitmix64. Project `p` depends only on the seed and `p`, and its session `i` only on
//! those and `i` (the last session of a project also closes its ledger differently), so
//! more runs per project extend a smaller corpus rather than reshuffle it.
//!
//! **Size.** A run is [`MEAN_RUN_BYTES`] (3.9 MB) on average, so a corpus is about
//! `projects × runs_per_project × 3.9 MB`. [`SynthOptions::runs_for_mb`] turns a target
//! size into runs per project that way (`hindsight synth --mb`); the size is approximate,
//! and never below one run per project.

use super::eco::ECOS;
use super::pretty;
use super::session::session;
use crate::rng::Rng;
use serde_json::{json, Value};
use std::fs;
use std::io::{self, ErrorKind};
use std::path::Path;

/// The mean size in bytes of one generated run (its `events.jsonl`, frames and ledger):
/// 3.89 MB over 960 runs (seeds 1-40, 8 projects, 3 runs each), with a standard
/// deviation of 2.05 MB; single runs were 0.6-8.5 MB, and the mean of one seed's 24 runs
/// 3.1-4.6 MB.
pub const MEAN_RUN_BYTES: u64 = 3_900_000;

/// The most projects and runs per project [`write_corpus`] accepts.
pub const MAX_PROJECTS: usize = 1_000;
pub const MAX_RUNS_PER_PROJECT: usize = 100_000;

/// What to generate. The same options always give byte-identical trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthOptions {
    /// Projects, one per ecosystem in turn (1..=1000).
    pub projects: usize,
    /// Sessions (runs) per project (1..=100000).
    pub runs_per_project: usize,
    pub seed: u64,
    /// Write into a non-empty output directory, replacing only the project directories
    /// this generates there (`<out>/<project>/`). Without it a non-empty output is refused.
    pub force: bool,
}

impl Default for SynthOptions {
    fn default() -> Self {
        Self {
            projects: 8,
            runs_per_project: 3,
            seed: 7,
            force: false,
        }
    }
}

impl SynthOptions {
    /// Runs per project for a corpus of about `mb` megabytes (10^6 bytes) over `projects`
    /// projects: `mb × 10^6 / (projects × MEAN_RUN_BYTES)`, rounded to the nearest whole
    /// run, at least 1 and at most [`MAX_RUNS_PER_PROJECT`].
    pub fn runs_for_mb(mb: f64, projects: usize) -> usize {
        let per_project = mb * 1e6 / (projects.max(1) as f64 * MEAN_RUN_BYTES as f64);
        if per_project.is_nan() {
            return 1;
        }
        (per_project.round() as usize).clamp(1, MAX_RUNS_PER_PROJECT)
    }

    fn check(&self) -> io::Result<()> {
        if !(1..=MAX_PROJECTS).contains(&self.projects) {
            return Err(invalid(format!(
                "projects must be in 1..={MAX_PROJECTS} (got {})",
                self.projects
            )));
        }
        if !(1..=MAX_RUNS_PER_PROJECT).contains(&self.runs_per_project) {
            return Err(invalid(format!(
                "runs per project must be in 1..={MAX_RUNS_PER_PROJECT} (got {})",
                self.runs_per_project
            )));
        }
        Ok(())
    }
}

/// What [`write_corpus`] wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SynthSummary {
    /// Bytes of every file written.
    pub bytes: u64,
    pub files: u64,
    pub projects: u64,
    pub runs: u64,
    pub turns: u64,
    /// Context frames (`context/*.json`).
    pub frames: u64,
}

/// The name of project `i`: its ecosystem's, with `-1`, `-2`... from the second round on.
pub fn project_name(i: usize) -> String {
    let base = ECOS[i % ECOS.len()].project;
    match i / ECOS.len() {
        0 => base.to_string(),
        k => format!("{base}-{k}"),
    }
}

/// Writes the corpus `opts` describes into `out` (created if missing) as
/// `<out>/<project>/.omnius/`, and nothing outside `out`.
///
/// A non-empty `out` is refused (`ErrorKind::AlreadyExists`) unless `opts.force`; then
/// only the project directories generated are replaced and anything else is left alone
/// (including the projects of an earlier, larger `--projects`).
pub fn write_corpus(opts: &SynthOptions, out: &Path) -> io::Result<SynthSummary> {
    write_corpus_with(opts, out, &mut |_| {})
}

/// [`write_corpus`], calling `progress` with the totals so far after each run.
pub fn write_corpus_with(
    opts: &SynthOptions,
    out: &Path,
    progress: &mut dyn FnMut(&SynthSummary),
) -> io::Result<SynthSummary> {
    opts.check()?;
    prepare_out(out, opts.force)?;
    let mut summary = SynthSummary::default();
    let mut rng = Rng::new(opts.seed);
    for p in 0..opts.projects {
        let name = project_name(p);
        let eco = &ECOS[p % ECOS.len()];
        let dir = out.join(&name);
        remove_entry(&dir)?;
        let omnius = dir.join(".omnius");
        let cwd = format!("/home/dev/{name}");
        let mut prng = Rng::new(rng.next());
        let mut epoch: u64 = 1_783_000_000_000 + prng.below(86_400_000);
        let mut resume = None;
        let mut families: Vec<(String, usize)> = Vec::new();
        for i in 0..opts.runs_per_project {
            epoch += prng.range(20 * 60_000, 8 * 3_600_000);
            let id = format!("{epoch}-{}", prng.suffix());
            let last = i + 1 == opts.runs_per_project;
            let (run, carry) = session(&mut prng, eco, &cwd, &id, resume.take(), last);
            run.try_write_to(&omnius)
                .map_err(|e| located(&omnius.join("runs").join(&id), e))?;
            let (bytes, files) = dir_size(&omnius.join("runs").join(&id))?;
            summary.bytes += bytes;
            summary.files += files;
            summary.runs += 1;
            summary.turns += u64::from(run.turn);
            summary.frames += run.frames.len() as u64;
            if let Some((build, n)) = &carry {
                families.push((build.clone(), *n));
            }
            resume = carry;
            progress(&summary);
        }
        if !families.is_empty() {
            let entries: serde_json::Map<String, Value> = families
                .iter()
                .rev()
                .take(6)
                .map(|(build, n)| {
                    (
                        format!("shell:{build}:tool_failed"),
                        json!({"rounds": 1 + n % 4, "lastSignal": n}),
                    )
                })
                .collect();
            let path = omnius.join("convergence-ledger.json");
            let text = pretty(&json!({"version": 1, "families": entries}));
            fs::write(&path, &text).map_err(|e| located(&path, e))?;
            summary.bytes += text.len() as u64;
            summary.files += 1;
        }
        summary.projects += 1;
    }
    Ok(summary)
}

/// Creates `out`, refusing one that exists and is not empty unless `force`.
pub(super) fn prepare_out(out: &Path, force: bool) -> io::Result<()> {
    match fs::metadata(out) {
        Ok(meta) if !meta.is_dir() => {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!("{}: exists and is not a directory", out.display()),
            ));
        }
        Ok(_) => {
            let non_empty = fs::read_dir(out)
                .map_err(|e| located(out, e))?
                .next()
                .is_some();
            if non_empty && !force {
                return Err(io::Error::new(
                    ErrorKind::AlreadyExists,
                    format!(
                        "{}: exists and is not empty; refusing to write into it \
                         (--force replaces only the project folders it generates)",
                        out.display()
                    ),
                ));
            }
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(located(out, e)),
    }
    fs::create_dir_all(out).map_err(|e| located(out, e))
}

/// Removes whatever is at `path` (a directory tree, a file, or a symlink itself, never
/// what it points to), so the project written there starts empty.
pub(super) fn remove_entry(path: &Path) -> io::Result<()> {
    let removed = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    };
    removed.map_err(|e| located(path, e))
}

/// Bytes and files under `dir`.
fn dir_size(dir: &Path) -> io::Result<(u64, u64)> {
    let mut total = (0, 0);
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if meta.is_dir() {
            let (b, f) = dir_size(&entry.path())?;
            total.0 += b;
            total.1 += f;
        } else {
            total.0 += meta.len();
            total.1 += 1;
        }
    }
    Ok(total)
}

fn invalid(message: String) -> io::Error {
    io::Error::new(ErrorKind::InvalidInput, message)
}

/// The error with the path it happened at.
fn located(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_for_mb_divides_by_the_mean_run() {
        assert_eq!(SynthOptions::runs_for_mb(100.0, 8), 3);
        assert_eq!(SynthOptions::runs_for_mb(1000.0, 8), 32);
        assert_eq!(SynthOptions::runs_for_mb(5000.0, 8), 160);
        assert_eq!(SynthOptions::runs_for_mb(1.0, 8), 1);
        assert_eq!(SynthOptions::runs_for_mb(1e12, 1), MAX_RUNS_PER_PROJECT);
    }

    #[test]
    fn project_names_cycle_through_the_ecosystems() {
        assert_eq!(project_name(0), "firmware-motor");
        assert_eq!(project_name(8), "firmware-motor-1");
        assert_eq!(project_name(17), "parser-2");
    }
}
