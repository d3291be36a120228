//! Threshold sweeps: the corpus replayed over a grid of guard settings, each setting scored
//! by tokens saved on failed runs against healthy runs cut short, so thresholds are picked
//! from a trade-off (issue #4), with the seeds' defaults marked.

use super::labels::{Label, Labels};
use super::scores::{
    bootstrap, named_tallies, paired, permille, total, Difference, Intervals, RunOutcome, Tally,
};
use crate::config::{resolve_guard, Config, ConfigError};
use crate::cost::{swept_savings, Prices};
use crate::replay::RunReplay;
use crate::report::{dollar_sum, dollars, RunReport};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One swept parameter: `guard.key` and the values it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub guard: &'static str,
    pub key: String,
    pub values: Vec<Value>,
}

/// A value a setting takes in a sweep: a number, `true`/`false`, or a word naming a
/// variant (`diagnostic_delta.progress=count,fingerprint`). Serialized as itself (`3`,
/// `true`, `"fingerprint"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Word(String),
}

impl Value {
    /// `3`, `true`/`false`, or a word of letters, digits and `_` (not starting with a
    /// digit); anything else is not a value.
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if let Ok(n) = text.parse() {
            return Some(Self::Int(n));
        }
        match text {
            "true" => return Some(Self::Bool(true)),
            "false" => return Some(Self::Bool(false)),
            _ => {}
        }
        let word = text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        word.then(|| Self::Word(text.to_string()))
    }

    /// The value as a guard's settings hold it.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Int(n) => (*n).into(),
            Self::Bool(b) => (*b).into(),
            Self::Word(w) => w.as_str().into(),
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Int(n) => write!(f, "{n}"),
            Self::Bool(b) => write!(f, "{b}"),
            Self::Word(w) => f.write_str(w),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ParamError {
    #[error("`{0}`: expected guard.key=FROM..TO (integers) or guard.key=A,B,C (integers, true/false or words)")]
    Syntax(String),
    #[error(transparent)]
    Guard(#[from] ConfigError),
    #[error("`{0}`: the grid would have more than {1} settings")]
    TooLarge(String, usize),
}

/// One grid point: `guard.key` and its value, per swept parameter.
pub type Setting = Vec<(String, Value)>;

/// Refuses grids that would take longer than anyone meant to wait.
pub const MAX_SETTINGS: usize = 4096;

impl Param {
    /// `breaker.stalled=2..5` (inclusive), `breaker.stalled=2,3,5` or
    /// `delta.progress=count,fingerprint`.
    pub fn parse(text: &str) -> Result<Self, ParamError> {
        let syntax = || ParamError::Syntax(text.to_string());
        let (path, values) = text.split_once('=').ok_or_else(syntax)?;
        let (guard, key) = path.split_once('.').ok_or_else(syntax)?;
        let too_large = || ParamError::TooLarge(text.to_string(), MAX_SETTINGS);
        let values: Vec<Value> = match values.split_once("..") {
            Some((from, to)) => {
                let (from, to): (i64, i64) = (
                    from.trim().parse().map_err(|_| syntax())?,
                    to.trim().parse().map_err(|_| syntax())?,
                );
                if to < from {
                    return Err(syntax());
                }
                // Counted in i128: `i64::MIN..i64::MAX` must not overflow on the way to
                // being refused.
                if i128::from(to) - i128::from(from) >= MAX_SETTINGS as i128 {
                    return Err(too_large());
                }
                (from..=to).map(Value::Int).collect()
            }
            None => {
                if values.split(',').count() > MAX_SETTINGS {
                    return Err(too_large());
                }
                values
                    .split(',')
                    .map(|v| Value::parse(v).ok_or_else(syntax))
                    .collect::<Result<_, _>>()?
            }
        };
        Ok(Self {
            guard: resolve_guard(guard)?,
            key: key.to_string(),
            values,
        })
    }
}

/// Every combination of the parameters' values, in a fixed order. Its size is checked
/// before anything is built.
pub fn grid(params: &[Param]) -> Result<Vec<Setting>, ParamError> {
    let mut size: usize = 1;
    for p in params {
        size = size
            .checked_mul(p.values.len())
            .filter(|n| *n <= MAX_SETTINGS)
            .ok_or_else(|| ParamError::TooLarge(format!("{}.{}", p.guard, p.key), MAX_SETTINGS))?;
    }
    let mut settings: Vec<Setting> = vec![Vec::new()];
    for p in params {
        let name = format!("{}.{}", p.guard, p.key);
        let mut next = Vec::with_capacity(settings.len() * p.values.len());
        for s in &settings {
            for v in &p.values {
                let mut point = s.clone();
                point.push((name.clone(), v.clone()));
                next.push(point);
            }
        }
        settings = next;
    }
    Ok(settings)
}

/// `base` with one grid point applied.
pub fn configure(base: &Config, setting: &[(String, Value)]) -> Result<Config, ConfigError> {
    let mut config = base.clone();
    for (name, value) in setting {
        config.set(&format!("{name}={value}"))?;
    }
    config.build()?;
    Ok(config)
}

/// How one setting fares over the labeled corpus (docs/GATE.md, *hindsight sweep*): the
/// combined effect of every guard at that setting, since a cut by any guard ends a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub setting: Setting,
    /// Every value equals the guard's default.
    pub is_default: bool,
    pub tokens_saved_on_failed: u64,
    /// Dollars saved (combined) over the failed runs that were priced; `None` when none was.
    pub cost_saved_usd_on_failed: Option<f64>,
    /// Healthy runs with any terminal firing.
    pub false_terminal_on_healthy: usize,
    /// Failed runs with a terminal firing (cut short, as they should be).
    pub failed_cut: usize,
    pub failed_runs: usize,
    pub healthy_runs: usize,
    pub failed_cut_permille: u32,
    /// Runs a swept guard fired on that nothing cut short.
    pub advised_on_failed: usize,
    pub advised_on_healthy: usize,
    /// The combined savings of the healthy runs cut short: the work the false cuts lose.
    pub tokens_lost_on_healthy: u64,
    pub cost_lost_usd_on_healthy: Option<f64>,
    /// 95% bootstrap intervals over projects (docs/GATE.md, *Intervals*).
    pub intervals: Intervals,
    /// This setting against the seeds' defaults on the same runs, when the grid holds the
    /// defaults (and this is not it).
    pub versus_default: Option<Difference>,
    /// Per-project tallies (for the paired comparison and `--select`), and the projects'
    /// names, in the same order.
    #[serde(skip)]
    tallies: Vec<Tally>,
    #[serde(skip)]
    projects: Vec<String>,
    /// Each project's harness (the format its runs were read from), in the same order.
    #[serde(skip)]
    harnesses: Vec<String>,
}

