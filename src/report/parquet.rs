//! Parquet: a corpus table ([`super::frames`]) as a Parquet file (zstd-compressed, the
//! column types of the table kept: `i64` (`INT64`), `f64`, `bool`, strings, nullable
//! columns nullable).
//!
//! polars' `ParquetWriter` needs only [`Write`] (no `Seek`): the footer is written last.
//! Parquet is binary, so `hindsight replay --format parquet` requires `--out FILE`.

use super::frames::{io_error, write_staged, TableKind, TableLabels, TablesError};
use super::Report;
use polars::prelude::{DataFrame, PolarsResult};
use polars_io::prelude::ParquetWriter;
use std::io::Write;
use std::path::Path;

/// Writes `df` as Parquet; returns the bytes written.
pub fn write(df: &mut DataFrame, out: &mut dyn Write) -> PolarsResult<u64> {
    ParquetWriter::new(out).finish(df)
}

/// Writes the run × guard table of `report` as Parquet (`--format parquet`).
pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    render_table(report, TableKind::Guards, out)
}

/// Writes the table `kind` of `report` as Parquet (`--format parquet --table KIND`).
pub fn render_table(report: &Report, kind: TableKind, out: &mut dyn Write) -> std::io::Result<()> {
    // `replay` takes no labels: the label columns are null.
    let mut df = kind.frame(report, &TableLabels::none()).map_err(io_error)?;
    write(&mut df, out).map(drop).map_err(io_error)
}

/// Writes `df` as Parquet to the file `path`, a new file put in place once whole.
pub fn write_file(df: &mut DataFrame, path: &Path) -> Result<(), TablesError> {
    write_staged(path, |out| write(df, out).map(drop))
}
