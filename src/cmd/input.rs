//! What every replaying subcommand takes: the recorded runs, the guard settings, threads
//! and strictness; and the one way they are replayed (progress bar, located warnings).

use crate::config::{Config, ConfigFile};
use crate::cost::Prices;
use crate::gate::{LabelSpec, Labels};
use crate::guards::built_in;
use crate::guards::external::{self, Declaration};
use crate::ingest::{
    discover_with, Limits, ParseError, Policy, ProblemKind, Problems, ProjectSource, SkippedFile,
};
use crate::output::Guard;
use crate::replay::{replay_lineup, Lineup, RunReplay};
use crate::report::RunReport;
use crate::shard::Shard;
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// What the reading commands read when given no PATH: the repository's shipped corpora.
pub const DEFAULT_PATH: &str = "corpora/";

#[derive(Debug, Clone, clap::Args)]
pub struct Input {
    /// Recorded runs: directories searched recursively for `.omnius/` dumps and for the
    /// session logs and trajectories of the other formats (recognised by structure; see
    /// --input-format), or such files themselves. A run folder (`.omnius/runs/<id>`) is that
    /// run alone, its project's other sessions replayed for what they carry into it but not
    /// reported. A path that does not exist and holds `*`,
    /// `?` or `[` is a glob pattern, expanded by hindsight (quote it: 'runs/**/*.traj').
    #[arg(default_value = DEFAULT_PATH)]
    pub paths: Vec<PathBuf>,
    /// Replay only the runs whose path (file or run folder) or run id matches one of these
    /// glob patterns (repeatable; `*` also crosses `/`).
    #[arg(long, value_name = "PATTERN")]
    pub include: Vec<glob::Pattern>,
    /// Leave out the runs whose path or run id matches one of these glob patterns
    /// (repeatable), e.g. --exclude '*lite*'.
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<glob::Pattern>,
    /// Guard settings as JSON: {"<guard>": {"<key>": value}}.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Override one setting, e.g. `convergence_breaker.abandon=4` (repeatable).
    #[arg(long = "set", value_name = "GUARD.KEY=VALUE")]
    pub set: Vec<String>,
    /// Worker threads, 1 to 1024 (default: one per core). Output is identical for any value.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=MAX_THREADS))]
    pub threads: Option<u16>,
    /// Fail (exit 2) on the first bad record instead of skipping and counting it.
    #[arg(long)]
    pub strict: bool,
    /// Token prices by model, in the shape of LiteLLM's `model_prices_and_context_window.json`
    /// (`input_cost_per_token`, `output_cost_per_token`, `cache_creation_input_token_cost`,
    /// `cache_read_input_token_cost`); added to, and overriding, the built-in table (whose
    /// date the help gives).
    #[arg(long, value_name = "FILE", help = crate::cost::prices::prices_help())]
    pub prices: Option<PathBuf>,
    /// Read every candidate file as this format instead of recognising each by structure.
    #[arg(long, value_enum)]
    pub input_format: Option<crate::ingest::InputFormat>,
    /// Longest line of a JSONL file read, in MiB; a longer line is a located problem.
    #[arg(long, value_name = "MIB", default_value_t = Limits::DEFAULT_LINE_MIB,
          value_parser = clap::value_parser!(u64).range(1..=4095))]
    pub max_line_mib: u64,
    /// Largest file read as one JSON document (a frame, a ledger, a trajectory), in MiB.
    #[arg(long, value_name = "MIB", default_value_t = Limits::DEFAULT_DOCUMENT_MIB,
          value_parser = clap::value_parser!(u64).range(1..=4095))]
    pub max_document_mib: u64,
    /// Replay only shard K of N (1 <= K <= N): the projects whose name hashes (FNV-1a 64,
    /// modulo N) to K-1; whole projects, the same split on every machine (docs/SCALE.md).
    /// Combine the shards' JSON reports with `hindsight merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<Shard>,
    #[command(flatten)]
    pub external: ExternalGuards,
    /// When an external guard crashes, hangs or answers nonsense on a run, leave its
    /// results for that run out and list the problem under the run's `input.problems`,
    /// instead of failing (exit 2).
    #[arg(long)]
    pub lenient_guards: bool,
}

