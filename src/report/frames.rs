//! The corpus tables: a [`Report`] as three polars [`DataFrame`]s, for analysis outside
//! hindsight (CSV and Parquet, [`super::csv`] and [`super::parquet`]).
//!
//! - [`runs_frame`]: one row per run (session) replayed.
//! - [`guards_frame`]: one row per (run × guard of the report's summary: the catalogue it
//!   was replayed with, external guards included), whether it fired or not, so a table of N
//!   runs has N × that many rows and a guard that never fires still shows as a row of
//!   zeros.
//! - [`firings_frame`]: one row per firing, as the JSON report's `runs[].firings` lists
//!   them. The tables of several shards (`--shard K/N`) hold disjoint rows, so they can be
//!   queried together (DuckDB, Spark, DataFusion; docs/SCALE.md).
//!
//! All are ordered by `project`, then `run_id`; the guard rows of a run follow the
//! summary's order (the catalogue's, [`crate::guards::registry`]), its firing rows the report's (replay
//! order). The values are the report's: nothing here computes savings.
//!
//! The column names, their order and their types are the stable public interface (the
//! names are in [`col`], the orders in [`RUNS_COLUMNS`], [`GUARDS_COLUMNS`] and
//! [`FIRINGS_COLUMNS`]); adding a column at the end is compatible, anything else is not.
//!
//! Every count is a signed 64-bit integer (`i64`: Parquet `INT64`, polars `Int64`), so
//! arithmetic between columns in DuckDB, polars or Spark (`tokens_saved_combined -
//! tokens_total`, which is negative) never overflows an unsigned type (issue #31, item 3).
//! A count that does not fit is refused, never wrapped. Dollars are `f64`, flags `bool`.
//!
//! The `label` and `label_source` columns (runs and guards tables, last) hold the run's
//! label when the command was given labels (`report --expect`): the label (`failed`,
//! `healthy`) and the file it was read from (the labels file or evaluation summary as given,
//! a Harbor trial's `result.json`). They are always there, null for a run the labels do not
//! name and for every run when no labels were given (`replay` takes none), so the columns
//! are the same, in CSV and Parquet, whatever the command.
//!
//! `guards_frame`:
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `project` | str | project name, as in the JSON report |
//! | `run_id` | str | the run (session) id |
//! | `session` | i64 | 1-based session number within the project |
//! | `guard` | str | guard id |
//! | `work_order` | str | the guard's work order |
//! | `fired` | bool | the guard fired at least once in this run |
//! | `first_fire_turn` | i64, null if it never fired | turn of its first firing |
//! | `first_action` | str, null if it never fired | action of its first firing |
//! | `firings` | i64 | how many times it fired in this run |
//! | `terminal` | bool | any of its firings is terminal (would have ended the run) |
//! | `tokens_saved` | i64 | tokens this guard alone would have saved (`savings.by_guard`, 0 if absent) |
//! | `cost_saved_usd` | f64, null if the run has no priced request | dollars this guard alone would have saved |
//! | `run_cost_usd` | f64, null if the run has no priced request | what the run cost (`cost_usd`), for shares |
//! | `label` | str, null if not labelled | the run's label: `failed` or `healthy` |
//! | `label_source` | str, null if not labelled | where the label was read from |
//!
//! `runs_frame`:
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `project` | str | project name |
//! | `run_id` | str | the run (session) id |
//! | `session` | i64 | 1-based session number within the project |
//! | `turns` | i64 | turns recorded |
//! | `tokens_total` | i64 | tokens the run spent as recorded |
//! | `ledger_recorded` | str | ledger status as recorded |
//! | `ledger_finalized` | str | ledger status after the finalization guard |
//! | `cut_at_turn` | i64, null if no terminal firing | turn the earliest terminal firing cuts the run at |
//! | `tokens_saved_combined` | i64 | tokens all guards together would have saved |
//! | `firings` | i64 | firings of all guards in this run |
//! | `skipped_records` | i64 | bad input records skipped (lenient mode) |
//! | `tokens_recorded` | i64 | tokens read from the log |
//! | `tokens_estimated` | i64 | tokens estimated where the log records no usage |
//! | `tokens_input` | i64 | recorded prompt tokens read fresh |
//! | `tokens_cache_write` | i64 | recorded prompt tokens written to the provider's cache |
//! | `tokens_cache_read` | i64 | recorded prompt tokens read from the provider's cache |
//! | `tokens_output` | i64 | recorded completion tokens |
//! | `cost_usd` | f64, null if no request is priced | dollars over the priced requests |
//! | `cost_saved_usd_combined` | f64, null if no request is priced | dollars all guards together would have saved |
//! | `cost_unpriced_tokens` | i64 | tokens of requests whose model has no price |
//! | `cut_by` | str, null if no terminal firing | the guard whose firing cuts the run at `cut_at_turn` ([`RunReport::cut_by`]: of several at that turn, the first by guard id) |
//! | `label` | str, null if not labelled | the run's label: `failed` or `healthy` |
//! | `label_source` | str, null if not labelled | where the label was read from |
//!
//! `firings_frame`:
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `project` | str | project name |
//! | `run_id` | str | the run (session) id |
//! | `session` | i64 | 1-based session number within the project |
//! | `guard` | str | guard id |
//! | `work_order` | str | the guard's work order |
//! | `turn` | i64 | turn the guard fired at |
//! | `agent` | str | the agent thread it fired on (`main`, or a sub-agent's name) |
//! | `action` | str | what the guard would have done |
//! | `effect` | str | `terminal`, `advisory`, `suppress` or `shrink` |
//! | `family` | str, null if none | the failure family it names |
//! | `tokens_saved` | i64 | tokens this firing would have saved (docs/COUNTERFACTUAL.md) |
//! | `detail` | str, null if none | the guard's note on this firing |
//!
//! The firings table has no dollar column: savings are priced per guard and run, not per
//! firing (`guards_frame`'s `cost_saved_usd`). Nor has it the labels: a firing's run is
//! one `project`, `run_id` away in the runs table.

