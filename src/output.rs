//! Where hindsight writes: the one check every output path goes through, and the one way
//! a file or directory is put there (issue #11).
//!
//! A [`Guard`] holds the paths a command reads, resolved through every symbolic link. An
//! output path is resolved the same way and refused when it is one of them or lies inside
//! one, or when it or a link at it leads inside a `.omnius` directory (a recording, read or
//! not; issue #32, I). What is written is
//! always a new entry: an existing file or symbolic link at the path is removed first and
//! never opened, so a link into a recording (or a hard link to one) cannot carry the write
//! into it. The links followed are those on the way to an output path and the directory
//! the user names (`--out-dir DIR`, `import --out DIR`), after where they lead passed the
//! check.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Component, Path, PathBuf};

/// How many symbolic links one path may pass through before it counts as a loop (as
/// Linux's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// Directories whose entries name streams rather than files (`/dev/stdout`, `/dev/null`,
/// `/dev/fd/3`): a path directly in one is opened as it is, never replaced.
const STREAM_DIRS: [&str; 2] = ["/dev", "/dev/fd"];

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{target}: refusing to write {how} {input}, which this command reads")]
    Input {
        target: String,
        /// `over` (the target is the path read) or `inside`.
        how: &'static str,
        input: String,
    },
    #[error(
        "{target}: refusing to write into a folder that holds {input}, which this command reads"
    )]
    Holds { target: String, input: String },
    #[error("{target}: refusing to write inside the recording {omnius}")]
    Recording { target: String, omnius: String },
    #[error("{path}: cannot write: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl OutputError {
    fn io(path: &Path) -> impl FnOnce(io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: shown(path),
            source,
        }
    }
}

/// How an output path is used, which decides where the write really lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A file, or a directory hindsight fills itself: a link there is replaced, so the
    /// write lands at the link's own place.
    Replaced,
    /// The directory the user names: a link there is followed to its target.
    Followed,
}

/// The paths one command reads, resolved; every output path is checked against them.
#[derive(Debug, Default, Clone)]
pub struct Guard {
    read: Vec<(String, PathBuf)>,
}

impl Guard {
    /// A guard over `paths` (directories read recursively and single files alike).
    pub fn new<P: AsRef<Path>>(paths: impl IntoIterator<Item = P>) -> Self {
        let mut read: Vec<(String, PathBuf)> = paths
            .into_iter()
            .map(|p| {
                let p = p.as_ref();
                let real = resolve(p).unwrap_or_else(|_| p.to_path_buf());
                (shown(p), real)
            })
            .collect();
        // The most specific path first, so a refusal names the project, not its parent.
        read.sort_by(|a, b| {
            let key = |p: &PathBuf| (std::cmp::Reverse(p.as_os_str().len()), p.clone());
            key(&a.1).cmp(&key(&b.1))
        });
        read.dedup_by(|a, b| a.1 == b.1);
        Self { read }
    }

    /// Refuses `target` when, with its links resolved, it is a path read or lies inside
    /// one, or when the write would land inside a `.omnius` directory.
    pub fn check(&self, target: &Path) -> Result<(), OutputError> {
        let full = resolve(target).map_err(OutputError::io(target))?;
        let placed = placed(target)?;
        for real in [&full, &placed] {
            if let Some((input, read)) = self.read.iter().find(|(_, r)| real.starts_with(r)) {
                return Err(OutputError::Input {
                    target: described(target, real),
                    how: if real == read { "over" } else { "inside" },
                    input: input.clone(),
                });
            }
        }
        // Where the write lands, and where a link there leads (dangling or not): a link
        // into a recording is refused rather than replaced, whatever the command reads.
        let omnius = [&placed, &full]
            .into_iter()
            .find_map(|real| Some((real, omnius_of(real)?)));
        match omnius {
            Some((real, omnius)) => Err(OutputError::Recording {
                target: described(target, real),
                omnius: shown(&omnius),
            }),
            None => Ok(()),
        }
    }

