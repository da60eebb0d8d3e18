//! Bounds on everything a user, or anyone who can push to a watched repository, hands the
//! program. The plugin runs inside Argo CD's shared repo-server, so no input may cost more than a
//! small, fixed amount of memory and time: each bound is checked before the work it guards.
//! Real values files stay far below every figure (the largest public ones seen are ~40 KB,
//! nested 8 deep, with lists of a few dozen items).

use std::io::Read;
use std::path::Path;

/// Bytes of one input file (values file, `cilium-cmp.yaml`, the lock file).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Bytes of all values files, `--set`-like text and `--set-file` files of one render together. The chart copies values
/// into several objects, so memory grows faster than input: the costliest shape measured at this
/// bound (a 1 MiB `extraEnv` list, copied into every agent container) peaks at ~180 MB in 0.5 s,
/// which leaves the sidecar's 512 MiB room for concurrent renders.
pub const MAX_TOTAL_BYTES: usize = 1 << 20;
/// Values files in one render.
pub const MAX_VALUES_FILES: usize = 64;
/// Collections nested in one YAML document or one `--set-json` value, and segments of one `--set`
/// path.
pub const MAX_DEPTH: usize = 64;
/// Nodes and scalar bytes that aliases may copy in one YAML stream. Helm's reader expands
/// aliases too, so small real-world anchors keep working; a "billion laughs" does not.
pub const MAX_ALIAS_EXPANSION: usize = 1 << 18;
/// Bytes of the dotted paths recorded for error messages of one YAML document.
pub const MAX_RECORDED_PATH_BYTES: usize = 16 << 20;
/// Highest list index of a `--set` path (Helm allows 65536; no Cilium value needs more than a
/// handful).
pub const MAX_SET_INDEX: usize = 1023;
/// List slots that `--set` indexes may create in total (the padding before an index counts).
pub const MAX_SET_SLOTS: usize = 10_000;
/// Decompressed bytes of one chart archive (the official ones unpack to about 3 MB).
pub const MAX_ARCHIVE_BYTES: u64 = 64 << 20;
/// Entries of one chart archive (the official ones hold about 250).
pub const MAX_ARCHIVE_ENTRIES: usize = 10_000;
/// Bytes of one live-object dump read by `adopt-check` (`helm get manifest`, `kubectl get -o
/// yaml`). Those are larger than values files: a `kubectl get` of the chart's ~60 objects with
/// `managedFields` and `last-applied-configuration` is 1-2 MB, and a dump of a busy namespace a
/// few MB more. 16 MiB leaves that room while the parsed trees stay near 200 MB (measured: a
/// 15.5 MiB dump of 8,900 objects, 1.0 s and 157 MB peak); the command runs on a workstation,
/// never in the plugin.
pub const MAX_LIVE_FILE_BYTES: u64 = 16 << 20;
/// Live dumps of one `adopt-check` run, and their bytes together.
pub const MAX_LIVE_FILES: usize = 16;
/// The bytes of all live dumps of one `adopt-check` run together.
pub const MAX_LIVE_TOTAL_BYTES: u64 = 32 << 20;
/// Bytes `chart fetch` downloads for one archive. A gzipped archive is not larger than what it
/// unpacks to, so the unpacked bound serves; the official archives are about 210 KB.
pub const MAX_DOWNLOAD_BYTES: u64 = MAX_ARCHIVE_BYTES;
/// Bytes of a chart repository's `index.yaml` that `chart fetch` reads to find a release this
/// binary does not list. Cilium's index lists every chart it publishes (cilium, tetragon,
/// hubble-ui, ...) with all their metadata, several MB and growing with each release; the
/// network here could not reach helm.cilium.io to measure it, so the bound leaves room for years
/// of growth. The index is read as a stream of events, keeping only the cilium entries' versions,
/// digests and URLs, so memory stays near the index's own size.
pub const MAX_INDEX_BYTES: u64 = 32 << 20;
/// Seconds `chart fetch` waits for a connection, and for the whole download. An official archive
/// arrives in well under a second on a working link; these only end a dead or stalled server.
pub const FETCH_CONNECT_SECS: u64 = 15;
/// Seconds `chart fetch` waits for the whole download (see `FETCH_CONNECT_SECS`).
pub const FETCH_TOTAL_SECS: u64 = 120;
/// Characters of a `chart fetch --repo` URL (real repository URLs are under 100).
pub const MAX_URL_CHARS: usize = 2048;
/// Characters of user input quoted in one error message (Argo CD shows stderr in its UI).
pub const MAX_QUOTED_CHARS: usize = 120;

