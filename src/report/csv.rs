//! CSV: a corpus table ([`super::frames`]) as comma-separated values with a header line.
//!
//! `hindsight replay --format csv` writes the run × guard table ([`TableKind::Guards`];
//! `--table` picks another); nulls (a guard that never fired has no first turn or action)
//! are empty fields, booleans are `true`/`false`.

use super::frames::{io_error, write_staged, TableKind, TableLabels, TablesError};
use super::Report;
use polars::prelude::{DataFrame, PolarsResult};
use polars_io::prelude::{CsvWriter, SerWriter};
use std::io::Write;
use std::path::Path;

/// Writes `df` as CSV, header line first.
pub fn write(df: &mut DataFrame, out: &mut dyn Write) -> PolarsResult<()> {
    CsvWriter::new(out).include_header(true).finish(df)
}

/// Writes the run × guard table of `report` as CSV (`--format csv`).
pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    render_table(report, TableKind::Guards, out)
}

/// Writes the table `kind` of `report` as CSV (`--format csv --table KIND`).
pub fn render_table(report: &Report, kind: TableKind, out: &mut dyn Write) -> std::io::Result<()> {
    // `replay` takes no labels: the label columns are null.
    let mut df = kind.frame(report, &TableLabels::none()).map_err(io_error)?;
    write(&mut df, out).map_err(io_error)
}

/// Writes `df` as CSV to the file `path`, a new file put in place once whole.
pub fn write_file(df: &mut DataFrame, path: &Path) -> Result<(), TablesError> {
    write_staged(path, |out| write(df, out))
}
