//! Every command that writes (`replay --out`, `replay --tables-dir`, `merge --out`,
//! `gate --junit`, `report --out-dir`, `import --out`, `synth --out`) goes through one
//! output guard (issue #11): pointed at a recorded file, through a symbolic link to one, or
//! inside a directory it reads, it exits 2 naming both paths; a link already at an output
//! path is replaced, never written through. Each test builds its recordings in a temporary
//! directory and compares them byte for byte afterwards.

mod common;

use common::{hindsight, tree};
use hindsight::synth::Run;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

/// The run the commands read.
const RUN: &str = "corpus/proj/.omnius/runs/1780000000000-rec001";
const EVENTS: &str = "corpus/proj/.omnius/runs/1780000000000-rec001/events.jsonl";
/// A recording the commands do not read.
const OTHER: &str = "other/.omnius/runs/1780000000000-oth001";
const OTHER_EVENTS: &str = "other/.omnius/runs/1780000000000-oth001/events.jsonl";
/// A file and a folder beside that recording, in no recording.
const PLAIN_FILE: &str = "other/notes.txt";
const PLAIN_DIR: &str = "other/plain";

/// `corpus/` (one project, labelled in `corpus/expectations.json`), `other/` (a recording
/// not read) and an empty `out/`.
fn recorded() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    for (omnius, id) in [
        ("corpus/proj/.omnius", "1780000000000-rec001"),
        ("other/.omnius", "1780000000000-oth001"),
    ] {
        let mut run = Run::new(id, "/w/app", 1000);
        for _ in 0..3 {
            run.turn(100).shell(
                "make",
                false,
                "x.c:1:1: error: boom\nmake: *** [all] Error 1",
            );
        }
        run.ledger = Some("open".into());
        run.write_to(&root.join(omnius));
    }
    fs::write(
        root.join("corpus/expectations.json"),
        r#"{"version": 1, "runs": {"proj/1780000000000-rec001": {"label": "failed"}}}"#,
    )
    .expect("labels");
    fs::create_dir(root.join("out")).expect("mkdir");
    fs::write(root.join(PLAIN_FILE), "notes").expect("notes");
    fs::create_dir(root.join(PLAIN_DIR)).expect("mkdir");
    dir
}

/// A symbolic link at `root/link` to the absolute `root/to`.
fn link(root: &Path, link: &str, to: &str) {
    symlink(root.join(to), root.join(link)).expect("symlink");
}

/// Both recordings, to compare before and after a command.
fn recordings(root: &Path) -> [std::collections::BTreeMap<std::path::PathBuf, common::Node>; 2] {
    [tree(&root.join("corpus")), tree(&root.join("other"))]
}

fn run(root: &Path, args: &[&str]) -> std::process::Output {
    hindsight()
        .current_dir(root)
        .args(args)
        .output()
        .expect("runs")
}

/// Runs `args` in `root`: exit 2, the message names `target` and `input`, and neither
/// recording changed by a byte.
fn refused(root: &Path, args: &[&str], target: &str, input: &str) {
    let before = recordings(root);
    let out = run(root, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(&format!("error: {target}")) && stderr.contains(input),
        "{args:?}: the message names {target} and {input}: {stderr}"
    );
    assert!(recordings(root) == before, "{args:?} changed a recording");
}

