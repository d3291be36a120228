//! Hostile input never hangs `hindsight`, never makes it exhaust memory, and never loses a
//! run or a path in silence (issue #11): every tree here is built by the test in a
//! temporary directory and read by the real binary.
//!
//! The binary runs under a watchdog and with its address space capped (`common::watched`),
//! so a read that never ends or a line held whole fails the test quickly instead of taking
//! the machine down. Permission bits do not stop root, so the tests about unreadable paths
//! run the binary as `nobody` when they are run by root.

mod common;

use common::watched::{open_tempdir, run_watched, Outcome};
use serde_json::Value;
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Three good records: a failing build and its usage.
const GOOD: &str = r#"{"type":"tool_call","turn":1,"callId":"a","tool":"shell","args":{"command":"make"}}
{"type":"tool_result","turn":1,"callId":"a","success":false,"output":"x.c:1:1: error: boom"}
{"type":"model_usage","turn":1,"promptTokens":100,"completionTokens":10}
"#;

const RUN: &str = "1780000000000-a";

fn run_in(dir: &Path, args: &[&str]) -> Outcome {
    run_watched(dir, args, false)
}

/// Lenient `replay . --format json` in `dir`: exit 0 and its report.
fn lenient(dir: &Path, extra: &[&str]) -> (Value, String) {
    let mut args = vec!["replay", ".", "--format", "json"];
    args.extend(extra);
    let out = run_in(dir, &args);
    out.expect_code(0, "lenient replay");
    (out.json(), out.stderr)
}

/// Strict `replay .` in `dir`: exit 2, no report, and the error.
fn strict(dir: &Path, extra: &[&str]) -> String {
    let mut args = vec!["replay", ".", "--strict", "--format", "json"];
    args.extend(extra);
    let out = run_in(dir, &args);
    out.expect_code(2, "strict replay");
    assert!(out.stdout.is_empty(), "no report under --strict");
    out.stderr
}

/// Creates `<root>/<project>/.omnius/runs/<run_id>/` holding `events` (none if `None`).
fn run_dir(root: &Path, project: &str, run_id: &str, events: Option<&str>) -> PathBuf {
    let run = root.join(project).join(".omnius/runs").join(run_id);
    fs::create_dir_all(&run).expect("mkdir");
    if let Some(text) = events {
        fs::write(run.join("events.jsonl"), text).expect("write");
    }
    run
}

fn runs(report: &Value) -> &Vec<Value> {
    report["runs"].as_array().expect("runs")
}

/// The report's run `run_id` of `project`.
fn run_of<'a>(report: &'a Value, project: &str, run_id: &str) -> &'a Value {
    runs(report)
        .iter()
        .find(|r| r["project"] == project && r["run_id"] == run_id)
        .unwrap_or_else(|| panic!("no run {project}/{run_id} in {report}"))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|p| p.as_str().expect("string").to_string())
        .collect()
}

/// The located problems of a run.
fn problems(run: &Value) -> Vec<String> {
    strings(&run["input"]["problems"])
}

