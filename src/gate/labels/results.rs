//! Evaluation results read as labels (docs/GATE.md; issue #29, item 5): a harness's own
//! verdicts on its runs, each recognised by its shape, never by its file name.
//!
//! By run id: a SWE-bench summary (`resolved_ids`/`unresolved_ids`, or `resolved`/
//! `unresolved`) and a Terminal-Bench `results.json` (`results[]` with `is_resolved`). By
//! folder: Harbor trial folders, each labelled by the reward in its `result.json`. What a
//! source leaves unlabelled (no verdict) is counted in a note, never dropped in silence.

use super::{Label, LabelFile, LabelsError, RunLabel};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Labels read from an evaluation summary, and what it left unlabelled.
pub(super) struct ByRunId {
    pub file: LabelFile,
    pub notes: Vec<String>,
}

/// The labels of a summary that names runs by id, if `value` has one of those shapes.
/// Terminal-Bench is tried first: its `results.json` also carries `resolved_ids` and
/// `unresolved_ids`, in which a trial with no verdict counts as unresolved.
pub(super) fn by_run_id(value: &Value) -> Result<Option<ByRunId>, String> {
    if let Some(read) = terminal_bench(value)? {
        return Ok(Some(read));
    }
    Ok(swe_bench(value)?.map(|file| ByRunId {
        file,
        notes: Vec::new(),
    }))
}

/// Labels with no expectations, one per run name; a later name wins.
fn label_file(labels: impl IntoIterator<Item = (String, Label)>) -> LabelFile {
    let runs = labels
        .into_iter()
        .map(|(name, label)| {
            // The caller names the file the labels were read from.
            let label = RunLabel {
                label,
                expect: Vec::new(),
                note: None,
                source: String::new(),
            };
            (name, label)
        })
        .collect();
    LabelFile { version: 1, runs }
}

/// The note for the `names` a source left unlabelled (`what` they are, and why), naming
/// the first; none when there are none.
fn unlabelled<S: AsRef<str>>(names: &[S], what: &str) -> Option<String> {
    let first = names.first()?.as_ref();
    Some(format!("{} {what}; first: {first}", names.len()))
}

