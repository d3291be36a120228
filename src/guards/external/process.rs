//! One running external guard: the child process and the threads that keep its pipes
//! moving, so neither side can block the other (issue #15, docs/EVENTS.md "Protocol").
//!
//! Lines to the guard go through a writer thread, lines from it through a reader thread,
//! and both report to one channel, so waiting for a reply has a timeout even when the
//! guard stopped reading. Its stderr is passed through, each line prefixed with the
//! guard's id. The child runs in its own process group, so a kill reaches whatever the
//! command started (`sh -c 'python3 guard.py'`).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// A reply line longer than this is refused as garbage, without being held whole.
pub const MAX_REPLY_BYTES: u64 = 64 << 20;

/// What the pipes report.
enum Report {
    /// One line the guard wrote on stdout (without its newline), or a line too long.
    Line(Result<Vec<u8>, String>),
    /// The guard read a chunk: it is alive and consuming.
    Consumed,
    /// A write failed: the guard closed its stdin or exited.
    WriteFailed(String),
    /// Its stdout closed.
    Eof,
}

/// What waiting for the guard's next line found.
pub enum Next {
    Line(Vec<u8>),
    /// It said nothing (and read nothing) for the whole timeout.
    Silent,
    /// It is gone: stdout closed, or it stopped reading; the reason, with its exit status
    /// when it has one.
    Gone(String),
    TooLong(String),
}

pub struct GuardProcess {
    child: Child,
    to_guard: Option<Sender<Vec<u8>>>,
    reports: Receiver<Report>,
    threads: Vec<JoinHandle<()>>,
    /// Lines read from its stdout so far: the number a located error gives.
    pub lines_read: u64,
}

impl GuardProcess {
    /// Starts `command` through the shell, its stderr prefixed with `[id] `.
    pub fn spawn(id: &str, command: &str) -> Result<Self, String> {
        let mut shell = shell(command);
        shell
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = crate::interrupt::spawn_group(&mut shell)
            .map_err(|e| format!("cannot start `{command}`: {e}"))?;
        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => return Err(format!("cannot start `{command}`: no pipes")),
            };
        let (reports_tx, reports) = channel();
        let (to_guard, chunks) = channel();
        let prefix = format!("[{id}] ");
        let threads = vec![
            std::thread::spawn({
                let tx = reports_tx.clone();
                move || write_chunks(stdin, &chunks, &tx)
            }),
            std::thread::spawn(move || read_lines(stdout, &reports_tx)),
            std::thread::spawn(move || pass_through(stderr, &prefix)),
        ];
        Ok(Self {
            child,
            to_guard: Some(to_guard),
            reports,
            threads,
            lines_read: 0,
        })
    }

    /// Queues bytes for the guard's stdin; never blocks.
    pub fn send(&self, bytes: Vec<u8>) {
        if let Some(tx) = &self.to_guard {
            // A writer that is gone has reported why; the caller learns it from `next`.
            let _ = tx.send(bytes);
        }
    }

    /// The guard's next line, waiting at most `timeout` without a sign of life (a line, or
    /// a chunk it read).
    pub fn next(&mut self, timeout: Duration) -> Next {
        loop {
            match self.reports.recv_timeout(timeout) {
                Ok(Report::Consumed) => continue,
                Ok(Report::Line(Ok(line))) => {
                    self.lines_read += 1;
                    return Next::Line(line);
                }
                Ok(Report::Line(Err(e))) => {
                    self.lines_read += 1;
                    return Next::TooLong(e);
                }
                Ok(Report::WriteFailed(e)) => return Next::Gone(self.gone(&e)),
                Ok(Report::Eof) | Err(RecvTimeoutError::Disconnected) => {
                    return Next::Gone(self.gone("closed its stdout"))
                }
                Err(RecvTimeoutError::Timeout) => return Next::Silent,
            }
        }
    }

    /// Why the guard is gone, with how it exited when it has (given a moment to do so).
    fn gone(&mut self, what: &str) -> String {
        match self.exit_within(Duration::from_millis(500)) {
            Some(status) => format!("{what}; it exited ({status})"),
            None => format!("{what}; it is still running"),
        }
    }

    /// How the guard exited, if it does within `time`.
    fn exit_within(&mut self, time: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + time;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Ends it at once: the whole process group is killed (what dropping it does).
    pub fn kill(self) {
        drop(self);
    }

    /// Ends it politely: stdin closed, `grace` to exit, then killed.
    pub fn close(mut self, grace: Duration) {
        self.to_guard = None;
        self.exit_within(grace);
        kill_group(&mut self.child);
        self.reap();
    }

    fn reap(&mut self) {
        self.to_guard = None;
        let _ = self.child.wait();
        crate::interrupt::ended_group(self.child.id());
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for GuardProcess {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            kill_group(&mut self.child);
            self.reap();
        }
    }
}

#[cfg(unix)]
fn shell(command: &str) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new("sh");
    c.arg("-c").arg(command).process_group(0);
    c
}

#[cfg(not(unix))]
fn shell(command: &str) -> Command {
    let mut c = Command::new("cmd");
    c.arg("/C").arg(command);
    c
}

#[cfg(unix)]
fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads
        // (spawned with `process_group(0)`); it touches no memory of ours.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

#[cfg(not(unix))]
fn kill_group(child: &mut Child) {
    let _ = child.kill();
}

fn write_chunks(mut stdin: ChildStdin, chunks: &Receiver<Vec<u8>>, reports: &Sender<Report>) {
    for chunk in chunks {
        if let Err(e) = stdin.write_all(&chunk).and_then(|()| stdin.flush()) {
            let _ = reports.send(Report::WriteFailed(format!(
                "stopped reading its input ({e})"
            )));
            return;
        }
        let _ = reports.send(Report::Consumed);
    }
}

fn read_lines(stdout: impl Read, reports: &Sender<Report>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let mut capped = (&mut reader).take(MAX_REPLY_BYTES + 1);
        let report = match capped.read_until(b'\n', &mut line) {
            Ok(0) => Report::Eof,
            Ok(_) if line.len() as u64 > MAX_REPLY_BYTES => Report::Line(Err(format!(
                "a line longer than {} MiB",
                MAX_REPLY_BYTES >> 20
            ))),
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                Report::Line(Ok(line))
            }
            Err(_) => Report::Eof,
        };
        let last = matches!(report, Report::Eof | Report::Line(Err(_)));
        if reports.send(report).is_err() || last {
            return;
        }
    }
}

fn pass_through(stderr: impl Read, prefix: &str) {
    for line in BufReader::new(stderr).lines() {
        match line {
            Ok(line) => eprintln!("{prefix}{line}"),
            Err(_) => return,
        }
    }
}