/// The paths the report says were skipped before any run was read (none when the report
/// has no such list).
fn unread(report: &Value) -> Vec<String> {
    match &report["input"]["problems"] {
        Value::Null => Vec::new(),
        list => strings(list),
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

// ------------------------------------------------------------------------------ hangs

/// Two links back to the top in one folder (`x/a -> ..`, `x/b -> ..`) once made the walk
/// visit 2^depth paths; a loop (`self -> .`) and a second way to a project (`alias -> p`)
/// are visited once too. The project is found once, under its own name, with or without
/// `--input-format omnius`.
#[test]
fn back_links_do_not_make_discovery_exponential() {
    let dir = open_tempdir();
    run_dir(dir.path(), "p", RUN, Some(GOOD));
    fs::create_dir_all(dir.path().join("x/y")).expect("mkdir");
    symlink("..", dir.path().join("x/a")).expect("link");
    symlink("..", dir.path().join("x/b")).expect("link");
    symlink("../..", dir.path().join("x/y/c")).expect("link");
    symlink(".", dir.path().join("x/self")).expect("link");
    symlink("p", dir.path().join("zz-alias")).expect("link");
    for extra in [&[][..], &["--input-format", "omnius"][..]] {
        let (report, stderr) = lenient(dir.path(), extra);
        let names: Vec<&str> = runs(&report)
            .iter()
            .map(|r| r["project"].as_str().expect("name"))
            .collect();
        assert_eq!(names, ["p"], "{extra:?}: {stderr}");
        assert_eq!(run_of(&report, "p", RUN)["input"]["records"], 3);
        assert!(unread(&report).is_empty(), "{:?}", unread(&report));
        let out = run_in(
            dir.path(),
            &[&["replay", ".", "--strict"][..], extra].concat(),
        );
        out.expect_code(0, "strict replay of a tree with loops");
    }
}

/// A FIFO, a socket or a device where a file is read is a located problem, never opened:
/// the events of a run, a frame, a completion ledger, a convergence ledger, a session log
/// discovery would read, and `events.jsonl -> /dev/zero` (which grew one line until the
/// process aborted). Every other run is replayed; `--strict` exits 2.
#[test]
fn fifos_sockets_and_devices_are_located_never_opened() {
    let dir = open_tempdir();
    let root = dir.path();
    run_dir(root, "good", RUN, Some(GOOD));
    let events = run_dir(root, "events-fifo", RUN, None);
    mkfifo(&events.join("events.jsonl"));
    let frame = run_dir(root, "frame-fifo", RUN, Some(GOOD));
    fs::create_dir_all(frame.join("context")).expect("mkdir");
    mkfifo(&frame.join("context/frame-0001.json"));
    let socket = run_dir(root, "frame-socket", RUN, Some(GOOD));
    fs::create_dir_all(socket.join("context")).expect("mkdir");
    let _listener =
        std::os::unix::net::UnixListener::bind(socket.join("context/s.json")).expect("socket");
    let ledger = run_dir(root, "ledger-fifo", RUN, Some(GOOD));
    mkfifo(&ledger.join("completion-ledger.json"));
    run_dir(root, "store-fifo", RUN, Some(GOOD));
    mkfifo(&root.join("store-fifo/.omnius/convergence-ledger.json"));
    let zero = run_dir(root, "zero", RUN, None);
    symlink("/dev/zero", zero.join("events.jsonl")).expect("link");
    fs::create_dir_all(root.join("sessions")).expect("mkdir");
    mkfifo(&root.join("sessions/waiting.jsonl"));

    let (report, stderr) = lenient(root, &[]);
    assert_eq!(run_of(&report, "good", RUN)["input"]["records"], 3);
    let path = |project: &str, file: &str| format!("{project}/.omnius/runs/{RUN}/{file}");
    let cases = [
        ("events-fifo", path("events-fifo", "events.jsonl"), "FIFO"),
        (
            "frame-fifo",
            path("frame-fifo", "context/frame-0001.json"),
            "FIFO",
        ),
        (
            "frame-socket",
            path("frame-socket", "context/s.json"),
            "socket",
        ),
        (
            "ledger-fifo",
            path("ledger-fifo", "completion-ledger.json"),
            "FIFO",
        ),
        (
            "store-fifo",
            "store-fifo/.omnius/convergence-ledger.json".into(),
            "FIFO",
        ),
        ("zero", path("zero", "events.jsonl"), "character device"),
    ];
    for (project, file, kind) in cases {
        let located = format!("{file}: not a regular file ({kind}): not opened");
        assert_eq!(problems(run_of(&report, project, RUN)), [located.as_str()]);
        assert!(stderr.contains(&located), "{stderr}");
    }
    let session = "sessions/waiting.jsonl: not a regular file (FIFO): not opened";
    assert_eq!(unread(&report), [session]);
    assert_eq!(report["input"]["skipped"], 1);
    assert_eq!(report["summary"]["skipped_records"], 7);
    assert!(
        stderr.contains(&format!("warning: skipped {session}")),
        "{stderr}"
    );
    let error = strict(root, &[]);
    assert!(error.contains("not a regular file"), "{error}");
}

// ------------------------------------------------------------------------- size caps

/// A line longer than the line cap (64 MiB by default) is located and skipped without
/// being held: here 2 GiB of a sparse file with no newline, twice the address space the
/// binary may use. The records before it are replayed; `--strict` exits 2.
#[test]
fn a_line_over_the_cap_is_skipped_without_being_held() {
    let dir = open_tempdir();
    let run = run_dir(dir.path(), "p", RUN, Some(GOOD));
    let file = fs::OpenOptions::new()
        .write(true)
        .open(run.join("events.jsonl"))
        .expect("open");
    file.set_len(2 << 30).expect("sparse file");
    drop(file);
    let (report, stderr) = lenient(dir.path(), &[]);
    let replayed = run_of(&report, "p", RUN);
    assert_eq!(replayed["input"]["records"], 3);
    let located = format!(
        "p/.omnius/runs/{RUN}/events.jsonl:4: line longer than the 64 MiB cap (--max-line-mib): skipped"
    );
    assert_eq!(problems(replayed), [located.as_str()]);
    assert_eq!(replayed["input"]["bytes"], 2u64 << 30);
    assert!(stderr.contains(&located), "{stderr}");
    let error = strict(dir.path(), &[]);
    assert!(error.contains(&format!("error: {located}")), "{error}");
}

/// The caps are settings: `--max-line-mib` for a line of `events.jsonl` or of a session
/// log, `--max-document-mib` for a frame or a trajectory. A session log whose first line
/// is over the cap cannot be recognised, and says so.
#[test]
fn the_caps_are_settings() {
    let dir = open_tempdir();
    let root = dir.path();
    let big = "x".repeat(2 << 20);
    let long_line = format!(
        "{GOOD}{{\"type\":\"tool_result\",\"turn\":2,\"callId\":\"b\",\"success\":true,\"output\":\"{big}\"}}\n"
    );
    let run = run_dir(root, "p", RUN, Some(&long_line));
    fs::create_dir_all(run.join("context")).expect("mkdir");
    fs::write(
        run.join("context/frame-0001.json"),
        format!("{{\"turn\":1,\"messages\":[{{\"role\":\"user\",\"content\":\"{big}\"}}]}}"),
    )
    .expect("write");
    fs::create_dir_all(root.join("sessions")).expect("mkdir");
    fs::write(
        root.join("sessions/long.jsonl"),
        claude_session(&big, "2025-09-03T09:12:03.551Z"),
    )
    .expect("write");

    // By default, 2 MiB is well within the caps.
    let (report, _) = lenient(root, &[]);
    assert_eq!(run_of(&report, "p", RUN)["input"]["skipped"], 0);
    assert_eq!(run_of(&report, "sessions", "long")["input"]["skipped"], 0);

    let caps = ["--max-line-mib", "1", "--max-document-mib", "1"];
    let (report, stderr) = lenient(root, &caps);
    let replayed = run_of(&report, "p", RUN);
    assert_eq!(replayed["input"]["records"], 3);
    assert_eq!(
        problems(replayed),
        [
            format!("p/.omnius/runs/{RUN}/events.jsonl:4: line longer than the 1 MiB cap (--max-line-mib): skipped"),
            format!("p/.omnius/runs/{RUN}/context/frame-0001.json: file larger than the 1 MiB cap (--max-document-mib): not read"),
        ]
    );
    let session = unread(&report);
    assert_eq!(session.len(), 1, "{session:?}");
    assert!(
        session[0].starts_with("sessions/long.jsonl:1: longer than the 1 MiB line cap"),
        "{session:?}"
    );
    assert!(
        stderr.contains("warning: skipped sessions/long.jsonl:1"),
        "{stderr}"
    );
    strict(root, &caps);
    let out = run_in(root, &["replay", ".", "--max-line-mib", "0"]);
    out.expect_code(2, "a zero cap");
}

// -------------------------------------------------------------------- unreadable paths

/// A tree with a good project `a`, and `b` damaged by `damage`; the lenient replay still
/// reports `a` and lists `want` (exit 0); `--strict` exits 2 naming it.
fn one_unreadable(name: &str, damage: impl Fn(&Path), want: &str, as_nobody: bool) {
    let dir = open_tempdir();
    let root = dir.path();
    run_dir(root, "a", RUN, Some(GOOD));
    run_dir(root, "b", RUN, Some(GOOD));
    damage(root);
    let out = run_watched(root, &["replay", ".", "--format", "json"], as_nobody);
    out.expect_code(0, name);
    let report = out.json();
    assert_eq!(
        run_of(&report, "a", RUN)["input"]["records"],
        3,
        "{name}: the good project"
    );
    let listed: Vec<String> = unread(&report)
        .into_iter()
        .chain(runs(&report).iter().flat_map(problems))
        .collect();
    assert!(
        listed.iter().any(|p| p.starts_with(want)),
        "{name}: {want:?} not in {listed:?}"
    );
    assert!(
        out.stderr.contains(want),
        "{name}: no warning for {want:?}: {}",
        out.stderr
    );
    let strict = run_watched(root, &["replay", ".", "--strict"], as_nobody);
    strict.expect_code(2, &format!("{name}, --strict"));
    assert!(strict.stderr.contains(want), "{name}: {}", strict.stderr);
    // Let the tempdir go, whoever removes it.
    for path in ["b", "b/.omnius", "b/.omnius/runs", "sessions/s.jsonl"] {
        let _ = fs::set_permissions(root.join(path), fs::Permissions::from_mode(0o755));
    }
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
}

const DENIED: &str = "cannot read: permission denied";

/// A project folder that cannot be listed (mode 000; the binary runs as `nobody` when the
/// test runs as root) once vanished with exit 0, even under `--strict`.
#[test]
fn an_unreadable_project_is_located() {
    one_unreadable(
        "project",
        |root| chmod(&root.join("b"), 0o000),
        &format!("b: {DENIED}"),
        true,
    );
}

/// An unreadable `.omnius` once vanished with exit 0, even under `--strict`.
#[test]
fn an_unreadable_omnius_dir_is_located() {
    one_unreadable(
        ".omnius",
        |root| chmod(&root.join("b/.omnius"), 0o000),
        &format!("b/.omnius/runs: {DENIED}"),
        true,
    );
}

/// One unreadable `runs/` once made lenient mode exit 2 with no report, losing every
/// other project.
#[test]
fn an_unreadable_runs_dir_does_not_lose_the_other_projects() {
    one_unreadable(
        "runs",
        |root| chmod(&root.join("b/.omnius/runs"), 0o000),
        &format!("b/.omnius/runs: {DENIED}"),
        true,
    );
}

/// A session log that cannot be read was passed over as "no recorded run".
#[test]
fn an_unreadable_session_log_is_located() {
    one_unreadable(
        "session log",
        |root| {
            fs::create_dir_all(root.join("sessions")).expect("mkdir");
            fs::write(
                root.join("sessions/s.jsonl"),
                claude_session("hi", "2025-09-03T09:12:03.551Z"),
            )
            .expect("write");
            chmod(&root.join("sessions/s.jsonl"), 0o000);
        },
        &format!("sessions/s.jsonl: {DENIED}"),
        true,
    );
}

/// A case of [`paths_that_lead_nowhere_are_located`]: its name, the damage, the problem.
type Case = (&'static str, fn(&Path), &'static str);

/// Paths that lead nowhere, which any user (root included) can build: dangling links and
/// loops where a project, a run or a file would be, and entries of the wrong kind. Each
/// once vanished in silence.
#[test]
fn paths_that_lead_nowhere_are_located() {
    let cases: [Case; 8] = [
        (
            "dangling .omnius",
            |root| {
                fs::remove_dir_all(root.join("b/.omnius")).expect("rm");
                symlink("/nonexistent/omnius", root.join("b/.omnius")).expect("link");
            },
            "b/.omnius: cannot read: dangling symbolic link",
        ),
        (
            "a file named .omnius",
            |root| {
                fs::remove_dir_all(root.join("b/.omnius")).expect("rm");
                fs::write(root.join("b/.omnius"), "{}").expect("write");
            },
            "b/.omnius: not a directory (regular file)",
        ),
        (
            "runs is a file",
            |root| {
                fs::remove_dir_all(root.join("b/.omnius/runs")).expect("rm");
                fs::write(root.join("b/.omnius/runs"), "").expect("write");
            },
            "b/.omnius/runs: not a directory (regular file)",
        ),
        (
            "runs is a loop",
            |root| {
                fs::remove_dir_all(root.join("b/.omnius/runs")).expect("rm");
                symlink("runs", root.join("b/.omnius/runs")).expect("link");
            },
            "b/.omnius/runs: cannot read: ",
        ),
        (
            "a run that is a dangling link",
            |root| {
                symlink("/nonexistent/run", root.join("b/.omnius/runs/1780000000001-b"))
                    .expect("link");
            },
            "b/.omnius/runs/1780000000001-b: cannot read: dangling symbolic link",
        ),
        (
            "a dangling context",
            |root| {
                symlink("/nonexistent/ctx", root.join(format!("b/.omnius/runs/{RUN}/context")))
                    .expect("link");
            },
            "b/.omnius/runs/1780000000000-a/context: cannot read: dangling symbolic link",
        ),
        (
            "a dangling ledger",
            |root| {
                symlink(
                    "/nonexistent/ledger",
                    root.join(format!("b/.omnius/runs/{RUN}/completion-ledger.json")),
                )
                .expect("link");
            },
            "b/.omnius/runs/1780000000000-a/completion-ledger.json: cannot read: dangling symbolic link",
        ),
        (
            "a dangling project link",
            |root| symlink("/nonexistent/project", root.join("c")).expect("link"),
            "c: cannot read: dangling symbolic link",
        ),
    ];
    // Every case is tried; the ones that fail are named together.
    let failed: Vec<&str> = cases
        .into_iter()
        .filter(|(name, damage, want)| {
            std::panic::catch_unwind(|| one_unreadable(name, damage, want, false)).is_err()
        })
        .map(|(name, ..)| name)
        .collect();
    assert!(failed.is_empty(), "not located: {failed:?}");
}

// ----------------------------------------------------------------- Claude Code, sweep

/// A Claude Code session: a user prompt and one response with usage.
fn claude_session(prompt: &str, timestamp: &str) -> String {
    let line = |v: Value| format!("{v}\n");
    let head = serde_json::json!({
        "parentUuid": null, "isSidechain": false, "cwd": "/w", "sessionId": "s1",
        "type": "user", "message": {"role": "user", "content": prompt},
        "uuid": "u1", "timestamp": timestamp,
    });
    let reply = serde_json::json!({
        "parentUuid": "u1", "isSidechain": false, "cwd": "/w", "sessionId": "s1",
        "type": "assistant",
        "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4",
            "content": [{"type": "text", "text": "On it."}],
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "output_tokens": 5}},
        "uuid": "u2", "timestamp": timestamp,
    });
    line(head) + &line(reply)
}

