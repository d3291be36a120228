//! Sharding across machines (issue #13, item 5): `--shard K/N` replays whole projects by a
//! stable hash of their name, `hindsight merge` puts the shards' JSON reports back into the
//! report an unsharded replay gives, byte for byte, and `gate --from` / `report --from`
//! work from the merged report. docs/SCALE.md's worked example runs here too; its Parquet
//! half (polars) is in tests/tables.rs, the one test binary that links polars' readers.

mod common;

use common::{hindsight, stdout_of};
use hindsight::shard::Shard;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const EXPECT: &str = "corpora/expectations.json";

/// Runs the binary with `args` and checks it fails as a usage or input error (exit 2);
/// returns its stderr.
fn refused<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> String {
    let out = hindsight().args(args).output().expect("runs");
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `replay PATHS --shard K/N --format json --out DIR/shard-K.json` for every K; the files.
fn shards(dir: &Path, paths: &[&str], n: u32) -> Vec<PathBuf> {
    (1..=n)
        .map(|k| {
            let file = dir.join(format!("shard-{k}.json"));
            let shard = format!("{k}/{n}");
            let mut args = vec!["replay"];
            args.extend(paths);
            args.extend(["--shard", &shard, "--format", "json", "--out"]);
            args.push(file.to_str().expect("a UTF-8 temporary path"));
            stdout_of(&args);
            file
        })
        .collect()
}

/// What `COMMAND --shard K/N --format json` writes to stdout.
fn sharded(command: &[&str], k: u32, n: u32) -> Vec<u8> {
    let shard = format!("{k}/{n}");
    let mut args = command.to_vec();
    args.extend(["--shard", &shard, "--format", "json"]);
    stdout_of(&args)
}

/// `merge FILES --out DIR/merged.json`; the merged file's bytes.
fn merged(dir: &Path, files: &[PathBuf]) -> Vec<u8> {
    let out = dir.join("merged.json");
    let mut args = vec!["merge"];
    args.extend(
        files
            .iter()
            .map(|f| f.to_str().expect("a UTF-8 temporary path")),
    );
    args.extend(["--out", out.to_str().expect("a UTF-8 temporary path")]);
    stdout_of(&args);
    std::fs::read(out).expect("merged report")
}

/// `dir/mixed`: the project's look-alike fixtures beside one real run (a path that yields
/// no run at all is an error, issue #30 item 7); the folder.
fn look_alikes_beside_a_run(dir: &Path) -> PathBuf {
    let mixed = dir.join("mixed");
    std::fs::create_dir(&mixed).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for entry in std::fs::read_dir(root.join("look_alikes")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, mixed.join(path.file_name().unwrap())).unwrap();
    }
    let traj = "acme__calc-7.traj";
    std::fs::copy(root.join("formats/swe_agent").join(traj), mixed.join(traj)).unwrap();
    mixed
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("JSON")
}

/// The projects of a report's runs, each once.
fn projects(report: &Value) -> BTreeSet<String> {
    report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["project"].as_str().expect("project").to_string())
        .collect()
}

#[test]
fn three_shards_hold_each_project_once_and_merge_into_the_unsharded_report() {
    let dir = tempfile::tempdir().unwrap();
    let whole = stdout_of(&["replay", "corpora/", "--format", "json"]);
    let all = projects(&serde_json::from_slice(&whole).unwrap());
    let files = shards(dir.path(), &["corpora/"], 3);
    let mut seen = BTreeSet::new();
    for (k, file) in (1..=3).zip(&files) {
        let report = json(file);
        assert_eq!(report["shard"], serde_json::json!({"index": k, "count": 3}));
        let held = projects(&report);
        assert!(!held.is_empty(), "shard {k}/3 holds no project");
        for project in held {
            assert_eq!(Shard::of(&project, 3), k, "{project} in shard {k}/3");
            assert!(seen.insert(project.clone()), "{project} in two shards");
        }
    }
    assert_eq!(seen, all, "every project in exactly one shard");
    // In any order: merge sorts the runs back.
    let shuffled = [files[2].clone(), files[0].clone(), files[1].clone()];
    let merged = merged(dir.path(), &shuffled);
    assert!(
        merged == whole,
        "the merged report differs from the unsharded one"
    );
    // One whole report merges into itself.
    let path = dir.path().join("whole.json");
    std::fs::write(&path, &whole).unwrap();
    assert!(stdout_of(&["merge".as_ref(), path.as_os_str()]) == whole);
}

