//! Reading a file whose path a user gave: a cassette, a report directory's
//! files, a history file. Only a regular file is read, and only up to a cap.
//!
//! A path from a user may name anything: a committed cassette that is a
//! link to `/dev/zero` would be read without end, a FIFO would block the
//! reader forever. So links are followed (a cassette may rightly be a link
//! to a shared file), and what they resolve to must be a regular file; the
//! error says what it was instead, and what the link pointed at. The size
//! is checked before reading and again while reading (a file that grows
//! past the cap meanwhile is refused too).

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest file read from a path a user gave, unless
/// [`MAX_FILE_BYTES_ENV`] says otherwise: 256 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 256 << 20;

/// The variable that overrides [`DEFAULT_MAX_FILE_BYTES`] (a number of
/// bytes).
pub const MAX_FILE_BYTES_ENV: &str = "SYMFONIC_EVALS_MAX_FILE_BYTES";

/// The cap in force: [`MAX_FILE_BYTES_ENV`] when it holds a number, else
/// [`DEFAULT_MAX_FILE_BYTES`].
pub fn max_file_bytes() -> u64 {
    std::env::var(MAX_FILE_BYTES_ENV)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_MAX_FILE_BYTES)
}

/// Why a file was not read. Its message names the file (and, for a link,
/// what it resolved to), never the file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadRefusal {
    /// The path resolves to something other than a regular file.
    NotRegular {
        /// The path as given.
        path: PathBuf,
        /// What it is: "a directory", "a FIFO", "a character device", ...
        kind: &'static str,
        /// Where the link at `path` points, when it is one.
        link: Option<PathBuf>,
    },
    /// The file is larger than the cap.
    TooLarge {
        /// The path as given.
        path: PathBuf,
        /// The cap, in bytes.
        cap: u64,
    },
    /// The file does not exist.
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// Any other I/O error.
    Io {
        /// The path as given.
        path: PathBuf,
        /// The error.
        reason: String,
    },
}

impl ReadRefusal {
    /// The path the refusal is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::NotRegular { path, .. }
            | Self::TooLarge { path, .. }
            | Self::NotFound { path }
            | Self::Io { path, .. } => path,
        }
    }

    /// The refusal without the path (for errors that print the path
    /// themselves).
    pub fn reason(&self) -> String {
        match self {
            Self::NotRegular { kind, link, .. } => {
                let via = link
                    .as_ref()
                    .map(|to| format!(" (a link to {})", to.display()))
                    .unwrap_or_default();
                format!("is{via} {kind}, not a regular file; only regular files are read")
            }
            Self::TooLarge { cap, .. } => format!(
                "is larger than the {cap}-byte cap on files read (raise it with \
                 {MAX_FILE_BYTES_ENV})"
            ),
            Self::NotFound { .. } => "does not exist".into(),
            Self::Io { reason, .. } => reason.clone(),
        }
    }
}

impl fmt::Display for ReadRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path().display(), self.reason())
    }
}

impl std::error::Error for ReadRefusal {}

fn kind_of(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// The bytes of the regular file at `path` (links followed), at most `cap`
/// of them.
///
/// # Errors
///
/// When the path resolves to anything but a regular file, when the file is
/// larger than `cap`, or when it cannot be read.
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, ReadRefusal> {
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => ReadRefusal::NotFound {
            path: path.to_owned(),
        },
        _ => ReadRefusal::Io {
            path: path.to_owned(),
            reason: e.to_string(),
        },
    };
    let not_regular = |kind| ReadRefusal::NotRegular {
        path: path.to_owned(),
        kind,
        link: std::fs::read_link(path).ok(),
    };
    let too_large = || ReadRefusal::TooLarge {
        path: path.to_owned(),
        cap,
    };
    // Checked before opening: opening a FIFO waits for a writer.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular(kind_of(meta.file_type())));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        // Swapped for a FIFO between the check and the open, the open
        // still returns at once.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular(kind_of(meta.file_type())));
    }
    if meta.len() > cap {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.jsonl");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(read_regular(&file, 10).unwrap(), b"0123456789");
        let refused = read_regular(&file, 9).unwrap_err();
        assert_eq!(
            refused,
            ReadRefusal::TooLarge {
                path: file.clone(),
                cap: 9
            }
        );
        assert!(refused.to_string().contains("c.jsonl"));
        assert!(refused.to_string().contains("9-byte cap"));
        assert!(matches!(
            read_regular(&dir.path().join("none"), 9),
            Err(ReadRefusal::NotFound { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_device_a_fifo_or_a_directory_is_refused_naming_both_ends() {
        let dir = tempfile::tempdir().unwrap();
        let zero = dir.path().join("zero.jsonl");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let refused = read_regular(&zero, 1 << 30).unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!(
                "{}: is (a link to /dev/zero) a character device, not a regular file; only \
                 regular files are read",
                zero.display()
            )
        );
        let fifo = dir.path().join("fifo.jsonl");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path and a mode.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_regular(&fifo, 10),
            Err(ReadRefusal::NotRegular {
                kind: "a FIFO",
                link: None,
                ..
            })
        ));
        assert!(matches!(
            read_regular(dir.path(), 10),
            Err(ReadRefusal::NotRegular {
                kind: "a directory",
                ..
            })
        ));
        // A link to a regular file is read.
        let real = dir.path().join("real.jsonl");
        std::fs::write(&real, b"{}").unwrap();
        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read_regular(&link, 10).unwrap(), b"{}");
    }
}
