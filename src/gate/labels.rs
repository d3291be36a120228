//! Labels: which recorded runs failed and which were healthy, and what each guard is
//! expected to do on them (docs/GATE.md), and how each run is named in them.
//!
//! In the project's labels file a run is named `<project>/<runId>`, the project path
//! relative to the file's own directory, so the file travels with its corpus. Evaluation
//! results ([`results`]) name runs by id, or by the Harbor trial folder they lie under.

use crate::guards::registry;
use crate::report::frames::{TableLabel, TableLabels};
use crate::report::{Report, RunReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod results;

/// What a run was, as a person judged it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    Failed,
    Healthy,
}

impl Label {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Failed => "failed",
            Self::Healthy => "healthy",
        }
    }
}

/// One expectation about one guard on one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub guard: String,
    /// Restricts the expectation to one action (e.g. `abandon`); any action otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The first matching firing is at exactly this turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fires_at: Option<u32>,
    /// The first matching firing is at this turn or earlier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_later_than: Option<u32>,
    /// No matching firing at all.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub never: bool,
}

/// The kind of an expectation, once validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    FiresAt(u32),
    NoLaterThan(u32),
    Never,
}

impl Expectation {
    pub fn rule(&self) -> Result<Rule, String> {
        match (self.fires_at, self.no_later_than, self.never) {
            (Some(t), None, false) => Ok(Rule::FiresAt(t)),
            (None, Some(t), false) => Ok(Rule::NoLaterThan(t)),
            (None, None, true) => Ok(Rule::Never),
            _ => Err(format!(
                "guard `{}`: give exactly one of fires_at, no_later_than, never",
                self.guard
            )),
        }
    }