/// A Claude Code session whose first line (a pasted prompt) is longer than the 64 KiB
/// detection reads first was skipped with no word; it is recognised and replayed.
#[test]
fn a_claude_code_session_with_a_long_first_line_is_read() {
    let dir = open_tempdir();
    fs::create_dir_all(dir.path().join("proj")).expect("mkdir");
    let prompt = "Fix the build. ".repeat(10_000);
    fs::write(
        dir.path().join("proj/s1.jsonl"),
        claude_session(&prompt, "2025-09-03T09:12:03.551Z"),
    )
    .expect("write");
    let (report, stderr) = lenient(dir.path(), &[]);
    let run = run_of(&report, "proj", "s1");
    assert_eq!(run["input"]["records"], 2, "{stderr}");
    assert_eq!(run["tokens_total"], 15);
}

/// `sweep` warns about the records it skipped, as `replay` does.
#[test]
fn sweep_warns_about_skipped_records() {
    let dir = open_tempdir();
    let damaged = GOOD.replace("\"success\":false", "\"success\":\"no\"");
    run_dir(dir.path(), "p", RUN, Some(&damaged));
    fs::write(
        dir.path().join("labels.json"),
        format!("{{\"version\":1,\"runs\":{{\"p/{RUN}\":{{\"label\":\"failed\"}}}}}}"),
    )
    .expect("write");
    let out = run_in(
        dir.path(),
        &[
            "sweep",
            ".",
            "--expect",
            "labels.json",
            "--param",
            "convergence_breaker.stalled=2,3",
        ],
    );
    out.expect_code(0, "sweep");
    let located = format!(
        "p/.omnius/runs/{RUN}/events.jsonl:2: field `success`: expected boolean, found string"
    );
    assert!(
        out.stderr.contains(&format!(
            "warning: p/.omnius/runs/{RUN}/events.jsonl: 1 bad record(s) skipped; first: {located}"
        )),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.matches("warning:").count(), 1, "{}", out.stderr);
}

