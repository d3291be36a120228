//! `hindsight merge`: the JSON reports of `--shard K/N` replays as the one report an
//! unsharded replay gives (the work is [`crate::report::merge`]), and the JSON of
//! `--shard K/N` sweeps as the one unsharded sweep ([`crate::gate::sweep_report`]).

use super::{parse_json, read_text, write_staged, EXIT_OK};
use crate::gate::sweep_report::{self, is_sweep, SweepPart};
use crate::output::Guard;
use crate::report::merge::{merge, MergeError, Part};
use anyhow::Result;
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
    replays of disjoint corpora) merge too. docs/SCALE.md has the recipe.\n\n\
    The JSON of `hindsight sweep --shard K/N --format json` merges the same way into the \
    unsharded sweep's JSON, byte for byte (each carries its runs' outcomes at every grid \
    point, so the intervals are drawn again over the whole): the shards must share the grid, \
    --select, --holdout and --resamples (docs/GATE.md).")]
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
        guard.check(out)?;
    }
    let mut reports = Vec::new();
    let mut sweeps = Vec::new();
    for path in &args.reports {
        let file = crate::ingest::display(path);
        let text = read_text(path)?;
        if is_sweep(&text) {
            sweeps.push((
                file,
                parse_json::<SweepPart>(path, &text, "sweep --format json")?,
            ));
        } else {
            let report = parse_json(path, &text, "replay --format json")?;
            reports.push(Part { file, report });
        }
    }
    if let (Some((sweep, _)), Some(report)) = (sweeps.first(), reports.first()) {
        return Err(MergeError::Kinds {
            file: sweep.clone(),
            other: report.file.clone(),
        }
        .into());
    }
    // Each is merged before the output is made, so a refusal writes nothing; the output is
    // staged, so a failed write (a full disk) leaves whatever was at `--out`.
    let out = args.out.as_deref();
    if sweeps.is_empty() {
        let report = merge(reports)?;
        write_staged(&guard, out, false, |w| {
            Ok(crate::report::json::render(&report, w)?)
        })?;
    } else {
        let sweep = sweep_report::merge(sweeps)?;
        write_staged(&guard, out, false, |w| Ok(sweep.write(w)?))?;
    }
    Ok(EXIT_OK)
}