#[test]
fn paths_not_read_and_look_alikes_are_in_every_shard_and_counted_once_merged() {
    let dir = tempfile::tempdir().unwrap();
    let mixed = look_alikes_beside_a_run(dir.path());
    std::os::unix::fs::symlink(dir.path().join("nowhere"), mixed.join("gone.jsonl")).unwrap();
    let paths = ["corpora/", mixed.to_str().unwrap()];
    let mut args = vec!["replay"];
    args.extend(paths);
    args.extend(["--format", "json"]);
    let whole = stdout_of(&args);
    let report: Value = serde_json::from_slice(&whole).unwrap();
    assert_eq!(report["input"]["skipped"], 1);
    assert_eq!(
        report["input"]["skipped_files"].as_array().unwrap().len(),
        5
    );
    assert_eq!(report["summary"]["skipped_records"], 1);
    let files = shards(dir.path(), &paths, 2);
    for file in &files {
        assert_eq!(json(file)["input"], report["input"], "{}", file.display());
    }
    assert!(merged(dir.path(), &files) == whole);
}

#[test]
fn gate_from_the_merged_report_gives_the_verdicts_of_gate_replaying() {
    let dir = tempfile::tempdir().unwrap();
    // The default settings pass; these fail expectations (exit 1).
    for set in [
        &[][..],
        &["--set", "breaker.stalled=2", "--set", "breaker.abandon=2"][..],
    ] {
        let files: Vec<PathBuf> = (1..=3)
            .map(|k| {
                let file = dir.path().join(format!("shard-{k}.json"));
                let shard = format!("{k}/3");
                let mut args = vec!["replay", "corpora/", "--shard", &shard];
                args.extend(set);
                args.extend(["--format", "json", "--out", file.to_str().unwrap()]);
                stdout_of(&args);
                file
            })
            .collect();
        merged(dir.path(), &files);
        let from = dir.path().join("merged.json");
        let mut replaying = vec!["gate", "corpora/", "--expect", EXPECT, "--format", "json"];
        replaying.extend(set);
        let replayed = hindsight().args(&replaying).output().unwrap();
        let loaded = hindsight()
            .args(["gate", "--expect", EXPECT, "--format", "json", "--from"])
            .arg(&from)
            .output()
            .unwrap();
        let expected = if set.is_empty() { 0 } else { 1 };
        assert_eq!(replayed.status.code(), Some(expected), "{set:?}");
        assert_eq!(loaded.status.code(), Some(expected), "{set:?}");
        assert_eq!(
            String::from_utf8_lossy(&loaded.stdout),
            String::from_utf8_lossy(&replayed.stdout),
            "{set:?}"
        );
    }
}

#[test]
fn gate_from_compares_with_a_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let files = shards(dir.path(), &["corpora/"], 2);
    merged(dir.path(), &files);
    let from = dir.path().join("merged.json");
    let baseline = dir.path().join("baseline.json");
    std::fs::write(
        &baseline,
        stdout_of(&["replay", "corpora/", "--format", "json"]),
    )
    .unwrap();
    let out = hindsight()
        .args(["gate", "--format", "json", "--from"])
        .arg(&from)
        .arg("--baseline")
        .arg(&baseline)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["regressions"], serde_json::json!([]));
}

