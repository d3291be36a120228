//! Per-guard scores over a labeled corpus (docs/GATE.md, *Scores*): on failed and on healthy
//! runs apart, how many it cut short and how many it only advised on; how early it fires;
//! tokens and dollars saved on failed runs and lost on the healthy runs it cut; and whether
//! its firing tells failed runs from healthy ones (P(failed | fired) against P(failed | not
//! fired)). Issue #29: a guard that fires on every run scored a perfect recall.
//!
//! Every rate and saving carries a 95% bootstrap interval over projects (whole projects are
//! resampled: a project's sessions are not independent), seeded, so the same report gives
//! the same intervals. The point figures and every resample are computed by one piece of
//! code, [`Tally::figures`], from per-project tallies.

use super::labels::{Label, Labels};
use crate::report::{dollar_sum, dollars, Report, RunReport};
use crate::rng::Rng;
use serde::Serialize;
use std::collections::BTreeMap;

/// Resamples of the bootstrap when no count is given (`--resamples`).
pub const DEFAULT_RESAMPLES: u32 = 1000;

/// The bootstrap's seed: fixed, so intervals are reproducible.
const SEED: u64 = 0x6869_6e64_7369_6768;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GuardScore {
    pub guard: String,
    pub work_order: String,
    pub failed_runs: usize,
    /// Failed runs on which the guard fired at all.
    pub fired_on_failed: usize,
    /// `fired_on_failed / failed_runs`, in thousandths (integers keep output stable).
    pub recall_permille: u32,
    /// Median first-fire turn over the failed runs it fired on.
    pub median_turn_to_fire: Option<u32>,
    pub healthy_runs: usize,
    /// Healthy runs this guard would have cut short.
    pub false_terminal_on_healthy: usize,
    pub tokens_saved_on_failed: u64,
    /// Its dollars alone over the failed runs that were priced; `None` when none was.
    pub cost_saved_usd_on_failed: Option<f64>,
    /// Healthy runs on which it fired at all.
    pub fired_on_healthy: usize,
    /// Failed runs it cut short (a terminal firing).
    pub cut_on_failed: usize,
    /// Runs on which it fired without cutting (advisory, suppress, shrink firings only).
    pub advisory_on_failed: usize,
    pub advisory_on_healthy: usize,
    /// Its savings on the healthy runs it cut short: the work a false cut throws away.
    pub tokens_lost_on_healthy: u64,
    pub cost_lost_usd_on_healthy: Option<f64>,
    /// P(failed | it fired) and P(failed | it did not), in thousandths; `None` when no
    /// labeled run is on that side.
    pub failed_if_fired_permille: Option<u32>,
    pub failed_if_not_fired_permille: Option<u32>,
    /// Whether its firing tells failed runs from healthy ones (docs/GATE.md); `None` when
    /// it fired on no labeled run.
    pub discriminates: Option<Discrimination>,
    /// 95% bootstrap intervals of the figures above.
    pub intervals: Intervals,
}

/// Whether a guard fires on a larger share of the failed runs than of the healthy ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Discrimination {
    /// The share on failed runs is larger, and the two shares' intervals do not overlap.
    Yes,
    /// It is larger, but the intervals overlap: too few runs to say.
    Unclear,
    /// It fires on as large a share of the healthy runs, or a larger one.
    No,
}

impl Discrimination {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Yes => "yes",
            Self::Unclear => "unclear",
            Self::No => "no",
        }
    }
}

/// The 2.5th and 97.5th percentiles of each figure over the resamples; `None` where the
/// figure is undefined in every resample (no run on that side, nothing priced).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Intervals {
    pub resamples: u32,
    pub cut_on_failed_permille: Option<[u32; 2]>,
    pub cut_on_healthy_permille: Option<[u32; 2]>,
    pub advisory_on_failed_permille: Option<[u32; 2]>,
    pub advisory_on_healthy_permille: Option<[u32; 2]>,
    pub tokens_saved_on_failed: Option<[u64; 2]>,
    pub tokens_lost_on_healthy: Option<[u64; 2]>,
    pub cost_saved_usd_on_failed: Option<[f64; 2]>,
    pub cost_lost_usd_on_healthy: Option<[f64; 2]>,
    pub failed_if_fired_permille: Option<[u32; 2]>,
    pub failed_if_not_fired_permille: Option<[u32; 2]>,
    /// Shares of the failed and of the healthy runs it fired on at all.
    pub fired_on_failed_permille: Option<[u32; 2]>,
    pub fired_on_healthy_permille: Option<[u32; 2]>,
}