// ----------------------------------------------------------------- numbers and JSON

fn usage_line(turn: u32, prompt: u64, completion: u64) -> String {
    format!(
        "{{\"type\":\"model_usage\",\"turn\":{turn},\"promptTokens\":{prompt},\"completionTokens\":{completion}}}\n"
    )
}

/// A token count above 2^53 - 1 is a located problem (`promptTokens`
/// 18446744073709551615 plus `completionTokens` 5 once gave `tokens_total: 4`), in
/// `.omnius` runs and in Claude Code's usage; valid counts that add up past 64 bits stop at
/// the largest value instead of wrapping.
#[test]
fn token_counts_are_bounded_and_sums_do_not_wrap() {
    let dir = open_tempdir();
    let root = dir.path();
    run_dir(
        root,
        "wrap",
        RUN,
        Some(&format!(
            "{}{}",
            usage_line(1, u64::MAX, 5),
            usage_line(2, 7, 3)
        )),
    );
    let max = (1u64 << 53) - 1;
    let many: String = (0..2100).map(|_| usage_line(1, max, max)).collect();
    run_dir(root, "many", RUN, Some(&many));
    fs::create_dir_all(root.join("sessions")).expect("mkdir");
    let session = claude_session("hi", "2025-09-03T09:12:03.551Z").replace(
        "\"input_tokens\":10",
        "\"input_tokens\":18446744073709551615",
    );
    fs::write(root.join("sessions/s1.jsonl"), session).expect("write");

    let (report, _) = lenient(root, &[]);
    let wrap = run_of(&report, "wrap", RUN);
    assert_eq!(wrap["tokens_total"], 10);
    assert_eq!(
        problems(wrap),
        [format!(
            "wrap/.omnius/runs/{RUN}/events.jsonl:1: field `promptTokens`: 18446744073709551615 is not a token count (above 2^53 - 1)"
        )]
    );
    let many = run_of(&report, "many", RUN);
    assert_eq!(many["tokens_total"], u64::MAX);
    assert_eq!(many["input"]["skipped"], 0);
    assert_eq!(report["summary"]["tokens_total"], u64::MAX);
    let claude = run_of(&report, "sessions", "s1");
    assert_eq!(
        problems(claude),
        ["sessions/s1.jsonl:2: field `message.usage.input_tokens`: 18446744073709551615 is not a token count (above 2^53 - 1)"]
    );
    strict(root, &[]);
}