#[derive(Debug, thiserror::Error)]
/// Why an input file was refused, with the name it is shown by.
pub enum InputError {
    /// A fault of the whole file (not there, not a regular file, unreadable).
    #[error("{file}: {reason}")]
    File {
        /// The file as the user named it.
        file: String,
        /// What is wrong.
        reason: String,
    },
    /// A file beyond `MAX_FILE_BYTES`, refused before it is read whole.
    #[error("{file}: {reason}")]
    TooLarge {
        /// The file as the user named it.
        file: String,
        /// The size found, and the bound.
        reason: String,
    },
    /// A fault at a place in the text (1-based line and column).
    #[error("{file}:{line}:{column}: {reason}")]
    At {
        /// The file as the user named it.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column, in bytes.
        column: usize,
        /// What is wrong there.
        reason: String,
    },
}

impl InputError {
    /// What is wrong, without the file's name (for messages that name the file their own way).
    pub fn reason(&self) -> String {
        match self {
            InputError::File { reason, .. } | InputError::TooLarge { reason, .. } => reason.clone(),
            InputError::At {
                line,
                column,
                reason,
                ..
            } => format!("{line}:{column}: {reason}"),
        }
    }
}

/// Reads a regular file of at most `MAX_FILE_BYTES` as UTF-8 text; devices, FIFOs and
/// directories are refused before anything is read (`open_regular`, which never blocks), and a
/// larger file before it is read whole.
pub fn read_text(path: &Path, shown: &str) -> Result<String, InputError> {
    let (file, meta) = open_regular(path).map_err(|e| InputError::File {
        file: shown.to_string(),
        reason: e.to_string(),
    })?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(InputError::TooLarge {
            file: shown.to_string(),
            reason: too_large(meta.len()),
        });
    }
    bounded_text(file, meta.len() as usize, shown)
}

/// Reads standard input (`-`) as `read_text` reads a file, shown as `shown`: checked first
/// (`check_stdin`), then held to the same bound, which a pipe meets only as it is read.
pub fn read_stdin(shown: &str) -> Result<String, InputError> {
    check_stdin().map_err(|e| InputError::File {
        file: shown.to_string(),
        reason: e.to_string(),
    })?;
    bounded_text(std::io::stdin().lock(), 0, shown)
}

/// The UTF-8 text of `from`, read up to one byte past `MAX_FILE_BYTES` so that a source whose
/// size is not known beforehand (a pipe, a file that grew) is still refused, not read whole.
fn bounded_text(from: impl Read, expected: usize, shown: &str) -> Result<String, InputError> {
    let mut bytes = Vec::with_capacity(expected);
    from.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::File {
            file: shown.to_string(),
            reason: format!("cannot be read: {e}"),
        })?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(InputError::TooLarge {
            file: shown.to_string(),
            reason: format!("is more than {MAX_FILE_BYTES} bytes, the limit of input files"),
        });
    }
    text_of(bytes).map_err(|(line, column)| InputError::At {
        file: shown.to_string(),
        line,
        column,
        reason: "not UTF-8 text (YAML files must be UTF-8)".into(),
    })
}

