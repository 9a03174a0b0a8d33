//! Writing cassette files without following links.
//!
//! A cassette directory is part of a checkout anyone can send a pull
//! request to, so a symbolic link planted at a cassette, its pending file
//! or a temporary path must never redirect a write elsewhere. Every write
//! here refuses a link at its destination, creates temporaries exclusively
//! (`O_CREAT | O_EXCL`, which fails on any existing entry, a dangling link
//! included) in the destination's own directory under a fresh name, and
//! renames them into place, which replaces a directory entry rather than
//! writing through it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Fails when `path` is a symbolic link (dangling or not).
pub(crate) fn refuse_link(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a symbolic link; cassette files are never written through links",
        )),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates `path`'s directory. A linked directory is the adopter's own
/// layout (a shared cassette folder), so it is used as it is; only the
/// files in it are guarded.
fn prepare_dir(path: &Path) -> io::Result<PathBuf> {
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => dir.to_owned(),
        None => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A fresh temporary name beside `path`: its own directory, so the rename
/// that publishes it stays on one file system.
fn temporary_beside(dir: &Path, path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    dir.join(format!(
        ".{name}.{}.{}.{nanos}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Opens a new file that did not exist, whatever was at the path.
fn create_exclusive(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    no_follow(&mut options);
    options.open(path)
}

#[cfg(unix)]
fn no_follow(options: &mut OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt;
    options.custom_flags(libc::O_NOFOLLOW);
}

#[cfg(not(unix))]
fn no_follow(_: &mut OpenOptions) {}

/// Replaces the file at `path` with `bytes` atomically: a link at `path`
/// is refused, the bytes go to an exclusively created temporary beside it,
/// and the temporary is renamed over `path`.
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    refuse_link(path)?;
    let dir = prepare_dir(path)?;
    let temporary = temporary_beside(&dir, path);
    let written = create_exclusive(&temporary).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    let published = written.and_then(|()| {
        // Checked again: a link planted while the temporary was written
        // is refused rather than replaced silently.
        refuse_link(path)?;
        fs::rename(&temporary, path)
    });
    if published.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    published
}

/// Opens `path` for appending from empty: a link at `path` is refused
/// (and, on Unix, never followed even if planted after the check).
pub(crate) fn truncate_for_append(path: &Path) -> io::Result<File> {
    refuse_link(path)?;
    prepare_dir(path)?;
    let mut options = OpenOptions::new();
    options.create(true).write(true).truncate(true);
    no_follow(&mut options);
    options.open(path)
}

/// Removes `path` if it is a regular file; a link there is refused.
pub(crate) fn remove_file(path: &Path) -> io::Result<()> {
    refuse_link(path)?;
    fs::remove_file(path)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn a_link_at_the_destination_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, "keep").unwrap();
        let link = dir.path().join("c.jsonl");
        symlink(&outside, &link).unwrap();
        assert!(replace_file(&link, b"new").is_err());
        assert!(truncate_for_append(&link).is_err());
        assert!(remove_file(&link).is_err());
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn replacing_writes_a_regular_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("c.jsonl");
        replace_file(&path, b"one").unwrap();
        replace_file(&path, b"two").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn an_exclusive_create_never_opens_an_existing_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, "keep").unwrap();
        let link = dir.path().join("t.tmp");
        symlink(&outside, &link).unwrap();
        assert!(create_exclusive(&link).is_err());
        let dangling = dir.path().join("d.tmp");
        symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(create_exclusive(&dangling).is_err());
        assert!(!dir.path().join("nowhere").exists());
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
    }
}
