//! Opening what a recording holds, and nothing else.
//!
//! Only regular files are opened: a FIFO, socket or device where a file is read is a
//! located problem, never a read that blocks or never ends (issue #11). Lines and whole
//! documents have size caps ([`Limits`]), so no file can make memory grow without bound.
//! A path that cannot be read says why: missing, a dangling link, or the system's reason.

use super::error::{ParseError, ProblemKind};
use std::fs::{File, FileType};
use std::io::{self, Read};
use std::path::Path;

/// One mebibyte, the unit of the caps' settings.
pub const MIB: u64 = 1024 * 1024;

/// Size caps on what is held in memory at once (docs/FORMAT.md, *Bad input*).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest line of a JSONL file (`events.jsonl`, session logs), in bytes, without
    /// its line ending.
    pub max_line: u64,
    /// The largest file read as one JSON document (a frame, a ledger, a trajectory).
    pub max_document: u64,
}

impl Limits {
    /// 64 MiB: eight times the text of the largest context window a model reads (about two
    /// million tokens), so no real record comes near it (tool outputs of 50 MB are read),
    /// while a worker never holds more than a few times that in parser buffers.
    pub const DEFAULT_LINE_MIB: u64 = 64;
    /// 256 MiB: a frame is a whole context window and a trajectory a whole run (SWE-agent
    /// repeats its history at every step), so documents get four lines' worth.
    pub const DEFAULT_DOCUMENT_MIB: u64 = 256;

    pub fn from_mib(line: u64, document: u64) -> Self {
        Self {
            max_line: line.saturating_mul(MIB),
            max_document: document.saturating_mul(MIB),
        }
    }

    /// The line cap in MiB, for messages.
    pub fn line_mib(&self) -> u64 {
        self.max_line / MIB
    }

    /// The document cap in MiB, for messages.
    pub fn document_mib(&self) -> u64 {
        self.max_document / MIB
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self::from_mib(Self::DEFAULT_LINE_MIB, Self::DEFAULT_DOCUMENT_MIB)
    }
}

/// A file type in words, for the problem that names it.
pub fn kind_name(ft: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "FIFO";
        }
        if ft.is_socket() {
            return "socket";
        }
        if ft.is_char_device() {
            return "character device";
        }
        if ft.is_block_device() {
            return "block device";
        }
    }
    if ft.is_dir() {
        "directory"
    } else if ft.is_file() {
        "regular file"
    } else if ft.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

pub fn problem(shown: &str, kind: ProblemKind) -> ParseError {
    ParseError {
        path: shown.to_string(),
        line: None,
        field: None,
        kind,
    }
}

/// Why a file could not be read, in the one wording every command uses: `no such file or
/// directory`, `permission denied`, else the system's reason without its error number.
pub fn io_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(at) => text[..at].to_string(),
                None => text,
            }
        }
    }
}

/// Why `path` could not be opened or listed: `no such file or directory` when nothing is there, a
/// dangling symbolic link when only the link is, else the system's reason.
pub fn io_problem(path: &Path, shown: &str, e: &io::Error) -> ParseError {
    let kind = match e.kind() {
        io::ErrorKind::NotFound if std::fs::symlink_metadata(path).is_ok() => {
            ProblemKind::Io("dangling symbolic link".into())
        }
        io::ErrorKind::NotFound => ProblemKind::MissingFile,
        _ => ProblemKind::Io(io_reason(e)),
    };
    problem(shown, kind)
}

/// Whether anything, even a dangling link, is at `path`.
pub fn is_there(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Opens `path` for reading when it is a regular file (links followed) and returns it with
/// its size; anything else is a problem and is never opened.
pub fn open_regular(path: &Path, shown: &str) -> Result<(File, u64), ParseError> {
    let meta = std::fs::metadata(path).map_err(|e| io_problem(path, shown, &e))?;
    if !meta.is_file() {
        return Err(problem(
            shown,
            ProblemKind::NotAFile(kind_name(meta.file_type())),
        ));
    }
    let file = open_no_wait(path).map_err(|e| io_problem(path, shown, &e))?;
    // The path may have been replaced between the two looks: judge what was opened.
    let meta = file
        .metadata()
        .map_err(|e| problem(shown, ProblemKind::Io(e.to_string())))?;
    if !meta.is_file() {
        return Err(problem(
            shown,
            ProblemKind::NotAFile(kind_name(meta.file_type())),
        ));
    }
    Ok((file, meta.len()))
}

/// Opens without waiting: should a FIFO replace the file after it was checked, the open
/// returns at once instead of blocking until a writer appears.
#[cfg(unix)]
fn open_no_wait(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_wait(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Reads a whole-document file of at most `limits.max_document` bytes, without a leading
/// UTF-8 byte order mark.
pub fn read_document(path: &Path, shown: &str, limits: &Limits) -> Result<Vec<u8>, ParseError> {
    read_document_with_room(path, shown, limits, 0)
}

/// [`read_document`] into a vector with room for `spare` more bytes, so that padding it
/// (for simd-json, [`super::json::read_tape`]) does not move it.
pub fn read_document_with_room(
    path: &Path,
    shown: &str,
    limits: &Limits,
    spare: usize,
) -> Result<Vec<u8>, ParseError> {
    let (file, len) = open_regular(path, shown)?;
    let too_large = || problem(shown, ProblemKind::DocumentTooLarge(limits.document_mib()));
    if len > limits.max_document {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(spare));
    // A file still growing is read to the cap and no further.
    file.take(limits.max_document.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| problem(shown, ProblemKind::Io(e.to_string())))?;
    if bytes.len() as u64 > limits.max_document {
        return Err(too_large());
    }
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    Ok(bytes)
}

/// The cap on a file read whole that a flag names (`--config`, `--prices`, labels, a saved
/// report, `merge`'s shards): 256 MiB, the default document cap, room for the JSON report of
/// hundreds of thousands of runs.
pub const NAMED_FILE_MIB: u64 = Limits::DEFAULT_DOCUMENT_MIB;

/// Reads a file that a flag or argument names, the one reader every such file goes
/// through: regular files only (a FIFO or device is refused, never opened, so nothing blocks
/// or reads forever), at most [`NAMED_FILE_MIB`], without a byte order mark. The error is
/// the reason alone; the caller's message names the path.
pub fn read_named_file(path: &Path) -> Result<Vec<u8>, String> {
    let limits = Limits::from_mib(0, NAMED_FILE_MIB);
    read_document(path, "", &limits).map_err(|e| match e.kind {
        ProblemKind::DocumentTooLarge(mib) => {
            format!("file larger than the {mib} MiB cap on a file read whole: not read")
        }
        kind => kind.to_string(),
    })
}

/// The UTF-8 byte order mark some editors write first; it is not part of the JSON.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";
