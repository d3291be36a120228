//! A stopped `hindsight` leaves nothing behind (issue #32, D): SIGINT or SIGTERM during a
//! replay that runs an external guard kills the guard's process group and a grandchild that
//! left it with `setsid`, removes the staged `--out` file, and exits 130 or 143.
//!
//! The guard is a shell script that starts a `setsid` grandchild, writes both pids, and
//! then reads its stdin without ever answering, so the replay is waiting on it when the
//! signal comes. Before the fix, the guard, its grandchild and `.partial-PID.report.json`
//! all outlived the killed `hindsight`.

#![cfg(target_os = "linux")]

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const GUARD: &str = r#"#!/bin/sh
setsid sh -c 'echo $$ > "$0/grandchild.pid"; exec sleep 1000' "$PWD" &
echo $$ > "$PWD/guard.pid"
exec cat > /dev/null
"#;

/// Whether `pid` is a live process (a zombie is dead: it runs nothing).
fn alive(pid: i32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat[stat.rfind(')').expect("stat") + 1..]
        .split_whitespace()
        .next()
        .expect("state");
    state != "Z"
}

fn wait_for(what: &str, deadline: Duration, done: impl Fn() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < deadline, "waited {deadline:?} for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn pid_in(path: &Path) -> Option<i32> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn partials(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .expect("list")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".partial-"))
        .collect()
}

/// `hindsight replay` of one corpus run as JSON in `work`, with `script` (written to
/// `work/guard.sh`) as its external guard, which never answers within the test; `extra`
/// appended.
fn replay_with_guard(work: &Path, script: &str, extra: &[&str]) -> std::process::Child {
    fs::write(work.join("guard.sh"), script).expect("guard");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/telegram-dropbear");
    Command::new(assert_cmd::cargo::cargo_bin("hindsight"))
        .current_dir(work)
        .arg("replay")
        .arg(&corpus)
        .args(["--format", "json"])
        .args(extra)
        .args(["--guard-timeout", "120", "--guard", "hangs=sh guard.sh"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn")
}

/// Replays a corpus run with the hanging guard, sends `signal` once the guard and its
/// grandchild are up, and checks what is left one second after `hindsight` exits.
fn stopped_by(signal: i32, want_exit: i32) {
    let dir = common::watched::open_tempdir();
    let work = dir.path();
    let mut hindsight = replay_with_guard(work, GUARD, &["--out", "report.json"]);
    let pids = || {
        Some((
            pid_in(&work.join("guard.pid"))?,
            pid_in(&work.join("grandchild.pid"))?,
        ))
    };
    wait_for(
        "the guard and its grandchild",
        Duration::from_secs(60),
        || pids().is_some(),
    );
    let (guard, grandchild) = pids().expect("pids");
    assert!(
        alive(guard) && alive(grandchild),
        "both run before the signal"
    );
    assert_eq!(partials(work).len(), 1, "the report is being staged");

    // SAFETY: kill(2) on the child's pid; no memory is shared.
    unsafe { libc::kill(hindsight.id() as i32, signal) };
    let status = hindsight.wait().expect("wait");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(status.code(), Some(want_exit), "exit status");
    assert!(!alive(guard), "the guard ({guard}) was killed");
    assert!(
        !alive(grandchild),
        "the guard's setsid grandchild ({grandchild}) was killed"
    );
    assert_eq!(
        partials(work),
        Vec::<PathBuf>::new(),
        "no partial file remains"
    );
    assert!(
        !work.join("report.json").exists(),
        "no report was put in place"
    );
}

#[test]
fn sigint_kills_what_hindsight_started_and_removes_staged_files() {
    stopped_by(libc::SIGINT, 130);
}

#[test]
fn sigterm_kills_what_hindsight_started_and_removes_staged_files() {
    stopped_by(libc::SIGTERM, 143);
}

/// The orphans hindsight adopts as subreaper are reaped as they exit: a guard whose
/// children outlive their parent leaves no zombie under hindsight while the replay goes on
/// (before, two exited `sleep`s stayed zombies until hindsight ended).
#[test]
fn adopted_orphans_leave_no_zombies() {
    let dir = common::watched::open_tempdir();
    let work = dir.path();
    let guard =
        "( sleep 0.1 & )\n( sleep 0.2 & )\necho $$ > \"$PWD/guard.pid\"\nexec cat > /dev/null\n";
    let mut hindsight = replay_with_guard(work, guard, &[]);
    wait_for("the guard", Duration::from_secs(60), || {
        pid_in(&work.join("guard.pid")).is_some()
    });
    std::thread::sleep(Duration::from_secs(1));
    let me = hindsight.id() as i32;
    let zombies: Vec<String> = fs::read_dir("/proc")
        .expect("proc")
        .flatten()
        .filter_map(|e| fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let rest: Vec<&str> = stat[stat.rfind(')').unwrap_or(0) + 1..]
                .split_whitespace()
                .collect();
            rest.first() == Some(&"Z") && rest.get(1) == Some(&me.to_string().as_str())
        })
        .collect();
    // SAFETY: kill(2) on the child's pid; no memory is shared.
    unsafe { libc::kill(me, libc::SIGINT) };
    let status = hindsight.wait().expect("wait");
    assert_eq!(zombies, Vec::<String>::new(), "zombies under hindsight");
    assert_eq!(status.code(), Some(130));
}
