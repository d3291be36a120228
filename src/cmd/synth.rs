//! `hindsight synth`: a deterministic, realistic `.omnius/` corpus of any size, so anyone
//! can reproduce the throughput benchmarks (scripts/bench.sh, docs/PERFORMANCE.md).

use super::EXIT_OK;
use crate::output::Guard;
use crate::synth::corpus::{write_corpus_with, SynthOptions, MEAN_RUN_BYTES};
use crate::synth::loops;
use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    about = "Write a deterministic, realistic corpus of recorded runs (benchmarks, fixtures).",
    after_help = "Examples:\n  hindsight synth --out /tmp/corpus --mb 100\n  \
    hindsight synth --out /tmp/corpus --projects 8 --runs-per-project 32 --seed 7\n  \
    hindsight replay /tmp/corpus --format json --out report.json\n\n\
    Each project is <OUT>/<project>/.omnius/ with --runs-per-project sessions of 30-140 \
    turns: tool-call mixes per ecosystem, failure families retried with cosmetic command \
    variants, edit retries, directives, context frames of 50-400 KB, and sessions that \
    resume the previous one's failing build. The same --projects, --runs-per-project and \
    --seed always give byte-identical trees.\n\n\
    --mb SIZE picks --runs-per-project = round(SIZE x 10^6 / (projects x 3,900,000)), at \
    least 1: a run is 3.9 MB on average, so the corpus is about SIZE MB (within about 20% \
    for small corpora, a few % from 1 GB), but never smaller than one run per project \
    (about 31 MB with 8 projects). The summary line says \
    which --runs-per-project it picked; passing that instead gives the same bytes.\n\n\
    Scaling corpora (scripts/bench.sh): --stuck-loop-lines N writes one project \
    (stuck-loop) with one run of N events.jsonl lines repeating one identical failing \
    build; --distinct-calls-lines N the same size and layout with a different call every \
    turn (distinct-calls); --tiny-runs N writes N one-turn runs over --projects projects \
    (tiny-0, tiny-1, ...)."
)]
pub struct Args {
    /// The folder to write into (created if missing). A non-empty one is refused unless
    /// --force is given.
    #[arg(long)]
    pub out: PathBuf,
    /// Projects, one per build ecosystem in turn (cargo, npm, pytest, go, cmake...).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub projects: u64,
    /// Sessions (runs) per project [default: 3, or what --mb picks].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub runs_per_project: Option<u64>,
    /// Pick --runs-per-project for a corpus of about SIZE megabytes (10^6 bytes).
    #[arg(long, value_name = "SIZE", conflicts_with = "runs_per_project")]
    pub mb: Option<f64>,
    /// The generator's seed.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Write into a non-empty --out, replacing only the project folders generated there.
    #[arg(long)]
    pub force: bool,
    /// Instead of the corpus: one run of N lines repeating one identical failing call.
    #[arg(long, value_name = "N", conflicts_with_all = ["mb", "runs_per_project", "distinct_calls_lines", "tiny_runs"],
        value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub stuck_loop_lines: Option<u64>,
    /// Instead of the corpus: one run of N lines with a different call every turn.
    #[arg(long, value_name = "N", conflicts_with_all = ["mb", "runs_per_project", "tiny_runs"],
        value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub distinct_calls_lines: Option<u64>,
    /// Instead of the corpus: N minimal one-turn runs spread over --projects projects.
    #[arg(long, value_name = "N", conflicts_with_all = ["mb", "runs_per_project"],
        value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub tiny_runs: Option<u64>,
}

pub fn run(args: Args) -> Result<u8> {
    let shape = match (args.stuck_loop_lines, args.distinct_calls_lines) {
        (Some(n), _) => Some(("stuck loop", loops::LoopShape::Stuck, n)),
        (None, Some(n)) => Some(("distinct calls", loops::LoopShape::Distinct, n)),
        (None, None) => None,
    };
    if shape.is_some() || args.tiny_runs.is_some() {
        Guard::default().check(&args.out)?;
        let (what, summary) = match shape {
            Some((what, shape, lines)) => (
                what,
                loops::write_loop(shape, lines, &args.out, args.force)?,
            ),
            None => {
                let runs = args.tiny_runs.unwrap_or(1);
                let summary = loops::write_tiny_runs(runs, args.projects, &args.out, args.force)?;
                ("tiny runs", summary)
            }
        };
        eprintln!(
            "wrote {:.1} MB ({} bytes) in {} files into {}: {what}, {} projects, {} runs, \
             {} lines, {} turns, {} frames",
            summary.bytes as f64 / 1e6,
            summary.bytes,
            summary.files,
            args.out.display(),
            summary.projects,
            summary.runs,
            summary.lines,
            summary.turns,
            summary.frames,
        );
        return Ok(EXIT_OK);
    }
    let projects = args.projects as usize;
    let runs_per_project = match (args.runs_per_project, args.mb) {
        (Some(n), _) => n as usize,
        (None, Some(mb)) if !(mb.is_finite() && mb > 0.0) => {
            bail!("--mb must be a positive number of megabytes (got {mb})")
        }
        (None, Some(mb)) => SynthOptions::runs_for_mb(mb, projects),
        (None, None) => SynthOptions::default().runs_per_project,
    };
    let opts = SynthOptions {
        projects,
        runs_per_project,
        seed: args.seed,
        force: args.force,
    };
    // synth reads nothing, so this refuses only a folder inside a recording (`.omnius`).
    Guard::default().check(&args.out)?;
    let bar = progress_bar((projects * runs_per_project) as u64);
    let summary = write_corpus_with(&opts, &args.out, &mut |s| bar.set_position(s.runs));
    bar.finish_and_clear();
    let summary = summary?;
    let picked = match args.mb {
        Some(mb) if args.runs_per_project.is_none() => format!(
            "; --mb {mb} picked --runs-per-project {runs_per_project} at about {:.1} MB a run",
            MEAN_RUN_BYTES as f64 / 1e6
        ),
        _ => String::new(),
    };
    eprintln!(
        "wrote {:.1} MB ({} bytes) in {} files into {}: {} projects x {} runs, {} turns, \
         {} frames (seed {}{picked})",
        summary.bytes as f64 / 1e6,
        summary.bytes,
        summary.files,
        args.out.display(),
        summary.projects,
        runs_per_project,
        summary.turns,
        summary.frames,
        args.seed,
    );
    Ok(EXIT_OK)
}

fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} writing {pos}/{len} runs [{elapsed}] {wide_bar}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
