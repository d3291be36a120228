//! Shard reports put back together (`hindsight merge`, docs/SCALE.md): the report an
//! unsharded replay of the same paths gives, byte for byte.
//!
//! Each shard replayed whole projects (`--shard K/N`, [`crate::shard`]), so every run of a
//! project is in one report, in the order that shard replayed it. Merging puts the runs
//! back in discovery's order (projects by name, compared as bytes; a stable sort, so the
//! runs of a project keep their order), recomputes the summary with the code that builds
//! it ([`super::summarize`]), and keeps the `input` section once: what discovery could not
//! read is the same in every shard, so it is checked to be the same and counted once.
//!
//! Refused, naming the files: reports of another format, `input` sections that differ
//! (the shards were not given the same paths), a project in two reports (overlapping
//! shards), and shards that are not one complete split (`K/N` recorded in each shard's
//! `shard` field: a different `N`, a `K` twice, a `K` missing, a shard next to a whole
//! report). Reports without a `shard` field (whole replays of disjoint corpora) merge as
//! long as no project is in two of them.

use super::{summarize_with, Replayed, Report, SummaryBuilder, REPORT_FORMAT};
use crate::shard::Shard;
use std::collections::BTreeMap;

/// One report to merge and the file it was read from (for the messages).
#[derive(Debug, Clone)]
pub struct Part {
    pub file: String,
    pub report: Report,
}

/// Why reports could not be merged; every message names the files.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give at least one report")]
    Empty,
    #[error(
        "{file}: report format {found}; this hindsight reads and writes format {REPORT_FORMAT}"
    )]
    Format { file: String, found: u32 },
    #[error(
        "{file}: its `input` section differs from {first}'s: the reports are not of the same \
         paths (every shard must be given the same paths, spelled the same way)"
    )]
    Input { file: String, first: String },
    #[error(
        "{file} is a whole report and {shard_file} is shard {shard}: merge the shards of one \
         split, or whole reports of disjoint corpora"
    )]
    Mixed {
        file: String,
        shard_file: String,
        shard: Shard,
    },
    #[error("{file} is shard {shard} and {first} is shard {first_shard}: not one split")]
    Split {
        file: String,
        shard: Shard,
        first: String,
        first_shard: Shard,
    },
    #[error("{file} and {first} are both shard {shard}")]
    Repeated {
        file: String,
        first: String,
        shard: Shard,
    },
    #[error("{missing} missing: the reports given are {given}")]
    Missing { missing: String, given: String },
    #[error(
        "{file}: its {what} differs from {first}'s: not shards of one sweep (give every shard \
         the same --param, --expect, --select, --holdout and --resamples)"
    )]
    Differs {
        file: String,
        first: String,
        what: &'static str,
    },
    #[error("{file}: `choice.select`: {message}")]
    Select { file: String, message: String },
    #[error("{file} is a sweep and {other} is a replay report: merge one kind at a time")]
    Kinds { file: String, other: String },
    #[error("{file}: sweep format {found}; this hindsight reads and writes format {expected}")]
    SweepFormat {
        file: String,
        found: u32,
        expected: u32,
    },
    #[error(
        "the labels match none of the runs of {files}: nothing to score (each shard skips \
         that check; merged, the sweep makes it)"
    )]
    Unlabelled { files: String },
    #[error(
        "{file}: no `replayed` section (what identifies its replay: paths, version, guards, \
         settings, prices), so it cannot be told to be of one replay with the others: replay \
         it again with this hindsight"
    )]
    Unidentified { file: String },
    #[error(
        "{file}: `replayed.{what}` is {value:?} where {first} has {first_value:?}: not \
         shards of one replay (give every shard the same paths, spelled the same way, and \
         the same hindsight, --config, --set, --guard and --prices)"
    )]
    Replayed {
        file: String,
        first: String,
        what: &'static str,
        value: String,
        first_value: String,
    },
    #[error("project {project} is in both {first} and {file}: overlapping shards")]
    Overlap {
        project: String,
        first: String,
        file: String,
    },
}

/// The report the parts are shards of ([`Part`]s in any order).
pub fn merge(parts: Vec<Part>) -> Result<Report, MergeError> {
    let first = parts.first().ok_or(MergeError::Empty)?;
    for part in &parts {
        if part.report.format != REPORT_FORMAT {
            return Err(MergeError::Format {
                file: part.file.clone(),
                found: part.report.format,
            });
        }
        if part.report.input != first.report.input {
            return Err(MergeError::Input {
                file: part.file.clone(),
                first: first.file.clone(),
            });
        }
        check_replayed(
            (&part.file, part.report.replayed.as_ref()),
            (&first.file, first.report.replayed.as_ref()),
            part.report.shard.is_some() || first.report.shard.is_some(),
        )?;
    }
    let split: Vec<(&str, Option<Shard>)> = parts
        .iter()
        .map(|p| (p.file.as_str(), p.report.shard))
        .collect();
    check_split(&split)?;
    let projects: Vec<(&str, Vec<&str>)> = parts
        .iter()
        .map(|p| {
            let names = p.report.runs.iter().map(|r| r.project.as_str()).collect();
            (p.file.as_str(), names)
        })
        .collect();
    check_disjoint(&projects)?;
    let input = first.report.input.clone();
    let replayed = replayed_of(parts.iter().map(|p| p.report.replayed.as_ref()));
    let format = first.report.format;
    let guards = guards_of(&parts);
    let mut runs: Vec<_> = parts.into_iter().flat_map(|p| p.report.runs).collect();
    // Stable: the runs of one project (all from one shard) keep that shard's order.
    runs.sort_by(|a, b| a.project.cmp(&b.project));
    let summary = summarize_with(SummaryBuilder::over(guards), &runs);
    Ok(Report {
        format,
        runs,
        summary,
        input: Default::default(),
        replayed,
        shard: None,
    }
    .with_unread(input))
}