/// External guards declared on the command line (docs/EVENTS.md, "Protocol").
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ExternalGuards {
    /// Replay an external guard: your own guard code, started as COMMAND (through the
    /// shell) and fed each run as JSON Lines (docs/EVENTS.md). Repeatable; also declared in
    /// the --config file's `external` member, whose COMMAND this replaces.
    #[arg(long = "guard", value_name = "ID=COMMAND")]
    pub guards: Vec<String>,
    /// Seconds an external guard may stay silent (neither reading nor answering) before it
    /// is judged hung [default: the declaration's `timeout_seconds`, else 30].
    #[arg(long, value_name = "SECONDS")]
    pub guard_timeout: Option<f64>,
}

impl ExternalGuards {
    /// Installs the external guards of `file` and of `--guard` (its command over the
    /// file's for the same id), so the catalogue lists them from now on.
    pub fn install(&self, file: Option<&ConfigFile>) -> Result<()> {
        let mut declared = file.map(|f| f.external.clone()).unwrap_or_default();
        for given in &self.guards {
            let (id, command) = given
                .split_once('=')
                .with_context(|| format!("--guard `{given}`: expected ID=COMMAND"))?;
            declared
                .entry(id.to_string())
                .and_modify(|d| d.command = command.to_string())
                .or_insert_with(|| Declaration::command(command));
        }
        let built_in: Vec<&str> = built_in().iter().map(|e| e.info.id).collect();
        external::install(declared, self.guard_timeout, &built_in).map_err(anyhow::Error::msg)
    }
}

/// The arguments of [`Input`] that only a replay uses: refused next to `--from REPORT.json`
/// (`gate`, `report`), which reads a saved report instead.
pub const REPLAY_ONLY: [&str; 14] = [
    "paths",
    "include",
    "exclude",
    "config",
    "set",
    "strict",
    "prices",
    "input_format",
    "max_line_mib",
    "max_document_mib",
    "shard",
    "guards",
    "guard_timeout",
    "lenient_guards",
];

/// The projects found under the paths given, and the paths that could not be read (each
/// warned about once; under `--strict` the first one is the error instead).
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub projects: Vec<ProjectSource>,
    pub unread: Problems,
    /// Files that look like recorded runs but lack their format's structure: not read.
    pub skipped_files: Vec<SkippedFile>,
    /// JSON Lines files no format claims: not read.
    pub unrecognised: Vec<SkippedFile>,
}

impl Inputs {
    /// What discovery did not read, as the report's `input` section holds it.
    pub fn unread_report(&self) -> crate::report::UnreadReport {
        crate::report::UnreadReport::of(&self.unread, &self.skipped_files, &self.unrecognised)
    }
}

impl std::ops::Deref for Inputs {
    type Target = [ProjectSource];

    fn deref(&self) -> &[ProjectSource] {
        &self.projects
    }
}

impl<'a> IntoIterator for &'a Inputs {
    type Item = &'a ProjectSource;
    type IntoIter = std::slice::Iter<'a, ProjectSource>;

    fn into_iter(self) -> Self::IntoIter {
        self.projects.iter()
    }
}

/// More worker threads than this are refused: each is an OS thread, and no machine gains
/// from more.
const MAX_THREADS: i64 = 1024;

impl Input {
    /// The settings from `--config`, then each `--set` in order; the external guards
    /// declared there and by `--guard` are installed first.
    pub fn config(&self) -> Result<Config> {
        let file = self.install_guards()?;
        let mut config = match file {
            Some(file) => Config::from_file(file)?,
            None => Config::default(),
        };
        for assignment in &self.set {
            config.set(assignment)?;
        }
        config.lenient_guards = self.lenient_guards;
        config.build()?;
        Ok(config)
    }

