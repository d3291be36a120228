//! A full disk leaves no partial output (issue #32, G): `gate --junit` (three ways of
//! judging) and `merge --out` (a new file, and over an existing report) fail with exit 2
//! naming the reason, leave nothing new at the target and no `.partial-` file, and leave a
//! file that was there as it was. Before, each left a 0-byte file, and `merge --out` over a
//! report left a 4 KiB part of the new one in its place.
//!
//! The disk is a tmpfs of 64 KiB mounted for the test, nearly filled; where no tmpfs can be
//! mounted (not root, no mount namespace), the test says so and is skipped.

mod common;

use common::hindsight;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted at a fresh folder, unmounted when dropped.
struct SmallDisk {
    mount: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount() -> Option<Self> {
        let dir = tempfile::tempdir().expect("tempdir");
        let mount = dir.path().join("disk");
        fs::create_dir(&mount).expect("mkdir");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&mount)
            .output()
            .is_ok_and(|o| o.status.success());
        mounted.then_some(Self { mount, _dir: dir })
    }

    /// Fills the disk: a new (empty) file can still be made, no byte written to it.
    fn fill(&self) {
        let mut filler = fs::File::create(self.mount.join("filler")).expect("filler");
        let block = vec![0u8; 4096];
        while std::io::Write::write_all(&mut filler, &block).is_ok() {}
        while std::io::Write::write_all(&mut filler, &[0u8]).is_ok() {}
    }

    fn partials(&self) -> Vec<String> {
        fs::read_dir(&self.mount)
            .expect("list")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".partial-"))
            .collect()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
    }
}

fn small_disk() -> Option<SmallDisk> {
    let disk = SmallDisk::mount();
    if disk.is_none() {
        eprintln!("skipped: no tmpfs could be mounted here (root and mount(8) are needed)");
    }
    disk
}

/// The replay of corpora/ as JSON, saved outside the small disk.
fn saved_report(dir: &Path) -> PathBuf {
    let path = dir.join("report.json");
    let report = common::stdout_of(&["replay", "corpora/", "--format", "json"]);
    fs::write(&path, report).expect("saved");
    path
}

/// Runs `args`, which write to the full disk: exit 2, naming the full disk.
fn fails_for_lack_of_space(args: &[&std::ffi::OsStr]) {
    let out = hindsight().args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains("No space left on device"),
        "{args:?}: says why: {stderr}"
    );
}

#[test]
fn a_full_disk_leaves_no_partial_junit_file() {
    let Some(disk) = small_disk() else { return };
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let report = saved_report(elsewhere.path());
    disk.fill();
    let junit = disk.mount.join("gate.xml");
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    let variants: [Vec<&std::ffi::OsStr>; 3] = [
        vec![
            os("gate"),
            os("corpora/"),
            os("--expect"),
            os("corpora/expectations.json"),
        ],
        vec![
            os("gate"),
            os("corpora/"),
            os("--baseline"),
            report.as_os_str(),
        ],
        vec![
            os("gate"),
            os("--from"),
            report.as_os_str(),
            os("--expect"),
            os("corpora/expectations.json"),
        ],
    ];
    for variant in variants {
        let args = [&variant[..], &[os("--junit"), junit.as_os_str()]].concat();
        fails_for_lack_of_space(&args);
        assert!(!junit.exists(), "{variant:?}: no file at the target");
        assert_eq!(disk.partials(), Vec::<String>::new(), "{variant:?}");
    }
}

#[test]
fn a_full_disk_leaves_no_partial_merge_and_keeps_the_old_report() {
    let Some(disk) = small_disk() else { return };
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let report = saved_report(elsewhere.path());
    let merged = disk.mount.join("merged.json");
    let os = std::ffi::OsStr::new;
    let merge = [
        os("merge"),
        report.as_os_str(),
        os("--out"),
        merged.as_os_str(),
    ];

    disk.fill();
    fails_for_lack_of_space(&merge);
    assert!(!merged.exists(), "no file at the target");
    assert_eq!(disk.partials(), Vec::<String>::new());

    // Over an existing (small) report: it is left whole.
    fs::remove_file(disk.mount.join("filler")).expect("room");
    fs::write(&merged, "{\"the old report\": true}\n").expect("old");
    disk.fill();
    fails_for_lack_of_space(&merge);
    assert_eq!(
        fs::read_to_string(&merged).expect("read"),
        "{\"the old report\": true}\n",
        "the old report is left as it was"
    );
    assert_eq!(disk.partials(), Vec::<String>::new());
}

/// Every file of a review folder is staged too: on a full disk `report --out-dir` fails
/// naming the reason, and leaves neither a `.partial-` file nor a part of a chart, table or
/// page anywhere in the folder.
#[test]
fn a_full_disk_leaves_no_partial_file_in_a_review_folder() {
    let Some(disk) = small_disk() else { return };
    disk.fill();
    let review = disk.mount.join("review");
    let os = std::ffi::OsStr::new;
    fails_for_lack_of_space(&[
        os("report"),
        os("corpora/"),
        os("--per-run"),
        os("1"),
        os("--out-dir"),
        review.as_os_str(),
    ]);
    let mut pending = vec![review];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).expect("list").flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            assert!(!name.contains(".partial-"), "{}", path.display());
            let len = fs::metadata(&path).expect("size").len();
            assert!(len > 0, "{} is an empty part", path.display());
        }
    }
}
