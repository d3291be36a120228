//! Reports: the replay's results as people and programs read them.
//!
//! [`Report`] is built once from the replayed runs and their costs; each format is a
//! small renderer of it (hyperfine's exporter layout, STYLE.md): `json`, `table`
//! (terminal) and `markdown`, the last two sharing [`tables`]. [`explain`] is the
//! post-mortem page of one run, its own model read from the recording beside the run's
//! report, with the same small-renderer layout. Nothing here judges or computes savings
//! (the cost model does); nothing here prints to the terminal on its own.

pub mod charts;
pub mod csv;
pub mod explain;
pub mod frames;
pub mod json;
pub mod markdown;
pub mod merge;
pub mod parquet;
pub mod review;
mod summary;
pub mod table;
pub mod tables;
pub mod width;

use crate::cost::{cost, Prices, RunCost, TokensByKind};
use crate::guards::Effect;
use crate::ingest::{Abandoned, Copied, Problems, SkippedFile};
use crate::model::LedgerStatus;
use crate::replay::RunReplay;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
pub use summary::{summarize, summarize_with, RunTally, SummaryBuilder};

/// Version of the JSON report's shape; bumped on any incompatible change.
pub const REPORT_FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub format: u32,
    pub runs: Vec<RunReport>,
    pub summary: Summary,
    /// Paths skipped before any run was read (docs/FORMAT.md, *Bad input*).
    pub input: UnreadReport,
    /// What identifies the replay; `merge` merges only reports where it is the same.
    /// Absent in a report read from before it was written, which `merge` refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replayed: Option<Replayed>,
    /// The shard this report replayed (`--shard K/N`); absent for a whole corpus, and so
    /// in a merged report ([`merge`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
}

/// Reads an `Option` member that every report writes (`null` when it has no value): a
/// saved report without it is refused, naming it, instead of being read as `null`
/// (issue #32, F), as every other member is.
fn required<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer)
}

/// What identifies a replay (issue #32, F): the shards of one replay agree on all of it,
/// and `merge` refuses reports that differ in any of it, naming the member.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Replayed {
    /// The version of hindsight that replayed.
    pub hindsight: String,
    /// The paths given, as spelled.
    pub paths: Vec<String>,
    /// The guards replayed, in replay order; an external one as `id=command`.
    pub guards: Vec<String>,
    /// A digest of the settings every guard ran with ([`crate::config::Config::identity`]).
    pub settings: String,
    /// A digest of the price table, `--prices` included.
    pub prices: String,
}

