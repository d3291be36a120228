//! `sweep --select`: choosing a setting without fooling yourself (issue #29, item 4;
//! docs/GATE.md, *Choosing a setting*).
//!
//! A setting picked as the best of a grid on the same runs it is then scored on looks
//! better than it is. So the projects are split once, by a hash of each project's name
//! (deterministic, no project on both sides): the setting is chosen on the training part
//! under a constraint and an objective, and reported on the held-out part, with intervals,
//! beside the seeds' defaults on the same held-out runs.

use super::scores::{bootstrap, total, Intervals, Tally};
use super::sweep::{Point, Setting};
use serde::Serialize;

/// A score a selection can name, computed from a tally of runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScoreName {
    /// Healthy runs cut short / healthy runs.
    FalseCutRate,
    /// Failed runs cut short / failed runs.
    FailedCutRate,
    /// Healthy runs a swept guard fired on, uncut / healthy runs.
    AdvisedHealthyRate,
    /// Combined tokens saved on failed runs.
    TokensSavedOnFailed,
    /// Combined tokens of the healthy runs cut.
    TokensLostOnHealthy,
}

const NAMES: [(&str, ScoreName); 5] = [
    ("false_cut_rate", ScoreName::FalseCutRate),
    ("failed_cut_rate", ScoreName::FailedCutRate),
    ("advised_healthy_rate", ScoreName::AdvisedHealthyRate),
    ("tokens_saved_on_failed", ScoreName::TokensSavedOnFailed),
    ("tokens_lost_on_healthy", ScoreName::TokensLostOnHealthy),
];

impl ScoreName {
    fn parse(text: &str) -> Result<Self, String> {
        NAMES
            .iter()
            .find(|(n, _)| *n == text)
            .map(|(_, s)| *s)
            .ok_or_else(|| {
                let known: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
                format!("unknown score `{text}` (one of {})", known.join(", "))
            })
    }

    fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("?", |(n, _)| n)
    }

    /// The score of `t`; `None` when it has no run to be a rate of.
    fn of(self, t: &Tally) -> Option<f64> {
        let rate = |part: u64, whole: u64| (whole > 0).then(|| part as f64 / whole as f64);
        match self {
            Self::FalseCutRate => rate(t.cut_healthy, t.healthy),
            Self::FailedCutRate => rate(t.cut_failed, t.failed),
            Self::AdvisedHealthyRate => rate(t.advised_healthy, t.healthy),
            Self::TokensSavedOnFailed => Some(t.saved_failed as f64),
            Self::TokensLostOnHealthy => Some(t.lost_healthy as f64),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    AtMost,
    Below,
    AtLeast,
    Above,
}

/// `score <= value` and the like.
#[derive(Debug, Clone, PartialEq)]
struct Constraint {
    score: ScoreName,
    op: Op,
    value: f64,
}

impl Constraint {
    /// `false_cut_rate<=0.01`.
    fn describe(&self) -> String {
        let op = match self.op {
            Op::AtMost => "<=",
            Op::Below => "<",
            Op::AtLeast => ">=",
            Op::Above => ">",
        };
        format!("{}{op}{}", self.score.name(), self.value)
    }

    fn holds(&self, t: &Tally) -> bool {
        self.score.of(t).is_some_and(|x| match self.op {
            Op::AtMost => x <= self.value,
            Op::Below => x < self.value,
            Op::AtLeast => x >= self.value,
            Op::Above => x > self.value,
        })
    }
}

/// What `--select` asks: constraints every chosen setting meets on the training projects,
/// and the score it then maximizes (or minimizes).
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    text: String,
    constraints: Vec<Constraint>,
    objective: ScoreName,
    maximize: bool,
}

impl std::str::FromStr for Selection {
    type Err = String;

    /// `false_cut_rate<=0.01`, `false_cut_rate<=0.01,max tokens_saved_on_failed`: comma
    /// separated constraints (`<=`, `<`, `>=`, `>` and a number) and at most one objective
    /// (`max NAME` or `min NAME`; by default `max tokens_saved_on_failed`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut constraints = Vec::new();
        let mut objective = None;
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some((dir, name)) = part
                .split_once(' ')
                .filter(|(d, _)| ["max", "min"].contains(d))
            {
                if objective.is_some() {
                    return Err(format!("{text}: one objective (max or min) at most"));
                }
                objective = Some((ScoreName::parse(name.trim())?, dir == "max"));
                continue;
            }
            let (name, op, value) = [("<=", Op::AtMost), (">=", Op::AtLeast), ("<", Op::Below), (">", Op::Above)]
                .iter()
                .find_map(|(sym, op)| part.split_once(sym).map(|(n, v)| (n, *op, v)))
                .ok_or_else(|| format!("{part}: expected NAME<=VALUE, NAME>=VALUE, NAME<VALUE, NAME>VALUE, max NAME or min NAME"))?;
            let value: f64 = value
                .trim()
                .parse()
                .map_err(|_| format!("{part}: `{}` is not a number", value.trim()))?;
            constraints.push(Constraint {
                score: ScoreName::parse(name.trim())?,
                op,
                value,
            });
        }
        let (objective, maximize) = objective.unwrap_or((ScoreName::TokensSavedOnFailed, true));
        Ok(Self {
            text: text.trim().to_string(),
            constraints,
            objective,
            maximize,
        })
    }
}

