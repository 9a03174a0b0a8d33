//! Spare processes: one more child started ahead for a trial, waiting for
//! its handshake, so the next restart of the same deployment in the same
//! trial answers from it instead of a cold start.
//!
//! A runtime that cannot fork an initialised process (Node) pays its whole
//! start (the runtime, then the framework's import) at every restart; a
//! pack restarts a deployment many times a trial. A spare has done all of
//! that while the trial ran on. It is the same command with the same
//! arguments and environment (the same durable directory), and it has read
//! nothing: a companion builds its deployment only once the handshake names
//! the durable directory, so the spare's first look at the durable state
//! comes after the restart, as a cold start's would.
//!
//! Spares are kept here, one per (spec, durable directory, endpoints), and
//! killed when their trial's context goes ([`discard`]), so none outlives
//! its trial.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use super::child::Supervised;
use super::spec::ProcessSpec;

/// A spare and what it was started for.
struct Spare {
    key: String,
    durable_dir: PathBuf,
    child: Supervised,
}

static SPARES: Mutex<Vec<Spare>> = Mutex::new(Vec::new());

fn spares() -> std::sync::MutexGuard<'static, Vec<Spare>> {
    SPARES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a spare must have been started with to stand in for a start of
/// `spec` in the trial whose durable directory and endpoints these are.
pub(crate) fn key(
    spec: &ProcessSpec,
    durable_dir: &Path,
    endpoints: &[(&'static str, String)],
) -> String {
    format!("{spec:?}\u{0}{}\u{0}{endpoints:?}", durable_dir.display())
}

/// The spare started for `key`, if one is waiting and still alive (one
/// that died waiting is reaped and forgotten).
pub(crate) fn take(key: &str) -> Option<Supervised> {
    let mut spare = {
        let mut spares = spares();
        let at = spares.iter().position(|spare| spare.key == key)?;
        spares.swap_remove(at)
    };
    (!spare.child.has_exited()).then_some(spare.child)
}

/// Keeps `child` as the spare for `key`, replacing (and killing) any other.
pub(crate) fn stash(key: String, durable_dir: &Path, child: Supervised) {
    let replaced: Vec<Spare> = {
        let mut spares = spares();
        let replaced = extract(&mut spares, |spare| spare.key == key);
        spares.push(Spare {
            key,
            durable_dir: durable_dir.to_owned(),
            child,
        });
        replaced
    };
    drop(replaced);
}

/// Kills the spares started for the trial whose durable directory is
/// `durable_dir`: the trial is over.
pub(crate) fn discard(durable_dir: &Path) {
    let gone = extract(&mut spares(), |spare| spare.durable_dir == durable_dir);
    // Killed and reaped outside the lock.
    drop(gone);
}

/// Removes and returns every spare `matches` picks.
fn extract(spares: &mut Vec<Spare>, matches: impl Fn(&Spare) -> bool) -> Vec<Spare> {
    let (gone, kept) = std::mem::take(spares).into_iter().partition(|s| matches(s));
    *spares = kept;
    gone
}