#[test]
fn report_from_a_merged_report_writes_the_review_but_per_run_charts() {
    let dir = tempfile::tempdir().unwrap();
    let files = shards(dir.path(), &["corpora/"], 3);
    let merged = merged(dir.path(), &files);
    let review = dir.path().join("review");
    let out = hindsight()
        .args(["report", "--from"])
        .arg(dir.path().join("merged.json"))
        .arg("--out-dir")
        .arg(&review)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no per-run charts"), "{stderr}");
    assert!(std::fs::read(review.join("report.json")).unwrap() == merged);
    let charts: BTreeSet<String> = std::fs::read_dir(review.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let expected: BTreeSet<String> = ["first-fire", "savings"]
        .iter()
        .flat_map(|s| [format!("{s}.png"), format!("{s}.svg")])
        .collect();
    assert_eq!(charts, expected);
    for table in hindsight::report::frames::TABLE_FILES {
        assert!(review.join("tables").join(table).is_file(), "{table}");
    }
    let md = std::fs::read_to_string(review.join("report.md")).unwrap();
    assert!(md.contains("charts/savings.svg") && md.contains("tables/firings.parquet"));
}

#[test]
fn from_refuses_what_needs_a_replay() {
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("r.json");
    std::fs::write(
        &from,
        stdout_of(&["replay", "corpora/myactuator", "--format", "json"]),
    )
    .unwrap();
    let from = from.to_str().unwrap();
    let review = dir.path().join("review");
    let review = review.to_str().unwrap();
    for (args, named) in [
        (vec!["gate", "corpora/", "--expect", EXPECT], "PATHS"),
        (
            vec!["gate", "--expect", EXPECT, "--set", "breaker.abandon=3"],
            "--set",
        ),
        (
            vec!["gate", "--expect", EXPECT, "--shard", "1/2"],
            "--shard",
        ),
        (
            vec!["report", "--out-dir", review, "--expect", EXPECT],
            "--expect",
        ),
        (
            vec!["report", "--out-dir", review, "--per-run", "3"],
            "--per-run",
        ),
        (
            vec!["report", "--out-dir", review, "--prices", EXPECT],
            "--prices",
        ),
    ] {
        let mut args = args;
        args.extend(["--from", from]);
        let stderr = refused(&args);
        assert!(
            stderr.contains("--from") && stderr.contains(named),
            "{args:?}: {stderr}"
        );
    }
    assert!(!Path::new(review).exists(), "nothing written");
}

#[test]
fn a_bad_shard_is_a_usage_error_naming_the_flag() {
    for bad in ["0/3", "4/3", "3", "1/0", "a/b", "-1/3", "1/3/3"] {
        for command in ["replay", "gate", "sweep", "report"] {
            let stderr = refused(&[command, "corpora/", &format!("--shard={bad}")]);
            assert!(
                stderr.contains(&format!("invalid value '{bad}' for '--shard <K/N>'")),
                "{command} --shard {bad}: {stderr}"
            );
        }
    }
    let stderr = refused(&["replay", "corpora/", "--shard", "4/3"]);
    assert!(stderr.contains("1 <= K <= N"), "{stderr}");
}

#[test]
fn merge_refuses_overlaps_gaps_and_mismatches_naming_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let files = shards(dir.path(), &["corpora/"], 3);
    let [one, two, three] = [0, 1, 2].map(|i| files[i].to_str().unwrap().to_string());
    let cases: Vec<(Vec<String>, Vec<String>)> = vec![
        (
            vec![one.clone(), three.clone()],
            vec![format!("shard 2/3 missing"), one.clone(), three.clone()],
        ),
        (
            vec![one.clone(), two.clone(), one.clone(), three.clone()],
            vec!["both shard 1/3".into(), one.clone()],
        ),
    ];
    // Another split's shard.
    let other = dir.path().join("other-1.json");
    stdout_of(&[
        "replay",
        "corpora/",
        "--shard",
        "1/2",
        "--format",
        "json",
        "--out",
        other.to_str().unwrap(),
    ]);
    let other = other.to_str().unwrap().to_string();
    let mut cases = cases;
    cases.push((
        vec![one.clone(), other.clone()],
        vec!["not one split".into(), one.clone(), other.clone()],
    ));
    // A whole report beside a shard.
    let whole = dir.path().join("whole.json");
    std::fs::write(
        &whole,
        stdout_of(&["replay", "corpora/", "--format", "json"]),
    )
    .unwrap();
    let whole = whole.to_str().unwrap().to_string();
    cases.push((
        vec![one.clone(), whole.clone()],
        vec!["a whole report".into(), one.clone(), whole.clone()],
    ));
    // Overlapping shards: shard 2 holding a run of shard 1 too.
    let mut report = json(&files[1]);
    let stray = json(&files[0])["runs"][0].clone();
    let project = stray["project"].as_str().unwrap().to_string();
    report["runs"].as_array_mut().unwrap().push(stray);
    let overlapping = dir.path().join("overlapping-2.json");
    std::fs::write(&overlapping, serde_json::to_vec(&report).unwrap()).unwrap();
    let overlapping = overlapping.to_str().unwrap().to_string();
    cases.push((
        vec![one.clone(), overlapping.clone(), three.clone()],
        vec![
            format!("project {project} is in both {one} and {overlapping}"),
            "overlapping".into(),
        ],
    ));
    // Whole reports of overlapping paths.
    let part = dir.path().join("part.json");
    let part_report = stdout_of(&["replay", "corpora/myactuator", "--format", "json"]);
    std::fs::write(&part, part_report).unwrap();
    let part = part.to_str().unwrap().to_string();
    cases.push((
        vec![part.clone(), whole.clone()],
        vec![
            "corpora/myactuator is in both".into(),
            part.clone(),
            whole.clone(),
        ],
    ));
    // Shards of other paths: their `input` sections differ.
    let looks = dir.path().join("looks");
    std::fs::create_dir(&looks).unwrap();
    let mixed = look_alikes_beside_a_run(&looks);
    let looks_files = shards(&looks, &["corpora/", mixed.to_str().unwrap()], 3);
    let looks_two = looks_files[1].to_str().unwrap().to_string();
    cases.push((
        vec![one.clone(), looks_two.clone(), three.clone()],
        vec![
            "`input` section differs".into(),
            one.clone(),
            looks_two.clone(),
        ],
    ));
    // Another report format.
    let mut report = json(&files[1]);
    report["format"] = 99.into();
    let future = dir.path().join("future-2.json");
    std::fs::write(&future, serde_json::to_vec(&report).unwrap()).unwrap();
    let future = future.to_str().unwrap().to_string();
    cases.push((
        vec![one.clone(), future.clone(), three.clone()],
        vec![format!("{future}: report format 99")],
    ));
    // Not a report at all.
    cases.push((
        vec![one.clone(), EXPECT.into()],
        vec![format!(
            "{EXPECT}: not a `hindsight replay --format json` report"
        )],
    ));
    for (inputs, expected) in cases {
        let mut args = vec!["merge".to_string()];
        args.extend(inputs.iter().cloned());
        args.extend([
            "--out".into(),
            dir.path().join("m.json").display().to_string(),
        ]);
        let stderr = refused(&args);
        for part in &expected {
            assert!(
                stderr.contains(part.as_str()),
                "{inputs:?}: {part} not in {stderr}"
            );
        }
        assert!(
            !dir.path().join("m.json").exists(),
            "{inputs:?}: wrote a report"
        );
    }
    // Never over one of its inputs.
    let stderr = refused(&["merge", &one, &two, &three, "--out", &two]);
    assert!(stderr.contains("which this command reads"), "{stderr}");
}