impl Intervals {
    /// Resampling cannot reach past what was seen: 0 cuts in 8 runs resample to 0 every
    /// time. A rate whose count is none or all of its runs gets the rule of three instead
    /// (the 95% bound for no event in n trials: up to 3/n), so "0 of 8" reads as at most
    /// 0.38, not as certainty.
    pub(super) fn with_edges(mut self, t: &Tally) -> Self {
        let fired = t.fired_failed + t.fired_healthy;
        let not_fired = t.failed + t.healthy - fired;
        let edges = [
            (&mut self.cut_on_failed_permille, t.cut_failed, t.failed),
            (&mut self.cut_on_healthy_permille, t.cut_healthy, t.healthy),
            (
                &mut self.advisory_on_failed_permille,
                t.advised_failed,
                t.failed,
            ),
            (
                &mut self.advisory_on_healthy_permille,
                t.advised_healthy,
                t.healthy,
            ),
            (&mut self.failed_if_fired_permille, t.fired_failed, fired),
            (
                &mut self.failed_if_not_fired_permille,
                t.failed - t.fired_failed,
                not_fired,
            ),
            (&mut self.fired_on_failed_permille, t.fired_failed, t.failed),
            (
                &mut self.fired_on_healthy_permille,
                t.fired_healthy,
                t.healthy,
            ),
        ];
        for (interval, count, runs) in edges {
            if runs == 0 {
                continue;
            }
            let reach = (3000 / runs).min(1000) as u32;
            if count == 0 {
                *interval = Some([0, reach]);
            } else if count == runs {
                *interval = Some([1000 - reach, 1000]);
            }
        }
        self
    }
}

/// What a score counts of one run: whether the guard (or the swept setting) fired on it,
/// whether it was cut short, and the tokens and dollars the firings saved.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunOutcome {
    pub fired: bool,
    pub cut: bool,
    pub saved: u64,
    pub usd: Option<f64>,
}

/// What one guard did on a set of labeled runs: every score is made of these counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub(super) failed: u64,
    pub(super) healthy: u64,
    pub(super) fired_failed: u64,
    pub(super) fired_healthy: u64,
    pub(super) cut_failed: u64,
    pub(super) cut_healthy: u64,
    /// Fired on, and not cut short.
    pub(super) advised_failed: u64,
    pub(super) advised_healthy: u64,
    pub(super) saved_failed: u64,
    pub(super) lost_healthy: u64,
    /// Dollars, and whether any run behind them was priced.
    pub(super) saved_usd_failed: Option<f64>,
    pub(super) lost_usd_healthy: Option<f64>,
}

/// The figures that carry an interval, in the order of [`Intervals`]' fields.
const FIGURES: usize = 12;

impl Tally {
    fn of(label: Label, outcome: RunOutcome) -> Self {
        let RunOutcome {
            fired,
            cut,
            saved,
            usd,
        } = outcome;
        let failed = label == Label::Failed;
        Self {
            failed: u64::from(failed),
            healthy: u64::from(!failed),
            fired_failed: u64::from(failed && fired),
            fired_healthy: u64::from(!failed && fired),
            cut_failed: u64::from(failed && cut),
            cut_healthy: u64::from(!failed && cut),
            advised_failed: u64::from(failed && fired && !cut),
            advised_healthy: u64::from(!failed && fired && !cut),
            saved_failed: if failed { saved } else { 0 },
            lost_healthy: if !failed && cut { saved } else { 0 },
            saved_usd_failed: usd.filter(|_| failed),
            lost_usd_healthy: usd.filter(|_| !failed && cut),
        }
    }

    fn add(&mut self, other: &Tally) {
        let plus = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        self.failed += other.failed;
        self.healthy += other.healthy;
        self.fired_failed += other.fired_failed;
        self.fired_healthy += other.fired_healthy;
        self.cut_failed += other.cut_failed;
        self.cut_healthy += other.cut_healthy;
        self.advised_failed += other.advised_failed;
        self.advised_healthy += other.advised_healthy;
        self.saved_failed = self.saved_failed.saturating_add(other.saved_failed);
        self.lost_healthy = self.lost_healthy.saturating_add(other.lost_healthy);
        self.saved_usd_failed = plus(self.saved_usd_failed, other.saved_usd_failed);
        self.lost_usd_healthy = plus(self.lost_usd_healthy, other.lost_usd_healthy);
    }