use super::{Report, RunReport};
use labels::label_columns;
use polars::prelude::{Column, DataFrame, PolarsError, PolarsResult};
use std::path::{Path, PathBuf};

mod labels;

pub use labels::{TableLabel, TableLabels};

/// The column names of both tables.
pub mod col {
    pub const PROJECT: &str = "project";
    pub const RUN_ID: &str = "run_id";
    pub const SESSION: &str = "session";
    pub const GUARD: &str = "guard";
    pub const WORK_ORDER: &str = "work_order";
    pub const FIRED: &str = "fired";
    pub const FIRST_FIRE_TURN: &str = "first_fire_turn";
    pub const FIRST_ACTION: &str = "first_action";
    pub const FIRINGS: &str = "firings";
    pub const TERMINAL: &str = "terminal";
    pub const TOKENS_SAVED: &str = "tokens_saved";
    pub const TURNS: &str = "turns";
    pub const TOKENS_TOTAL: &str = "tokens_total";
    pub const LEDGER_RECORDED: &str = "ledger_recorded";
    pub const LEDGER_FINALIZED: &str = "ledger_finalized";
    pub const CUT_AT_TURN: &str = "cut_at_turn";
    pub const TOKENS_SAVED_COMBINED: &str = "tokens_saved_combined";
    pub const SKIPPED_RECORDS: &str = "skipped_records";
    pub const COST_SAVED_USD: &str = "cost_saved_usd";
    pub const RUN_COST_USD: &str = "run_cost_usd";
    pub const TOKENS_RECORDED: &str = "tokens_recorded";
    pub const TOKENS_ESTIMATED: &str = "tokens_estimated";
    pub const TOKENS_INPUT: &str = "tokens_input";
    pub const TOKENS_CACHE_WRITE: &str = "tokens_cache_write";
    pub const TOKENS_CACHE_READ: &str = "tokens_cache_read";
    pub const TOKENS_OUTPUT: &str = "tokens_output";
    pub const COST_USD: &str = "cost_usd";
    pub const COST_SAVED_USD_COMBINED: &str = "cost_saved_usd_combined";
    pub const COST_UNPRICED_TOKENS: &str = "cost_unpriced_tokens";
    pub const TURN: &str = "turn";
    pub const AGENT: &str = "agent";
    pub const ACTION: &str = "action";
    pub const EFFECT: &str = "effect";
    pub const FAMILY: &str = "family";
    pub const DETAIL: &str = "detail";
    pub const CUT_BY: &str = "cut_by";
    pub const LABEL: &str = "label";
    pub const LABEL_SOURCE: &str = "label_source";
}