/// A UTF-8 byte order mark at the start of a file is skipped: it once cost the first
/// record of `events.jsonl` (and made a session log or a frame unreadable).
#[test]
fn a_byte_order_mark_is_skipped() {
    let dir = open_tempdir();
    let root = dir.path();
    let run = run_dir(root, "p", RUN, Some(&format!("\u{feff}{GOOD}")));
    fs::create_dir_all(run.join("context")).expect("mkdir");
    fs::write(
        run.join("context/frame-0001.json"),
        "\u{feff}{\"turn\":1,\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}",
    )
    .expect("write");
    fs::write(
        run.join("completion-ledger.json"),
        "\u{feff}{\"status\":\"open\"}",
    )
    .expect("w");
    fs::create_dir_all(root.join("sessions")).expect("mkdir");
    fs::write(
        root.join("sessions/s1.jsonl"),
        format!(
            "\u{feff}{}",
            claude_session("hi", "2025-09-03T09:12:03.551Z")
        ),
    )
    .expect("write");
    let (report, stderr) = lenient(root, &[]);
    let replayed = run_of(&report, "p", RUN);
    assert_eq!(replayed["input"]["records"], 3, "{stderr}");
    assert_eq!(replayed["input"]["skipped"], 0, "{:?}", problems(replayed));
    assert_eq!(replayed["ledger"]["recorded"], "open");
    let session = run_of(&report, "sessions", "s1");
    assert_eq!(session["input"]["records"], 2);
    assert_eq!(report["summary"]["skipped_records"], 0);
    let out = run_in(root, &["replay", ".", "--strict"]);
    out.expect_code(0, "strict replay of files with a BOM");
}