/// Figures over a set of projects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub failed_runs: u64,
    pub healthy_runs: u64,
    pub failed_cut: u64,
    pub false_terminal_on_healthy: u64,
    pub tokens_saved_on_failed: u64,
    pub tokens_lost_on_healthy: u64,
    pub intervals: Intervals,
}

impl Figures {
    fn of(projects: &[Tally], resamples: u32) -> Self {
        let t = total(projects);
        Self {
            failed_runs: t.failed,
            healthy_runs: t.healthy,
            failed_cut: t.cut_failed,
            false_terminal_on_healthy: t.cut_healthy,
            tokens_saved_on_failed: t.saved_failed,
            tokens_lost_on_healthy: t.lost_healthy,
            intervals: bootstrap(projects, resamples).with_edges(&t),
        }
    }
}

/// A setting's figures on the held-out projects, pooled and per harness.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldOut {
    pub setting: Setting,
    #[serde(flatten)]
    pub figures: Figures,
    pub by_harness: Vec<HarnessFigures>,
    /// The held-out projects' runs together, for judging the constraints on them.
    #[serde(skip)]
    pub tally: Tally,
}

/// One harness's held-out projects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HarnessFigures {
    pub harness: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// What `--select` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    pub select: String,
    pub holdout: f64,
    pub training_projects: usize,
    pub held_out_projects: usize,
    /// The chosen setting on the held-out projects; `None` when no setting meets the
    /// constraints on the training projects.
    pub chosen: Option<HeldOut>,
    /// The seeds' defaults on the same held-out projects, when the grid holds them.
    pub defaults: Option<HeldOut>,
}

/// One side of the split: each project's harness and tally.
type Side = Vec<(String, Tally)>;

/// Whether `project` is held out: a hash of its name, the fraction `holdout` of them.
fn held_out(project: &str, holdout: f64) -> bool {
    let bucket = crate::shard::fnv1a64(project.as_bytes()) % 10_000;
    (bucket as f64) < holdout * 10_000.0
}

/// Chooses among `points` on the training projects and scores the choice on the held-out
/// ones (the `holdout` fraction, by a hash of each project's name).
pub fn choose(points: &[Point], selection: &Selection, holdout: f64, resamples: u32) -> Choice {
    let is_held = |name: &str| held_out(name, holdout);
    choose_where(points, selection, &is_held, holdout, resamples)
}

/// The fold (0-based) of `k` a project belongs to, by a hash of its name.
fn fold_of(project: &str, k: u32) -> u32 {
    (crate::shard::fnv1a64(project.as_bytes()) % u64::from(k.max(1))) as u32
}

/// `--folds K`: the projects split into K folds by a hash of their names; each fold's
/// setting is chosen on the other folds and scored on it, so every project is held out
/// once, and the held-out figures pooled over the folds are a cross-validated estimate of
/// what choosing by this rule gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Folds {
    pub select: String,
    pub folds: u32,
    /// Each fold's choice (its `holdout` is its share of the projects' hash space, 1/K).
    pub per_fold: Vec<Choice>,
    /// Every project of a fold with a choice, at the setting chosen without it.
    pub pooled: Option<Figures>,
    /// The same projects at the seeds' defaults, when the grid holds them.
    pub pooled_defaults: Option<Figures>,
}

/// Chooses in each of `k` folds and pools the held-out figures.
pub fn choose_folds(points: &[Point], selection: &Selection, k: u32, resamples: u32) -> Folds {
    let share = 1.0 / f64::from(k.max(1));
    let per_fold: Vec<Choice> = (0..k)
        .map(|i| {
            let is_held = |name: &str| fold_of(name, k) == i;
            choose_where(points, selection, &is_held, share, resamples)
        })
        .collect();
    let default = points.iter().find(|p| p.is_default);
    let (mut chosen, mut defaults) = (Vec::new(), Vec::new());
    for (i, choice) in per_fold.iter().enumerate() {
        let Some(held) = &choice.chosen else { continue };
        let Some(point) = points.iter().find(|p| p.setting == held.setting) else {
            continue;
        };
        // Every point holds the same projects in the same order (one set of runs).
        for (j, name) in point.projects().iter().enumerate() {
            if fold_of(name, k) == i as u32 {
                chosen.push(point.tallies()[j]);
                defaults.extend(default.map(|d| d.tallies()[j]));
            }
        }
    }
    let pooled = (!chosen.is_empty()).then(|| Figures::of(&chosen, resamples));
    let pooled_defaults = (!defaults.is_empty()).then(|| Figures::of(&defaults, resamples));
    Folds {
        select: selection.text.clone(),
        folds: k,
        per_fold,
        pooled,
        pooled_defaults,
    }
}

