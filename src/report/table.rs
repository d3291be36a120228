//! The terminal table (comfy-table): what `hindsight replay` prints by default.

use super::tables::{all, skipped_notes, TableModel};
use super::Report;
use comfy_table::{presets, CellAlignment, ContentArrangement, Table};
use std::io::Write;

pub fn render(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    for model in all(report) {
        writeln!(out, "{}", model.title)?;
        writeln!(out, "{}", draw(&model))?;
        writeln!(out)?;
    }
    for note in skipped_notes(report) {
        writeln!(out, "{note}")?;
    }
    Ok(())
}

fn draw(model: &TableModel) -> Table {
    let mut table = Table::new();
    // Fixed layout, no terminal probing: the same input prints the same bytes anywhere.
    table
        .load_style(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(model.headers.clone());
    for row in &model.rows {
        table.add_row(row.clone());
    }
    for &i in &model.numeric {
        if let Some(col) = table.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}