/// The columns of [`guards_frame`], in order.
pub const GUARDS_COLUMNS: [&str; 15] = [
    col::PROJECT,
    col::RUN_ID,
    col::SESSION,
    col::GUARD,
    col::WORK_ORDER,
    col::FIRED,
    col::FIRST_FIRE_TURN,
    col::FIRST_ACTION,
    col::FIRINGS,
    col::TERMINAL,
    col::TOKENS_SAVED,
    col::COST_SAVED_USD,
    col::RUN_COST_USD,
    col::LABEL,
    col::LABEL_SOURCE,
];

/// The columns of [`runs_frame`], in order.
pub const RUNS_COLUMNS: [&str; 23] = [
    col::PROJECT,
    col::RUN_ID,
    col::SESSION,
    col::TURNS,
    col::TOKENS_TOTAL,
    col::LEDGER_RECORDED,
    col::LEDGER_FINALIZED,
    col::CUT_AT_TURN,
    col::TOKENS_SAVED_COMBINED,
    col::FIRINGS,
    col::SKIPPED_RECORDS,
    col::TOKENS_RECORDED,
    col::TOKENS_ESTIMATED,
    col::TOKENS_INPUT,
    col::TOKENS_CACHE_WRITE,
    col::TOKENS_CACHE_READ,
    col::TOKENS_OUTPUT,
    col::COST_USD,
    col::COST_SAVED_USD_COMBINED,
    col::COST_UNPRICED_TOKENS,
    col::CUT_BY,
    col::LABEL,
    col::LABEL_SOURCE,
];

/// The columns of [`firings_frame`], in order.
pub const FIRINGS_COLUMNS: [&str; 12] = [
    col::PROJECT,
    col::RUN_ID,
    col::SESSION,
    col::GUARD,
    col::WORK_ORDER,
    col::TURN,
    col::AGENT,
    col::ACTION,
    col::EFFECT,
    col::FAMILY,
    col::TOKENS_SAVED,
    col::DETAIL,
];

/// File names [`write_tables`] writes, in order.
pub const TABLE_FILES: [&str; 6] = [
    "runs.csv",
    "guards.csv",
    "runs.parquet",
    "guards.parquet",
    "firings.csv",
    "firings.parquet",
];

/// A corpus table, by name (`hindsight replay --format csv|parquet --table NAME`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TableKind {
    /// One row per run (`runs_frame`).
    Runs,
    /// One row per (run, guard) (`guards_frame`).
    #[default]
    Guards,
    /// One row per firing (`firings_frame`).
    Firings,
}

impl TableKind {
    /// The table of `report`, its runs labelled by `labels`.
    pub fn frame(self, report: &Report, labels: &TableLabels) -> PolarsResult<DataFrame> {
        match self {
            TableKind::Runs => runs_frame(report, labels),
            TableKind::Guards => guards_frame(report, labels),
            TableKind::Firings => firings_frame(report),
        }
    }
}

/// The report's runs ordered by project, then run id (stable: equal keys keep the
/// report's order).
fn ordered_runs(report: &Report) -> Vec<&RunReport> {
    let mut runs: Vec<&RunReport> = report.runs.iter().collect();
    runs.sort_by(|a, b| (&a.project, &a.run_id).cmp(&(&b.project, &b.run_id)));
    runs
}

/// A count as the tables' `i64`, refusing (not wrapping) one that does not fit.
fn to_i64<T>(value: T, what: &str, run: &RunReport) -> PolarsResult<i64>
where
    T: TryInto<i64> + Copy + std::fmt::Display,
{
    value.try_into().map_err(|_| {
        PolarsError::ComputeError(
            format!(
                "{}/{}: {what} {value} does not fit an i64 column",
                run.project, run.run_id
            )
            .into(),
        )
    })
}