/// A SWE-bench evaluation summary as labels: a resolved instance is a healthy run, an
/// unresolved one a failed run, named by instance id. SWE-bench writes the lists as
/// `resolved_ids` and `unresolved_ids`; SWE-bench-java and others as `resolved` and
/// `unresolved` (lists of ids; a count in their place is not a list and is not read).
/// A list of another type and an id that is not a string are errors, named by their field
/// (issue #32, E): a gate on a malformed summary must not pass on what it could read.
fn swe_bench(value: &Value) -> Result<Option<LabelFile>, String> {
    use crate::ingest::formats::kind_of;
    let list = |keys: [&'static str; 2]| -> Result<Option<(&'static str, &Vec<Value>)>, String> {
        for (i, key) in keys.iter().enumerate() {
            match value.get(*key) {
                None => continue,
                Some(Value::Array(ids)) => return Ok(Some((key, ids))),
                // `resolved: 5` is SWE-bench-java's count, not a list.
                Some(Value::Number(_)) if i == 1 => continue,
                Some(other) => {
                    return Err(format!(
                        "{key}: expected a list of instance ids, found {}",
                        kind_of(other)
                    ))
                }
            }
        }
        Ok(None)
    };
    let resolved = list(["resolved_ids", "resolved"])?;
    let unresolved = list(["unresolved_ids", "unresolved"])?;
    if resolved.is_none() && unresolved.is_none() {
        return Ok(None);
    }
    let ids = |list: Option<(&'static str, &Vec<Value>)>,
               label|
     -> Result<Vec<(String, Label)>, String> {
        let Some((key, ids)) = list else {
            return Ok(Vec::new());
        };
        ids.iter()
            .enumerate()
            .map(|(i, id)| match id {
                Value::String(id) => Ok((id.clone(), label)),
                other => Err(format!(
                    "{key}[{i}]: expected an instance id (a string), found {}",
                    kind_of(other)
                )),
            })
            .collect()
    };
    let labels: Vec<(String, Label)> = ids(unresolved, Label::Failed)?
        .into_iter()
        .chain(ids(resolved, Label::Healthy)?)
        .collect();
    // A summary that labels no run is refused with every labels file that labels none.
    Ok(Some(label_file(labels)))
}

/// A Terminal-Bench `results.json` (`{"results": [{"trial_name", "task_id",
/// "is_resolved", ...}]}`) as labels: a resolved trial is healthy, an unresolved one failed,
/// and one with no verdict (`is_resolved` null: the agent or the tests did not finish) is
/// not labelled.
///
/// Each trial labels its `trial_name` (`<task>.<attempt>-of-<n>.<run>`, unique in the file)
/// and its `task_id`, the name a trajectory exported per task carries (as a SWE-bench
/// instance id). A task whose trials disagree labels only its trial names, since one id
/// cannot be both.
fn terminal_bench(value: &Value) -> Result<Option<ByRunId>, String> {
    let Some(results) = value.get("results").and_then(Value::as_array) else {
        return Ok(None);
    };
    if !results.iter().any(|r| r.get("is_resolved").is_some()) {
        return Ok(None);
    }
    let mut trials = Vec::new();
    let mut tasks: BTreeMap<&str, Option<Label>> = BTreeMap::new();
    let mut undecided = Vec::new();
    for (i, result) in results.iter().enumerate() {
        let name = |key: &str| {
            result.get(key).and_then(Value::as_str).ok_or_else(|| {
                format!("results[{i}].{key}: expected a string (a Terminal-Bench results.json)")
            })
        };
        let (trial, task) = (name("trial_name")?, name("task_id")?);
        let label = match result.get("is_resolved") {
            Some(Value::Bool(true)) => Label::Healthy,
            Some(Value::Bool(false)) => Label::Failed,
            Some(Value::Null) | None => {
                undecided.push(trial);
                continue;
            }
            Some(other) => {
                return Err(format!(
                    "results[{i}].is_resolved: expected true, false or null, not {other}"
                ))
            }
        };
        trials.push((trial.to_string(), label));
        tasks
            .entry(task)
            .and_modify(|agreed| *agreed = agreed.filter(|l| *l == label))
            .or_insert(Some(label));
    }
    let split: Vec<&str> = tasks
        .iter()
        .filter(|(_, agreed)| agreed.is_none())
        .map(|(task, _)| *task)
        .collect();
    let by_task = tasks
        .iter()
        .filter_map(|(task, agreed)| Some((task.to_string(), (*agreed)?)));
    let notes = [
        unlabelled(
            &undecided,
            "trial(s) with is_resolved null are not labelled",
        ),
        unlabelled(
            &split,
            "task id(s) are not labelled, their trials disagreeing (the trial names are)",
        ),
    ];
    Ok(Some(ByRunId {
        file: label_file(by_task.chain(trials)),
        notes: notes.into_iter().flatten().collect(),
    }))
}

/// One Harbor trial folder and its verdict.
pub(super) struct Trial {
    /// The folder as found under the path given (`JOB/TRIAL`), as run names show it.
    pub name: String,
    /// The folder with links resolved, which projects are compared with.
    pub dir: PathBuf,
    pub label: Label,
    /// Its `result.json`, as found under the path given: where the label was read from.
    pub source: String,
}

/// The trials of Harbor folders, and what they left unlabelled.
pub(super) struct Trials {
    pub trials: Vec<Trial>,
    pub notes: Vec<String>,
}

/// The Harbor trials at or under `root` (a trial folder, or a job folder of trials): each
/// `result.json` of a trial's shape (a `trial_name` or `verifier_result` field) is one, in
/// walk order (by name; each folder once, so links cannot loop). A trial is healthy when
/// `verifier_result.rewards.reward` is at least `threshold`, failed below it; a trial with
/// no numeric reward (the verifier failed, an exception) is counted and not labelled.
pub(super) fn harbor(root: &Path, threshold: f64) -> Result<Trials, LabelsError> {
    let found = harbor_found(root, threshold)?;
    if found.trials.is_empty() && found.notes.is_empty() {
        return Err(LabelsError::Invalid {
            path: crate::ingest::display(root),
            message: "no Harbor trial here: no result.json with a trial_name or verifier_result \
                      field"
                .into(),
        });
    }
    Ok(found)
}

/// As [`harbor`], with no trial found being no error (nothing found, no note).
pub(super) fn harbor_found(root: &Path, threshold: f64) -> Result<Trials, LabelsError> {
    let invalid = |path: &Path, message: String| LabelsError::Invalid {
        path: crate::ingest::display(path),
        message,
    };
    let walked = crate::ingest::walk::walk(&[root.to_path_buf()], true)
        .map_err(|e| invalid(root, e.to_string()))?;
    if let Some(problem) = walked.problems.first() {
        return Err(invalid(root, format!("cannot read all of it: {problem}")));
    }
    let mut trials = Vec::new();
    let mut unrewarded = Vec::new();
    let results = walked
        .files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "result.json"));
    for file in results {
        let value: Value = crate::ingest::unique::read_user_file(file)
            .map_err(|message| invalid(file, message))?;
        if value.get("trial_name").is_none() && value.get("verifier_result").is_none() {
            continue;
        }
        let folder = file.parent().unwrap_or(Path::new("."));
        let name = crate::ingest::display(folder);
        match reward(&value).map_err(|message| invalid(file, message))? {
            Some(reward) => trials.push(Trial {
                dir: folder
                    .canonicalize()
                    .map_err(|e| invalid(folder, e.to_string()))?,
                name,
                source: crate::ingest::display(file),
                label: if reward >= threshold {
                    Label::Healthy
                } else {
                    Label::Failed
                },
            }),
            None => unrewarded.push(name),
        }
    }
    let note = unlabelled(
        &unrewarded,
        "trial(s) with no numeric verifier_result.rewards.reward are not labelled",
    );
    Ok(Trials {
        trials,
        notes: note.into_iter().collect(),
    })
}

/// A trial's reward: `None` when the trial has no verdict (`verifier_result` null or
/// absent: the agent or the tests did not finish; no `reward` among the rewards); a value
/// of another type is an error naming its field, never a trial passed over (issue #32, E).
fn reward(result: &Value) -> Result<Option<f64>, String> {
    fn present(v: Option<&Value>) -> Option<&Value> {
        v.filter(|v| !v.is_null())
    }
    use crate::ingest::formats::kind_of;
    let Some(verifier) = present(result.get("verifier_result")) else {
        return Ok(None);
    };
    let object = |v: &Value, field: &str| {
        v.as_object()
            .map(|_| ())
            .ok_or_else(|| format!("{field}: expected an object, found {}", kind_of(v)))
    };
    object(verifier, "verifier_result")?;
    let Some(rewards) = present(verifier.get("rewards")) else {
        return Ok(None);
    };
    object(rewards, "verifier_result.rewards")?;
    match present(rewards.get("reward")) {
        None => Ok(None),
        Some(reward) => reward.as_f64().map(Some).ok_or_else(|| {
            format!(
                "verifier_result.rewards.reward: expected a number, found {}",
                kind_of(reward)
            )
        }),
    }
}
