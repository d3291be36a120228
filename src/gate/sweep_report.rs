//! A sweep as JSON (docs/GATE.md, *hindsight sweep*): what `sweep --format json` writes and
//! `hindsight merge` puts back together (issue #29, item 7).
//!
//! The JSON carries every labelled run's outcome at every grid point ([`SweptRun`]), one
//! line per run, beside the scored points: merging the shards of a sweep (`--shard K/N`,
//! whole projects each) puts the runs back in discovery's order (projects by name) and
//! scores them with the code that scored the unsharded sweep, so the bootstrap draws the
//! same projects and the merged file is the unsharded one byte for byte.

use super::scores::DEFAULT_RESAMPLES;
use super::select::{choose, choose_folds, Choice, Folds, Selection};
use super::sweep::{points, Point, Setting, SweptRun};
use crate::report::merge::{check_disjoint, check_replayed, check_split, replayed_of, MergeError};
use crate::report::Replayed;
use crate::shard::Shard;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Version of the sweep JSON's shape; bumped on any incompatible change.
pub const SWEEP_FORMAT: u32 = 1;

/// A scored sweep and the runs it was scored on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepReport {
    pub sweep_format: u32,
    pub resamples: u32,
    /// The shard this sweep replayed (`--shard K/N`); absent for a whole corpus.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// What identifies the replay, as in a replay report: `merge` merges only sweeps where
    /// it is the same (issue #32, F).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replayed: Option<Replayed>,
    pub points: Vec<Point>,
    /// The points over each harness's runs apart, and over each model's, when the runs
    /// come from more than one (issue #29, item 3).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_harness: Vec<GroupPoints>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_model: Vec<GroupPoints>,
    /// What `--select` chose, when given (with `--holdout`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub choice: Option<Choice>,
    /// What `--select` chose in each fold, with `--folds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folds: Option<Folds>,
    /// Written one per line after the rest ([`SweepReport::write`]).
    #[serde(skip)]
    pub runs: Vec<SweptRun>,
}

/// The points over one group of the runs (a harness, a model).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupPoints {
    pub name: String,
    pub points: Vec<Point>,
}

/// The points of each group of `runs` by `key`, in name order; none unless there are
/// two groups or more.
fn grouped(
    settings: &[Setting],
    runs: &[SweptRun],
    resamples: u32,
    key: impl Fn(&SweptRun) -> &str,
) -> Vec<GroupPoints> {
    let mut groups: BTreeMap<&str, Vec<SweptRun>> = BTreeMap::new();
    for run in runs {
        groups.entry(key(run)).or_default().push(run.clone());
    }
    if groups.len() < 2 {
        return Vec::new();
    }
    groups
        .into_iter()
        .map(|(name, runs)| GroupPoints {
            name: name.to_string(),
            points: points(settings.to_vec(), &runs, resamples),
        })
        .collect()
}

/// How a setting is chosen: `--select`, and `--holdout` or `--folds`.
#[derive(Debug, Clone, PartialEq)]
pub struct Selecting {
    pub selection: Selection,
    pub split: Split,
}

/// How the projects are split for choosing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Split {
    /// The fraction held out.
    Holdout(f64),
    /// K folds, each held out once.
    Folds(u32),
}

impl SweepReport {
    /// Scores `settings` over `runs` (in input order) and chooses among them when asked.
    pub fn score(
        settings: Vec<Setting>,
        runs: Vec<SweptRun>,
        resamples: u32,
        selecting: Option<&Selecting>,
        shard: Option<Shard>,
    ) -> Self {
        let by_harness = grouped(&settings, &runs, resamples, |r| &r.harness);
        let by_model = grouped(&settings, &runs, resamples, |r| &r.model);
        let points = points(settings, &runs, resamples);
        let (mut choice, mut folds) = (None, None);
        match selecting.map(|s| (&s.selection, s.split)) {
            Some((selection, Split::Holdout(holdout))) => {
                choice = Some(choose(&points, selection, holdout, resamples));
            }
            Some((selection, Split::Folds(k))) => {
                folds = Some(choose_folds(&points, selection, k, resamples));
            }
            None => {}
        }
        Self {
            sweep_format: SWEEP_FORMAT,
            resamples,
            shard,
            replayed: None,
            points,
            by_harness,
            by_model,
            choice,
            folds,
            runs,
        }
    }