    /// Installs the external guards of `--config` and `--guard` (once per process; again
    /// with the same ones is a no-op) and hands back the config file read.
    pub fn install_guards(&self) -> Result<Option<ConfigFile>> {
        let file = self.config.as_deref().map(ConfigFile::read).transpose()?;
        self.external.install(file.as_ref())?;
        Ok(file)
    }

    /// What identifies this replay in its report (issue #32, F): hindsight's version, the
    /// paths as given, the guards and the digests of their settings and of the prices.
    pub fn replayed(&self, config: &Config, prices: &Prices) -> crate::report::Replayed {
        let (guards, settings) = config.identity();
        crate::report::Replayed {
            hindsight: env!("CARGO_PKG_VERSION").to_string(),
            paths: self
                .paths
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            guards,
            settings,
            prices: prices.digest(),
        }
    }

    /// The built-in prices, with `--prices` over them.
    pub fn prices(&self) -> Result<Prices> {
        let built_in = Prices::built_in();
        Ok(match &self.prices {
            Some(path) => built_in.with_file(path)?,
            None => built_in,
        })
    }

    /// The projects under `paths` (of `--shard` only, when given). A path that cannot be
    /// read, and a file that looks like a recorded run without being one, is warned about
    /// and listed (lenient) or is the error (`--strict`); both are the same in every shard.
    pub fn projects(&self) -> Result<Inputs> {
        self.check_default()?;
        let given = self.expanded()?;
        // A run folder is read as its project's `.omnius`, that run picked from it.
        let paths: Vec<PathBuf> = given
            .iter()
            .map(|(_, p)| crate::ingest::omnius_of_run(p).unwrap_or_else(|| p.clone()))
            .collect();
        let mut found = discover_with(&paths, self.input_format, self.limits())?;
        let mut unread = Problems::default();
        for problem in std::mem::take(&mut found.problems) {
            unread.record(self.policy(), problem)?;
        }
        if self.strict {
            if let Some(file) = found.skipped_files.first() {
                return Err(look_alike_error(file).into());
            }
            if let Some(file) = found.unrecognised.first() {
                return Err(unrecognised_error(file).into());
            }
        }
        warn_unread(&unread);
        warn_look_alikes(&found.skipped_files);
        warn_unrecognised(&found.unrecognised);
        self.check_each_path_yields(&found, &given)?;
        pick_run_folders(&mut found.projects, &given);
        self.select(&mut found.projects);
        if let Some(shard) = self.shard {
            let all = found.projects.len();
            found.projects.retain(|p| shard.holds(&p.name));
            eprintln!(
                "note: shard {shard}: {} of {all} projects",
                found.projects.len()
            );
        }
        Ok(Inputs {
            projects: found.projects,
            unread,
            skipped_files: found.skipped_files,
            unrecognised: found.unrecognised,
        })
    }

    /// With no PATH given, the runs read are the repository's shipped `corpora/`: outside
    /// the repository there are none, and that is a usage error that says so, not a missing
    /// file.
    fn check_default(&self) -> Result<()> {
        let default = [PathBuf::from(DEFAULT_PATH)];
        if self.paths == default && !Path::new(DEFAULT_PATH).exists() {
            anyhow::bail!(
                "no PATH given, and no {DEFAULT_PATH} here (the default is the repository's \
                 shipped corpora): give the recorded runs to read, e.g. `hindsight replay \
                 ~/.claude/projects/` (hindsight --help lists the formats)"
            );
        }
        Ok(())
    }

