//! Writes the shipped `corpora/`: small, readable `.omnius/` dumps that reproduce the
//! incidents of the seeds, and healthy controls. The output is committed; rerun with
//! `cargo run --example corpora -- corpora` after changing a story here.
//!
//! Each project's `expected.json` states the firings the story was written to produce
//! (derived from the seeds' thresholds by hand, not copied from hindsight's output);
//! `tests/corpora.rs` checks that each occurs and snapshots the complete replay. Project
//! names starting with `healthy-` are healthy controls: no guard may cut them short.

mod failed;
mod healthy;
mod incidents;
mod outputs;

use hindsight::synth::{pretty, Run};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

pub fn project(root: &Path, name: &str, runs: &[Run], convergence: Option<Value>, expected: Value) {
    let dir = root.join(name);
    let omnius = dir.join(".omnius");
    for run in runs {
        run.write_to(&omnius);
    }
    if let Some(ledger) = convergence {
        fs::write(omnius.join("convergence-ledger.json"), pretty(&ledger))
            .expect("write convergence ledger");
    }
    fs::write(dir.join("expected.json"), pretty(&expected)).expect("write expected");
}

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpora".into()));
    if root.exists() {
        for name in PROJECTS {
            let _ = fs::remove_dir_all(root.join(name));
        }
    }
    incidents::myactuator(&root);
    incidents::dropbear(&root);
    healthy::healthy_cargo(&root);
    healthy::healthy_npm(&root);
    healthy::healthy_pytest_make(&root);
    healthy::healthy_go(&root);
    incidents::noclip_sidebar(&root);
    incidents::visual_memory_teach(&root);
    healthy::healthy_flaky_go(&root);
    healthy::healthy_shell(&root);
    healthy::healthy_tsc(&root);
    healthy::healthy_cargo_workspace(&root);
    failed::toolkit_logs(&root);
    failed::loop_wording(&root);
    failed::coherence_ts(&root);
    failed::ignored_directives(&root);
    failed::flaky_rerun(&root);
    failed::subagent_loop(&root);
}

const PROJECTS: [&str; 18] = [
    "myactuator",
    "telegram-dropbear",
    "healthy-cargo",
    "healthy-npm",
    "healthy-pytest-make",
    "healthy-go",
    "noclip-sidebar",
    "visual-memory-teach",
    "toolkit-logs",
    "loop-wording",
    "coherence-ts",
    "ignored-directives",
    "flaky-rerun",
    "subagent-loop",
    "healthy-flaky-go",
    "healthy-shell",
    "healthy-tsc",
    "healthy-cargo-workspace",
];