/// What identifies the merged replay: the parts' (checked to agree). Shards share their
/// paths, kept as given; whole reports of disjoint corpora each had their own, and the
/// merged report lists them all, sorted, so the order the reports are given in does not
/// show.
pub fn replayed_of<'r>(parts: impl Iterator<Item = Option<&'r Replayed>>) -> Option<Replayed> {
    let mut merged: Option<Replayed> = None;
    let mut others = false;
    for replayed in parts.flatten() {
        match &mut merged {
            None => merged = Some(replayed.clone()),
            Some(m) if m.paths != replayed.paths => {
                m.paths.extend(replayed.paths.iter().cloned());
                others = true;
            }
            Some(_) => {}
        }
    }
    if let (Some(m), true) = (&mut merged, others) {
        m.paths.sort();
        m.paths.dedup();
    }
    merged
}

/// A part (`(file, what identifies its replay)`) and the first part are of one replay:
/// both say what identifies it, and agree on all of it (issue #32, F). Shards of different
/// paths, or reports of different versions, guards, settings or prices, would merge into
/// one no replay gives. Whole reports (`shards` false) are of disjoint corpora, so of other
/// paths by design: their paths are not compared.
pub fn check_replayed(
    part: (&str, Option<&Replayed>),
    first: (&str, Option<&Replayed>),
    shards: bool,
) -> Result<(), MergeError> {
    let of = |(file, replayed): (&str, Option<&Replayed>)| {
        replayed.cloned().ok_or_else(|| MergeError::Unidentified {
            file: file.to_string(),
        })
    };
    let (mine, theirs) = (of(part)?, of(first)?);
    for ((what, a), (_, b)) in mine.members().into_iter().zip(theirs.members()) {
        if a != b && (shards || what != "paths") {
            return Err(MergeError::Replayed {
                file: part.0.to_string(),
                first: first.0.to_string(),
                what,
                value: a,
                first_value: b,
            });
        }
    }
    Ok(())
}

/// No project in two parts, given as `(file, the projects of its runs)`.
pub fn check_disjoint(parts: &[(&str, Vec<&str>)]) -> Result<(), MergeError> {
    // The part each project's runs are in (by position: one file may be given twice).
    let mut owner: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, (file, projects)) in parts.iter().enumerate() {
        for &project in projects {
            let first = *owner.entry(project).or_insert(i);
            if first != i {
                return Err(MergeError::Overlap {
                    project: project.to_string(),
                    first: parts[first].0.to_string(),
                    file: file.to_string(),
                });
            }
        }
    }
    Ok(())
}

/// The parts' `shard` fields, as `(file, shard)`: none at all, or shards 1..=N of one N,
/// each once. Replay reports and sweeps are split alike.
pub fn check_split(parts: &[(&str, Option<Shard>)]) -> Result<(), MergeError> {
    let whole = parts.iter().find(|(_, shard)| shard.is_none());
    let sharded: Vec<(&str, Shard)> = parts
        .iter()
        .filter_map(|&(file, shard)| Some((file, shard?)))
        .collect();
    let Some(&(first, first_shard)) = sharded.first() else {
        return Ok(());
    };
    if let Some((whole, _)) = whole {
        return Err(MergeError::Mixed {
            file: whole.to_string(),
            shard_file: first.to_string(),
            shard: first_shard,
        });
    }
    let mut seen: BTreeMap<u32, &str> = BTreeMap::new();
    for &(file, shard) in &sharded {
        if shard.count != first_shard.count {
            return Err(MergeError::Split {
                file: file.to_string(),
                shard,
                first: first.to_string(),
                first_shard,
            });
        }
        if let Some(other) = seen.insert(shard.index, file) {
            return Err(MergeError::Repeated {
                file: file.to_string(),
                first: other.to_string(),
                shard,
            });
        }
    }
    let count = first_shard.count;
    let missing: Vec<String> = (1..=count)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("shard {k}/{count}"))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let given: Vec<String> = seen
        .iter()
        .map(|(k, file)| format!("shard {k}/{count} ({file})"))
        .collect();
    Err(MergeError::Missing {
        missing: missing.join(", "),
        given: given.join(", "),
    })
}
/// The guards the parts were replayed with, as their summaries list them (id, work order),
/// each once, in the order first listed: the built-in catalogue, then any external guards
/// (issue #15), which the merging process need not know.
fn guards_of(parts: &[Part]) -> Vec<(String, String)> {
    let mut guards: Vec<(String, String)> = Vec::new();
    for g in parts.iter().flat_map(|p| &p.report.summary.guards) {
        if !guards.iter().any(|(id, _)| *id == g.guard) {
            guards.push((g.guard.clone(), g.work_order.clone()));
        }
    }
    guards
}
