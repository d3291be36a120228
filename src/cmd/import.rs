//! `hindsight import`: any supported input written as `.omnius/` trees (docs/FORMAT.md),
//! so runs from other harnesses can be read, trimmed and committed as fixtures.

use super::input::Input;
use super::EXIT_OK;
use crate::ingest::load_run;
use crate::output::Entry;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hindsight import ~/.claude/projects/my-app --out fixtures/my-app\n  \
    hindsight import trajectories/ --out imported/ --input-format mini-swe-agent\n\n\
    Each project becomes <OUT>/<project>/.omnius/runs/<runId>/."
)]
pub struct Args {
    #[command(flatten)]
    pub input: Input,
    /// The folder to write the `.omnius/` trees into (created if missing).
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(args: Args) -> Result<u8> {
    let projects = args.input.projects()?;
    if projects.is_empty() {
        bail!("no recorded runs found under the given paths");
    }
    let guard = args.input.guard(&projects, &[]);
    guard.check(&args.out, Entry::Followed)?;
    let policy = args.input.policy();
    let mut written = 0;
    for project in &projects {
        let folder = args.out.join(slug(&project.name)).join(".omnius");
        for (index, source) in project.runs.iter().enumerate() {
            let mut run = load_run(source, policy)?;
            // `.omnius` orders sessions by the number their id starts with; other formats'
            // ids (uuids, instance names) get their session position in front.
            if project.format != crate::ingest::InputFormat::Omnius {
                run.run_id = format!("{:04}-{}", index + 1, run.run_id);
            }
            crate::synth::write_loaded(&run, &folder)
                .with_context(|| format!("{}: cannot write", folder.display()))?;
            written += 1;
        }
    }
    eprintln!(
        "imported {written} runs of {} projects into {}",
        projects.len(),
        args.out.display()
    );
    Ok(EXIT_OK)
}

/// A project name as one folder name: its path's parts joined by `-`.
fn slug(name: &str) -> String {
    let parts: Vec<&str> = name
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    if parts.is_empty() {
        "project".into()
    } else {
        parts.join("-")
    }
}