    /// The paths given, each with its argument's index: a path that does not exist and
    /// holds a glob mark is a pattern (issue #30, item 8), expanded to what it matches, in
    /// sorted order; a pattern that matches nothing is an error (exit 2).
    fn expanded(&self) -> Result<Vec<(usize, PathBuf)>> {
        let mut out = Vec::new();
        for (i, path) in self.paths.iter().enumerate() {
            let text = path.to_string_lossy();
            if path.exists() || !text.contains(GLOB_MARKS) {
                out.push((i, path.clone()));
                continue;
            }
            let matches =
                glob::glob(&text).with_context(|| format!("{text}: not a glob pattern"))?;
            let mut found: Vec<PathBuf> = matches
                .collect::<Result<_, _>>()
                .with_context(|| format!("{text}: cannot read what the pattern matches"))?;
            if found.is_empty() {
                bail!("{text}: the pattern matches no file or folder");
            }
            found.sort();
            out.extend(found.into_iter().map(|p| (i, p)));
        }
        Ok(out)
    }

    /// Keeps the runs `--include` and `--exclude` select (by path or run id), and the
    /// projects left with a run; says how many were left out.
    fn select(&self, projects: &mut Vec<ProjectSource>) {
        if self.include.is_empty() && self.exclude.is_empty() {
            return;
        }
        let matches = |patterns: &[glob::Pattern], run: &crate::ingest::RunSource| {
            let path = crate::ingest::display(&run.path);
            patterns
                .iter()
                .any(|p| p.matches(&path) || p.matches(&run.run_id))
        };
        let before: usize = projects.iter().map(|p| p.runs.len()).sum();
        for project in projects.iter_mut() {
            project.runs.retain(|run| {
                (self.include.is_empty() || matches(&self.include, run))
                    && !matches(&self.exclude, run)
            });
        }
        projects.retain(|p| !p.runs.is_empty());
        let after: usize = projects.iter().map(|p| p.runs.len()).sum();
        eprintln!("note: --include/--exclude: {after} of {before} runs selected");
    }

    /// A path given that yields no run is an error (exit 2), whatever the policy: a user who
    /// names a folder or a file means to read runs from it, and "0 runs" would read as a
    /// healthy agent (issue #30, item 7). The error says what the path held instead.
    fn check_each_path_yields(
        &self,
        found: &crate::ingest::Discovery,
        expanded: &[(usize, PathBuf)],
    ) -> Result<()> {
        let runs = found
            .projects
            .iter()
            .flat_map(|p| p.runs.iter().map(|r| lexical(&r.path)));
        let runs: Vec<PathBuf> = runs.collect();
        for (i, given) in self.paths.iter().enumerate() {
            // A pattern's paths, else the path itself.
            let paths: Vec<&PathBuf> = (expanded.iter())
                .filter(|(from, _)| *from == i)
                .map(|(_, p)| p)
                .collect();
            if paths.iter().any(|p| yields(p, &runs)) {
                continue;
            }
            let under = |f: &&SkippedFile| {
                let file = lexical(Path::new(&f.path));
                paths.iter().any(|p| file.starts_with(lexical(p)))
            };
            let passed_over = found.skipped_files.iter().filter(under).count()
                + found.unrecognised.iter().filter(under).count();
            let why = match passed_over {
                0 => "nothing under it is a recorded run of a format hindsight reads".to_string(),
                n => format!("{n} file(s) under it passed over, warned about above"),
            };
            bail!(
                "{}: no recorded run found there: {why} (docs/FORMAT.md lists the formats; \
                 --input-format reads files as one)",
                given.display()
            );
        }
        Ok(())
    }

    /// Whether any problem fails the command, so stdout must get nothing unless every run
    /// was replayed: under `--strict`, or with external guards (one that fails is an error
    /// unless `--lenient-guards`). Asked after [`Input::config`], which installs them.
    pub fn all_or_nothing(&self) -> bool {
        self.strict || (!self.lenient_guards && !external::installed().is_empty())
    }