    /// [`Guard::check`] for a directory whose whole content hindsight writes or removes:
    /// refused as well when a path read lies inside it.
    pub fn check_tree(&self, dir: &Path, entry: Entry) -> Result<(), OutputError> {
        self.check(dir)?;
        let lands = match entry {
            Entry::Followed => resolve(dir).map_err(OutputError::io(dir))?,
            Entry::Replaced => placed(dir)?,
        };
        match self.read.iter().find(|(_, r)| r.starts_with(&lands)) {
            Some((input, _)) => Err(OutputError::Holds {
                target: described(dir, &lands),
                input: input.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Checks the directory the user named and creates it (with its parents) if missing.
    pub fn create_out_dir(&self, dir: &Path) -> Result<(), OutputError> {
        self.check(dir)?;
        fs::create_dir_all(dir).map_err(OutputError::io(dir))
    }

    /// A new file that takes `path`'s place only when [`Staged::commit`] is called: written
    /// beside it under a temporary name, so a command that fails half way (a bad record
    /// under `--strict`) leaves whatever was at `path` as it was. A stream (`/dev/stdout`)
    /// is written directly.
    pub fn stage_file(&self, path: &Path) -> Result<Staged, OutputError> {
        self.check(path)?;
        self.check(&partial_of(path))?;
        stage(path).map_err(OutputError::io(path))
    }

    /// Checks a directory hindsight fills itself and creates it ([`create_dir`]).
    pub fn create_dir(&self, dir: &Path) -> Result<(), OutputError> {
        self.check_tree(dir, Entry::Replaced)?;
        create_dir(dir).map_err(OutputError::io(dir))
    }
}

/// A file being written under a temporary name ([`Guard::stage_file`]); dropped without
/// [`Staged::commit`], it is removed.
pub struct Staged {
    file: Option<File>,
    partial: Option<PathBuf>,
    path: PathBuf,
}

impl Staged {
    /// The file to write.
    pub fn take_file(&mut self) -> Option<File> {
        self.file.take()
    }

    /// Where the file is being written, for a writer that opens it by path itself (an
    /// image encoder): the temporary name, or the path itself for a stream.
    pub fn writing_at(&self) -> &Path {
        self.partial.as_deref().unwrap_or(&self.path)
    }

    /// Puts the written file in its place (a file or link there is replaced, never
    /// followed: `rename` replaces the entry itself).
    pub fn commit(mut self) -> io::Result<()> {
        match self.partial.take() {
            Some(partial) => {
                let renamed = fs::rename(&partial, &self.path);
                crate::interrupt::unstaged(&partial);
                renamed
            }
            None => Ok(()),
        }
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(partial) = &self.partial {
            let _ = fs::remove_file(partial);
            crate::interrupt::unstaged(partial);
        }
    }
}

/// [`Guard::stage_file`] for a file in a folder hindsight fills itself and has checked
/// (`report`'s charts and tables, `--tables-dir`): written beside `path` under a temporary
/// name and put in place by [`Staged::commit`], so a failed write leaves no part of it.
pub fn stage(path: &Path) -> io::Result<Staged> {
    if is_stream(path) {
        return Ok(Staged {
            file: Some(File::create(path)?),
            partial: None,
            path: path.to_path_buf(),
        });
    }
    let partial = partial_of(path);
    let file = create_file(&partial)?;
    crate::interrupt::staged(partial.clone());
    Ok(Staged {
        file: Some(file),
        partial: Some(partial),
        path: path.to_path_buf(),
    })
}

/// Where `path` is written before it is put in place: `.partial-PID.NAME` beside it,
/// hidden, and ending as the file does (an image encoder picks its format by the name).
fn partial_of(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy());
    path.with_file_name(format!(".partial-{}.{name}", std::process::id()))
}

/// Creates `path` as a new regular file. A file or symbolic link already there is removed
/// first, never opened, so neither a link's target nor a hard link's other names change.
/// A path directly in `/dev` or `/dev/fd` is opened as it is.
pub fn create_file(path: &Path) -> io::Result<File> {
    if is_stream(path) {
        return File::create(path);
    }
    clear(path)?;
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// `bytes` written to `path`, [`stage`]d.
pub fn write_file(path: &Path, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    let mut staged = stage(path)?;
    if let Some(mut file) = staged.take_file() {
        file.write_all(bytes.as_ref())?;
    }
    staged.commit()
}

/// Removes the file or symbolic link at `path`, if any, so that what is written there next
/// is a new file (for writers that create the file themselves). A directory is an error.
pub fn clear(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => Err(io::Error::new(
            ErrorKind::IsADirectory,
            "is a directory, not a file",
        )),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Makes `dir` a real directory (its missing parents created): a symbolic link there is
/// replaced by an empty directory, never followed. A file there is an error.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    match fs::symlink_metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(meta) if meta.file_type().is_symlink() => fs::remove_file(dir)?,
        Ok(_) => {
            return Err(io::Error::new(
                ErrorKind::AlreadyExists,
                "exists and is not a directory",
            ))
        }
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    fs::create_dir_all(dir)
}

/// `path` absolute, with every symbolic link among its existing parts followed (dangling
/// ones included) and `.`/`..` applied; the parts that do not exist are kept as written.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut pending: Vec<PathBuf> = vec![path.to_path_buf()];
    if path.is_relative() {
        pending.push(std::env::current_dir()?);
    }
    let mut real = PathBuf::new();
    let mut links = 0;
    // `pending` holds paths still to walk, the next one last.
    while let Some(next) = pending.pop() {
        let mut parts = next.components();
        while let Some(part) = parts.next() {
            match part {
                Component::Prefix(_) | Component::RootDir => real = PathBuf::from(part.as_os_str()),
                Component::CurDir => {}
                Component::ParentDir => {
                    real.pop();
                }
                Component::Normal(name) => {
                    let candidate = real.join(name);
                    let is_link =
                        fs::symlink_metadata(&candidate).is_ok_and(|m| m.file_type().is_symlink());
                    if !is_link {
                        real = candidate;
                        continue;
                    }
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(io::Error::other("too many levels of symbolic links"));
                    }
                    pending.push(parts.as_path().to_path_buf());
                    pending.push(fs::read_link(&candidate)?);
                    break;
                }
            }
        }
    }
    Ok(real)
}

/// Where a new entry at `target` lands once a link there is replaced: its parent resolved,
/// its own name kept.
fn placed(target: &Path) -> Result<PathBuf, OutputError> {
    let parent = target.parent().unwrap_or(Path::new(""));
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    let real = resolve(parent).map_err(OutputError::io(target))?;
    Ok(match target.file_name() {
        Some(name) => real.join(name),
        // `..`, `/`: the path is a directory that is followed anyway.
        None => resolve(target).map_err(OutputError::io(target))?,
    })
}

/// The outermost `.omnius` directory `real` lies inside (or is).
fn omnius_of(real: &Path) -> Option<PathBuf> {
    real.ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == ".omnius"))
        .last()
        .map(Path::to_path_buf)
}

