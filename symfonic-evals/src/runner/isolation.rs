//! Where a trial's deployment runs: in a child process (the default), or on
//! a thread of the harness's own process.
//!
//! In a child, the harness re-executes the current binary, filtered to the
//! test that runs the pack, and drives the deployment over a private socket
//! with the same machinery as any out-of-process target. A restart is then a
//! real process restart: whatever the deployment kept in a `static`, a
//! `OnceLock` or a leaked `Arc` is gone. An `exit`, an abort, a stack
//! overflow, a signal or the out-of-memory killer ends the one step it
//! happened in, with the exit status or signal named, and the test binary,
//! the report and the other tests go on.
//!
//! On a thread, every step is cheaper, but a restart only drops and rebuilds
//! the deployment in the same process, and a deployment that ends the
//! process takes the test binary with it.

use std::sync::Arc;

use super::trial::Factory;
use crate::process::{serve_run_value, ProcessSpec, ProcessTarget, SERVE_RUN_ENV};
use crate::scenario::TrialPolicy;
use crate::target::Target;

/// Where each trial's deployment runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// In a child process running this same binary: restarts are real and
    /// a crashing deployment fails one step, not the test binary. A
    /// deployment that already is a child ([`ProcessTarget`]) runs as it is.
    #[default]
    Process,
    /// On a thread of the test's own process.
    Thread,
}

impl Isolation {
    /// The lowercase name the attribute argument uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Process => "process",
            Self::Thread => "thread",
        }
    }
}

/// Whether the caller runs on a test harness's thread (libtest names each
/// test's thread after the test) rather than a program's main thread.
pub(crate) fn on_a_test_thread() -> bool {
    std::thread::current()
        .name()
        .is_some_and(|name| name != "main")
}

/// The libtest arguments that run exactly the test calling `run_pack`, or
/// none when the caller is a program's own thread.
fn test_filter() -> Vec<String> {
    match std::thread::current().name() {
        Some(test) if test != "main" => vec![
            test.to_owned(),
            "--exact".into(),
            "--include-ignored".into(),
            "--test-threads=1".into(),
            "--nocapture".into(),
        ],
        _ => Vec::new(),
    }
}

/// A factory that starts each deployment in a child running this binary,
/// which serves pack run `run` instead of judging it; `None` where that
/// cannot work (no Unix sockets, no path to the running executable).
pub(crate) fn child_factory(run: &str, occurrence: u32, policy: &TrialPolicy) -> Option<Factory> {
    if !cfg!(unix) {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let spec = ProcessSpec::new(exe)
        .args(test_filter())
        .env(SERVE_RUN_ENV, serve_run_value(run, occurrence))
        .request_timeout(policy.step_timeout)
        .handshake_timeout(policy.step_timeout)
        .serving();
    Some(Arc::new(move |context| {
        ProcessTarget::spawn(context, &spec).map(|target| Box::new(target) as Box<dyn Target>)
    }))
}

/// Whether a deployment of type `T` runs in a child of its own already.
pub(crate) fn already_a_child<T: 'static>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<ProcessTarget>()
}

thread_local! {
    /// How many times each pack run name was run on this thread.
    static RUNS: std::cell::RefCell<std::collections::HashMap<String, u32>> =
        std::cell::RefCell::default();
}

/// Which run (from 0) of pack run `name` on the calling thread this is.
/// The same count is taken in the parent and in the re-executed child, so
/// each run is served by the child started for it.
pub(crate) fn next_occurrence(name: &str) -> u32 {
    RUNS.with(|runs| {
        let mut runs = runs.borrow_mut();
        let count = runs.entry(name.to_owned()).or_insert(0);
        let occurrence = *count;
        *count += 1;
        occurrence
    })
}