/// A record that names a key twice is a located problem (the first one was read in
/// silence): in `events.jsonl`, at the top or nested, in a frame, and in a Claude Code
/// line.
#[test]
fn duplicate_keys_are_located() {
    let dir = open_tempdir();
    let root = dir.path();
    let text = format!(
        "{GOOD}{{\"type\":\"model_usage\",\"turn\":2,\"promptTokens\":1,\"promptTokens\":100000,\"completionTokens\":1}}\n\
         {{\"type\":\"tool_call\",\"turn\":2,\"callId\":\"b\",\"tool\":\"shell\",\"args\":{{\"command\":\"ls\",\"command\":\"rm -rf x\"}}}}\n"
    );
    let run = run_dir(root, "p", RUN, Some(&text));
    fs::create_dir_all(run.join("context")).expect("mkdir");
    fs::write(
        run.join("context/frame-0001.json"),
        "{\"turn\":1,\"messages\":[{\"role\":\"user\",\"content\":\"a\",\"content\":\"b\"}]}",
    )
    .expect("write");
    fs::create_dir_all(root.join("sessions")).expect("mkdir");
    let session = claude_session("hi", "2025-09-03T09:12:03.551Z").replacen(
        "\"cwd\":\"/w\"",
        "\"cwd\":\"/w\",\"cwd\":\"/elsewhere\"",
        1,
    );
    fs::write(root.join("sessions/s1.jsonl"), session).expect("write");

    let (report, _) = lenient(root, &[]);
    let replayed = run_of(&report, "p", RUN);
    assert_eq!(replayed["input"]["records"], 3);
    let dup = "duplicate key (the object names it twice)";
    let events = format!("p/.omnius/runs/{RUN}/events.jsonl");
    assert_eq!(
        problems(replayed),
        [
            format!("{events}:4: field `promptTokens`: {dup}"),
            format!("{events}:5: field `args.command`: {dup}"),
            format!(
                "p/.omnius/runs/{RUN}/context/frame-0001.json: field `messages[0].content`: {dup}"
            ),
        ]
    );
    assert_eq!(replayed["tokens_total"], 110);
    assert_eq!(
        problems(run_of(&report, "sessions", "s1")),
        [format!("sessions/s1.jsonl:1: field `cwd`: {dup}")]
    );
    strict(root, &[]);
}

/// A folder whose name holds a backslash is its own project, not the folder of the same
/// name with `/` for `\` (issue #32, K): before, `back\slash` and `back/slash` were both
/// reported as `back/slash`, two projects under one name.
#[test]
fn a_backslash_in_a_folder_name_is_not_a_separator() {
    let dir = open_tempdir();
    run_dir(dir.path(), "back\\slash", RUN, Some(GOOD));
    run_dir(dir.path(), "back/slash", RUN, Some(GOOD));
    let (report, _) = lenient(dir.path(), &[]);
    let mut projects: Vec<&str> = runs(&report)
        .iter()
        .map(|r| r["project"].as_str().expect("project"))
        .collect();
    projects.sort_unstable();
    assert_eq!(projects, ["back/slash", "back\\slash"]);
}