impl Replayed {
    /// The members, named as the report names them, for saying which one differs.
    pub fn members(&self) -> [(&'static str, String); 5] {
        [
            ("hindsight", self.hindsight.clone()),
            ("paths", self.paths.join(" ")),
            ("guards", self.guards.join(" ")),
            ("settings", self.settings.clone()),
            ("prices", self.prices.clone()),
        ]
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunReport {
    pub project: String,
    pub run_id: String,
    /// The input format the run was read from: its harness (`omnius`, `mini-swe-agent`,
    /// ...).
    pub format: String,
    /// 1-based session number within the project.
    pub session: usize,
    /// Model requests the log records (every agent thread's).
    pub turns: usize,
    /// `tokens_recorded + tokens_estimated`.
    pub tokens_total: u64,
    /// Read from the log (per request, or a run total spread over its requests).
    pub tokens_recorded: u64,
    /// Estimated by hindsight where the log records no usage (docs/COUNTERFACTUAL.md).
    pub tokens_estimated: u64,
    pub tokens_by_kind: TokensByKind,
    /// Dollars over the priced requests; `null` when none could be priced.
    #[serde(deserialize_with = "required")]
    pub cost_usd: Option<f64>,
    /// The part of `cost_usd` the log itself recorded.
    pub cost_recorded_usd: f64,
    /// Tokens of requests with no price (`unpriced_models` names their models).
    pub cost_unpriced_tokens: u64,
    pub unpriced_models: Vec<String>,
    /// The models the run's requests name, sorted (empty when the log names none): its
    /// model, for scores broken out by model.
    pub models: Vec<String>,
    pub ledger: LedgerReport,
    pub firings: Vec<FiringReport>,
    pub savings: Savings,
    /// Guard figures by guard id.
    pub metrics: BTreeMap<String, BTreeMap<String, serde_json::Value>>,
    pub input: InputReport,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct LedgerReport {
    pub recorded: String,
    pub finalized: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FiringReport {
    pub guard: String,
    pub work_order: String,
    pub turn: u32,
    pub agent: String,
    pub action: String,
    #[serde(deserialize_with = "required")]
    pub family: Option<String>,
    /// `terminal`, `advisory`, `suppress` or `shrink`.
    pub effect: String,
    pub tokens_saved: u64,
    #[serde(deserialize_with = "required")]
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Savings {
    /// Each guard alone, the others as recorded.
    pub by_guard: BTreeMap<String, u64>,
    /// All guards together; the main agent's earliest terminal firing truncates the rest.
    pub combined: u64,
    #[serde(deserialize_with = "required")]
    pub cut_at_turn: Option<u32>,
    /// The same in dollars, over the priced requests; `null` when none is priced.
    #[serde(deserialize_with = "required")]
    pub cost_saved_usd: Option<CostSaved>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CostSaved {
    pub by_guard: BTreeMap<String, f64>,
    pub combined: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct InputReport {
    pub records: u64,
    pub bytes: u64,
    pub skipped: u64,
    /// Located problems (`file:line: field ...: ...`), the first ones found.
    pub problems: Vec<String>,
    pub unknown_types: BTreeMap<String, u64>,
    pub unknown_fields: BTreeMap<String, u64>,
    /// A branched session's copy of the session it came from: context only, not counted
    /// in `turns` or `tokens_total` (absent when the session names none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied: Option<Copied>,
    /// Entries on branches the session left: not replayed, not counted in `turns` or
    /// `tokens_total` (absent unless the session is a tree with branches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned: Option<Abandoned>,
}

/// Paths no run could be read from: a directory that cannot be listed, a FIFO where a
/// session log would be, a link that leads nowhere.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct UnreadReport {
    /// Every such path, listed or not.
    pub skipped: u64,
    /// Located problems (`path: reason`), the first ones found.
    pub problems: Vec<String>,
    /// Every file that looks like a recorded run but lacks its format's distinctive
    /// structure, with the format it resembles and why it was not read.
    pub skipped_files: Vec<SkippedFile>,
    /// Every JSON Lines file no format claims (issue #30, item 7), with the format nearest
    /// to it (`none` when no format is near) and why it was not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unrecognised: Vec<SkippedFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub projects: usize,
    pub runs: usize,
    pub turns: usize,
    pub tokens_total: u64,
    pub tokens_estimated: u64,
    pub tokens_saved_combined: u64,
    /// Dollars over the priced requests of every run; `null` when none is priced.
    #[serde(deserialize_with = "required")]
    pub cost_usd: Option<f64>,
    #[serde(deserialize_with = "required")]
    pub cost_saved_usd_combined: Option<f64>,
    pub cost_unpriced_tokens: u64,
    pub skipped_records: u64,
    pub guards: Vec<GuardSummary>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GuardSummary {
    pub guard: String,
    pub work_order: String,
    pub runs_fired: usize,
    pub firings: usize,
    pub tokens_saved: u64,
    #[serde(deserialize_with = "required")]
    pub cost_saved_usd: Option<f64>,
}

impl RunReport {
    /// The run's model, as scores are broken out by: the models its requests name,
    /// `+`-joined when several, `(not named)` when none.
    pub fn model(&self) -> String {
        Self::model_of(&self.models)
    }

    /// [`RunReport::model`] of the models a run names.
    pub fn model_of<S: AsRef<str>>(models: &[S]) -> String {
        if models.is_empty() {
            return "(not named)".into();
        }
        let names: Vec<&str> = models.iter().map(AsRef::as_ref).collect();
        names.join(" + ")
    }

    /// The firing that cuts the run: the main agent's earliest terminal firing, at the turn
    /// `savings.cut_at_turn` names. When several guards cut at that turn, the first the
    /// report lists (its firings are ordered by turn, then guard id), so the same run always
    /// names the same guard. `None` when nothing cuts it.
    pub fn cut_by(&self) -> Option<&FiringReport> {
        let turn = self.savings.cut_at_turn?;
        self.firings.iter().find(|f| {
            f.turn == turn && f.effect == "terminal" && f.agent == crate::cost::timeline::MAIN
        })
    }

    /// Dollars `guard` alone would have saved on this run: `None` when nothing in the run
    /// was priced, 0 when the guard did not fire.
    pub fn cost_saved_by(&self, guard: &str) -> Option<f64> {
        let saved = self.savings.cost_saved_usd.as_ref()?;
        Some(saved.by_guard.get(guard).copied().unwrap_or(0.0))
    }
}

impl Report {
    pub fn build(runs: &[RunReplay], prices: &Prices) -> Self {
        let runs: Vec<RunReport> = runs.iter().map(|r| RunReport::of(r, prices)).collect();
        Self::of_runs(runs)
    }

    /// The report of runs already costed, in input order.
    pub fn of_runs(runs: Vec<RunReport>) -> Self {
        let summary = summarize(&runs);
        Self {
            format: REPORT_FORMAT,
            runs,
            summary,
            input: UnreadReport::default(),
            replayed: None,
            shard: None,
        }
    }

    /// Adds what discovery did not read ([`UnreadReport::of`]): the paths it could not
    /// read, listed under `input.problems` and counted in `summary.skipped_records` so
    /// every report notes them, and the files it passed over.
    pub fn with_unread(mut self, input: UnreadReport) -> Self {
        self.summary.count_unread(&input);
        self.input = input;
        self
    }

    /// Notes what identifies the replay ([`Replayed`]).
    pub fn with_replayed(mut self, replayed: Replayed) -> Self {
        self.replayed = Some(replayed);
        self
    }

    /// Notes the shard replayed (`--shard K/N`), so [`merge`] can tell a missing one.
    pub fn with_shard(mut self, shard: Option<crate::shard::Shard>) -> Self {
        self.shard = shard;
        self
    }
}

impl Summary {
    /// Counts the paths discovery could not read in `skipped_records`, so every report
    /// notes them.
    pub fn count_unread(&mut self, input: &UnreadReport) {
        self.skipped_records = self.skipped_records.saturating_add(input.skipped);
    }
}

impl UnreadReport {
    /// What discovery could not read, the look-alike files and the unrecognised JSON
    /// Lines files it passed over.
    pub fn of(
        unread: &Problems,
        skipped_files: &[SkippedFile],
        unrecognised: &[SkippedFile],
    ) -> Self {
        Self {
            skipped: unread.count,
            problems: unread.listed.iter().map(ToString::to_string).collect(),
            skipped_files: skipped_files.to_vec(),
            unrecognised: unrecognised.to_vec(),
        }
    }
}

fn effect_name(e: Effect) -> &'static str {
    match e {
        Effect::Advisory => "advisory",
        Effect::Terminal => "terminal",
        Effect::Suppress { .. } => "suppress",
        Effect::Shrink { .. } => "shrink",
    }
}

impl RunReport {
    /// One replayed run with its tokens, dollars and savings.
    pub fn of(run: &RunReplay, prices: &Prices) -> Self {
        run_report(run, &cost(run, prices))
    }
}

fn run_report(run: &RunReplay, cost: &RunCost) -> RunReport {
    let recorded = run.ledger_recorded.unwrap_or(LedgerStatus::Missing);
    let finalized = run
        .metrics
        .get("ledger_finalization")
        .and_then(|m| m.get("finalized"))
        .and_then(|v| v.as_str())
        .map_or_else(|| recorded.to_string(), str::to_string);
    let priced = cost.spend.priced_requests > 0;
    RunReport {
        project: run.project.clone(),
        run_id: run.run_id.clone(),
        format: run.format.clone(),
        session: run.session_index + 1,
        turns: cost.requests,
        tokens_total: cost.tokens_total,
        tokens_recorded: cost.tokens_recorded,
        tokens_estimated: cost.tokens_estimated,
        tokens_by_kind: cost.by_kind,
        cost_usd: priced.then(|| dollars(cost.spend.usd)),
        cost_recorded_usd: dollars(cost.spend.recorded_usd),
        cost_unpriced_tokens: cost.spend.unpriced_tokens,
        unpriced_models: cost.spend.unpriced_models.iter().cloned().collect(),
        models: cost.spend.models.iter().cloned().collect(),
        ledger: LedgerReport {
            recorded: recorded.to_string(),
            finalized,
        },
        firings: run
            .firings
            .iter()
            .zip(&cost.per_firing)
            .map(|(f, saved)| FiringReport {
                guard: f.guard.to_string(),
                work_order: f.work_order.to_string(),
                turn: f.turn,
                agent: f.agent.clone(),
                action: f.action.clone(),
                family: f.family.clone(),
                effect: effect_name(f.effect).to_string(),
                tokens_saved: *saved,
                detail: f.detail.clone(),
            })
            .collect(),
        savings: Savings {
            by_guard: cost
                .by_guard
                .iter()
                .map(|(g, s)| (g.to_string(), s.tokens))
                .collect(),
            combined: cost.combined.tokens,
            cut_at_turn: cost.cut_at,
            cost_saved_usd: priced.then(|| CostSaved {
                by_guard: cost
                    .by_guard
                    .iter()
                    .map(|(g, s)| (g.to_string(), dollars(s.usd)))
                    .collect(),
                combined: dollars(cost.combined.usd),
            }),
        },
        metrics: run.metrics.clone(),
        input: InputReport {
            records: run.stats.records,
            bytes: run.stats.bytes,
            skipped: run.problems.count,
            problems: run
                .problems
                .listed
                .iter()
                .map(ToString::to_string)
                .collect(),
            unknown_types: run.stats.unknown_types.clone(),
            unknown_fields: run.stats.unknown_fields.clone(),
            copied: run.stats.copied.clone(),
            abandoned: run.stats.abandoned.clone(),
        },
    }
}

/// Dollars as reported: rounded to a millionth of a dollar, so reports diff cleanly.
pub fn dollars(usd: f64) -> f64 {
    (usd * 1e6).round() / 1e6
}

/// The sum of the figures that exist; `None` when none does (nothing was priced).
pub fn dollar_sum(figures: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    figures
        .into_iter()
        .flatten()
        .fold(None, |sum, x| Some(sum.unwrap_or(0.0) + x))
        .map(dollars)
}

/// Output formats of `hindsight replay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
    /// A corpus table as CSV (`--table`: the run × guard table by default).
    Csv,
    /// A corpus table as Parquet (binary: write it to a file).
    Parquet,
}

impl Format {
    /// Binary output, not for a terminal.
    pub fn is_binary(self) -> bool {
        matches!(self, Format::Parquet)
    }
}

/// [`render`], with `table` the corpus table [`Format::Csv`] and [`Format::Parquet`]
/// write (the other formats write the whole report).
pub fn render_table(
    report: &Report,
    format: Format,
    table: frames::TableKind,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Csv => csv::render_table(report, table, out),
        Format::Parquet => parquet::render_table(report, table, out),
        _ => render(report, format, out),
    }
}

/// A run's project as a table shows it beside the run's id: one `x` less when a
/// trajectory is filed in a folder of its own name (`…/x/x.traj.json`, whose project is
/// `…/x/x`).
pub fn project_name(project: &str, run_id: &str) -> String {
    match project.strip_suffix(&format!("/{run_id}/{run_id}")) {
        Some(folder) => format!("{folder}/{run_id}"),
        None => project.to_string(),
    }
}

/// A run's name where runs of several projects are listed: `project/run`, without saying
/// the run's id twice: the project alone when it already ends in it (an evaluation's
/// instance), and one `x` less when a trajectory is filed in a folder of its own name
/// (`…/x/x.traj.json`, whose project is `…/x/x`).
pub fn run_name(project: &str, run_id: &str) -> String {
    let doubled = format!("/{run_id}/{run_id}");
    match project.strip_suffix(&doubled) {
        Some(folder) => format!("{folder}/{run_id}"),
        None if project == run_id || project.ends_with(&format!("/{run_id}")) => {
            project.to_string()
        }
        None => format!("{project}/{run_id}"),
    }
}

/// Writes `report` in `format`. [`Format::Parquet`] writes binary bytes: give it a file.
pub fn render(
    report: &Report,
    format: Format,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Table => table::render(report, false, out),
        Format::Json => json::render(report, out),
        Format::Markdown => markdown::render(report, out),
        Format::Csv => csv::render(report, out),
        Format::Parquet => parquet::render(report, out),
    }
}