/// One row per (run × guard the report covers, as its summary lists them: the catalogue it
/// was replayed with, external guards included), each run labelled by `labels`; see the
/// module documentation for the columns.
pub fn guards_frame(report: &Report, labels: &TableLabels) -> PolarsResult<DataFrame> {
    let guards = &report.summary.guards;
    let runs = ordered_runs(report);
    let rows = runs.len() * guards.len();
    let mut project = Vec::with_capacity(rows);
    let mut run_id = Vec::with_capacity(rows);
    let mut session = Vec::with_capacity(rows);
    let mut guard = Vec::with_capacity(rows);
    let mut work_order = Vec::with_capacity(rows);
    let mut fired = Vec::with_capacity(rows);
    let mut first_fire_turn: Vec<Option<i64>> = Vec::with_capacity(rows);
    let mut first_action: Vec<Option<&str>> = Vec::with_capacity(rows);
    let mut firings = Vec::with_capacity(rows);
    let mut terminal = Vec::with_capacity(rows);
    let mut tokens_saved = Vec::with_capacity(rows);
    let mut cost_saved_usd: Vec<Option<f64>> = Vec::with_capacity(rows);
    let mut run_cost_usd: Vec<Option<f64>> = Vec::with_capacity(rows);
    for &run in &runs {
        let run_session = to_i64(run.session, col::SESSION, run)?;
        for entry in guards {
            let id = entry.guard.as_str();
            let own: Vec<_> = run.firings.iter().filter(|f| f.guard == id).collect();
            // The earliest turn; among firings at that turn, the first recorded.
            let first = own.iter().min_by_key(|f| f.turn);
            project.push(run.project.as_str());
            run_id.push(run.run_id.as_str());
            session.push(run_session);
            guard.push(id);
            work_order.push(entry.work_order.as_str());
            fired.push(!own.is_empty());
            first_fire_turn.push(first.map(|f| i64::from(f.turn)));
            first_action.push(first.map(|f| f.action.as_str()));
            firings.push(to_i64(own.len(), col::FIRINGS, run)?);
            terminal.push(own.iter().any(|f| f.effect == "terminal"));
            let saved = run.savings.by_guard.get(id).copied().unwrap_or(0);
            tokens_saved.push(to_i64(saved, col::TOKENS_SAVED, run)?);
            cost_saved_usd.push(run.cost_saved_by(id));
            run_cost_usd.push(run.cost_usd);
        }
    }
    let each_guard = runs
        .iter()
        .flat_map(|&run| std::iter::repeat_n(run, guards.len()));
    let [label, label_source] = label_columns(each_guard, labels);
    DataFrame::new(
        rows,
        vec![
            Column::new(col::PROJECT.into(), project),
            Column::new(col::RUN_ID.into(), run_id),
            Column::new(col::SESSION.into(), session),
            Column::new(col::GUARD.into(), guard),
            Column::new(col::WORK_ORDER.into(), work_order),
            Column::new(col::FIRED.into(), fired),
            Column::new(col::FIRST_FIRE_TURN.into(), first_fire_turn),
            Column::new(col::FIRST_ACTION.into(), first_action),
            Column::new(col::FIRINGS.into(), firings),
            Column::new(col::TERMINAL.into(), terminal),
            Column::new(col::TOKENS_SAVED.into(), tokens_saved),
            Column::new(col::COST_SAVED_USD.into(), cost_saved_usd),
            Column::new(col::RUN_COST_USD.into(), run_cost_usd),
            label,
            label_source,
        ],
    )
}