/// The reason an I/O operation on a user's file failed, in the short words messages use (the
/// two everyday kinds named plainly, any other as the system says it): shared by the Argo CD
/// folder's reads and `chart fetch`'s write, so it lives with the other input bounds.
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Why a user-named file was not opened for reading.
#[derive(Debug)]
pub enum OpenError {
    /// It could not be examined or opened (missing, no permission, ...).
    Io(std::io::Error),
    /// It is there but not a regular file: what it is (`kind_of`).
    NotRegular(&'static str),
    /// Standard input is something `-` does not read: what it is.
    Stdin(&'static str),
}

impl OpenError {
    /// Whether the file is simply not there.
    pub fn is_not_found(&self) -> bool {
        matches!(self, OpenError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The reason, without the file's name (callers name it their own way).
impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Io(e) => write!(f, "cannot be read: {e}"),
            OpenError::NotRegular(what) => write!(
                f,
                "is not a regular file ({what}); cilium-cmp reads only regular files: name \
                 one, or, for a command's output (a pipe, `<(...)`), pipe it to standard input \
                 and pass '-' where the flag takes it"
            ),
            OpenError::Stdin(what) => write!(
                f,
                "is {what}, which '-' does not read: pipe the content or redirect a regular file \
                 to standard input"
            ),
        }
    }
}

impl std::error::Error for OpenError {}

/// For readers that report an `io::Error` (an unpacked chart folder): the reason is kept.
impl From<OpenError> for std::io::Error {
    fn from(e: OpenError) -> Self {
        match e {
            OpenError::Io(e) => e,
            e => std::io::Error::other(e.to_string()),
        }
    }
}

/// Opens a file a user, a repository or a pull request named, for reading, only if it is a
/// regular file, without ever blocking: every user-named input goes through here.
///
/// Opening a FIFO for reading waits for a writer (fifo(7)), forever if none comes, and opening a
/// device can act on it (a tape rewinds, a terminal becomes the controlling one), so the type is
/// looked up first with stat(2), which does neither, and anything else is refused unopened. The
/// file may be swapped between that look and the open: the open therefore adds `O_NONBLOCK`
/// (open(2): a FIFO then opens at once instead of waiting) and `O_NOCTTY`, and the opened file's
/// own type (fstat) is what decides. `O_NONBLOCK` stays set: it changes nothing for a regular
/// file, whose reads never wait (open(2), "O_NONBLOCK ... has no effect for regular files").
pub fn open_regular(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), OpenError> {
    use std::os::unix::fs::OpenOptionsExt;
    let looked = std::fs::metadata(path).map_err(OpenError::Io)?;
    if !looked.is_file() {
        return Err(OpenError::NotRegular(kind_of(&looked.file_type())));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(no_wait_no_tty())
        .open(path)
        .map_err(OpenError::Io)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    if !meta.is_file() {
        return Err(OpenError::NotRegular(kind_of(&meta.file_type())));
    }
    Ok((file, meta))
}

/// `O_NONBLOCK | O_NOCTTY` as `OpenOptions::custom_flags` takes them (rustix names the flags,
/// std has no constant for them).
fn no_wait_no_tty() -> i32 {
    use rustix::fs::OFlags;
    // Both are small positive bits on every Unix rustix supports, so the cast keeps them.
    (OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32
}

/// Checks what standard input is before `-` is read, with fstat(2), which never blocks. A pipe
/// is what `-` is for (`cat values.yaml | cilium-cmp render -f -`): the writer is the user's own
/// command, so a FIFO is read as it comes, and so are a regular file, a socket and a character
/// device (a terminal, `/dev/null`; a device that never ends meets the byte bound). A directory
/// or a block device (a disk) is refused before reading.
pub fn check_stdin() -> Result<(), OpenError> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let fd = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(OpenError::Io)?;
    let kind = std::fs::File::from(fd)
        .metadata()
        .map_err(OpenError::Io)?
        .file_type();
    if kind.is_dir() || kind.is_block_device() {
        return Err(OpenError::Stdin(kind_of(&kind)));
    }
    Ok(())
}

/// What a file that is not a regular one is, for refusals.
pub fn kind_of(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO, whose reader waits for a writer"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    }
}

fn too_large(len: u64) -> String {
    format!(
        "is {len} bytes; input files are limited to {} bytes",
        MAX_FILE_BYTES
    )
}

/// UTF-8 text, or the line and column (1-based, the column in bytes) of the first invalid byte.
pub fn text_of(bytes: Vec<u8>) -> Result<String, (usize, usize)> {
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        let column = valid.iter().rev().take_while(|b| **b != b'\n').count() + 1;
        (line, column)
    })
}

/// User text for an error message: at most `MAX_QUOTED_CHARS` characters, in quotes, escaped by
/// the one text escaper (`escape`), so a hostile value cannot flood or garble the message.
pub fn quoted(text: &str) -> String {
    crate::escape::quoted_within(text, MAX_QUOTED_CHARS)
}

/// `quoted` without the quotes, for text that names something (a path built from user keys).
pub fn shown(text: &str) -> String {
    crate::escape::text_within(text, MAX_QUOTED_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_is_bounded_and_escaped() {
        let long = "a\n".repeat(1000);
        let q = quoted(&long);
        assert!(q.chars().count() < 2 * MAX_QUOTED_CHARS + 4);
        assert!(q.contains("\\n") && q.ends_with("…\""));
        assert_eq!(quoted("ok"), "\"ok\"");
    }

    #[test]
    fn invalid_utf8_is_located() {
        assert_eq!(text_of(b"a: 1\nb: \xff\n".to_vec()), Err((2, 4)));
    }

    #[test]
    fn devices_and_large_files_are_refused_before_reading() {
        let err = read_text(Path::new("/dev/zero"), "values.yaml").unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.yaml");
        std::fs::write(&big, vec![b'#'; MAX_FILE_BYTES as usize + 1]).unwrap();
        let err = read_text(&big, "big.yaml").unwrap_err();
        assert!(err.to_string().contains("limited to"), "{err}");
    }

    #[test]
    fn a_fifo_or_a_directory_is_refused_without_waiting_for_a_writer() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().to_path_buf();
        let fifo = dir.join("values.yaml");
        make_fifo(&fifo);
        // No writer ever opens it: a blocking open would never return, and the test harness
        // would hang rather than fail, so the read runs on a thread with a deadline.
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || tx.send(read_text(&path, "values.yaml").map(|_| ())));
        let err = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("read_text returned within 5 s")
            .unwrap_err();
        assert_eq!(
            err.to_string().split(';').next().unwrap(),
            "values.yaml: is not a regular file (a FIFO, whose reader waits for a writer)"
        );
        let err = read_text(&dir, "dir").unwrap_err();
        assert!(
            err.to_string().contains("not a regular file (a directory)"),
            "{err}"
        );
        assert!(open_regular(&dir.join("missing"))
            .unwrap_err()
            .is_not_found());
    }

    /// A FIFO at `path`, as mkfifo(3) makes one (mknod(2) with S_IFIFO).
    pub(crate) fn make_fifo(path: &Path) {
        use rustix::fs::{mknodat, FileType, Mode, CWD};
        mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o600), 0).expect("mkfifo");
    }
}
