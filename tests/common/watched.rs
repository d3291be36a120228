//! The binary run as the hostile-input tests need it: under a watchdog (killed after
//! [`TIMEOUT`]), with its address space capped at [`ADDRESS_SPACE_KIB`] (`ulimit -v`), and,
//! when asked and run by root, as `nobody`, since permission bits do not stop root. A read
//! that never ends or a line held whole fails quickly instead of taking the machine down.

use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Far longer than any hostile tree takes to read.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The address space the binary may use, in KiB: replaying the test trees needs a fraction
/// of it; reading a 2 GiB line into memory does not fit.
pub const ADDRESS_SPACE_KIB: u64 = 1024 * 1024;

pub struct Outcome {
    /// `None` when killed by a signal (the watchdog, or an abort).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub timed_out: bool,
}

impl Outcome {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.stdout)
            .unwrap_or_else(|e| panic!("a JSON report ({e}); stderr: {}", self.stderr))
    }

    /// Exit code `want`, having ended on its own.
    pub fn expect_code(&self, want: i32, what: &str) {
        assert!(
            !self.timed_out,
            "{what}: still running after {TIMEOUT:?} (killed); stderr: {}",
            self.stderr
        );
        assert_eq!(
            self.code,
            Some(want),
            "{what}: exit code; stderr: {}",
            self.stderr
        );
    }
}

/// Whether this process runs as root (permission bits do not stop it).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// A temporary directory the binary can read even when it runs as `nobody`.
pub fn open_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).expect("chmod");
    dir
}

/// `hindsight <args>` run in `dir` under the watchdog and the address-space cap; as
/// `nobody` when `as_nobody` and this process is root (then from a copy of the binary, as
/// the build may sit below a folder `nobody` cannot enter).
pub fn run_watched(dir: &Path, args: &[&str], as_nobody: bool) -> Outcome {
    let as_nobody = as_nobody && is_root();
    let out = open_tempdir();
    let mut bin = assert_cmd::cargo::cargo_bin("hindsight");
    if as_nobody {
        let copy = out.path().join("hindsight");
        fs::copy(&bin, &copy).expect("copy the binary");
        bin = copy;
    }
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "ulimit -v {ADDRESS_SPACE_KIB} && exec \"$0\" \"$@\""
        ))
        .arg(&bin)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(fs::File::create(out.path().join("stdout")).expect("stdout"))
        .stderr(fs::File::create(out.path().join("stderr")).expect("stderr"));
    if as_nobody {
        use std::os::unix::process::CommandExt;
        cmd.uid(65534).gid(65534);
    }
    let mut child = cmd.spawn().expect("spawn");
    let start = Instant::now();
    let (status, timed_out) = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break (status, false);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            break (child.wait().expect("wait"), true);
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Outcome {
        code: if timed_out { None } else { status.code() },
        stdout: fs::read(out.path().join("stdout")).expect("read"),
        stderr: String::from_utf8_lossy(&fs::read(out.path().join("stderr")).expect("read"))
            .into_owned(),
        timed_out,
    }
}
