//! Where the harness makes its scratch directories: a trial's durable
//! directory, a child's socket directory.
//!
//! A durable directory has to survive the crashes the harness injects (a
//! killed process, a restart), never a power cut, so it can live on a
//! memory-backed filesystem. There a deployment's `fsync` returns at once:
//! a store that commits every write (as a correct one does) costs CPU, not
//! a disk round trip, and a suite of hundreds of trials does not wait on
//! the disk. On Linux that is `/dev/shm` when it is a writable directory
//! with room to spare (a container's is often 64 MiB, which a deployment's
//! store could fill and fail on); elsewhere, or when it is not, the
//! system's temporary directory.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Overrides where the harness makes its scratch directories (durable
/// directories, socket directories): set it to a directory on the disk to
/// run a deployment's stores against real `fsync`s.
pub const SCRATCH_DIR_ENV: &str = "SYMFONIC_EVALS_SCRATCH_DIR";

/// The memory-backed filesystem preferred when nothing overrides it.
const MEMORY_BACKED: &str = "/dev/shm";

/// The room the memory-backed filesystem must have free to be chosen.
const MEMORY_BACKED_MIN_FREE: u64 = 1 << 30;

/// The directory scratch directories are made in, resolved once per
/// process: `$SYMFONIC_EVALS_SCRATCH_DIR`, else `/dev/shm` where the
/// harness can make a directory in it and at least 1 GiB is free, else the
/// system's temporary directory.
pub fn scratch_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        resolve(
            std::env::var_os(SCRATCH_DIR_ENV),
            Path::new(MEMORY_BACKED),
            MEMORY_BACKED_MIN_FREE,
            std::env::temp_dir(),
        )
    })
}

/// A fresh directory under [`scratch_root`], removed when dropped. A child
/// sees its path, so `prefix` names neither the harness nor testing.
pub(crate) fn tempdir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(scratch_root())
}

fn resolve(
    overridden: Option<OsString>,
    memory_backed: &Path,
    min_free: u64,
    temp: PathBuf,
) -> PathBuf {
    if let Some(dir) = overridden.filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    if cfg!(target_os = "linux")
        && writable(memory_backed)
        && free_bytes(memory_backed).is_some_and(|free| free >= min_free)
    {
        return memory_backed.to_path_buf();
    }
    temp
}

/// The bytes an unprivileged process may still write under `dir`.
#[cfg(unix)]
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt as _;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stats = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a NUL-terminated string and `stats` a buffer of the
    // type `statvfs` fills; it is read only after the call succeeded.
    let stats = unsafe {
        if libc::statvfs(path.as_ptr(), stats.as_mut_ptr()) != 0 {
            return None;
        }
        stats.assume_init()
    };
    #[allow(clippy::useless_conversion)] // the fields' widths vary by platform
    let free = u64::from(stats.f_bavail).saturating_mul(u64::from(stats.f_frsize));
    Some(free)
}

#[cfg(not(unix))]
fn free_bytes(_dir: &Path) -> Option<u64> {
    None
}

/// Whether a directory can be made in `dir`: a mounted but read-only or
/// full `/dev/shm` (some containers) must not be chosen.
fn writable(dir: &Path) -> bool {
    dir.is_dir()
        && tempfile::Builder::new()
            .prefix(".probe-")
            .tempdir_in(dir)
            .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_wins_unless_empty() {
        let temp = std::env::temp_dir();
        let chosen = resolve(
            Some("/somewhere".into()),
            Path::new("/dev/shm"),
            0,
            temp.clone(),
        );
        assert_eq!(chosen, Path::new("/somewhere"));
        let missing = Path::new("/no/such/memory/filesystem");
        assert_eq!(resolve(Some("".into()), missing, 0, temp.clone()), temp);
    }

    #[test]
    fn a_memory_backed_directory_is_preferred_where_writable() {
        let temp = std::env::temp_dir();
        let shm = tempfile::tempdir().unwrap();
        let expected = if cfg!(target_os = "linux") {
            shm.path().to_path_buf()
        } else {
            temp.clone()
        };
        assert_eq!(resolve(None, shm.path(), 0, temp.clone()), expected);
        let missing = shm.path().join("absent");
        assert_eq!(resolve(None, &missing, 0, temp.clone()), temp);
    }

    #[test]
    fn a_memory_backed_directory_without_room_is_passed_over() {
        let temp = std::env::temp_dir();
        let shm = tempfile::tempdir().unwrap();
        let free = free_bytes(shm.path());
        if cfg!(unix) {
            assert!(free.is_some_and(|f| f > 0), "{free:?}");
        }
        assert_eq!(resolve(None, shm.path(), u64::MAX, temp.clone()), temp);
    }

    #[test]
    fn a_file_where_the_directory_should_be_is_passed_over() {
        let temp = std::env::temp_dir();
        let file = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(resolve(None, file.path(), 0, temp.clone()), temp);
    }

    #[test]
    fn scratch_directories_are_made_under_the_root() {
        let dir = tempdir("t-").unwrap();
        assert!(dir.path().starts_with(scratch_root()));
        assert!(dir.path().is_dir());
    }
}
