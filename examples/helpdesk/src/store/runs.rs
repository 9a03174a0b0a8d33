//! Run leases: which openings of the desk are still alive.
//!
//! A redemption claims its token in the name of the desk's current run
//! before carrying the continuation. When that run dies mid-way (a crash,
//! a kill), a client's retry must be able to take the claim over; while it
//! lives, a concurrent redemption must not. Each run holds an exclusive
//! lock on its own file under `runs/` in the durable directory for as long
//! as it is open: the operating system drops the lock when the process
//! dies, so "the claimant's lock can be taken" means "the claimant is
//! gone", with no clock and no timeout.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The directory of lease files inside the durable directory.
const RUNS_DIR: &str = "runs";

/// This run's lease; alive while the value is.
#[derive(Debug)]
pub struct RunLease {
    id: String,
    _held: File,
}

fn lease_path(durable_dir: &Path, id: &str) -> PathBuf {
    durable_dir.join(RUNS_DIR).join(format!("{id}.lock"))
}

impl RunLease {
    /// Takes the lease of a new run in `durable_dir`, under a name no
    /// other opening has used: the process, the time and a counter, so two
    /// openings in one process (or two processes) never share one.
    ///
    /// # Errors
    ///
    /// When the lease file cannot be created or locked.
    pub fn take(durable_dir: &Path) -> io::Result<Self> {
        static OPENINGS: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let id = format!(
            "run-{}-{nanos}-{}",
            std::process::id(),
            OPENINGS.fetch_add(1, Ordering::Relaxed)
        );
        std::fs::create_dir_all(durable_dir.join(RUNS_DIR))?;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lease_path(durable_dir, &id))?;
        file.lock()?;
        Ok(Self { id, _held: file })
    }

    /// The run's name, as claims record it.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// Whether the run named `id` still holds its lease in `durable_dir`. A run
/// with no lease file never existed here, and counts as gone.
pub fn is_alive(durable_dir: &Path, id: &str) -> bool {
    let Ok(file) = File::open(lease_path(durable_dir, id)) else {
        return false;
    };
    match file.try_lock() {
        // Taken: its holder is gone (dropping `file` releases it again).
        Ok(()) => false,
        Err(TryLockError::WouldBlock) => true,
        // Unreadable leases count as alive: refusing a retry is safe,
        // admitting a concurrent redemption is not.
        Err(TryLockError::Error(_)) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_alive_while_held_and_gone_once_dropped() {
        let ctx = symfonic_evals::TargetContext::fresh(0).unwrap();
        let dir = ctx.durable_dir();
        let lease = RunLease::take(dir).unwrap();
        let other = RunLease::take(dir).unwrap();
        assert_ne!(lease.id(), other.id());
        let id = lease.id().to_owned();
        assert!(is_alive(dir, &id));
        assert!(!is_alive(dir, "never"));
        drop(lease);
        assert!(!is_alive(dir, &id));
        assert!(is_alive(dir, other.id()));
    }
}