/// [`choose`] with the held-out projects those `is_held` names (`holdout`: their share,
/// as the output states it).
fn choose_where(
    points: &[Point],
    selection: &Selection,
    is_held: &dyn Fn(&str) -> bool,
    holdout: f64,
    resamples: u32,
) -> Choice {
    // Each side: (harness, tally) per project.
    let split = |p: &Point| -> (Side, Side) {
        let (test, train): (Vec<_>, Vec<_>) = p
            .projects()
            .iter()
            .zip(p.harnesses().iter().zip(p.tallies()))
            .partition(|(name, _)| is_held(name));
        let strip = |v: Vec<(&String, (&String, &Tally))>| {
            v.into_iter().map(|(_, (h, t))| (h.clone(), *t)).collect()
        };
        (strip(train), strip(test))
    };
    let tallies = |v: &[(String, Tally)]| -> Vec<Tally> { v.iter().map(|(_, t)| *t).collect() };
    let (train_n, test_n) = points.first().map_or((0, 0), |p| {
        let (a, b) = split(p);
        (a.len(), b.len())
    });
    let objective = |t: &Tally| selection.objective.of(t).unwrap_or(f64::NEG_INFINITY);
    let sign = if selection.maximize { 1.0 } else { -1.0 };
    // The first best in grid order: the grid is deterministic, so is the choice.
    let mut best: Option<(usize, f64)> = None;
    for (i, p) in points.iter().enumerate() {
        let train = total(&tallies(&split(p).0));
        if !selection.constraints.iter().all(|c| c.holds(&train)) {
            continue;
        }
        let score = sign * objective(&train);
        if best.is_none_or(|(_, b)| score > b) {
            best = Some((i, score));
        }
    }
    let held = |p: &Point| {
        let test = split(p).1;
        let harnesses: std::collections::BTreeSet<&String> = test.iter().map(|(h, _)| h).collect();
        HeldOut {
            setting: p.setting.clone(),
            tally: total(&tallies(&test)),
            figures: Figures::of(&tallies(&test), resamples),
            by_harness: harnesses
                .into_iter()
                .map(|h| HarnessFigures {
                    harness: h.clone(),
                    figures: Figures::of(
                        &test
                            .iter()
                            .filter(|(x, _)| x == h)
                            .map(|(_, t)| *t)
                            .collect::<Vec<_>>(),
                        resamples,
                    ),
                })
                .collect(),
        }
    };
    Choice {
        select: selection.text.clone(),
        holdout,
        training_projects: train_n,
        held_out_projects: test_n,
        chosen: best.map(|(i, _)| held(&points[i])),
        defaults: points.iter().find(|p| p.is_default).map(held),
    }
}

impl Selection {
    /// The first constraint `t` breaks (a rate over no run breaks it), as written.
    pub fn broken(&self, t: &Tally) -> Option<String> {
        self.constraints
            .iter()
            .find(|c| !c.holds(t))
            .map(Constraint::describe)
    }

    /// The constraints and objective, as the output states them.
    pub fn describe(&self) -> String {
        let direction = if self.maximize { "max" } else { "min" };
        format!("{} ({direction} {})", self.text, self.objective.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar() {
        let s: Selection = "false_cut_rate<=0.01".parse().unwrap();
        assert_eq!(s.objective, ScoreName::TokensSavedOnFailed);
        assert!(s.maximize);
        let s: Selection = "false_cut_rate<0.1, failed_cut_rate>=0.2, min tokens_lost_on_healthy"
            .parse()
            .unwrap();
        assert_eq!(s.constraints.len(), 2);
        assert_eq!(s.constraints[1].op, Op::AtLeast);
        assert!(!s.maximize);
        for bad in [
            "false_cut<=0.1",
            "false_cut_rate<=x",
            "false_cut_rate=0.1",
            "max a, max b",
        ] {
            assert!(bad.parse::<Selection>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_project_is_on_one_side_and_the_split_follows_the_fraction() {
        let names: Vec<String> = (0..2000).map(|i| format!("proj-{i}")).collect();
        let held = names.iter().filter(|n| held_out(n, 0.3)).count();
        assert!((500..700).contains(&held), "{held}");
        assert_eq!(
            names.iter().filter(|n| held_out(n, 0.3)).count(),
            held,
            "the same names, the same split"
        );
        assert_eq!(names.iter().filter(|n| held_out(n, 0.0)).count(), 0);
    }
}
