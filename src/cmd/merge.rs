//! `hindsight merge`: the JSON reports of `--shard K/N` replays as the one report an
//! unsharded replay gives (the work is [`crate::report::merge`]).

use super::{load_report, output, EXIT_OK};
use crate::output::{Entry, Guard};
use crate::report::merge::{merge, Part};
use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hindsight replay corpora/ --shard 1/3 --format json --out shard-1.json   # one per job\n  \
    hindsight merge shard-*.json --out report.json\n  \
    hindsight gate --from report.json --expect corpora/expectations.json\n  \
    hindsight report --from report.json --out-dir review/\n\n\
    The merged report is byte for byte what `hindsight replay PATHS --format json` gives: the \
    runs in discovery's order (projects by name), the summary recomputed, the `input` section \
    (paths not read, look-alike files) once. Refused (exit 2), naming the files: a project in \
    two reports, `input` sections that differ (the shards were not given the same paths), a \
    shard missing or given twice, shards of different N. Reports without `--shard` (whole \
    replays of disjoint corpora) merge too. docs/SCALE.md has the recipe.")]
pub struct Args {
    /// The `--format json` reports of the shards, in any order.
    #[arg(required = true, value_name = "REPORT.json")]
    pub reports: Vec<PathBuf>,
    /// Write the merged report here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<u8> {
    let guard = Guard::new(&args.reports);
    if let Some(out) = &args.out {
        guard.check(out, Entry::Replaced)?;
    }
    let parts = args
        .reports
        .iter()
        .map(|path| {
            Ok(Part {
                file: crate::ingest::display(path),
                report: load_report(path)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let report = merge(parts)?;
    let file = args
        .out
        .as_deref()
        .map(|p| guard.create_file(p))
        .transpose()?;
    let mut out = output(file);
    crate::report::json::render(&report, &mut out)?;
    out.flush()?;
    Ok(EXIT_OK)
}
