//! SWE-agent figures checked against counts taken in this file from the raw fixture
//! documents (issue #12): turns, calls, failures, recorded tokens by kind and recorded
//! cost of every trajectory in `tests/fixtures/formats/swe_agent/`. The counts below read
//! the JSON directly with serde_json, never through hindsight.
//!
//! How each figure is counted from a trajectory:
//!
//! - **Turns**: the `trajectory` steps the model answered: those whose `action`, trimmed,
//!   is not a harness exit (a single word `exit_...`, such as `exit_cost`, which SWE-agent
//!   writes itself when it ends a run), and is not empty, or is empty beside a non-empty
//!   `response` (a reply with no command).
//! - **Calls**: one per such step with a non-empty action: SWE-agent runs one action per
//!   model call.
//! - **Failures**: SWE-agent records no exit code or step status, so this count reads the
//!   observation the way a person would, written apart from hindsight's rules: drop lines
//!   that are empty, start with `Warning:` or `W: ` or hold a `SomethingWarning:` label,
//!   and the file text of a `[File: ...]` window (its `N:` lines and `(N more lines ...)`);
//!   then a step failed when its first remaining line opens with one of the harness's own
//!   rejections (the edit linter's "Your proposed edit has introduced new syntax error",
//!   `str_replace_editor`'s "No replacement was performed"), or reads `<program>:
//!   <operand>: No such file...`; or when any remaining line opens with a traceback header,
//!   apt's `E: `, `make: *** `, `tar: Error is not recoverable`, or is a shell's own
//!   message (`bash: `, `/bin/bash: `) of a syntax error or a command not found.
//! - **Tokens**: only the run's totals are recorded (`info.model_stats`): every turn's
//!   share is a spread of them, so the sum over the turns must be `tokens_sent` (all fresh
//!   input: SWE-agent counts no cache) and `tokens_received` (output), each share marked as
//!   spread.
//! - **Cost**: `info.model_stats.instance_cost` when above 0; the turns' shares must add up
//!   to it.

mod common;

use hindsight::ingest::formats::{import, InputFormat};
use hindsight::ingest::{LoadedRun, Policy};
use hindsight::model::{EventKind, TokenSource};
use serde_json::Value;
use std::path::{Path, PathBuf};

const DIR: &str = "tests/fixtures/formats/swe_agent";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR)
}

/// Every trajectory of the fixture folder, by run id.
fn trajectories() -> Vec<(String, PathBuf)> {
    let out = common::fixture_files(DIR, ".traj");
    assert_eq!(out.len(), 5, "{out:?}");
    out
}

fn load(path: &Path) -> LoadedRun {
    import(path, "t", InputFormat::SweAgent, Policy::Strict).expect("loads strictly")
}

#[derive(Debug, Default, PartialEq)]
struct Counts {
    turns: u64,
    calls: u64,
    failures: u64,
    /// Turns with usage, all of it spread from the run's totals.
    spread: u64,
    /// input, cache write, cache read, output.
    by_kind: [u64; 4],
    /// Turns with a share of the recorded cost, and its sum in US dollars.
    costed: u64,
    cost_usd: f64,
}

/// A harness exit: one word, `exit_` and lower-case letters or `_`.
fn harness_exit(action: &str) -> bool {
    action.strip_prefix("exit_").is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_lowercase() || c == '_')
    })
}

fn warning(line: &str) -> bool {
    line.starts_with("Warning:")
        || line
            .split(": ")
            .any(|label| label.len() > 7 && label.ends_with("Warning") && !label.contains(' '))
}

/// A line of a file window's text: `12:...`, `(3 more lines above)`.
fn window_text(line: &str) -> bool {
    let numbered = line
        .split(':')
        .next()
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    numbered || (line.starts_with('(') && line.contains(" more lines "))
}

fn failed(observation: &str) -> bool {
    let mut in_window = false;
    let mut lines = Vec::new();
    for line in observation.lines().map(str::trim) {
        if line.starts_with("[File: ") {
            in_window = true;
            continue;
        }
        if in_window && window_text(line) {
            continue;
        }
        in_window = false;
        if !line.is_empty() && !warning(line) && !line.starts_with("W: ") {
            lines.push(line);
        }
    }
    let Some(first) = lines.first() else {
        return false;
    };
    let openings = [
        "Your proposed edit has introduced new syntax error",
        "No replacement was performed",
    ];
    if openings.iter().any(|o| first.starts_with(o)) {
        return true;
    }
    // `<program>: <operand>: No such file...`
    let parts: Vec<&str> = first.splitn(3, ": ").collect();
    if parts.len() == 3 && !parts[0].contains(' ') && parts[2].starts_with("No such file") {
        return true;
    }
    lines.iter().any(|line| {
        let shell = line.starts_with("bash: ") || line.starts_with("/bin/bash: ");
        line.starts_with("Traceback (most recent call last)")
            || line.starts_with("E: ")
            || line.starts_with("make: *** ")
            || line.starts_with("tar: Error is not recoverable")
            || (shell && (line.contains(": syntax error") || line.ends_with(": command not found")))
    })
}

