//! Keeps a deployment's panic messages out of the process's stderr.
//!
//! The default panic hook prints the message, and a deployment's message may
//! quote turn state. While a trial runs in this process, the hook installed
//! here prints no message for a panic on a thread the harness did not hand
//! to the caller: the trial threads themselves (the runner reports those
//! panics, digested, with their location), and any thread the deployment
//! spawned (reported as a location only). The threads that run packs keep
//! the hook they had, so a failing pack's own panic, and a test's own
//! assertion, still print in full. `SYMFONIC_EVALS_SHOW_VALUES` prints
//! everything, for local debugging.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

use crate::redact::sensitive;

/// Thread names carry this prefix so the panic hook can keep them quiet.
/// A deployment can read its thread's name, so the prefix names no project
/// and no testing.
pub(crate) const WORKER_PREFIX: &str = "step-worker-";

thread_local! {
    /// This thread runs packs; its panics print as they always did.
    static REPORTING: Cell<bool> = const { Cell::new(false) };
    /// Where this thread last panicked, for the runner's report.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Trials running in this process right now.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

pub(crate) fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
            let on_trial_thread = std::thread::current()
                .name()
                .is_some_and(|name| name.starts_with(WORKER_PREFIX));
            if crate::redact::show_values() || REPORTING.get() {
                previous(info);
            } else if on_trial_thread {
                LOCATION.set(location);
            } else if ACTIVE.load(Ordering::SeqCst) > 0 {
                let current = std::thread::current();
                let name = current.name().unwrap_or("<unnamed>");
                eprintln!(
                    "thread '{name}' panicked at {}: message withheld while a deployment is \
                     under evaluation (set {}=1 to see it)",
                    location.as_deref().unwrap_or("an unknown location"),
                    crate::redact::SHOW_VALUES_ENV
                );
            } else {
                previous(info);
            }
        }));
    });
}

/// Marks the calling thread as one that runs packs: its own panics print.
pub(crate) fn reporting_thread() {
    install();
    REPORTING.set(true);
}

/// Where the calling thread last panicked, taken.
pub(crate) fn take_location() -> Option<String> {
    LOCATION.take()
}

/// Counts a trial as running for as long as the guard lives.
pub(crate) struct Active;

impl Active {
    pub(crate) fn enter() -> Self {
        install();
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Self
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The panic's location (the deployment's own file and line, which helps
/// and quotes nothing) and its message, digested (which may quote state).
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-text panic payload".to_owned());
    match take_location() {
        Some(at) => format!("panicked at {at} with message {}", sensitive(&message)),
        None => format!("panicked with message {}", sensitive(&message)),
    }
}