/// Runs `args` in `root`: success, and neither recording changed by a byte.
fn succeeds(root: &Path, args: &[&str]) {
    let before = recordings(root);
    let out = run(root, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    assert!(recordings(root) == before, "{args:?} changed a recording");
}

fn is_regular_file(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

fn is_real_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

fn inside(path: &str) -> String {
    format!("refusing to write inside {path}, which this command reads")
}

#[test]
fn replay_out_is_refused_on_what_replay_reads() {
    let dir = recorded();
    let root = dir.path();
    link(root, "out/events.json", EVENTS);
    let replay = |out| ["replay", "corpus", "--format", "json", "--out", out];
    refused(root, &replay(EVENTS), EVENTS, &inside(RUN));
    refused(
        root,
        &replay("out/events.json"),
        "out/events.json",
        &inside(RUN),
    );
    let labels = "corpus/expectations.json";
    refused(root, &replay(labels), labels, &inside("corpus"));
}

#[test]
fn replay_tables_dir_is_refused_on_what_replay_reads() {
    let dir = recorded();
    let root = dir.path();
    let replay = |tables| {
        [
            "replay",
            "corpus",
            "--format",
            "json",
            "--tables-dir",
            tables,
        ]
    };
    refused(
        root,
        &replay("corpus/tables"),
        "corpus/tables",
        &inside("corpus"),
    );
    // The tables folder is hindsight's to fill: one that holds what it reads is refused.
    refused(root, &replay("."), ".", "a folder that holds corpus");
    // A link there into what it reads, or into any recording, is refused; one elsewhere is
    // replaced by a real folder, its target untouched.
    link(root, "out/read", "corpus/proj");
    refused(root, &replay("out/read"), "out/read", &inside("corpus"));
    link(root, "out/recording", OTHER);
    refused(
        root,
        &replay("out/recording"),
        "out/recording",
        "inside the recording",
    );
    link(root, "out/tables", PLAIN_DIR);
    succeeds(root, &replay("out/tables"));
    assert!(is_real_dir(&root.join("out/tables")));
    assert!(is_regular_file(&root.join("out/tables/firings.parquet")));
}

#[test]
fn merge_out_is_refused_on_what_merge_reads_and_inside_recordings() {
    let dir = recorded();
    let root = dir.path();
    succeeds(
        root,
        &[
            "replay",
            "corpus",
            "--format",
            "json",
            "--out",
            "out/r.json",
        ],
    );
    let over = "refusing to write over out/r.json, which this command reads";
    refused(
        root,
        &["merge", "out/r.json", "--out", "out/r.json"],
        "out/r.json",
        over,
    );
    let target = format!("{OTHER}/merged.json");
    let out = run(root, &["merge", "out/r.json", "--out", &target]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("inside the recording"), "{stderr}");
    assert!(!root.join(&target).exists());
    assert!(fs::read(root.join(OTHER_EVENTS)).is_ok());
}

#[test]
fn gate_junit_is_refused_on_what_gate_reads() {
    let dir = recorded();
    let root = dir.path();
    link(root, "out/events.xml", EVENTS);
    let labels = "corpus/expectations.json";
    let gate = |junit| ["gate", "corpus", "--expect", labels, "--junit", junit];
    refused(root, &gate(EVENTS), EVENTS, &inside(RUN));
    refused(
        root,
        &gate("out/events.xml"),
        "out/events.xml",
        &inside(RUN),
    );
    let over = format!("refusing to write over {labels}, which this command reads");
    refused(root, &gate(labels), labels, &over);
    refused(
        root,
        &gate("corpus/gate.xml"),
        "corpus/gate.xml",
        &inside("corpus"),
    );
    // A labels file outside the corpus is read too.
    fs::copy(root.join(labels), root.join("out/labels.json")).expect("copy");
    let outside = ["gate", "corpus", "--expect", "out/labels.json"];
    let over = "refusing to write over out/labels.json, which this command reads";
    refused(
        root,
        &[&outside[..], &["--junit", "out/labels.json"]].concat(),
        "out/labels.json",
        over,
    );
    assert!(fs::read(root.join("out/labels.json")).is_ok_and(|b| b.starts_with(b"{")));
}

#[test]
fn report_out_dir_is_refused_on_what_report_reads() {
    let dir = recorded();
    let root = dir.path();
    link(root, "out/run", RUN);
    let report = |out| ["report", "corpus", "--per-run", "1", "--out-dir", out];
    let over = format!("refusing to write over {RUN}, which this command reads");
    refused(root, &report(RUN), RUN, &over);
    refused(root, &report("out/run"), "out/run", &over);
    refused(
        root,
        &report("corpus/review"),
        "corpus/review",
        &inside("corpus"),
    );
}

#[test]
fn import_out_is_refused_on_what_import_reads() {
    let dir = recorded();
    let root = dir.path();
    link(root, "out/omnius", "corpus/proj/.omnius");
    let import = |out| ["import", "corpus", "--out", out];
    let over = format!("refusing to write over {RUN}, which this command reads");
    refused(root, &import(RUN), RUN, &over);
    let over = "refusing to write over corpus/proj/.omnius, which this command reads";
    refused(root, &import("out/omnius"), "out/omnius", over);
    refused(
        root,
        &import("corpus/imported"),
        "corpus/imported",
        &inside("corpus"),
    );
}

#[test]
fn synth_out_is_refused_inside_any_recording() {
    let dir = recorded();
    let root = dir.path();
    let real = root.canonicalize().expect("real path");
    link(root, "out/omnius", "other/.omnius");
    let synth = |out| {
        let size = ["--projects", "1", "--runs-per-project", "1"];
        [&["synth", "--force", "--out", out][..], &size].concat()
    };
    let recording = |omnius: &str| {
        let path = real.join(omnius);
        format!("refusing to write inside the recording {}", path.display())
    };
    refused(root, &synth(RUN), RUN, &recording("corpus/proj/.omnius"));
    refused(
        root,
        &synth("out/omnius"),
        "out/omnius",
        &recording("other/.omnius"),
    );
    let new = "corpus/proj/.omnius/synth";
    refused(root, &synth(new), new, &recording("corpus/proj/.omnius"));
}

#[test]
fn replay_replaces_a_link_at_its_out_path() {
    let dir = recorded();
    let root = dir.path();
    link(root, "out/report.json", PLAIN_FILE);
    succeeds(
        root,
        &[
            "replay",
            "corpus",
            "--format",
            "json",
            "--out",
            "out/report.json",
        ],
    );
    assert!(is_regular_file(&root.join("out/report.json")));
    let report: serde_json::Value =
        serde_json::from_slice(&fs::read(root.join("out/report.json")).expect("read"))
            .expect("a JSON report");
    assert_eq!(report["runs"][0]["run_id"], "1780000000000-rec001");
}

#[test]
fn gate_replaces_a_link_at_its_junit_path() {
    let dir = recorded();
    let root = dir.path();
    link(root, "out/gate.xml", PLAIN_FILE);
    let labels = "corpus/expectations.json";
    succeeds(
        root,
        &[
            "gate",
            "corpus",
            "--expect",
            labels,
            "--junit",
            "out/gate.xml",
        ],
    );
    assert!(is_regular_file(&root.join("out/gate.xml")));
    let xml = fs::read_to_string(root.join("out/gate.xml")).expect("read");
    assert!(xml.contains("<testsuites"), "{xml}");
}

#[test]
fn report_replaces_links_inside_its_out_dir() {
    let dir = recorded();
    let root = dir.path();
    fs::create_dir(root.join("out/review")).expect("mkdir");
    link(root, "out/review/report.json", PLAIN_FILE);
    link(root, "out/review/charts", PLAIN_DIR);
    link(root, "out/review/tables", "other");
    let args = [
        "report",
        "corpus",
        "--per-run",
        "1",
        "--out-dir",
        "out/review",
    ];
    succeeds(root, &args);
    let review = root.join("out/review");
    assert!(is_regular_file(&review.join("report.json")));
    assert!(is_real_dir(&review.join("charts")) && is_real_dir(&review.join("tables")));
    assert!(is_regular_file(&review.join("charts/savings.png")));
    assert!(is_regular_file(&review.join("tables/runs.csv")));
}

#[test]
fn import_replaces_a_link_at_a_project_folder() {
    let dir = recorded();
    let root = dir.path();
    fs::create_dir(root.join("out/imported")).expect("mkdir");
    link(root, "out/imported/corpus-proj", "other");
    let args = ["import", "corpus", "--out", "out/imported", "--replace"];
    succeeds(root, &args);
    let folder = root.join("out/imported/corpus-proj");
    assert!(is_real_dir(&folder));
    let runs = folder.join(".omnius/runs");
    let ids: Vec<_> = fs::read_dir(&runs)
        .expect("runs")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(ids, ["1780000000000-rec001"]);
}

/// A link at an output path that leads into a recording, read or not and dangling or not,
/// is refused, not replaced (issue #32, I): `merge --out` and `gate --from --junit` read no
/// recording, and used to replace such a link silently.
#[test]
fn a_link_into_a_recording_is_refused_by_every_writer() {
    let dir = recorded();
    let root = dir.path();
    let json = ["--format", "json", "--out", "out/r.json"];
    succeeds(root, &[&["replay", "corpus"][..], &json].concat());
    link(root, "out/into.json", OTHER_EVENTS);
    link(root, "out/dangling.json", &format!("{OTHER}/new.json"));
    for target in ["out/into.json", "out/dangling.json"] {
        let merge = ["merge", "out/r.json", "--out", target];
        refused(root, &merge, target, "inside the recording");
        let gate = [
            "gate",
            "--from",
            "out/r.json",
            "--baseline",
            "out/r.json",
            "--junit",
            target,
        ];
        refused(root, &gate, target, "inside the recording");
        let replay = ["replay", "corpus", "--format", "json", "--out", target];
        refused(root, &replay, target, "inside the recording");
        assert!(
            fs::symlink_metadata(root.join(target)).is_ok_and(|m| m.file_type().is_symlink()),
            "{target} is left as it was"
        );
    }
    assert!(!root.join(OTHER).join("new.json").exists());
}