fn is_stream(path: &Path) -> bool {
    path.parent()
        .is_some_and(|p| STREAM_DIRS.iter().any(|d| p == Path::new(d)))
}

/// `target` as given, with where it resolves to when that is elsewhere.
fn described(target: &Path, real: &Path) -> String {
    let absolute = std::env::current_dir()
        .map(|cwd| cwd.join(target))
        .unwrap_or_else(|_| target.to_path_buf());
    if lexical(&absolute) == real {
        shown(target)
    } else {
        format!("{} (resolved: {})", shown(target), shown(real))
    }
}

/// `path` with `.` and `..` applied as text.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn shown(path: &Path) -> String {
    crate::ingest::display(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn resolve_follows_links_dangling_ones_and_dot_dot() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = resolve(dir.path()).expect("root");
        fs::create_dir_all(root.join("a/b")).expect("mkdir");
        symlink(root.join("a/b"), root.join("l")).expect("link");
        symlink("a/b/missing.json", root.join("dangling")).expect("link");
        symlink("../..", root.join("a/b/up")).expect("link");
        assert_eq!(resolve(&root.join("l/x")).unwrap(), root.join("a/b/x"));
        assert_eq!(
            resolve(&root.join("dangling")).unwrap(),
            root.join("a/b/missing.json")
        );
        assert_eq!(resolve(&root.join("l/up/a")).unwrap(), root.join("a"));
        assert_eq!(resolve(&root.join("l/../c")).unwrap(), root.join("a/c"));
        symlink("loop", root.join("loop")).expect("link");
        assert!(resolve(&root.join("loop/x")).is_err());
    }

    #[test]
    fn create_file_replaces_a_link_and_keeps_its_target() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("recorded.jsonl");
        fs::write(&target, "kept").expect("write");
        let link = dir.path().join("out.json");
        symlink(&target, &link).expect("link");
        write_file(&link, "new").expect("writes");
        assert_eq!(fs::read_to_string(&target).unwrap(), "kept");
        assert!(!fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&link).unwrap(), "new");
        let hard = dir.path().join("hard.json");
        fs::hard_link(&target, &hard).expect("hard link");
        write_file(&hard, "other").expect("writes");
        assert_eq!(fs::read_to_string(&target).unwrap(), "kept");
    }

    #[test]
    fn create_dir_replaces_a_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).expect("mkdir");
        let link = dir.path().join("charts");
        symlink(&elsewhere, &link).expect("link");
        create_dir(&link).expect("creates");
        assert!(fs::symlink_metadata(&link).unwrap().is_dir());
    }

    #[test]
    fn a_recording_is_refused_even_when_not_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = dir.path().join("p/.omnius/runs");
        fs::create_dir_all(&runs).expect("mkdir");
        let err = Guard::default().check(&runs.join("x.json")).unwrap_err();
        assert!(err.to_string().contains("inside the recording"), "{err}");
        let read = Guard::new([dir.path().join("p")]);
        let err = read.check_tree(dir.path(), Entry::Followed).unwrap_err();
        assert!(err.to_string().contains("a folder that holds"), "{err}");
    }
}