    /// Pretty JSON, but one line per run: a sweep of thousands of runs stays a file a
    /// person can page through and diff.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let head = serde_json::to_string_pretty(self)?;
        let head = head.strip_suffix("\n}").unwrap_or(&head);
        write!(out, "{head},\n  \"runs\": [")?;
        for (i, run) in self.runs.iter().enumerate() {
            let sep = if i == 0 { "\n    " } else { ",\n    " };
            write!(out, "{sep}{}", serde_json::to_string(run)?)?;
        }
        if !self.runs.is_empty() {
            write!(out, "\n  ")?;
        }
        writeln!(out, "]\n}}")
    }
}

/// What merging needs of a sweep's JSON: the grid, how it was scored, and the runs.
#[derive(Debug, Clone, Deserialize)]
pub struct SweepPart {
    pub sweep_format: u32,
    #[serde(default = "default_resamples")]
    pub resamples: u32,
    #[serde(default)]
    pub shard: Option<Shard>,
    #[serde(default)]
    pub replayed: Option<Replayed>,
    pub points: Vec<PointHead>,
    #[serde(default)]
    pub choice: Option<ChoiceHead>,
    #[serde(default)]
    pub folds: Option<FoldsHead>,
    pub runs: Vec<SweptRun>,
}

fn default_resamples() -> u32 {
    DEFAULT_RESAMPLES
}

/// A point's setting, all merging needs of it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PointHead {
    pub setting: Setting,
}

/// How the choice was asked for.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ChoiceHead {
    pub select: String,
    pub holdout: f64,
}

/// How the folds were asked for.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FoldsHead {
    pub select: String,
    pub folds: u32,
}

/// Whether `text` is a sweep's JSON rather than a replay report: it has `sweep_format`.
pub fn is_sweep(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Kind {
        sweep_format: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Kind>(text).is_ok_and(|k| k.sweep_format.is_some())
}

/// The sweep the parts (`(file, part)`, in any order) are shards of.
pub fn merge(parts: Vec<(String, SweepPart)>) -> Result<SweepReport, MergeError> {
    let (first_file, first) = parts.first().ok_or(MergeError::Empty)?;
    for (file, part) in &parts {
        if part.sweep_format != SWEEP_FORMAT {
            return Err(MergeError::SweepFormat {
                file: file.clone(),
                found: part.sweep_format,
                expected: SWEEP_FORMAT,
            });
        }
        let differs = |what| {
            Err(MergeError::Differs {
                file: file.clone(),
                first: first_file.clone(),
                what,
            })
        };
        if part.points != first.points {
            return differs("grid");
        }
        if part.resamples != first.resamples {
            return differs("resample count");
        }
        if part.choice != first.choice || part.folds != first.folds {
            return differs("--select, --holdout or --folds");
        }
        if part.runs.iter().any(|r| r.points() != part.points.len()) {
            return differs("runs' figures (not one per grid point)");
        }
        check_replayed(
            (file, part.replayed.as_ref()),
            (first_file, first.replayed.as_ref()),
            part.shard.is_some() || first.shard.is_some(),
        )?;
    }
    let split: Vec<(&str, Option<Shard>)> =
        parts.iter().map(|(f, p)| (f.as_str(), p.shard)).collect();
    check_split(&split)?;
    let projects: Vec<(&str, Vec<&str>)> = parts
        .iter()
        .map(|(f, p)| {
            (
                f.as_str(),
                p.runs.iter().map(|r| r.project.as_str()).collect(),
            )
        })
        .collect();
    check_disjoint(&projects)?;
    let settings: Vec<Setting> = first.points.iter().map(|p| p.setting.clone()).collect();
    let resamples = first.resamples;
    let replayed = replayed_of(parts.iter().map(|(_, p)| p.replayed.as_ref()));
    let asked = match (&first.choice, &first.folds) {
        (Some(c), _) => Some((c.select.clone(), Split::Holdout(c.holdout))),
        (None, Some(f)) => Some((f.select.clone(), Split::Folds(f.folds))),
        (None, None) => None,
    };
    let files: Vec<String> = parts.iter().map(|(f, _)| f.clone()).collect();
    let mut runs: Vec<SweptRun> = parts.into_iter().flat_map(|(_, p)| p.runs).collect();
    if runs.is_empty() {
        return Err(MergeError::Unlabelled {
            files: files.join(", "),
        });
    }
    // Stable: the runs of one project (all from one shard) keep that shard's order.
    runs.sort_by(|a, b| a.project.cmp(&b.project));
    let selecting = match asked {
        Some((select, split)) => Some(Selecting {
            selection: select.parse().map_err(|message| MergeError::Select {
                file: files[0].clone(),
                message,
            })?,
            split,
        }),
        None => None,
    };
    let mut merged = SweepReport::score(settings, runs, resamples, selecting.as_ref(), None);
    merged.replayed = replayed;
    Ok(merged)
}