/// One row per run, labelled by `labels`; see the module documentation for the columns.
pub fn runs_frame(report: &Report, labels: &TableLabels) -> PolarsResult<DataFrame> {
    let runs = ordered_runs(report);
    let rows = runs.len();
    let strs = |f: fn(&RunReport) -> &str| runs.iter().map(|r| f(r)).collect::<Vec<&str>>();
    // A count column, a value that does not fit refused by the column's name.
    let count = |name: &str, f: fn(&RunReport) -> u64| -> PolarsResult<Column> {
        let values: Vec<i64> = (runs.iter())
            .map(|r| to_i64(f(r), name, r))
            .collect::<PolarsResult<_>>()?;
        Ok(Column::new(name.into(), values))
    };
    let dollars = |f: fn(&RunReport) -> Option<f64>| runs.iter().map(|r| f(r)).collect::<Vec<_>>();
    let cut_at_turn: Vec<Option<i64>> = (runs.iter())
        .map(|r| r.savings.cut_at_turn.map(i64::from))
        .collect();
    let cut_by: Vec<Option<&str>> = (runs.iter())
        .map(|r| r.cut_by().map(|f| f.guard.as_str()))
        .collect();
    let [label, label_source] = label_columns(runs.iter().copied(), labels);
    // usize to u64 is lossless on every target Rust supports.
    DataFrame::new(
        rows,
        vec![
            Column::new(col::PROJECT.into(), strs(|r| &r.project)),
            Column::new(col::RUN_ID.into(), strs(|r| &r.run_id)),
            count(col::SESSION, |r| r.session as u64)?,
            count(col::TURNS, |r| r.turns as u64)?,
            count(col::TOKENS_TOTAL, |r| r.tokens_total)?,
            Column::new(col::LEDGER_RECORDED.into(), strs(|r| &r.ledger.recorded)),
            Column::new(col::LEDGER_FINALIZED.into(), strs(|r| &r.ledger.finalized)),
            Column::new(col::CUT_AT_TURN.into(), cut_at_turn),
            count(col::TOKENS_SAVED_COMBINED, |r| r.savings.combined)?,
            count(col::FIRINGS, |r| r.firings.len() as u64)?,
            count(col::SKIPPED_RECORDS, |r| r.input.skipped)?,
            count(col::TOKENS_RECORDED, |r| r.tokens_recorded)?,
            count(col::TOKENS_ESTIMATED, |r| r.tokens_estimated)?,
            count(col::TOKENS_INPUT, |r| r.tokens_by_kind.input)?,
            count(col::TOKENS_CACHE_WRITE, |r| r.tokens_by_kind.cache_write)?,
            count(col::TOKENS_CACHE_READ, |r| r.tokens_by_kind.cache_read)?,
            count(col::TOKENS_OUTPUT, |r| r.tokens_by_kind.output)?,
            Column::new(col::COST_USD.into(), dollars(|r| r.cost_usd)),
            Column::new(
                col::COST_SAVED_USD_COMBINED.into(),
                dollars(|r| r.savings.cost_saved_usd.as_ref().map(|c| c.combined)),
            ),
            count(col::COST_UNPRICED_TOKENS, |r| r.cost_unpriced_tokens)?,
            Column::new(col::CUT_BY.into(), cut_by),
            label,
            label_source,
        ],
    )
}