fn counts(path: &Path) -> Counts {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut c = Counts::default();
    for step in doc["trajectory"].as_array().expect("trajectory") {
        let action = step["action"].as_str().unwrap_or("").trim();
        let response = step["response"].as_str().unwrap_or("").trim();
        if harness_exit(action) || (action.is_empty() && response.is_empty()) {
            continue;
        }
        c.turns += 1;
        if action.is_empty() {
            continue;
        }
        c.calls += 1;
        if failed(step["observation"].as_str().unwrap_or("")) {
            c.failures += 1;
        }
    }
    let stats = &doc["info"]["model_stats"];
    if let (Some(sent), Some(received)) = (
        stats["tokens_sent"].as_u64(),
        stats["tokens_received"].as_u64(),
    ) {
        c.spread = c.turns;
        c.by_kind = [sent, 0, 0, received];
    }
    if let Some(cost) = stats["instance_cost"].as_f64().filter(|c| *c > 0.0) {
        c.costed = c.turns;
        c.cost_usd = cost;
    }
    c
}

/// The same figures, from what hindsight imported.
fn imported(run: &LoadedRun) -> Counts {
    let mut c = Counts::default();
    for event in &run.events {
        match &event.kind {
            EventKind::ModelRequest(r) => {
                c.turns += 1;
                if let Some(u) = r.usage {
                    if u.source == TokenSource::Spread {
                        c.spread += 1;
                    }
                    let kinds = [u.input, u.cache_write, u.cache_read, u.output];
                    for (sum, k) in c.by_kind.iter_mut().zip(kinds) {
                        *sum += k;
                    }
                }
                if let Some(cost) = r.cost_usd {
                    c.costed += 1;
                    c.cost_usd += cost;
                }
            }
            EventKind::ToolCall(_) => c.calls += 1,
            EventKind::ToolResult(r) if !r.success => c.failures += 1,
            _ => {}
        }
    }
    c
}

#[test]
fn every_trajectory_matches_the_counts_of_its_raw_document() {
    for (name, path) in trajectories() {
        let expected = counts(&path);
        let mut got = imported(&load(&path));
        assert!(
            (got.cost_usd - expected.cost_usd).abs() < 1e-12,
            "{name}: cost {} against {}",
            got.cost_usd,
            expected.cost_usd
        );
        got.cost_usd = expected.cost_usd;
        assert_eq!(got, expected, "{name}");
        assert!(expected.turns > 0, "{name}");
    }
}

#[test]
fn the_fixtures_hold_what_they_were_written_for() {
    let of = |name: &str| counts(&dir().join(format!("{name}.traj")));
    let looping = of("acme__calc-7");
    assert_eq!(
        (looping.turns, looping.calls, looping.failures),
        (13, 13, 5)
    );
    let healthy = of("acme__semver-12");
    assert_eq!(healthy.failures, 0);
    // The exit step is no turn; two stale edits.
    let v1 = of("slug__slugify-3");
    assert_eq!((v1.turns, v1.failures), (5, 2));
    // A program's "No such file" fails; the warnings before the flag do not.
    let warned = of("acme__beacon-5");
    assert_eq!((warned.turns, warned.failures), (5, 1));
    assert!(warned.cost_usd > 0.0);
    // Six programs' failures, anywhere in their output; a reply with no command is a turn
    // and no call.
    let worded = of("acme__clib-4");
    assert_eq!((worded.turns, worded.calls, worded.failures), (15, 14, 6));
}

#[test]
fn the_report_gives_each_run_its_recorded_totals() {
    let report = common::json_report(&["replay", DIR, "--format", "json", "--strict"]);
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), trajectories().len());
    for (name, path) in trajectories() {
        let run = runs
            .iter()
            .find(|r| r["run_id"] == name.as_str())
            .expect("a run per trajectory");
        let expected = counts(&path);
        assert_eq!(run["turns"], expected.turns, "{name}");
        let recorded: u64 = expected.by_kind.iter().sum();
        // The spread counts as recorded in the run's total.
        assert_eq!(run["tokens_recorded"], recorded, "{name}");
        assert_eq!(run["tokens_estimated"], 0, "{name}");
        let kinds = &run["tokens_by_kind"];
        let shown = ["input", "cache_write", "cache_read", "output"].map(|k| kinds[k].as_u64());
        assert_eq!(shown, expected.by_kind.map(Some), "{name}");
        // The report shows dollars to the micro-dollar.
        let cost = run["cost_recorded_usd"].as_f64().unwrap();
        assert!((cost - expected.cost_usd).abs() < 1e-6, "{name}: {cost}");
    }
}