impl Point {
    pub fn tallies(&self) -> &[Tally] {
        &self.tallies
    }

    pub fn projects(&self) -> &[String] {
        &self.projects
    }

    pub fn harnesses(&self) -> &[String] {
        &self.harnesses
    }
}

/// One labelled run of a sweep as every grid point left it (issue #29, item 7): what the
/// scores are made of, carried in the sweep's JSON so that the shards of a sweep merge
/// into exactly the unsharded one. Per point, in grid order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweptRun {
    pub project: String,
    pub run_id: String,
    /// The format the run was read from.
    pub harness: String,
    /// The models its requests name ([`RunReport::model`]).
    pub model: String,
    pub label: Label,
    /// A swept guard fired on the run.
    pub fired: Vec<bool>,
    /// Something cut the run short (any guard's terminal firing of the main agent).
    pub cut: Vec<bool>,
    /// Tokens every guard together saved (estimated, docs/COUNTERFACTUAL.md).
    pub saved: Vec<u64>,
    /// The same in dollars; `null` when nothing in the run was priced.
    pub usd: Option<Vec<f64>>,
}

/// What a sweep's points are scored on: every guard together (`sweep`: a cut by any guard
/// ends a run), or the swept guards alone (a review's decision about one guard).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acting {
    Together,
    Alone,
}

impl SweptRun {
    /// `run` (a sweep's replay, [`RunReplay::swept`]) with its label; `None` when the
    /// labels do not name it.
    pub fn of(run: &RunReplay, prices: &Prices, labels: &Labels, acting: Acting) -> Option<Self> {
        let label = labels.get_of(&run.project, &run.run_id)?.label;
        let swept = swept_savings(run, prices, acting == Acting::Together);
        let (savings, priced) = (&swept.points, swept.priced);
        let models: Vec<&str> = swept.models.iter().map(String::as_str).collect();
        Some(Self {
            project: run.project.clone(),
            run_id: run.run_id.clone(),
            harness: run.format.clone(),
            model: RunReport::model_of(&models),
            label,
            fired: run.swept.iter().map(|own| !own.is_empty()).collect(),
            cut: savings.iter().map(|s| s.cut_at.is_some()).collect(),
            saved: savings.iter().map(|s| s.saved.tokens).collect(),
            usd: priced.then(|| savings.iter().map(|s| dollars(s.saved.usd)).collect()),
        })
    }

