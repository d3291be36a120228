//! Every file a flag names is read by one reader (issue #32, A): a FIFO or a device is
//! refused without being opened, so nothing blocks or reads forever, and a regular file
//! over the cap is refused by its size before a byte of it is read. Each case names the
//! flag and the command it was found with; each ran forever (FIFO) or to the address-space
//! cap (`/dev/zero`) before the one reader.
//!
//! The binary runs under the watchdog and the address-space cap of `common::watched`.

mod common;

use common::watched::{open_tempdir, run_watched};
use std::fs;
use std::path::Path;
use std::process::Command;

/// Each command line that reads a named file whole, with `FILE` where the file goes.
const READERS: &[&str] = &[
    "replay . --config FILE",
    "replay . --prices FILE",
    "gate . --expect FILE",
    "gate . --baseline FILE",
    "gate --from FILE --baseline base.json",
    "gate --from base.json --baseline FILE",
    "sweep . --expect FILE --param convergence_breaker.stalled=2,3",
    "explain . --labels FILE",
    "report --from FILE --out-dir review",
    "merge FILE",
    "merge base.json FILE",
];

/// A folder holding one recorded run (a failing build) and its saved report `base.json`.
fn corpus() -> tempfile::TempDir {
    let dir = open_tempdir();
    let run = dir.path().join("p/.omnius/runs/1780000000000-a");
    fs::create_dir_all(&run).expect("mkdir");
    fs::write(
        run.join("events.jsonl"),
        concat!(
            r#"{"type":"tool_call","turn":1,"callId":"a","tool":"shell","args":{"command":"make"}}"#,
            "\n",
            r#"{"type":"tool_result","turn":1,"callId":"a","success":false,"output":"x.c:1:1: error: boom"}"#,
            "\n",
            r#"{"type":"model_usage","turn":1,"promptTokens":100,"completionTokens":10}"#,
            "\n"
        ),
    )
    .expect("events");
    let saved = run_watched(dir.path(), &["replay", ".", "--format", "json"], false);
    saved.expect_code(0, "the saved report");
    fs::write(dir.path().join("base.json"), &saved.stdout).expect("base.json");
    dir
}

/// Runs every reader with `FILE` replaced by `file` and checks it ends at once with exit
/// 2, naming the file and `want`.
fn each_reader_refuses(dir: &Path, file: &str, want: &str) {
    for line in READERS {
        let args: Vec<&str> = line
            .split(' ')
            .map(|a| if a == "FILE" { file } else { a })
            .collect();
        let out = run_watched(dir, &args, false);
        out.expect_code(2, line);
        assert!(
            out.stderr.contains(&format!("{file}: {want}")),
            "{line}: the error names {file} and says {want:?}; stderr: {}",
            out.stderr
        );
    }
}

#[test]
fn a_fifo_named_by_a_flag_is_refused_unopened() {
    let dir = corpus();
    let status = Command::new("mkfifo")
        .arg(dir.path().join("waiting.json"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    each_reader_refuses(
        dir.path(),
        "waiting.json",
        "not a regular file (FIFO): not opened",
    );
}

#[test]
fn a_device_named_by_a_flag_is_refused_unread() {
    let dir = corpus();
    each_reader_refuses(
        dir.path(),
        "/dev/zero",
        "not a regular file (character device): not opened",
    );
}

/// A sparse file of 300 MiB: over the 256 MiB cap, refused by its size, never read (the
/// address-space cap would stop a read of it).
#[test]
fn a_file_over_the_cap_is_refused_by_its_size() {
    let dir = corpus();
    let big = fs::File::create(dir.path().join("big.json")).expect("create");
    big.set_len(300 * 1024 * 1024).expect("sparse file");
    each_reader_refuses(
        dir.path(),
        "big.json",
        "file larger than the 256 MiB cap on a file read whole: not read",
    );
}

/// A Harbor trial folder given as labels reads each `result.json` through the same reader:
/// a FIFO in its place is refused, not waited on.
#[test]
fn a_fifo_among_harbor_trials_is_refused_unopened() {
    let dir = corpus();
    let trial = dir.path().join("job/t1");
    fs::create_dir_all(&trial).expect("mkdir");
    let status = Command::new("mkfifo")
        .arg(trial.join("result.json"))
        .status()
        .expect("mkfifo");
    assert!(status.success());
    let out = run_watched(dir.path(), &["gate", ".", "--expect", "job"], false);
    out.expect_code(2, "gate --expect with a FIFO trial result");
    assert!(
        out.stderr.contains("result.json"),
        "the error names the file; stderr: {}",
        out.stderr
    );
}