    /// The figures with intervals, as numbers (rates as fractions).
    fn figures(&self) -> [Option<f64>; FIGURES] {
        let rate = |part: u64, whole: u64| (whole > 0).then(|| part as f64 / whole as f64);
        let fired = self.fired_failed + self.fired_healthy;
        let not_fired = self.failed + self.healthy - fired;
        [
            rate(self.cut_failed, self.failed),
            rate(self.cut_healthy, self.healthy),
            rate(self.advised_failed, self.failed),
            rate(self.advised_healthy, self.healthy),
            Some(self.saved_failed as f64),
            Some(self.lost_healthy as f64),
            self.saved_usd_failed,
            self.lost_usd_healthy,
            rate(self.fired_failed, fired),
            rate(self.failed - self.fired_failed, not_fired),
            rate(self.fired_failed, self.failed),
            rate(self.fired_healthy, self.healthy),
        ]
    }
}

/// Scores every guard `report` covers (its summary's, the catalogue it was replayed with)
/// over its labeled runs, with `resamples` bootstrap resamples for the intervals.
pub fn score(report: &Report, labels: &Labels, resamples: u32) -> Vec<GuardScore> {
    score_runs(report, report.runs.iter(), labels, resamples)
}

/// The scores of each harness's labeled runs apart (issue #29: one corpus of
/// mini-swe-agent and SWE-agent runs gives a row per harness), by the format the runs were
/// read from, in name order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HarnessScores {
    pub harness: String,
    pub scores: Vec<GuardScore>,
}

pub fn score_by_harness(report: &Report, labels: &Labels, resamples: u32) -> Vec<HarnessScores> {
    score_by(report, labels, resamples, |r| r.format.clone())
        .into_iter()
        .map(|(harness, scores)| HarnessScores { harness, scores })
        .collect()
}

/// The scores of each model's labeled runs apart (the models a run's requests name,
/// `+`-joined when several; `(not named)` when the log names none), in name order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelScores {
    pub model: String,
    pub scores: Vec<GuardScore>,
}

pub fn score_by_model(report: &Report, labels: &Labels, resamples: u32) -> Vec<ModelScores> {
    score_by(report, labels, resamples, RunReport::model)
        .into_iter()
        .map(|(model, scores)| ModelScores { model, scores })
        .collect()
}

/// The scores of the labeled runs of each `group`, apart, in group order.
fn score_by(
    report: &Report,
    labels: &Labels,
    resamples: u32,
    group: impl Fn(&RunReport) -> String,
) -> Vec<(String, Vec<GuardScore>)> {
    let mut groups: BTreeMap<String, Vec<&RunReport>> = BTreeMap::new();
    for run in report.runs.iter().filter(|r| labels.get(r).is_some()) {
        groups.entry(group(run)).or_default().push(run);
    }
    groups
        .into_iter()
        .map(|(name, runs)| {
            let scores = score_runs(report, runs.into_iter(), labels, resamples);
            (name, scores)
        })
        .collect()
}

