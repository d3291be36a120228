//! A property of discovery and reading over random hostile trees (issue #11): links that
//! fan back up or loop, FIFOs, unreadable folders and files, dangling links, entries of
//! the wrong kind and lines over the cap, mixed with valid runs. For every tree, the real
//! binary
//!
//! - ends (it runs under a watchdog and an address-space cap),
//! - reports every valid run, each once, with all of its records,
//! - names every path it skipped, in `input.problems` of the report or of the run,
//! - and exits 0 in lenient mode, 2 under `--strict` when anything was skipped.
//!
//! Permission bits do not stop root, so when the test runs as root the binary runs as
//! `nobody`. Case counts stay moderate (32) so the test takes seconds; the seed is fixed
//! (`PROPTEST_RNG_SEED`, `PROPTEST_CASES` and `PROPTEST_MAX_SHRINK_ITERS` tune it) and
//! failures are not persisted to files.

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngSeed};
use serde_json::Value;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
mod common;

use common::watched::{run_watched, Outcome};
use std::process::Command;

const GOOD: &str = r#"{"type":"tool_call","turn":1,"callId":"a","tool":"shell","args":{"command":"make"}}
{"type":"tool_result","turn":1,"callId":"a","success":false,"output":"x.c:1:1: error: boom"}
{"type":"model_usage","turn":1,"promptTokens":100,"completionTokens":10}
"#;

fn config() -> ProptestConfig {
    let mut config = ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 32;
    }
    if std::env::var_os("PROPTEST_MAX_SHRINK_ITERS").is_none() {
        config.max_shrink_iters = 64;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(0x0068_6f73_7469_6c65);
    }
    config
}

/// What one run of a valid project holds.
#[derive(Debug, Clone, Copy)]
enum RunKind {
    Good,
    /// Its good records, then a line over the 1 MiB cap.
    Oversized,
    /// `events.jsonl` is a FIFO.
    FifoEvents,
    /// `events.jsonl` cannot be read.
    UnreadableEvents,
    /// Good events, and a FIFO as a frame.
    FifoFrame,
}

/// Something hostile at the top of the tree.
#[derive(Debug, Clone, Copy)]
enum Extra {
    /// `fan<k>/<depth levels>/l0..l<n> -> ../..` back to the top.
    Fan { depth: usize, links: usize },
    /// `loop<k> -> .`
    SelfLoop,
    /// `zz-alias<k> -> p0`: a second way to a project, reached after it.
    Alias,
    /// `s<k>/x.jsonl` is a FIFO.
    FifoSession,
    /// `dangling<k> -> /nonexistent`
    Dangling,
    /// `u<k>/`, a project that cannot be listed.
    UnreadableProject,
    /// `r<k>/.omnius/runs` cannot be listed.
    UnreadableRuns,
    /// `o<k>/.omnius` is a file.
    FileNamedOmnius,
}

#[derive(Debug, Clone)]
struct Tree {
    /// Projects `p0`, `p1`, ...: the kinds of their runs, and links fanning back up from
    /// inside them.
    projects: Vec<(Vec<RunKind>, usize)>,
    extras: Vec<Extra>,
}

fn run_kind() -> impl Strategy<Value = RunKind> {
    prop_oneof![
        3 => Just(RunKind::Good),
        1 => Just(RunKind::Oversized),
        1 => Just(RunKind::FifoEvents),
        1 => Just(RunKind::UnreadableEvents),
        1 => Just(RunKind::FifoFrame),
    ]
}

fn extra() -> impl Strategy<Value = Extra> {
    prop_oneof![
        (1usize..4, 2usize..5).prop_map(|(depth, links)| Extra::Fan { depth, links }),
        Just(Extra::SelfLoop),
        Just(Extra::Alias),
        Just(Extra::FifoSession),
        Just(Extra::Dangling),
        Just(Extra::UnreadableProject),
        Just(Extra::UnreadableRuns),
        Just(Extra::FileNamedOmnius),
    ]
}