    /// The size caps from `--max-line-mib` and `--max-document-mib`.
    pub fn limits(&self) -> Limits {
        Limits::from_mib(self.max_line_mib, self.max_document_mib)
    }

    pub fn policy(&self) -> Policy {
        if self.strict {
            Policy::Strict
        } else {
            Policy::Lenient
        }
    }

    /// A pool of `--threads` workers (default: one per core).
    pub fn pool(&self) -> Result<rayon::ThreadPool> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads.map_or(0, usize::from))
            .build()
            .context("cannot start worker threads")
    }

    /// Replays `projects` with `config`, showing progress and warning once per damaged file.
    pub fn replay(&self, projects: &[ProjectSource], config: &Config) -> Result<Vec<RunReplay>> {
        let mut runs = Vec::new();
        self.replay_each(projects, config, &|r| r, |r| runs.push(r))?;
        Ok(runs)
    }

    /// Replays `projects` with `config` and costs each run with `prices` as soon as it is
    /// replayed: what the report needs of a run, without the replay's working state.
    pub fn replay_reports(
        &self,
        projects: &[ProjectSource],
        config: &Config,
        prices: &Prices,
    ) -> Result<Vec<RunReport>> {
        let mut runs = Vec::new();
        let costed = |r: RunReplay| RunReport::of(&r, prices);
        self.replay_each(projects, config, &costed, |r| runs.push(r))?;
        Ok(runs)
    }

    /// Replays `projects` with `config`, handing each run, turned into a `T` by `map` on
    /// a worker thread, to `deliver` on this thread, in input order, while the
    /// replay goes on: a report can be written as it runs, holding no more than the runs
    /// not yet handed on (a bounded queue holds back the workers when `deliver` is slower).
    /// Shows progress; warns once per damaged file at the end.
    pub fn replay_each<T: Send>(
        &self,
        projects: &[ProjectSource],
        config: &Config,
        map: &(dyn Fn(RunReplay) -> T + Sync),
        deliver: impl FnMut(T),
    ) -> Result<()> {
        self.replay_lineup(projects, &Lineup::one(config), map, deliver)
    }

    /// [`Input::replay_each`] with the guards of `lineup` (a sweep's lanes).
    pub fn replay_lineup<T: Send>(
        &self,
        projects: &[ProjectSource],
        lineup: &Lineup,
        map: &(dyn Fn(RunReplay) -> T + Sync),
        mut deliver: impl FnMut(T),
    ) -> Result<()> {
        let total: usize = projects.iter().map(|p| p.runs.len()).sum();
        let bar = progress_bar(total as u64);
        let pool = self.pool()?;
        let policy = self.policy();
        // What the warnings need of each run: its problems, when it has any.
        let noted = |r: RunReplay| {
            let problems = (!r.problems.is_empty()).then(|| r.problems.clone());
            (problems, map(r))
        };
        let mut damaged = Vec::new();
        // Runs are handed on in input order: these are replayed for what they carry into
        // the run folder given, not reported.
        let mut unreported = (projects.iter()).flat_map(|p| p.runs.iter().map(|r| r.unreported));
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let (bar_ref, noted) = (&bar, &noted);
        let result = std::thread::scope(|scope| {
            let worker = scope.spawn(move || {
                let send = &mut |item| {
                    // The receiver only goes away once every item is in: nothing is lost.
                    let _ = tx.send(item);
                };
                let progress = || bar_ref.inc(1);
                pool.install(|| replay_lineup(projects, lineup, policy, &progress, noted, send))
            });
            for (problems, item) in rx {
                damaged.extend(problems);
                if unreported.next() != Some(true) {
                    deliver(item);
                }
            }
            worker.join()
        });
        bar.finish_and_clear();
        match result {
            Ok(replayed) => replayed?,
            Err(panic) => std::panic::resume_unwind(panic),
        }
        warn_skipped(&damaged);
        Ok(())
    }

    /// The guard for this command's outputs: every path it reads (the paths given, each
    /// project's root and runs, `--config`) and the `files` it reads besides (labels,
    /// a baseline).
    pub fn guard(&self, projects: &[ProjectSource], files: &[Option<&Path>]) -> Guard {
        let given = self.paths.iter().map(PathBuf::as_path);
        let roots = projects.iter().map(|p| p.root.as_path());
        let runs = projects
            .iter()
            .flat_map(|p| p.runs.iter().map(|r| r.path.as_path()));
        let files = files
            .iter()
            .copied()
            .chain([self.config.as_deref(), self.prices.as_deref()])
            .flatten();
        Guard::new(given.chain(roots).chain(runs).chain(files))
    }
}

fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} replaying {pos}/{len} runs [{elapsed}] {wide_bar}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// What the commands that take labels take besides them (docs/GATE.md, *Harbor trials as
/// labels*).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Reward {
    /// A Harbor trial is healthy when its `verifier_result.rewards.reward` is at least
    /// this, failed below it (the default: full success).
    #[arg(long, default_value_t = 1.0, value_name = "X")]
    pub reward_threshold: f64,
}

impl Reward {
    /// The labels `specs` give ([`Labels::load_specs`]); what they left unlabelled is said
    /// on stderr.
    pub fn labels(&self, specs: &[LabelSpec]) -> Result<Option<Labels>> {
        if !self.reward_threshold.is_finite() {
            bail!(
                "--reward-threshold {}: expected a number",
                self.reward_threshold
            );
        }
        let labels = Labels::load_specs(specs, self.reward_threshold)?;
        for note in labels.iter().flat_map(Labels::notes) {
            eprintln!("note: {note}");
        }
        Ok(labels)
    }

    /// As [`Reward::labels`]; with no `--labels`, a single input folder holding Harbor
    /// trials labels its runs by their rewards (issue #30, item 2), said on stderr.
    pub fn labels_or_trials(
        &self,
        specs: &[LabelSpec],
        paths: &[PathBuf],
    ) -> Result<Option<Labels>> {
        let given = self.labels(specs)?;
        let [dir] = paths else { return Ok(given) };
        if given.is_some() {
            return Ok(given);
        }
        let labels = Labels::of_trials(dir, self.reward_threshold)?;
        if labels.is_some() {
            eprintln!(
                "note: no --labels: the Harbor trials' rewards in {} label the runs (healthy \
                 from --reward-threshold {} up)",
                crate::ingest::display(dir),
                self.reward_threshold
            );
        }
        for note in labels.iter().flat_map(Labels::notes) {
            eprintln!("note: {note}");
        }
        Ok(labels)
    }
}

/// One warning per file with skipped records (lenient mode), and one per external guard
/// that could not judge a run (`--lenient-guards`).
pub fn warn_skipped<'a>(problems: impl IntoIterator<Item = &'a Problems>) {
    let is_guard = |p: &ParseError| matches!(p.kind, ProblemKind::Guard(_));
    let problems_seen: Vec<&Problems> = problems.into_iter().collect();
    let mut by_file: BTreeMap<&str, (u64, String)> = BTreeMap::new();
    for problems in &problems_seen {
        for (path, count) in &problems.by_file {
            let first = (problems.listed.iter()).find(|p| &p.path == path && !is_guard(p));
            let first = first.map_or_else(|| "(not listed)".to_string(), ToString::to_string);
            by_file.entry(path.as_str()).or_insert((0, first)).0 += count;
        }
    }
    for (path, (count, first)) in by_file {
        eprintln!("warning: {path}: {count} bad record(s) skipped; first: {first}");
    }
    for failed in problems_seen
        .iter()
        .flat_map(|p| &p.listed)
        .filter(|p| is_guard(p))
    {
        eprintln!("warning: {failed}; its results for the run are left out (--lenient-guards)");
    }
}