/// Scores the guards of `report`'s catalogue over `runs` (some of its runs).
fn score_runs<'r>(
    report: &Report,
    runs: impl Iterator<Item = &'r RunReport>,
    labels: &Labels,
    resamples: u32,
) -> Vec<GuardScore> {
    let labeled: Vec<(&RunReport, Label)> = runs
        .filter_map(|r| labels.get(r).map(|l| (r, l.label)))
        .collect();
    let failed: Vec<&RunReport> = labeled
        .iter()
        .filter(|(_, l)| *l == Label::Failed)
        .map(|(r, _)| *r)
        .collect();
    let healthy: Vec<&RunReport> = labeled
        .iter()
        .filter(|(_, l)| *l == Label::Healthy)
        .map(|(r, _)| *r)
        .collect();
    report
        .summary
        .guards
        .iter()
        .map(|entry| {
            let id = entry.guard.as_str();
            let projects = tallies(&labeled, |run| RunOutcome {
                fired: run.firings.iter().any(|f| f.guard == id),
                cut: cuts(run, id),
                saved: run.savings.by_guard.get(id).copied().unwrap_or(0),
                usd: run.cost_saved_by(id),
            });
            let whole = total(&projects);
            let intervals = bootstrap(&projects, resamples).with_edges(&whole);
            let mut turns: Vec<u32> = failed
                .iter()
                .filter_map(|r| {
                    r.firings
                        .iter()
                        .filter(|f| f.guard == id)
                        .map(|f| f.turn)
                        .min()
                })
                .collect();
            turns.sort_unstable();
            let count = |n: u64| n as usize;
            let fired = whole.fired_failed + whole.fired_healthy;
            let not_fired = whole.failed + whole.healthy - fired;
            let cut_healthy: Vec<&RunReport> =
                healthy.iter().copied().filter(|r| cuts(r, id)).collect();
            GuardScore {
                guard: id.to_string(),
                work_order: entry.work_order.clone(),
                failed_runs: failed.len(),
                fired_on_failed: count(whole.fired_failed),
                recall_permille: permille(count(whole.fired_failed), failed.len()),
                median_turn_to_fire: median(&turns),
                healthy_runs: healthy.len(),
                false_terminal_on_healthy: count(whole.cut_healthy),
                tokens_saved_on_failed: whole.saved_failed,
                cost_saved_usd_on_failed: dollar_sum(failed.iter().map(|r| r.cost_saved_by(id))),
                fired_on_healthy: count(whole.fired_healthy),
                cut_on_failed: count(whole.cut_failed),
                advisory_on_failed: count(whole.advised_failed),
                advisory_on_healthy: count(whole.advised_healthy),
                tokens_lost_on_healthy: whole.lost_healthy,
                cost_lost_usd_on_healthy: dollar_sum(
                    cut_healthy.iter().map(|r| r.cost_saved_by(id)),
                ),
                failed_if_fired_permille: share(whole.fired_failed, fired),
                failed_if_not_fired_permille: share(whole.failed - whole.fired_failed, not_fired),
                discriminates: discrimination(&whole, &intervals),
                intervals,
            }
        })
        .collect()
}

/// One tally per project, in project order (the order the bootstrap draws from).
pub(super) fn tallies(
    labeled: &[(&RunReport, Label)],
    outcome: impl Fn(&RunReport) -> RunOutcome,
) -> Vec<Tally> {
    let runs = labeled
        .iter()
        .map(|(run, label)| (run.project.as_str(), *label, outcome(run)));
    named_tallies(runs).into_iter().map(|(_, t)| t).collect()
}

/// One tally per project, with its name, of runs given as `(project, label, outcome)`.
pub(super) fn named_tallies<'r>(
    runs: impl IntoIterator<Item = (&'r str, Label, RunOutcome)>,
) -> Vec<(String, Tally)> {
    let mut projects: BTreeMap<&str, Tally> = BTreeMap::new();
    for (project, label, outcome) in runs {
        projects
            .entry(project)
            .or_default()
            .add(&Tally::of(label, outcome));
    }
    projects
        .into_iter()
        .map(|(name, t)| (name.to_string(), t))
        .collect()
}

/// The sum of `projects`.
pub(super) fn total(projects: &[Tally]) -> Tally {
    let mut whole = Tally::default();
    projects.iter().for_each(|t| whole.add(t));
    whole
}

/// The projects each resample draws, by index: as many as there are, with replacement.
/// One seed, so every caller (every guard, every setting) draws the same sequence.
fn draws(projects: usize, resamples: u32) -> impl Iterator<Item = Vec<usize>> {
    let mut rng = Rng::new(SEED);
    let n = projects as u64;
    (0..resamples)
        .take_while(move |_| n > 0)
        .map(move |_| (0..n).map(|_| rng.below(n) as usize).collect())
}