    /// One point: `guard` at the setting `run` was replayed with, alone (its savings
    /// alone, cut short by its own terminal firing of the main agent).
    pub fn of_guard(run: &RunReport, guard: &str, label: Label) -> Self {
        let own = || run.firings.iter().filter(|f| f.guard == guard);
        Self {
            project: run.project.clone(),
            run_id: run.run_id.clone(),
            harness: run.format.clone(),
            model: run.model(),
            label,
            fired: vec![own().next().is_some()],
            cut: vec![own().any(|f| f.effect == "terminal" && f.agent == MAIN)],
            saved: vec![run.savings.by_guard.get(guard).copied().unwrap_or(0)],
            usd: run.cost_saved_by(guard).map(|usd| vec![usd]),
        }
    }

    /// What the run scores at point `k`.
    fn outcome(&self, k: usize) -> RunOutcome {
        RunOutcome {
            fired: self.fired[k],
            cut: self.cut[k],
            saved: self.saved[k],
            usd: self.usd.as_ref().map(|usd| usd[k]),
        }
    }

    /// Points this run has figures for (every vector is as long).
    pub fn points(&self) -> usize {
        let n = self.fired.len();
        let usd = self.usd.as_ref().is_none_or(|u| u.len() == n);
        if self.cut.len() == n && self.saved.len() == n && usd {
            n
        } else {
            0
        }
    }
}

/// The main agent: a terminal firing of a sub-agent ends that sub-agent, not the run.
const MAIN: &str = "main";

/// Scores every grid point over the labelled runs (in parallel; the points come back in
/// grid order) and compares each with the defaults' point.
pub fn points(settings: Vec<Setting>, runs: &[SweptRun], resamples: u32) -> Vec<Point> {
    use rayon::prelude::*;
    let mut points: Vec<Point> = settings
        .into_par_iter()
        .enumerate()
        .map(|(k, setting)| point(setting, k, runs, resamples))
        .collect();
    compare_with_default(&mut points, resamples);
    points
}

/// Scores grid point `k` (`setting`), with `resamples` bootstrap resamples.
fn point(setting: Setting, k: usize, runs: &[SweptRun], resamples: u32) -> Point {
    let named = named_tallies(
        runs.iter()
            .map(|r| (r.project.as_str(), r.label, r.outcome(k))),
    );
    let (names, projects): (Vec<String>, Vec<Tally>) = named.into_iter().unzip();
    let mut harness_of: BTreeMap<&str, &str> = BTreeMap::new();
    for r in runs {
        harness_of.entry(&r.project).or_insert(&r.harness);
    }
    let harnesses = names
        .iter()
        .map(|name| {
            harness_of
                .get(name.as_str())
                .map_or_else(String::new, |h| h.to_string())
        })
        .collect();
    let whole = total(&projects);
    let count = |n: u64| n as usize;
    let usd = |label: Label, cut_only: bool| {
        dollar_sum(
            runs.iter()
                .filter(|r| r.label == label && (!cut_only || r.cut[k]))
                .map(|r| r.outcome(k).usd),
        )
    };
    Point {
        is_default: is_default(&setting),
        setting,
        tokens_saved_on_failed: whole.saved_failed,
        cost_saved_usd_on_failed: usd(Label::Failed, false),
        false_terminal_on_healthy: count(whole.cut_healthy),
        failed_cut: count(whole.cut_failed),
        failed_runs: count(whole.failed),
        healthy_runs: count(whole.healthy),
        failed_cut_permille: permille(count(whole.cut_failed), count(whole.failed)),
        advised_on_failed: count(whole.advised_failed),
        advised_on_healthy: count(whole.advised_healthy),
        tokens_lost_on_healthy: whole.lost_healthy,
        cost_lost_usd_on_healthy: usd(Label::Healthy, true),
        intervals: bootstrap(&projects, resamples).with_edges(&whole),
        versus_default: None,
        tallies: projects,
        projects: names,
        harnesses,
    }
}

/// Sets every point's comparison with the defaults' point, when the grid holds it.
fn compare_with_default(points: &mut [Point], resamples: u32) {
    let Some(default) = points.iter().position(|p| p.is_default) else {
        return;
    };
    let base = points[default].tallies.clone();
    for (i, p) in points.iter_mut().enumerate() {
        if i != default {
            p.versus_default = Some(paired(&p.tallies, &base, resamples));
        }
    }
}

fn is_default(setting: &[(String, Value)]) -> bool {
    let defaults: std::collections::BTreeMap<&str, serde_json::Value> = crate::guards::registry()
        .iter()
        .map(|e| (e.info.id, e.defaults()))
        .collect();
    setting.iter().all(|(name, value)| {
        let Some((guard, key)) = name.split_once('.') else {
            return false;
        };
        defaults.get(guard).and_then(|d| d.get(key)) == Some(&value.to_json())
    })
}
