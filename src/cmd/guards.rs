//! `hindsight guards`: the guard catalogue.

use super::{output, EXIT_OK};
use crate::guards::registry;
use anyhow::Result;
use comfy_table::{presets, ContentArrangement, Table};
use std::io::Write;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  hindsight guards\n  hindsight guards --json")]
pub struct Args {
    /// Print the catalogue as JSON (id, work order, seed, summary, defaults).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<u8> {
    let mut out = output(None);
    let entries = registry();
    if args.json {
        let list: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "id": e.info.id,
                    "work_order": e.info.work_order,
                    "seed": e.info.seed,
                    "summary": e.info.summary,
                    "defaults": (e.defaults)(),
                })
            })
            .collect();
        serde_json::to_writer_pretty(&mut out, &list)?;
        writeln!(out)?;
    } else {
        let mut table = Table::new();
        table
            .load_style(presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Disabled)
            .set_header(vec![
                "guard",
                "work order",
                "seed section",
                "defaults",
                "fires when",
            ]);
        for e in &entries {
            table.add_row(vec![
                e.info.id.to_string(),
                e.info.work_order.to_string(),
                e.info.seed.to_string(),
                (e.defaults)().to_string(),
                e.info.summary.to_string(),
            ]);
        }
        writeln!(out, "{table}")?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
