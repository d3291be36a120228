//! The Markdown report: the same tables as the terminal, as pipe tables.

use super::tables::{all, notes, TableModel};
use super::Report;
use std::io::Write;

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "# hindsight replay\n")?;
    tables(report, "##", out)
}

/// Every table of the report, each under a heading of `level` (`##`, `###`).
pub fn tables(report: &Report, level: &str, out: &mut dyn Write) -> std::io::Result<()> {
    for model in all(report) {
        writeln!(out, "{level} {}\n", model.title)?;
        table(&model, out)?;
        writeln!(out)?;
    }
    for note in notes(report) {
        writeln!(out, "_{note}_")?;
    }
    Ok(())
}

/// One pipe table.
pub fn table(model: &TableModel, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "| {} |", model.headers.join(" | "))?;
    let rule: Vec<&str> = (0..model.headers.len())
        .map(|i| {
            if model.numeric.contains(&i) {
                "---:"
            } else {
                "---"
            }
        })
        .collect();
    writeln!(out, "| {} |", rule.join(" | "))?;
    for row in &model.rows {
        let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}

/// A table cell's text with its `|` escaped.
pub fn escape(cell: &str) -> String {
    cell.replace('|', "\\|")
}
