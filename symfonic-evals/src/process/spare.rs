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
//! A trial's first restart is a cold one: only then is a spare started,
//! so a trial that never restarts (most scenarios restart once or not at
//! all) costs no process it does not use. Every later restart answers from
//! the spare and starts the next.
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

/// The spares waiting, and the keys started once already (with their
/// trial's durable directory), whose next start is a restart.
struct Table {
    spares: Vec<Spare>,
    started: Vec<(String, PathBuf)>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    spares: Vec::new(),
    started: Vec::new(),
});

fn table() -> std::sync::MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Notes a start for `key` and says whether an earlier one was noted: a
/// restart, after which a spare is worth starting.
pub(crate) fn restarting(key: &str, durable_dir: &Path) -> bool {
    let mut table = table();
    if table.started.iter().any(|(k, _)| k == key) {
        return true;
    }
    table.started.push((key.to_owned(), durable_dir.to_owned()));
    false
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
        let spares = &mut table().spares;
        let at = spares.iter().position(|spare| spare.key == key)?;
        spares.swap_remove(at)
    };
    (!spare.child.has_exited()).then_some(spare.child)
}

/// Keeps `child` as the spare for `key`, replacing (and killing) any other.
pub(crate) fn stash(key: String, durable_dir: &Path, child: Supervised) {
    let replaced: Vec<Spare> = {
        let spares = &mut table().spares;
        let replaced = extract(spares, |spare| spare.key == key);
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
    let gone = {
        let mut table = table();
        table.started.retain(|(_, dir)| dir != durable_dir);
        extract(&mut table.spares, |spare| spare.durable_dir == durable_dir)
    };
    // Killed and reaped outside the lock.
    drop(gone);
}

/// Removes and returns every spare `matches` picks.
fn extract(spares: &mut Vec<Spare>, matches: impl Fn(&Spare) -> bool) -> Vec<Spare> {
    let (gone, kept) = std::mem::take(spares).into_iter().partition(|s| matches(s));
    *spares = kept;
    gone
}