    /// How the expectation reads in a report: `convergence_breaker abandon no later than 2`.
    pub fn describe(&self) -> String {
        let what = match &self.action {
            Some(a) => format!("{} {a}", self.guard),
            None => self.guard.clone(),
        };
        match self.rule() {
            Ok(Rule::FiresAt(t)) => format!("{what} fires at turn {t}"),
            Ok(Rule::NoLaterThan(t)) => format!("{what} fires no later than turn {t}"),
            Ok(Rule::Never) => format!("{what} never fires"),
            Err(e) => e,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLabel {
    pub label: Label,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expectation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where the label was read from (the labels file or summary as given, a Harbor trial's
    /// `result.json`), for the tables' `label_source`: set when loaded, never in a file.
    #[serde(skip)]
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelFile {
    pub version: u32,
    pub runs: BTreeMap<String, RunLabel>,
}

/// Loaded labels and how they name the runs.
#[derive(Debug, Clone)]
pub struct Labels {
    /// The labels, by the names [`Naming`] gives (a Harbor trial's by its folder).
    pub file: LabelFile,
    /// Where the labels came from, as errors name it.
    path: String,
    naming: Naming,
    /// What the sources left unlabelled (a trial with no verdict), for the commands to
    /// say: a run left out of the scores is never left out in silence.
    notes: Vec<String>,
}

/// How the runs are named, which follows from the source of the labels.
#[derive(Debug, Clone)]
enum Naming {
    /// `<project>/<runId>`, the project relative to this folder (a labels file's own).
    Relative(PathBuf),
    /// The run id alone (an evaluation summary names instances or tasks); then a labeled
    /// instance that was not replayed is not a failure, since a summary usually covers
    /// more instances than the trajectories at hand.
    RunId,
    /// Summaries each scoped to a folder (`--labels DIR=FILE`, `(given, resolved)`): a run
    /// under DIR (as given, and resolved) is named `DIR:runId` and labelled by that summary
    /// only.
    Scoped(Vec<(String, PathBuf)>),
    /// Harbor trial folders (`(name, resolved)`, the deepest first): a run whose project
    /// lies under one is named `TRIAL:runId` and has that trial's label, keyed by `TRIAL`.
    Trials(Vec<(String, PathBuf)>),
}

/// One `--labels` value: a labels file, or `DIR=FILE`, an evaluation summary that labels
/// only the runs under DIR (a folder holding several evaluation sets of the same ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelSpec {
    pub scope: Option<PathBuf>,
    pub file: PathBuf,
}

impl std::str::FromStr for LabelSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        // A file (or a Harbor folder) whose own name holds `=` is itself.
        match text.split_once('=') {
            Some((dir, file)) if !Path::new(text).exists() => {
                if dir.is_empty() || file.is_empty() {
                    return Err(format!("{text}: expected FILE or DIR=FILE"));
                }
                Ok(Self {
                    scope: Some(PathBuf::from(dir)),
                    file: PathBuf::from(file),
                })
            }
            _ => Ok(Self {
                scope: None,
                file: PathBuf::from(text),
            }),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LabelsError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl Labels {
    /// The labels at `path`: a labels file, an evaluation summary (a SWE-bench summary, a
    /// Terminal-Bench `results.json`), or a folder of Harbor trials, whose rewards are
    /// healthy from `reward_threshold` up.
    pub fn load(path: &Path, reward_threshold: f64) -> Result<Self, LabelsError> {
        if path.is_dir() {
            return Self::load_trials(path, reward_threshold);
        }
        let shown = path.display().to_string();
        let invalid = |message: String| LabelsError::Invalid {
            path: shown.clone(),
            message,
        };
        let value = crate::ingest::unique::read_user_file(path).map_err(invalid)?;
        if let Some(summary) = results::by_run_id(&value).map_err(invalid)? {
            let notes = summary.notes.iter().map(|n| format!("{shown}: {n}"));
            return Ok(Self {
                file: summary.file.read_from(&shown),
                notes: notes.collect(),
                path: shown,
                naming: Naming::RunId,
            });
        }
        let file: LabelFile = serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
        if file.version != 1 {
            return Err(invalid(format!(
                "unsupported version {} (expected 1)",
                file.version
            )));
        }
        let guards: Vec<&str> = registry().iter().map(|e| e.info.id).collect();
        for (run, label) in &file.runs {
            for e in &label.expect {
                if !guards.contains(&e.guard.as_str()) {
                    return Err(invalid(format!(
                        "runs.{run}: unknown guard `{}` (see `hindsight guards`)",
                        e.guard
                    )));
                }
                e.rule().map_err(|m| invalid(format!("runs.{run}: {m}")))?;
            }
        }
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let file = file.read_from(&shown);
        Ok(Self::from_file(file, base.canonicalize().unwrap_or(base)).named(shown))
    }

    /// The labels the Harbor trials at or under `dir` give by their rewards, when it holds
    /// any (a job folder replayed with no `--labels`, issue #30, item 2); `None` otherwise.
    pub fn of_trials(dir: &Path, reward_threshold: f64) -> Result<Option<Self>, LabelsError> {
        if !dir.is_dir() {
            return Ok(None);
        }
        let found = results::harbor_found(dir, reward_threshold)?;
        if found.trials.is_empty() && found.notes.is_empty() {
            return Ok(None);
        }
        Ok(Some(Self::from_trials(dir, found)))
    }

    /// The Harbor trials at or under `dir`, each labelling the runs under its folder.
    fn load_trials(dir: &Path, reward_threshold: f64) -> Result<Self, LabelsError> {
        let found = results::harbor(dir, reward_threshold)?;
        Ok(Self::from_trials(dir, found))
    }

    fn from_trials(dir: &Path, found: results::Trials) -> Self {
        let shown = crate::ingest::display(dir);
        let mut folders = Vec::new();
        let mut runs = BTreeMap::new();
        for trial in found.trials {
            let label = RunLabel {
                label: trial.label,
                expect: Vec::new(),
                note: None,
                source: trial.source,
            };
            runs.insert(trial.name.clone(), label);
            folders.push((trial.name, trial.dir));
        }
        // The deepest folder first, so a trial inside another labels its own runs.
        folders.sort_by_key(|(_, dir)| std::cmp::Reverse(dir.components().count()));
        Self {
            file: LabelFile { version: 1, runs },
            notes: found
                .notes
                .iter()
                .map(|n| format!("{shown}: {n}"))
                .collect(),
            path: shown,
            naming: Naming::Trials(folders),
        }
    }

    fn named(mut self, path: String) -> Self {
        self.path = path;
        self
    }

    /// The labels `--labels` gives: none, one labels source, or evaluation summaries each
    /// scoped to a folder (`DIR=FILE`, repeatable).
    pub fn load_specs(
        specs: &[LabelSpec],
        reward_threshold: f64,
    ) -> Result<Option<Self>, LabelsError> {
        match specs {
            [] => Ok(None),
            [LabelSpec { scope: None, file }] => Self::load(file, reward_threshold).map(Some),
            _ => Self::load_scoped(specs, reward_threshold).map(Some),
        }
    }

    fn load_scoped(specs: &[LabelSpec], reward_threshold: f64) -> Result<Self, LabelsError> {
        let path = specs
            .iter()
            .map(|s| s.file.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let mut merged = Self {
            file: LabelFile {
                version: 1,
                runs: BTreeMap::new(),
            },
            path,
            naming: Naming::Scoped(Vec::new()),
            notes: Vec::new(),
        };
        let mut scopes: Vec<(String, PathBuf)> = Vec::new();
        for spec in specs {
            let invalid = |message: String| LabelsError::Invalid {
                path: spec.file.display().to_string(),
                message,
            };
            let Some(scope) = &spec.scope else {
                return Err(invalid(
                    "several --labels must each be DIR=FILE, so every run has one source".into(),
                ));
            };
            let one = Self::load(&spec.file, reward_threshold)?;
            if !matches!(one.naming, Naming::RunId) {
                return Err(invalid(
                    "DIR=FILE takes an evaluation summary; a labels file or a Harbor folder \
                     names its runs by path already"
                        .into(),
                ));
            }
            let given = crate::ingest::display(scope);
            let resolved = scope
                .canonicalize()
                .map_err(|e| invalid(format!("{given}: {e}")))?;
            if scopes.iter().any(|(g, r)| *g == given || *r == resolved) {
                return Err(invalid(format!("{given}: given twice")));
            }
            for (id, label) in one.file.runs {
                merged.file.runs.insert(format!("{given}:{id}"), label);
            }
            merged.notes.extend(one.notes);
            scopes.push((given, resolved));
        }
        merged.naming = Naming::Scoped(scopes);
        Ok(merged)
    }

    /// The files (or Harbor folders) the labels were read from, so no output is written
    /// over or into them.
    pub fn files(specs: &[LabelSpec]) -> impl Iterator<Item = Option<&Path>> {
        specs.iter().map(|s| Some(s.file.as_path()))
    }

    /// Labels whose run names are already keys (for tests and generated label sets).
    pub fn from_file(file: LabelFile, base: PathBuf) -> Self {
        Self {
            file,
            path: "(labels)".into(),
            naming: Naming::Relative(base),
            notes: Vec::new(),
        }
    }

    /// What the sources left unlabelled, one sentence each, naming the source.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Whether every labeled run must be among the replayed ones.
    pub fn requires_every_run(&self) -> bool {
        matches!(self.naming, Naming::Relative(_))
    }

    /// The name a run has in the labels file.
    pub fn key(&self, run: &RunReport) -> String {
        self.key_of(&run.project, &run.run_id)
    }

    /// The name the run `run_id` of `project` has: its label's key, and for a Harbor
    /// trial, which labels every run under its folder, the run id after it.
    pub fn key_of(&self, project: &str, run_id: &str) -> String {
        let entry = self.entry_of(project, run_id);
        match self.naming {
            Naming::Trials(_) => format!("{entry}:{run_id}"),
            _ => entry,
        }
    }

    /// The key of the label of the run `run_id` of `project` in [`Labels::file`].
    fn entry_of(&self, project: &str, run_id: &str) -> String {
        match &self.naming {
            Naming::Relative(base) => {
                let relative = resolved(Path::new(project))
                    .and_then(|p| p.strip_prefix(base).ok().map(Path::to_path_buf))
                    .map(|p| crate::ingest::display(&p))
                    .unwrap_or_else(|| project.to_string());
                format!("{relative}/{run_id}")
            }
            Naming::RunId => run_id.to_string(),
            Naming::Scoped(scopes) => match folder_of(scopes, project) {
                Some(given) => format!("{given}:{run_id}"),
                None => format!("(outside every DIR):{run_id}"),
            },
            Naming::Trials(trials) => folder_of(trials, project)
                .unwrap_or("(outside every trial)")
                .to_string(),
        }
    }

    pub fn get(&self, run: &RunReport) -> Option<&RunLabel> {
        self.get_of(&run.project, &run.run_id)
    }

    /// An error unless the labels name at least one of the replayed `runs` (`(project,
    /// run id)` pairs): labels that match nothing would judge nothing and pass, so they
    /// are a mistake (a results file of another corpus, names relative to another
    /// folder). The error shows three names from each side.
    pub fn check_matches<'r>(
        &self,
        runs: impl IntoIterator<Item = (&'r str, &'r str)>,
    ) -> Result<(), LabelsError> {
        let invalid = |message: String| LabelsError::Invalid {
            path: self.path.clone(),
            message,
        };
        if self.file.runs.is_empty() {
            return Err(invalid("labels no run healthy and no run failed".into()));
        }
        let runs: Vec<(&str, &str)> = runs.into_iter().collect();
        // Each run's label key, worked out once (it resolves the project's path).
        let entries: Vec<String> = runs.iter().map(|(p, r)| self.entry_of(p, r)).collect();
        self.check_unambiguous(&runs, &entries).map_err(invalid)?;
        if entries.iter().any(|e| self.file.runs.contains_key(e)) {
            return Ok(());
        }
        let replayed: Vec<String> = runs.iter().map(|(p, r)| self.key_of(p, r)).collect();
        let three = |names: Vec<&str>| match names.len() {
            0 => "none".to_string(),
            _ => names.join(", "),
        };
        let how = match self.naming {
            Naming::Relative(_) => {
                "as <project>/<runId>, the project relative to the labels file's folder"
            }
            Naming::RunId => "by run id",
            Naming::Scoped(_) => "DIR:runId, each run by the summary of the DIR it lies under",
            Naming::Trials(_) => "TRIAL:runId, each run by the Harbor trial folder it lies under",
        };
        Err(invalid(format!(
            "the labels match none of the {} replayed runs (runs are named {how}); \
             labelled: {}; replayed: {}",
            replayed.len(),
            three(self.file.runs.keys().take(3).map(String::as_str).collect()),
            three(replayed.iter().take(3).map(String::as_str).collect()),
        )))
    }

    /// No labelled name that two of `runs` share: `<project>/<runId>` joins with `/`, which
    /// run ids may hold (a Claude Code sub-agent's `<session>/<file>`), so project `a`'s run
    /// `b/c` and project `a/b`'s run `c` are both `a/b/c`, and one label would judge both.
    /// `entries` are the runs' label keys ([`Labels::entry_of`]).
    fn check_unambiguous(&self, runs: &[(&str, &str)], entries: &[String]) -> Result<(), String> {
        if !matches!(self.naming, Naming::Relative(_)) {
            return Ok(());
        }
        let mut named: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
        for (&(project, run_id), key) in runs.iter().zip(entries) {
            if !self.file.runs.contains_key(key) {
                continue;
            }
            match named.get(key.as_str()) {
                Some(&(other, other_run)) if (other, other_run) != (project, run_id) => {
                    return Err(format!(
                        "`{key}` names two replayed runs, run `{other_run}` of project \
                         {other} and run `{run_id}` of project {project}: one label cannot \
                         tell them apart (rename a folder, or label them in separate files)"
                    ));
                }
                _ => {
                    named.insert(key, (project, run_id));
                }
            }
        }
        Ok(())
    }

    /// [`Labels::check_matches`] over the runs of `report`.
    pub fn check_report(&self, report: &Report) -> Result<(), LabelsError> {
        self.check_matches(
            report
                .runs
                .iter()
                .map(|r| (r.project.as_str(), r.run_id.as_str())),
        )
    }

    /// The label of the run `run_id` of `project`, if it has one.
    pub fn get_of(&self, project: &str, run_id: &str) -> Option<&RunLabel> {
        self.file.runs.get(&self.entry_of(project, run_id))
    }

    /// The label columns of the corpus tables (issue #31, item 3): each labelled run of
    /// `report` with its label and where it was read from.
    pub fn table_labels(&self, report: &Report) -> TableLabels {
        let mut labels = TableLabels::none();
        for run in &report.runs {
            if let Some(l) = self.get(run) {
                let label = TableLabel {
                    label: l.label.as_str().to_string(),
                    source: l.source.clone(),
                };
                labels.insert(&run.project, &run.run_id, label);
            }
        }
        labels
    }
}

impl LabelFile {
    /// The file with every label's source set to `source`, the file it was read from.
    fn read_from(mut self, source: &str) -> Self {
        for label in self.runs.values_mut() {
            label.source = source.to_string();
        }
        self
    }
}

/// The name of the first of `folders` (`(name, resolved)`) that `project` lies under.
fn folder_of<'f>(folders: &'f [(String, PathBuf)], project: &str) -> Option<&'f str> {
    let at = resolved(Path::new(project))?;
    folders
        .iter()
        .find(|(_, dir)| at.starts_with(dir))
        .map(|(name, _)| name.as_str())
}

/// A project's path, absolute and with links resolved, as the labels file's folder is: a
/// trajectory's project is its file's path without the extension, which does not exist,
/// so its folder is resolved and the name kept.
fn resolved(project: &Path) -> Option<PathBuf> {
    project.canonicalize().ok().or_else(|| {
        let parent = project
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Some(parent.canonicalize().ok()?.join(project.file_name()?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

    /// A Harbor job folder: one trial per reward (`None`: the verifier did not finish),
    /// each with a run `agent/run` (a trajectory's project: its path without extension).
    fn harbor_job(rewards: &[Option<f64>]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (i, reward) in rewards.iter().enumerate() {
            let trial = dir.path().join(format!("job/task-{i}__trial"));
            fs::create_dir_all(trial.join("agent")).expect("mkdir");
            let verifier = reward.map(|r| json!({"rewards": {"reward": r}}));
            let result =
                json!({"trial_name": format!("task-{i}__trial"), "verifier_result": verifier});
            fs::write(trial.join("result.json"), result.to_string()).expect("write");
        }
        // A job's own result.json is no trial.
        fs::write(
            dir.path().join("job/result.json"),
            r#"{"n_total_trials": 3}"#,
        )
        .expect("write");
        dir
    }

    fn run_in(dir: &Path, trial: usize) -> String {
        let project = dir.join(format!("job/task-{trial}__trial/agent/run"));
        project.display().to_string()
    }

    fn label(labels: &Labels, project: &str) -> Option<Label> {
        labels.get_of(project, "run").map(|l| l.label)
    }

    #[test]
    fn harbor_trials_are_healthy_from_the_reward_threshold_up() {
        let dir = harbor_job(&[Some(1.0), Some(0.5), Some(0.0), None]);
        let job = dir.path().join("job");
        for (threshold, half) in [(1.0, Label::Failed), (0.5, Label::Healthy)] {
            let labels = Labels::load(&job, threshold).expect("loads");
            let got: Vec<Option<Label>> = (0..4)
                .map(|i| label(&labels, &run_in(dir.path(), i)))
                .collect();
            assert_eq!(
                got,
                [Some(Label::Healthy), Some(half), Some(Label::Failed), None],
                "threshold {threshold}"
            );
            // The trial without a reward is counted and named, not dropped in silence.
            assert_eq!(labels.notes().len(), 1, "{:?}", labels.notes());
            assert!(labels.notes()[0].contains("1 trial(s) with no numeric"));
            assert!(labels.notes()[0].ends_with("task-3__trial"));
        }
    }

    /// Project `a`'s run `b/c` and project `a/b`'s run `c` are both `a/b/c`: labelling that
    /// name is refused, naming both runs, rather than judging both under one label.
    #[test]
    fn a_label_name_two_runs_share_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::create_dir_all(dir.path().join("a/b")).expect("mkdir");
        let base = dir.path().canonicalize().expect("real");
        let file: LabelFile = serde_json::from_value(json!({
            "version": 1,
            "runs": {"a/b/c": {"label": "failed"}}
        }))
        .expect("labels");
        let labels = Labels::from_file(file, base.clone());
        let (a, ab) = (base.join("a"), base.join("a/b"));
        let (a, ab) = (a.to_str().unwrap(), ab.to_str().unwrap());
        let err = labels
            .check_matches([(a, "b/c"), (ab, "c")])
            .expect_err("ambiguous")
            .to_string();
        assert!(err.contains("`a/b/c` names two replayed runs"), "{err}");
        assert!(
            err.contains("run `b/c`") && err.contains("run `c`"),
            "{err}"
        );
        labels.check_matches([(a, "b/c")]).expect("one run alone");
    }

    #[test]
    fn a_run_is_named_by_its_trial_and_matched_resolved() {
        let dir = harbor_job(&[Some(1.0)]);
        let labels = Labels::load(&dir.path().join("job"), 1.0).expect("loads");
        let project = run_in(dir.path(), 0);
        let trial = crate::ingest::display(&dir.path().join("job/task-0__trial"));
        assert_eq!(labels.key_of(&project, "run"), format!("{trial}:run"));
        // The same folder through `..` is the same trial.
        let roundabout = dir.path().join("job/task-0__trial/agent/../agent/run");
        assert_eq!(
            label(&labels, &roundabout.display().to_string()),
            Some(Label::Healthy)
        );
        let outside = dir.path().join("elsewhere/run").display().to_string();
        let err = labels
            .check_matches([(outside.as_str(), "run")])
            .expect_err("matches nothing")
            .to_string();
        assert!(err.contains("(outside every trial):run"), "{err}");
        assert!(err.contains(&trial), "{err}");
        labels
            .check_matches([(project.as_str(), "run")])
            .expect("matches");
    }

    #[test]
    fn a_folder_with_no_trial_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("result.json"), "{}").expect("write");
        let err = Labels::load(dir.path(), 1.0)
            .expect_err("no trial")
            .to_string();
        assert!(err.contains("no Harbor trial"), "{err}");
        fs::write(dir.path().join("result.json"), "{").expect("write");
        let err = Labels::load(dir.path(), 1.0)
            .expect_err("bad JSON")
            .to_string();
        assert!(err.contains("result.json"), "{err}");
    }

    fn terminal_bench(results: serde_json::Value) -> Result<Labels, LabelsError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("results.json");
        // Terminal-Bench also writes the task ids as resolved_ids/unresolved_ids, a trial
        // with no verdict among the unresolved: the trials are read, not those lists.
        let file = json!({"results": results, "resolved_ids": [], "unresolved_ids": ["t-c"]});
        fs::write(&path, file.to_string()).expect("write");
        Labels::load(&path, 1.0)
    }

    #[test]
    fn terminal_bench_labels_trials_and_agreeing_tasks() {
        let trial = |name: &str, task: &str, resolved: serde_json::Value| json!({"trial_name": name, "task_id": task, "is_resolved": resolved});
        let labels = terminal_bench(json!([
            trial("t-a.1-of-2.r", "t-a", json!(true)),
            trial("t-a.2-of-2.r", "t-a", json!(false)),
            trial("t-b.1-of-1.r", "t-b", json!(false)),
            trial("t-c.1-of-1.r", "t-c", json!(null)),
            trial("t-d.1-of-1.r", "t-d", json!(true)),
        ]))
        .expect("loads");
        let got = |id: &str| labels.get_of("anywhere", id).map(|l| l.label);
        assert_eq!(got("t-a.1-of-2.r"), Some(Label::Healthy));
        assert_eq!(got("t-a.2-of-2.r"), Some(Label::Failed));
        assert_eq!(got("t-a"), None, "its trials disagree");
        assert_eq!(got("t-b"), Some(Label::Failed));
        assert_eq!(got("t-d"), Some(Label::Healthy));
        assert_eq!(
            (got("t-c"), got("t-c.1-of-1.r")),
            (None, None),
            "no verdict"
        );
        let notes = labels.notes().join("\n");
        assert!(
            notes.contains("1 trial(s) with is_resolved null are not labelled; first: t-c.1"),
            "{notes}"
        );
        assert!(notes.contains("1 task id(s) are not labelled"), "{notes}");
        assert!(!labels.requires_every_run());
    }

    #[test]
    fn a_bad_terminal_bench_entry_names_its_field() {
        let err = terminal_bench(json!([{"trial_name": "x", "task_id": "y", "is_resolved": 1}]))
            .expect_err("not a verdict")
            .to_string();
        assert!(
            err.contains("results.json: results[0].is_resolved"),
            "{err}"
        );
        let err = terminal_bench(json!([{"trial_name": "x", "is_resolved": true}]))
            .expect_err("no task")
            .to_string();
        assert!(err.contains("results[0].task_id"), "{err}");
    }

    #[test]
    fn a_folder_whose_name_holds_an_equals_sign_is_a_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let job = dir.path().join("model=x");
        fs::create_dir(&job).expect("mkdir");
        let text = job.display().to_string();
        let spec: LabelSpec = text.parse().expect("parses");
        assert_eq!((spec.scope, spec.file), (None, job));
        let scoped: LabelSpec = "runs=results.json".parse().expect("parses");
        assert_eq!(scoped.scope, Some(PathBuf::from("runs")));
    }

    /// Each label names the file it was read from (the tables' `label_source`): a Harbor
    /// trial its own `result.json`, a summary scoped to a folder that summary, a labels
    /// file itself.
    #[test]
    fn each_label_names_the_file_it_was_read_from() {
        let dir = harbor_job(&[Some(1.0), Some(0.0)]);
        let labels = Labels::load(&dir.path().join("job"), 1.0).expect("loads");
        let source = |labels: &Labels, project: &str, run: &str| {
            labels.get_of(project, run).map(|l| l.source.clone())
        };
        for trial in 0..2 {
            let expected = dir
                .path()
                .join(format!("job/task-{trial}__trial/result.json"));
            let got = source(&labels, &run_in(dir.path(), trial), "run");
            assert_eq!(got, Some(crate::ingest::display(&expected)));
        }
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for (set, id) in [(&a, "x"), (&b, "y")] {
            fs::create_dir_all(set).expect("mkdir");
            let summary = json!({"resolved_ids": [id], "unresolved_ids": []});
            fs::write(set.join("results.json"), summary.to_string()).expect("write");
        }
        let spec = |set: &Path| LabelSpec {
            scope: Some(set.to_path_buf()),
            file: set.join("results.json"),
        };
        let scoped = Labels::load_specs(&[spec(&a), spec(&b)], 1.0)
            .expect("loads")
            .expect("labels");
        for (set, id) in [(&a, "x"), (&b, "y")] {
            let project = set.join("p").display().to_string();
            let expected = crate::ingest::display(&set.join("results.json"));
            assert_eq!(source(&scoped, &project, id), Some(expected));
        }
        let file = dir.path().join("expectations.json");
        let labels_file = json!({"version": 1, "runs": {"p/r": {"label": "failed"}}});
        fs::write(&file, labels_file.to_string()).expect("write");
        let labels = Labels::load(&file, 1.0).expect("loads");
        let project = dir.path().join("p").display().to_string();
        let got = source(&labels, &project, "r");
        assert_eq!(got, Some(crate::ingest::display(&file)));
    }

    #[test]
    fn a_swe_bench_summary_still_labels_by_instance_id() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("summary.json");
        let summary = json!({"resolved_ids": ["a"], "unresolved_ids": ["b"]});
        fs::write(&path, summary.to_string()).expect("write");
        let labels = Labels::load(&path, 1.0).expect("loads");
        let got = |id: &str| labels.get_of("p", id).map(|l| l.label);
        assert_eq!(
            (got("a"), got("b")),
            (Some(Label::Healthy), Some(Label::Failed))
        );
        assert!(labels.notes().is_empty());
    }
}