#[test]
fn the_scale_worked_example_runs_and_merges_into_the_unsharded_report() {
    let dir = tempfile::tempdir().unwrap();
    common::scale_example(dir.path());
    let whole = stdout_of(&["replay", "corpora/", "--format", "json"]);
    assert!(std::fs::read(dir.path().join("report.json")).unwrap() == whole);
    for k in 1..=3 {
        for table in hindsight::report::frames::TABLE_FILES {
            let path = dir.path().join(format!("tables-{k}")).join(table);
            assert!(path.is_file(), "{}", path.display());
        }
    }
}

/// Issue #29, item 7: a sweep sharded three ways merges into the unsharded sweep's JSON,
/// byte for byte, its intervals and its `--select` choice drawn again over every run.
#[test]
fn three_sweep_shards_merge_into_the_unsharded_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = [
        "sweep",
        "corpora/",
        "--expect",
        EXPECT,
        "--param",
        "breaker.abandon=3..6",
        "--param",
        "delta.worsening_step=1,2",
        "--select",
        "false_cut_rate<=0.2",
    ];
    let mut whole_args = sweep.to_vec();
    whole_args.extend(["--format", "json"]);
    let whole = stdout_of(&whole_args);
    let files: Vec<PathBuf> = (1..=3)
        .map(|k| {
            let file = dir.path().join(format!("sweep-{k}.json"));
            std::fs::write(&file, sharded(&sweep, k, 3)).expect("write");
            file
        })
        .collect();
    // Each shard holds some projects' runs, and no two the same.
    let held: Vec<BTreeSet<String>> = files.iter().map(|f| projects(&json(f))).collect();
    assert!(held.iter().all(|p| !p.is_empty()), "{held:?}");
    let together: usize = held.iter().map(BTreeSet::len).sum();
    assert_eq!(
        together,
        projects(&serde_json::from_slice(&whole).unwrap()).len()
    );
    // Shards in any order.
    let reordered = [files[2].clone(), files[0].clone(), files[1].clone()];
    let merged = merged(dir.path(), &reordered);
    assert!(
        merged == whole,
        "merged:\n{}\nwhole:\n{}",
        String::from_utf8_lossy(&merged),
        String::from_utf8_lossy(&whole)
    );
    // A shard's own points are scored on its runs only: not the whole's.
    assert_ne!(json(&files[0])["points"], json_of(&whole)["points"]);
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("JSON")
}