/// One row per firing; see the module documentation for the columns.
pub fn firings_frame(report: &Report) -> PolarsResult<DataFrame> {
    let runs = ordered_runs(report);
    let rows: usize = runs.iter().map(|r| r.firings.len()).sum();
    let mut project = Vec::with_capacity(rows);
    let mut run_id = Vec::with_capacity(rows);
    let mut session = Vec::with_capacity(rows);
    let mut guard = Vec::with_capacity(rows);
    let mut work_order = Vec::with_capacity(rows);
    let mut turn = Vec::with_capacity(rows);
    let mut agent = Vec::with_capacity(rows);
    let mut action = Vec::with_capacity(rows);
    let mut effect = Vec::with_capacity(rows);
    let mut family: Vec<Option<&str>> = Vec::with_capacity(rows);
    let mut tokens_saved = Vec::with_capacity(rows);
    let mut detail: Vec<Option<&str>> = Vec::with_capacity(rows);
    for run in runs {
        let run_session = to_i64(run.session, col::SESSION, run)?;
        for f in &run.firings {
            project.push(run.project.as_str());
            run_id.push(run.run_id.as_str());
            session.push(run_session);
            guard.push(f.guard.as_str());
            work_order.push(f.work_order.as_str());
            turn.push(i64::from(f.turn));
            agent.push(f.agent.as_str());
            action.push(f.action.as_str());
            effect.push(f.effect.as_str());
            family.push(f.family.as_deref());
            tokens_saved.push(to_i64(f.tokens_saved, col::TOKENS_SAVED, run)?);
            detail.push(f.detail.as_deref());
        }
    }
    DataFrame::new(
        rows,
        vec![
            Column::new(col::PROJECT.into(), project),
            Column::new(col::RUN_ID.into(), run_id),
            Column::new(col::SESSION.into(), session),
            Column::new(col::GUARD.into(), guard),
            Column::new(col::WORK_ORDER.into(), work_order),
            Column::new(col::TURN.into(), turn),
            Column::new(col::AGENT.into(), agent),
            Column::new(col::ACTION.into(), action),
            Column::new(col::EFFECT.into(), effect),
            Column::new(col::FAMILY.into(), family),
            Column::new(col::TOKENS_SAVED.into(), tokens_saved),
            Column::new(col::DETAIL.into(), detail),
        ],
    )
}

/// Why [`write_tables`] could not write the tables.
#[derive(Debug, thiserror::Error)]
pub enum TablesError {
    #[error("cannot build the tables: {0}")]
    Build(#[source] PolarsError),
    #[error("{}: cannot create: {source}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: PolarsError,
    },
}

/// Writes the three tables into `dir` (created if missing) as [`TABLE_FILES`]:
/// `runs.csv`, `guards.csv`, `runs.parquet`, `guards.parquet`, `firings.csv`,
/// `firings.parquet`, the runs labelled by `labels`. Returns the paths written, in that
/// order.
pub fn write_tables(
    report: &Report,
    labels: &TableLabels,
    dir: &Path,
) -> Result<Vec<PathBuf>, TablesError> {
    let mut runs = runs_frame(report, labels).map_err(TablesError::Build)?;
    let mut guards = guards_frame(report, labels).map_err(TablesError::Build)?;
    let mut firings = firings_frame(report).map_err(TablesError::Build)?;
    crate::output::create_dir(dir).map_err(|source| TablesError::Create {
        path: dir.to_path_buf(),
        source,
    })?;
    let paths = TABLE_FILES.map(|f| dir.join(f));
    let [runs_csv, guards_csv, runs_parquet, guards_parquet, firings_csv, firings_parquet] = &paths;
    super::csv::write_file(&mut runs, runs_csv)?;
    super::csv::write_file(&mut guards, guards_csv)?;
    super::parquet::write_file(&mut runs, runs_parquet)?;
    super::parquet::write_file(&mut guards, guards_parquet)?;
    super::csv::write_file(&mut firings, firings_csv)?;
    super::parquet::write_file(&mut firings, firings_parquet)?;
    Ok(paths.to_vec())
}

/// Writes the file `path` with `write`, staged ([`crate::output::stage`]): a failed write
/// (a full disk) leaves no part of it. The errors are those [`write_tables`] reports.
pub(super) fn write_staged(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<(), PolarsError>,
) -> Result<(), TablesError> {
    let create = |source| TablesError::Create {
        path: path.to_path_buf(),
        source,
    };
    let mut staged = crate::output::stage(path).map_err(create)?;
    if let Some(file) = staged.take_file() {
        let mut out = std::io::BufWriter::new(file);
        let written = write(&mut out).and_then(|()| Ok(std::io::Write::flush(&mut out)?));
        written.map_err(|source| TablesError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    }
    staged.commit().map_err(create)
}

/// A polars error as an I/O error for the renderers, keeping the kind of an underlying
/// I/O error (so a closed stdout stays a broken pipe).
pub(super) fn io_error(e: PolarsError) -> std::io::Error {
    let kind = match &e {
        PolarsError::IO { error, .. } => error.kind(),
        _ => std::io::ErrorKind::Other,
    };
    std::io::Error::new(kind, e.to_string())
}
