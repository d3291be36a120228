//! Guard fixtures: every registered guard replayed over small hand-written runs.
//!
//! ruff's layout (STYLE.md): each case is a minimal `.omnius/` project at
//! `tests/fixtures/guards/<guard>/{fires_*,quiet_*}/`. The guard named by the parent
//! directory must fire at least once in every `fires_*` case and never in a `quiet_*` case
//! (other guards may fire; only the named one is checked), and its firings in each case are
//! snapshotted one line per firing: `turn | action | family | effect | detail`, the effect
//! without its token figure, no paths of this machine, sorted.
//!
//! The cases spread over npm/jest, cargo, pytest, make/gcc, go, tsc and generic shell,
//! because the seeds forbid tuning a guard to one toolchain:
//! - seed 000 (`000_053cae7e53b598d3.txt`): WO-3 (the convergence breaker: `stalled` at 3
//!   rounds, `abandon` at 5, carried across sessions, decayed by a productive mutation),
//!   WO-9 (9a canonical shell families and its merge / non-merge tables, 9b no error class
//!   in the convergence key, 9c `resolve()` on success) and the root refinement (progress
//!   is a falling diagnostic count; a worsening count escalates fastest);
//! - seed 001 (`001_d7c440e7b9955800.txt`): WO-TD-04 (evidence folded by family, repeated
//!   synthetic blocks collapsed to one) and WO-TD-06 (an `open` ledger finalizes from its
//!   evidence as `incomplete_verification`).

use hindsight::config::Config;
use hindsight::guards::{registry, Effect, Firing};
use hindsight::ingest::{discover, Policy};
use hindsight::replay::replay_project;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// One fixture directory: `<guard>/<name>`.
struct Case {
    guard: String,
    name: String,
    dir: PathBuf,
}

impl Case {
    fn label(&self) -> String {
        format!("{}/{}", self.guard, self.name)
    }

    fn fires(&self) -> bool {
        self.name.starts_with("fires_")
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/guards")
}

/// The subdirectories of `dir`, sorted by name so nothing depends on listing order.
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Every case under `tests/fixtures/guards/*/*`, sorted by guard then case.
fn cases() -> Vec<Case> {
    let cases: Vec<Case> = subdirs(&fixtures())
        .iter()
        .flat_map(|guard_dir| {
            subdirs(guard_dir).into_iter().map(|dir| Case {
                guard: name_of(guard_dir),
                name: name_of(&dir),
                dir,
            })
        })
        .collect();
    assert!(!cases.is_empty(), "no fixtures under tests/fixtures/guards");
    cases
}

/// The named guard's firings in one case, per run (session order), each run's sorted.
fn replay_case(case: &Case) -> Vec<(String, Vec<Firing>)> {
    let projects = discover(std::slice::from_ref(&case.dir))
        .unwrap_or_else(|e| panic!("{}: {e}", case.label()));
    assert_eq!(projects.len(), 1, "{}: one .omnius project", case.label());
    assert!(!projects[0].runs.is_empty(), "{}: no runs", case.label());
    let runs = replay_project(&projects[0], &Config::default(), Policy::Strict, &|| {})
        .unwrap_or_else(|e| panic!("{}: {e}", case.label()));
    runs.into_iter()
        .map(|run| {
            // A misspelt field would be skipped silently and the fixture would test nothing.
            assert!(
                run.stats.unknown_fields.is_empty() && run.stats.unknown_types.is_empty(),
                "{} {}: unknown fields {:?} or record types {:?}",
                case.label(),
                run.run_id,
                run.stats.unknown_fields,
                run.stats.unknown_types,
            );
            let mut firings: Vec<Firing> = run
                .firings
                .into_iter()
                .filter(|f| f.guard == case.guard)
                .collect();
            firings.sort();
            (run.run_id, firings)
        })
        .collect()
}

fn effect(e: &Effect) -> &'static str {
    match e {
        Effect::Advisory => "advisory",
        Effect::Terminal => "terminal",
        Effect::Suppress { .. } => "suppress",
        Effect::Shrink { .. } => "shrink",
    }
}

/// The snapshot text: a header per run, then one line per firing of the named guard.
fn render(runs: &[(String, Vec<Firing>)]) -> String {
    let mut out = String::new();
    for (run_id, firings) in runs {
        out.push_str(&format!("run {run_id}\n"));
        if firings.is_empty() {
            out.push_str("  (no firings)\n");
        }
        for f in firings {
            out.push_str(&format!(
                "  {} | {} | {} | {} | {}\n",
                f.turn,
                f.action,
                f.family.as_deref().unwrap_or("-"),
                effect(&f.effect),
                f.detail.as_deref().unwrap_or("-"),
            ));
        }
    }
    out
}

#[test]
fn every_guard_has_fires_and_quiet_cases() {
    let cases = cases();
    let ids: BTreeSet<&str> = registry().iter().map(|e| e.info.id).collect();
    for case in &cases {
        assert!(
            ids.contains(case.guard.as_str()),
            "{}: not a registered guard",
            case.label()
        );
        assert!(
            case.name.starts_with("fires_") || case.name.starts_with("quiet_"),
            "{}: a case is named fires_* or quiet_*",
            case.label()
        );
    }
    for id in ids {
        for prefix in ["fires_", "quiet_"] {
            assert!(
                cases
                    .iter()
                    .any(|c| c.guard == id && c.name.starts_with(prefix)),
                "{id}: no {prefix}* fixture"
            );
        }
    }
}

#[test]
fn named_guard_fires_exactly_in_fires_cases() {
    let mut wrong = Vec::new();
    for case in cases() {
        let runs = replay_case(&case);
        let count: usize = runs.iter().map(|(_, f)| f.len()).sum();
        if case.fires() && count == 0 {
            wrong.push(format!("{}: expected a firing, got none", case.label()));
        }
        if !case.fires() && count > 0 {
            wrong.push(format!(
                "{}: expected no firing, got:\n{}",
                case.label(),
                render(&runs)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn firings_match_snapshots() {
    for case in cases() {
        let text = render(&replay_case(&case));
        insta::with_settings!({
            description => format!("tests/fixtures/guards/{}", case.label()),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("{}__{}", case.guard, case.name), text);
        });
    }
}