/// A look-alike file as the error `--strict` stops on.
fn look_alike_error(file: &SkippedFile) -> ParseError {
    ParseError {
        path: file.path.clone(),
        line: None,
        field: None,
        kind: ProblemKind::BadValue(format!(
            "not read: {} (--input-format {} reads it as that format)",
            file.reason, file.format
        )),
    }
}

/// Whether a run of `runs` (lexical paths) lies under `given`, as written or resolved (the
/// same folder named through a link).
/// A run folder given as a path (`<project>/.omnius/runs/<id>`) is that run alone: its
/// project's other sessions are replayed, for what they carry into it (a resumed session's
/// breaker starts where the earlier one left off), but not reported, so its verdict is the
/// one it has in a replay of the whole project (issue #32, L).
fn pick_run_folders(projects: &mut [ProjectSource], given: &[(usize, PathBuf)]) {
    let folders: Vec<PathBuf> = given
        .iter()
        .filter(|(_, p)| crate::ingest::omnius_of_run(p).is_some())
        .map(|(_, p)| lexical(p))
        .collect();
    if folders.is_empty() {
        return;
    }
    for project in projects {
        let picked = |r: &crate::ingest::RunSource| folders.contains(&lexical(&r.path));
        if !project.runs.iter().any(picked) {
            continue;
        }
        for run in &mut project.runs {
            run.unreported = !picked(run);
        }
    }
}

fn yields(given: &Path, runs: &[PathBuf]) -> bool {
    let path = lexical(given);
    if runs.iter().any(|r| r.starts_with(&path)) {
        return true;
    }
    given.canonicalize().is_ok_and(|resolved| {
        runs.iter()
            .any(|r| r.canonicalize().is_ok_and(|r| r.starts_with(&resolved)))
    })
}

/// Characters that make a path that does not exist a glob pattern.
const GLOB_MARKS: [char; 3] = ['*', '?', '['];

/// `path` without its `.` components, so `./a` and `a/` name what `a` does.
fn lexical(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// The error (`--strict`) or warning for a JSON Lines file no format claims.
fn unrecognised_error(file: &SkippedFile) -> ParseError {
    let nearest = match file.format.as_str() {
        "none" => "no format is near it".to_string(),
        format => format!("nearest format: {format}"),
    };
    ParseError {
        path: file.path.clone(),
        line: None,
        field: None,
        kind: ProblemKind::BadValue(format!("not read: {}; {nearest}", file.reason)),
    }
}

/// One warning per unrecognised file, the first [`Problems::LISTED`] of them; the JSON
/// report lists them all (`input.unrecognised`).
fn warn_unrecognised(files: &[SkippedFile]) {
    for file in files.iter().take(Problems::LISTED) {
        eprintln!("warning: unrecognised {}", unrecognised_error(file));
    }
    let more = files.len().saturating_sub(Problems::LISTED);
    if more > 0 {
        eprintln!("warning: {more} more unrecognised file(s) not read (input.unrecognised)");
    }
}

/// One warning per look-alike file, the first [`Problems::LISTED`] of them; the JSON report
/// lists them all (`input.skipped_files`).
fn warn_look_alikes(files: &[SkippedFile]) {
    for file in files.iter().take(Problems::LISTED) {
        eprintln!("warning: skipped {}", look_alike_error(file));
    }
    let more = files.len().saturating_sub(Problems::LISTED);
    if more > 0 {
        eprintln!("warning: {more} more look-alike file(s) skipped (input.skipped_files)");
    }
}

/// Replayed runs waiting to be handed on, at most.
const QUEUE: usize = 64;

/// One warning per path skipped before any run was read (lenient mode).
fn warn_unread(unread: &Problems) {
    for problem in &unread.listed {
        eprintln!("warning: skipped {problem}");
    }
    let more = unread.count - unread.listed.len() as u64;
    if more > 0 {
        eprintln!("warning: {more} more path(s) skipped");
    }
}