/// 95% intervals of every figure over `resamples` draws of as many projects as there are,
/// with replacement. Every guard draws the same projects (one seed), so figures of two
/// guards are compared on the same resamples.
pub(super) fn bootstrap(projects: &[Tally], resamples: u32) -> Intervals {
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); FIGURES];
    for drawn in draws(projects.len(), resamples) {
        let mut sum = Tally::default();
        drawn.iter().for_each(|&i| sum.add(&projects[i]));
        for (i, figure) in sum.figures().into_iter().enumerate() {
            values[i].extend(figure);
        }
    }
    let bounds: Vec<Option<[f64; 2]>> = values.iter_mut().map(|v| percentiles(v)).collect();
    let bounds = |i: usize| bounds[i];
    let rate = |b: Option<[f64; 2]>| b.map(|[lo, hi]| [to_permille(lo), to_permille(hi)]);
    let tokens = |b: Option<[f64; 2]>| b.map(|[lo, hi]| [lo.round() as u64, hi.round() as u64]);
    let usd = |b: Option<[f64; 2]>| b.map(|[lo, hi]| [dollars(lo), dollars(hi)]);
    Intervals {
        resamples,
        cut_on_failed_permille: rate(bounds(0)),
        cut_on_healthy_permille: rate(bounds(1)),
        advisory_on_failed_permille: rate(bounds(2)),
        advisory_on_healthy_permille: rate(bounds(3)),
        tokens_saved_on_failed: tokens(bounds(4)),
        tokens_lost_on_healthy: tokens(bounds(5)),
        cost_saved_usd_on_failed: usd(bounds(6)),
        cost_lost_usd_on_healthy: usd(bounds(7)),
        failed_if_fired_permille: rate(bounds(8)),
        failed_if_not_fired_permille: rate(bounds(9)),
        fired_on_failed_permille: rate(bounds(10)),
        fired_on_healthy_permille: rate(bounds(11)),
    }
}

/// One setting against another over the same runs: its figure minus the other's, with the
/// 95% interval of that difference (both drawn on the same projects, so what the runs
/// share cancels out).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub tokens_saved_on_failed: i64,
    pub tokens_saved_on_failed_interval: Option<[i64; 2]>,
    /// Shares of the failed runs cut, and of the healthy runs cut, in thousandths.
    pub cut_on_failed_permille: i32,
    pub cut_on_failed_interval: Option<[i32; 2]>,
    pub cut_on_healthy_permille: i32,
    pub cut_on_healthy_interval: Option<[i32; 2]>,
}

/// `a` minus `b`, project by project the same runs (`a[i]` and `b[i]` are one project).
pub(super) fn paired(a: &[Tally], b: &[Tally], resamples: u32) -> Difference {
    let delta = |x: &Tally, y: &Tally| -> [Option<f64>; 3] {
        let (fx, fy) = (x.figures(), y.figures());
        let minus = |i: usize| fx[i].zip(fy[i]).map(|(p, q)| p - q);
        [minus(4), minus(0), minus(1)]
    };
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); 3];
    for drawn in draws(a.len().min(b.len()), resamples) {
        let (mut x, mut y) = (Tally::default(), Tally::default());
        for &i in &drawn {
            x.add(&a[i]);
            y.add(&b[i]);
        }
        for (i, d) in delta(&x, &y).into_iter().enumerate() {
            values[i].extend(d);
        }
    }
    let bounds: Vec<Option<[f64; 2]>> = values.iter_mut().map(|v| percentiles(v)).collect();
    let thousandths = |x: f64| (x * 1000.0).round() as i32;
    let point = delta(&total(a), &total(b));
    Difference {
        tokens_saved_on_failed: point[0].unwrap_or(0.0).round() as i64,
        tokens_saved_on_failed_interval: bounds[0]
            .map(|[lo, hi]| [lo.round() as i64, hi.round() as i64]),
        cut_on_failed_permille: point[1].map_or(0, thousandths),
        cut_on_failed_interval: bounds[1].map(|[lo, hi]| [thousandths(lo), thousandths(hi)]),
        cut_on_healthy_permille: point[2].map_or(0, thousandths),
        cut_on_healthy_interval: bounds[2].map(|[lo, hi]| [thousandths(lo), thousandths(hi)]),
    }
}

/// The 2.5th and 97.5th percentiles (nearest rank) of `values`; `None` when empty.
fn percentiles(values: &mut [f64]) -> Option<[f64; 2]> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let last = (values.len() - 1) as f64;
    let at = |q: f64| values[(q * last).round() as usize];
    Some([at(0.025), at(0.975)])
}

