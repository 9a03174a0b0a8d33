//! The exit status the harness reports for a child it could not reap
//! itself (killed, or lost with the fork server that forked it), shared by
//! the spawned and the forked paths.

use std::process::ExitStatus;

/// The status reported for a child whose real one is unknown.
#[cfg(unix)]
pub(crate) fn failed_status() -> ExitStatus {
    std::os::unix::process::ExitStatusExt::from_raw(libc::SIGKILL)
}

#[cfg(windows)]
pub(crate) fn failed_status() -> ExitStatus {
    std::os::windows::process::ExitStatusExt::from_raw(1)
}