fn tree() -> impl Strategy<Value = Tree> {
    (
        proptest::collection::vec(
            (proptest::collection::vec(run_kind(), 1..3), 0usize..3),
            1..4,
        ),
        proptest::collection::vec(extra(), 0..6),
    )
        .prop_map(|(projects, extras)| Tree { projects, extras })
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// `depth` nested folders under `base`, with `links` links back to the top of the tree
/// in the deepest.
fn fan(root: &Path, base: &str, depth: usize, links: usize) {
    let mut dir = root.join(base);
    let mut up = "..".to_string();
    for level in 0..depth {
        dir = dir.join(format!("d{level}"));
        up.push_str("/..");
    }
    fs::create_dir_all(&dir).expect("mkdir");
    // `base` may itself sit one level down (inside a project).
    let up = if base.contains('/') {
        format!("{up}/..")
    } else {
        up
    };
    for i in 0..links {
        symlink(&up, dir.join(format!("l{i}"))).expect("link");
    }
}

/// Builds `tree` under `root`; returns the valid runs (`project/run`, records) and the
/// paths that must be named, each with where: `None` for the report's own list, or the
/// run whose problems name it.
#[allow(clippy::type_complexity)]
fn build(root: &Path, tree: &Tree) -> (Vec<(String, u64)>, Vec<(String, Option<String>)>) {
    let mut valid = Vec::new();
    let mut named = Vec::new();
    let big = "x".repeat((1 << 20) + 16);
    for (i, (kinds, fans)) in tree.projects.iter().enumerate() {
        let project = format!("p{i}");
        for (j, kind) in kinds.iter().enumerate() {
            let id = format!("178000000000{j}-r");
            let run = root.join(&project).join(".omnius/runs").join(&id);
            fs::create_dir_all(&run).expect("mkdir");
            let events = run.join("events.jsonl");
            let shown = format!("{project}/.omnius/runs/{id}");
            let key = format!("{project}/{id}");
            match kind {
                RunKind::Good => {
                    fs::write(&events, GOOD).expect("write");
                    valid.push((key, 3));
                }
                RunKind::Oversized => {
                    fs::write(&events, format!("{GOOD}{big}\n")).expect("write");
                    valid.push((key.clone(), 3));
                    named.push((format!("{shown}/events.jsonl:4: line longer"), Some(key)));
                }
                RunKind::FifoEvents => {
                    mkfifo(&events);
                    valid.push((key.clone(), 0));
                    named.push((
                        format!("{shown}/events.jsonl: not a regular file"),
                        Some(key),
                    ));
                }
                RunKind::UnreadableEvents => {
                    fs::write(&events, GOOD).expect("write");
                    chmod(&events, 0o000);
                    valid.push((key.clone(), 0));
                    named.push((format!("{shown}/events.jsonl: cannot read"), Some(key)));
                }
                RunKind::FifoFrame => {
                    fs::write(&events, GOOD).expect("write");
                    fs::create_dir_all(run.join("context")).expect("mkdir");
                    mkfifo(&run.join("context/frame-0001.json"));
                    valid.push((key.clone(), 3));
                    named.push((
                        format!("{shown}/context/frame-0001.json: not a regular file"),
                        Some(key),
                    ));
                }
            }
        }
        if *fans > 0 {
            fan(root, &format!("{project}/src"), *fans, 2);
        }
    }
    for (k, extra) in tree.extras.iter().enumerate() {
        match *extra {
            Extra::Fan { depth, links } => fan(root, &format!("fan{k}"), depth, links),
            Extra::SelfLoop => symlink(".", root.join(format!("loop{k}"))).expect("link"),
            Extra::Alias => symlink("p0", root.join(format!("zz-alias{k}"))).expect("link"),
            Extra::FifoSession => {
                fs::create_dir_all(root.join(format!("s{k}"))).expect("mkdir");
                mkfifo(&root.join(format!("s{k}/x.jsonl")));
                named.push((format!("s{k}/x.jsonl: not a regular file"), None));
            }
            Extra::Dangling => {
                symlink("/nonexistent/hindsight", root.join(format!("dangling{k}"))).expect("link");
                named.push((format!("dangling{k}: cannot read: dangling"), None));
            }
            Extra::UnreadableProject => {
                let run = root.join(format!("u{k}/.omnius/runs/1780000000000-u"));
                fs::create_dir_all(&run).expect("mkdir");
                fs::write(run.join("events.jsonl"), GOOD).expect("write");
                chmod(&root.join(format!("u{k}")), 0o000);
                named.push((format!("u{k}: cannot read"), None));
            }
            Extra::UnreadableRuns => {
                let run = root.join(format!("r{k}/.omnius/runs/1780000000000-r"));
                fs::create_dir_all(&run).expect("mkdir");
                fs::write(run.join("events.jsonl"), GOOD).expect("write");
                chmod(&root.join(format!("r{k}/.omnius/runs")), 0o000);
                named.push((format!("r{k}/.omnius/runs: cannot read"), None));
            }
            Extra::FileNamedOmnius => {
                fs::create_dir_all(root.join(format!("o{k}"))).expect("mkdir");
                fs::write(root.join(format!("o{k}/.omnius")), "").expect("write");
                named.push((format!("o{k}/.omnius: not a directory"), None));
            }
        }
    }
    (valid, named)
}

/// `hindsight <args>` in `dir`, as `nobody` when run by root; `None` when the watchdog had
/// to kill it.
fn hindsight(dir: &Path, args: &[&str]) -> Option<Outcome> {
    let outcome = run_watched(dir, args, true);
    (!outcome.timed_out).then_some(outcome)
}

/// Makes everything below `root` removable again, whoever removes it.
fn restore(root: &Path) {
    let _ = Command::new("chmod")
        .args(["-R", "u+rwX"])
        .arg(root)
        .status();
}

fn check(tree: &Tree) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("tempdir");
    chmod(dir.path(), 0o755);
    let (valid, named) = build(dir.path(), tree);
    let mut args = vec!["replay", ".", "--format", "json"];
    // Lines over a 1 MiB cap keep the trees small; the cap is given only when one is there.
    let oversized = tree
        .projects
        .iter()
        .any(|(kinds, _)| kinds.iter().any(|k| matches!(k, RunKind::Oversized)));
    if oversized {
        args.extend(["--max-line-mib", "1"]);
    }
    let lenient = hindsight(dir.path(), &args);
    let strict = hindsight(dir.path(), &[&args[..], &["--strict"]].concat());
    restore(dir.path());
    let lenient = lenient.ok_or_else(|| TestCaseError::fail("lenient replay did not end"))?;
    let strict = strict.ok_or_else(|| TestCaseError::fail("strict replay did not end"))?;
    prop_assert_eq!(lenient.code, Some(0), "lenient: {}", lenient.stderr);
    let report: Value = serde_json::from_slice(&lenient.stdout)
        .map_err(|e| TestCaseError::fail(format!("no JSON report: {e}")))?;
    let runs = report["runs"].as_array().expect("runs");
    let keys: Vec<String> = runs
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r["project"].as_str().unwrap_or(""),
                r["run_id"].as_str().unwrap_or("")
            )
        })
        .collect();
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    prop_assert_eq!(unique.len(), keys.len(), "a run reported twice: {:?}", keys);
    prop_assert_eq!(
        keys.len(),
        valid.len(),
        "runs: {:?}, want {:?}",
        keys,
        valid
    );
    for (key, records) in &valid {
        let run = runs
            .iter()
            .zip(&keys)
            .find(|(_, k)| *k == key)
            .map(|(r, _)| r);
        let run = run.ok_or_else(|| TestCaseError::fail(format!("{key} not reported")))?;
        prop_assert_eq!(&run["input"]["records"], &Value::from(*records), "{}", key);
    }
    let listed = |run: Option<&Value>| -> Vec<String> {
        let list = match run {
            Some(run) => &run["input"]["problems"],
            None => &report["input"]["problems"],
        };
        list.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    for (want, at) in &named {
        let run = at.as_ref().and_then(|key| {
            runs.iter()
                .zip(&keys)
                .find(|(_, k)| *k == key)
                .map(|(r, _)| r)
        });
        let problems = listed(run);
        prop_assert!(
            problems.iter().any(|p| p.starts_with(want.as_str())),
            "{:?} not named in {:?}",
            want,
            problems
        );
    }
    let want = if named.is_empty() { 0 } else { 2 };
    prop_assert_eq!(strict.code, Some(want), "strict: {}", strict.stderr);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn hostile_trees_end_keep_every_valid_run_and_name_every_skipped_path(tree in tree()) {
        check(&tree)?;
    }
}