/// Yes when the guard fires on a larger share of the failed runs and the two shares'
/// intervals do not overlap; unclear when larger but they overlap; no otherwise.
pub(super) fn discrimination(whole: &Tally, intervals: &Intervals) -> Option<Discrimination> {
    if whole.fired_failed + whole.fired_healthy == 0 {
        return None;
    }
    let larger = whole.fired_failed * whole.healthy > whole.fired_healthy * whole.failed;
    let apart = match (
        intervals.fired_on_failed_permille,
        intervals.fired_on_healthy_permille,
    ) {
        (Some([failed_lo, _]), Some([_, healthy_hi])) => failed_lo > healthy_hi,
        _ => false,
    };
    Some(match (larger, apart) {
        (false, _) => Discrimination::No,
        (true, true) => Discrimination::Yes,
        (true, false) => Discrimination::Unclear,
    })
}

/// Whether `guard` cut `run` short.
fn cuts(run: &RunReport, guard: &str) -> bool {
    run.firings
        .iter()
        .any(|f| f.guard == guard && f.effect == "terminal")
}

/// `part / whole` in thousandths, `None` when `whole` is 0.
fn share(part: u64, whole: u64) -> Option<u32> {
    (whole > 0).then(|| permille(part as usize, whole as usize))
}

fn to_permille(fraction: f64) -> u32 {
    (fraction * 1000.0).round().max(0.0) as u32
}

pub fn permille(part: usize, whole: usize) -> u32 {
    (part * 1000).checked_div(whole).map_or(0, |p| p as u32)
}

/// The lower median, so the result is always a turn that occurred.
fn median(sorted: &[u32]) -> Option<u32> {
    (!sorted.is_empty()).then(|| sorted[(sorted.len() - 1) / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(failed: u64, fired_failed: u64, healthy: u64, fired_healthy: u64) -> Tally {
        Tally {
            failed,
            healthy,
            fired_failed,
            fired_healthy,
            ..Tally::default()
        }
    }

    #[test]
    fn the_same_projects_give_the_same_intervals() {
        let projects: Vec<Tally> = (0..12).map(|i| project(2, i % 3, 1, i % 2)).collect();
        assert_eq!(bootstrap(&projects, 500), bootstrap(&projects, 500));
    }

    #[test]
    fn an_interval_holds_its_point_figure_and_narrows_with_more_projects() {
        let few: Vec<Tally> = (0..4).map(|i| project(1, i % 2, 1, 0)).collect();
        let many: Vec<Tally> = (0..400).map(|i| project(1, i % 2, 1, 0)).collect();
        let interval = |t: &[Tally]| bootstrap(t, 1000).fired_on_failed_permille.unwrap();
        let width = |[lo, hi]: [u32; 2]| hi - lo;
        assert!(width(interval(&many)) < width(interval(&few)));
        let [lo, hi] = interval(&many);
        assert!(lo <= 500 && 500 <= hi, "{lo}..{hi}");
    }

    /// None of 8 is not certainty: the rule of three bounds it at 3/8.
    #[test]
    fn a_count_of_none_or_all_gets_the_rule_of_three() {
        let projects: Vec<Tally> = (0..8).map(|_| project(1, 0, 1, 1)).collect();
        let mut whole = Tally::default();
        projects.iter().for_each(|p| whole.add(p));
        let intervals = bootstrap(&projects, 200).with_edges(&whole);
        assert_eq!(intervals.fired_on_failed_permille, Some([0, 375]));
        assert_eq!(intervals.fired_on_healthy_permille, Some([625, 1000]));
    }

    #[test]
    fn discrimination_needs_intervals_apart() {
        // Fires on every failed run and no healthy one, over many projects: yes.
        let clear: Vec<Tally> = (0..40).map(|_| project(1, 1, 1, 0)).collect();
        // Larger on failed runs, over few projects: the intervals overlap.
        let thin = vec![
            project(1, 1, 1, 0),
            project(1, 1, 1, 1),
            project(1, 0, 1, 0),
        ];
        // As often on healthy runs: no.
        let even: Vec<Tally> = (0..40).map(|_| project(1, 1, 1, 1)).collect();
        let judge = |t: &[Tally]| {
            let mut whole = Tally::default();
            t.iter().for_each(|p| whole.add(p));
            discrimination(&whole, &bootstrap(t, 1000).with_edges(&whole))
        };
        assert_eq!(judge(&clear), Some(Discrimination::Yes));
        assert_eq!(judge(&thin), Some(Discrimination::Unclear));
        assert_eq!(judge(&even), Some(Discrimination::No));
        assert_eq!(judge(&[project(3, 0, 2, 0)]), None);
    }
}