#[test]
fn merge_refuses_sweeps_of_different_grids_and_a_sweep_beside_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = |param: &str, k: u32| {
        let file = dir.path().join(format!("{param}-{k}.json"));
        let args = ["sweep", "corpora/", "--expect", EXPECT, "--param", param];
        std::fs::write(&file, sharded(&args, k, 2)).expect("write");
        file.to_str().expect("UTF-8").to_string()
    };
    let (one, other) = (
        sweep("breaker.abandon=4,5", 1),
        sweep("breaker.abandon=5,6", 2),
    );
    let stderr = refused(&["merge", &one, &other]);
    assert!(
        stderr.contains("grid differs") && stderr.contains(&one) && stderr.contains(&other),
        "{stderr}"
    );
    let report = shards(dir.path(), &["corpora/"], 2);
    let stderr = refused(&["merge", &one, report[1].to_str().unwrap()]);
    assert!(stderr.contains("is a sweep and"), "{stderr}");
    let stderr = refused(&["merge", &one]);
    assert!(stderr.contains("shard 2/2 missing"), "{stderr}");
}

/// Issue #32, F: shards of different replays are refused, naming the member of `replayed`
/// that differs: other paths (a corpus of its own), other settings (`--set`), other prices
/// (`--prices`). Before, their `input` sections were equal and they merged into a report
/// no replay gives.
#[test]
fn merge_refuses_shards_of_different_replays_naming_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let one = shards(dir.path(), &["corpora/"], 2)[0].clone();
    let shard_two = |name: &str, extra: &[&str]| {
        let file = dir.path().join(name);
        let mut args = vec!["replay"];
        args.extend(extra);
        args.extend(["--shard", "2/2", "--format", "json"]);
        std::fs::write(&file, stdout_of(&args)).expect("write");
        file
    };
    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"my-model": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}}"#,
    )
    .unwrap();
    for (name, extra, member) in [
        ("paths.json", vec!["corpora/myactuator"], "replayed.paths"),
        (
            "settings.json",
            vec!["corpora/", "--set", "convergence_breaker.abandon=6"],
            "replayed.settings",
        ),
        (
            "prices.json.report",
            vec!["corpora/", "--prices", prices.to_str().unwrap()],
            "replayed.prices",
        ),
    ] {
        let other = shard_two(name, &extra);
        let stderr = refused(&[
            std::ffi::OsStr::new("merge"),
            one.as_os_str(),
            other.as_os_str(),
        ]);
        assert!(
            stderr.contains(&format!("`{member}`")) && stderr.contains("not shards of one replay"),
            "{name}: {stderr}"
        );
    }
    // The same setting given at its default is the same replay.
    let same = shard_two(
        "default.json",
        &["corpora/", "--set", "convergence_breaker.abandon=5"],
    );
    stdout_of(&[
        std::ffi::OsStr::new("merge"),
        one.as_os_str(),
        same.as_os_str(),
    ]);
}

/// Issue #32, F: a report with a member removed is refused naming it, never read as a zero
/// or a null: a run's `tokens_by_kind` (once filled with zeros), a run's `cost_usd` (once
/// read as unpriced), and the report's `replayed` section.
#[test]
fn merge_refuses_a_report_missing_a_member_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = shards(dir.path(), &["corpora/"], 2);
    for (remove, said) in [
        ("tokens_by_kind", "missing field `tokens_by_kind`"),
        ("cost_usd", "missing field `cost_usd`"),
        ("replayed", "no `replayed` section"),
    ] {
        let mut report = json(&files[1]);
        match remove {
            "replayed" => report.as_object_mut().unwrap().remove("replayed"),
            field => report["runs"][0].as_object_mut().unwrap().remove(field),
        };
        let damaged = dir.path().join(format!("without-{remove}.json"));
        std::fs::write(&damaged, serde_json::to_vec_pretty(&report).unwrap()).unwrap();
        let stderr = refused(&[
            "merge",
            files[0].to_str().unwrap(),
            damaged.to_str().unwrap(),
        ]);
        assert!(stderr.contains(said), "{remove}: {stderr}");
    }
}

/// Issue #32, F: sweep shards of different corpora are refused like replay reports.
#[test]
fn merge_refuses_sweep_shards_of_different_paths() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = |path: &str, k: u32| {
        let file = dir.path().join(format!("sweep-{k}.json"));
        let args = [
            "sweep",
            path,
            "--expect",
            EXPECT,
            "--param",
            "breaker.abandon=4,5",
        ];
        std::fs::write(&file, sharded(&args, k, 2)).expect("write");
        file.to_str().expect("UTF-8").to_string()
    };
    let (one, other) = (sweep("corpora/", 1), sweep("./corpora", 2));
    let stderr = refused(&["merge", &one, &other]);
    assert!(stderr.contains("`replayed.paths`"), "{stderr}");
}
