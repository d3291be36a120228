//! The labels file: which recorded runs failed and which were healthy, and what each guard
//! is expected to do on them (docs/GATE.md).
//!
//! A run is named `<project>/<runId>`, the project path relative to the labels file's own
//! directory, so the file travels with its corpus.

use crate::guards::registry;
use crate::report::{Report, RunReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelFile {
    pub version: u32,
    pub runs: BTreeMap<String, RunLabel>,
}

/// A loaded labels file and the directory its run names are relative to.
#[derive(Debug, Clone)]
pub struct Labels {
    pub file: LabelFile,
    /// Where the labels came from, as errors name it.
    path: String,
    base: PathBuf,
    /// Runs are named by their run id alone (a SWE-bench results file names instances);
    /// then a labeled instance that was not replayed is not a failure, since a results
    /// file usually covers more instances than the trajectories at hand.
    by_run_id: bool,
    /// Summaries each scoped to a folder (`--labels DIR=FILE`): a run under DIR (as given,
    /// and resolved) is named `DIR:runId` and labelled by that summary only.
    scopes: Vec<(String, PathBuf)>,
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
        // A file whose own name holds `=` is a file.
        match text.split_once('=') {
            Some((dir, file)) if !Path::new(text).is_file() => {
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
    pub fn load(path: &Path) -> Result<Self, LabelsError> {
        let invalid = |message: String| LabelsError::Invalid {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if let Some(file) = swe_bench_labels(&value) {
            return Ok(Self {
                file,
                path: path.display().to_string(),
                base: PathBuf::from("."),
                by_run_id: true,
                scopes: Vec::new(),
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
        Ok(Self {
            file,
            path: path.display().to_string(),
            base: base.canonicalize().unwrap_or(base),
            by_run_id: false,
            scopes: Vec::new(),
        })
    }

    /// The labels `--labels` gives: none, one labels file, or evaluation summaries each
    /// scoped to a folder (`DIR=FILE`, repeatable).
    pub fn load_specs(specs: &[LabelSpec]) -> Result<Option<Self>, LabelsError> {
        match specs {
            [] => Ok(None),
            [LabelSpec { scope: None, file }] => Self::load(file).map(Some),
            _ => Self::load_scoped(specs).map(Some),
        }
    }

    fn load_scoped(specs: &[LabelSpec]) -> Result<Self, LabelsError> {
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
            base: PathBuf::from("."),
            by_run_id: true,
            scopes: Vec::new(),
        };
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
            let one = Self::load(&spec.file)?;
            if !one.by_run_id {
                return Err(invalid(
                    "DIR=FILE takes an evaluation summary; a labels file names its runs by \
                     path already"
                        .into(),
                ));
            }
            let given = crate::ingest::display(scope);
            let resolved = scope
                .canonicalize()
                .map_err(|e| invalid(format!("{given}: {e}")))?;
            if merged
                .scopes
                .iter()
                .any(|(g, r)| *g == given || *r == resolved)
            {
                return Err(invalid(format!("{given}: given twice")));
            }
            for (id, label) in one.file.runs {
                merged.file.runs.insert(format!("{given}:{id}"), label);
            }
            merged.scopes.push((given, resolved));
        }
        Ok(merged)
    }

    /// The files the labels were read from (so no output is written over them).
    pub fn files(specs: &[LabelSpec]) -> impl Iterator<Item = Option<&Path>> {
        specs.iter().map(|s| Some(s.file.as_path()))
    }

    /// Labels whose run names are already keys (for tests and generated label sets).
    pub fn from_file(file: LabelFile, base: PathBuf) -> Self {
        Self {
            file,
            path: "(labels)".into(),
            base,
            by_run_id: false,
            scopes: Vec::new(),
        }
    }

    /// Whether every labeled run must be among the replayed ones.
    pub fn requires_every_run(&self) -> bool {
        !self.by_run_id
    }

    /// The name a run has in the labels file.
    pub fn key(&self, run: &RunReport) -> String {
        self.key_of(&run.project, &run.run_id)
    }

    /// The name the run `run_id` of `project` has in the labels file.
    pub fn key_of(&self, project: &str, run_id: &str) -> String {
        if !self.scopes.is_empty() {
            let at = resolved(Path::new(project));
            let scope = self
                .scopes
                .iter()
                .find(|(_, dir)| at.as_ref().is_some_and(|p| p.starts_with(dir)));
            return match scope {
                Some((given, _)) => format!("{given}:{run_id}"),
                None => format!("(outside every DIR):{run_id}"),
            };
        }
        if self.by_run_id {
            return run_id.to_string();
        }
        let relative = resolved(Path::new(project))
            .and_then(|p| p.strip_prefix(&self.base).ok().map(Path::to_path_buf))
            .map(|p| crate::ingest::display(&p))
            .unwrap_or_else(|| project.to_string());
        format!("{relative}/{run_id}")
    }

    pub fn get(&self, run: &RunReport) -> Option<&RunLabel> {
        self.file.runs.get(&self.key(run))
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
        let replayed: Vec<String> = runs.into_iter().map(|(p, r)| self.key_of(p, r)).collect();
        if replayed.iter().any(|k| self.file.runs.contains_key(k)) {
            return Ok(());
        }
        let three = |names: Vec<&str>| match names.len() {
            0 => "none".to_string(),
            _ => names.join(", "),
        };
        let how = if !self.scopes.is_empty() {
            "DIR:runId, each run by the summary of the DIR it lies under"
        } else if self.by_run_id {
            "by run id"
        } else {
            "as <project>/<runId>, the project relative to the labels file's folder"
        };
        Err(invalid(format!(
            "the labels match none of the {} replayed runs (runs are named {how}); \
             labelled: {}; replayed: {}",
            replayed.len(),
            three(self.file.runs.keys().take(3).map(String::as_str).collect()),
            three(replayed.iter().take(3).map(String::as_str).collect()),
        )))
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
        self.file.runs.get(&self.key_of(project, run_id))
    }
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

/// A SWE-bench evaluation summary as labels: a resolved instance is a healthy run, an
/// unresolved one a failed run, named by instance id. SWE-bench writes the lists as
/// `resolved_ids` and `unresolved_ids`; SWE-bench-java and others as `resolved` and
/// `unresolved` (lists of ids; a count in their place is not a list and is not read).
fn swe_bench_labels(value: &serde_json::Value) -> Option<LabelFile> {
    let list = |keys: [&str; 2]| keys.iter().find_map(|k| value.get(*k)?.as_array());
    let resolved = list(["resolved_ids", "resolved"]);
    let unresolved = list(["unresolved_ids", "unresolved"]);
    if resolved.is_none() && unresolved.is_none() {
        return None;
    }
    let mut runs = BTreeMap::new();
    for (ids, label) in [(unresolved, Label::Failed), (resolved, Label::Healthy)] {
        for id in ids.into_iter().flatten().filter_map(|v| v.as_str()) {
            runs.insert(
                id.to_string(),
                RunLabel {
                    label,
                    expect: Vec::new(),
                    note: None,
                },
            );
        }
    }
    Some(LabelFile { version: 1, runs })
}
