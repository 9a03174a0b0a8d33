//! Where a trial's deployment runs: in a child process (the default), or on
//! a thread of the harness's own process.
//!
//! In a child, the harness re-executes the current binary, filtered to the
//! test that runs the pack (a program, run from its main thread, gets its own
//! arguments again), and drives the deployment over a private socket
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
//!
//! Both ends of a child live here: this module places a run and starts its
//! children, [`serve`] is what the re-executed binary does instead of
//! judging, and [`history`] hands a served child the runs its test made
//! before the one it serves. They drive the child with [`crate::process`]
//! (the target, the protocol, the environment variables of the contract),
//! which knows nothing of the runner: imports run one way.

mod history;
mod serve;

use std::sync::Arc;
use std::time::Duration;

pub(crate) use history::{record, Recorded};
use serve::{requested_run, run_digest, serve_run_value};

use super::boxed_factory;
use super::worker::Factory;
use crate::process::{ProcessSpec, ProcessTarget, SERVE_HISTORY_ENV, SERVE_RUN_ENV};
use crate::target::{Target, TargetContext};

/// Where each trial's deployment runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// In a child process running this same binary: restarts are real and
    /// a crashing deployment fails one step, not the test binary. A
    /// deployment that already is a child ([`ProcessTarget`]) runs as it is.
    ///
    /// The child runs the same test from its start until it reaches the
    /// same `run_pack` call, and serves the factory it builds there. What
    /// a hand-written test does before the call must therefore come out
    /// the same in both processes: a temporary directory, a random port or
    /// a file written there is made afresh in the child, and its factory
    /// sees those, not the parent's. The attributes run nothing before the
    /// pack; for a hand-written test with such setup, pass it through
    /// [`TargetContext`] (the durable directory is the same in both), or
    /// run on [`Isolation::Thread`].
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

/// The arguments the re-executed binary gets: under libtest, the ones that
/// run exactly the test calling `run_pack`; from a program's own main
/// thread, the program's own arguments, so a `main` that reads them (a
/// configuration file, a deployment's name) reaches the same `run_pack`
/// with the same factory in the child.
fn child_args() -> Vec<std::ffi::OsString> {
    match std::thread::current().name() {
        Some(test) if test != "main" => [
            test,
            "--exact",
            "--include-ignored",
            "--test-threads=1",
            "--nocapture",
        ]
        .into_iter()
        .map(Into::into)
        .collect(),
        _ => std::env::args_os().skip(1).collect(),
    }
}

/// A factory that starts each deployment in a child running this binary,
/// which serves pack run `run` instead of judging it; `None` where that
/// cannot work (no Unix sockets, no path to the running executable).
fn child_factory(run: &str, occurrence: u32, step_timeout: Duration) -> Option<Factory> {
    if !cfg!(unix) {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let mut spec = ProcessSpec::new(exe)
        .args(child_args())
        .env(SERVE_RUN_ENV, serve_run_value(run, occurrence))
        .request_timeout(step_timeout)
        .handshake_timeout(step_timeout)
        .serving();
    if let Some(history) = history::path() {
        spec = spec.env(SERVE_HISTORY_ENV, history);
    }
    Some(Arc::new(move |context| {
        ProcessTarget::spawn(context, &spec).map(|target| Box::new(target) as Box<dyn Target>)
    }))
}

/// Whether a deployment of type `T` runs in a child of its own already.
fn already_a_child<T: 'static>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<ProcessTarget>()
}

/// Where a run's deployments come from.
pub(crate) enum Placement {
    /// Build them with this factory (one that starts a served child, or the
    /// adopter's own on a thread); the run's `occurrence` is kept for its
    /// history entry.
    Build(Factory, u32),
    /// This child serves another run; this one ended in the parent as
    /// recorded (or, with no record, is passed over).
    Recorded(Option<Recorded>),
}

/// Where run `name`'s deployments come from. In a child started to serve
/// this very run, it serves and never returns.
pub(crate) fn place<T, F>(
    name: &str,
    isolation: Isolation,
    step_timeout: Duration,
    factory: F,
) -> Placement
where
    T: Target + 'static,
    F: Fn(&TargetContext) -> T + Send + Sync + 'static,
{
    super::quiet_panics::reporting_thread();
    let occurrence = next_occurrence(name);
    if let Some((serving, served)) = requested_run() {
        if serving == run_digest(name) && served == occurrence {
            serve::serve(&boxed_factory(factory));
        }
        return Placement::Recorded(history::recorded(name, occurrence));
    }
    let isolated = isolation == Isolation::Process && !already_a_child::<T>();
    match isolated.then(|| child_factory(name, occurrence, step_timeout)) {
        Some(Some(children)) => Placement::Build(children, occurrence),
        _ => Placement::Build(boxed_factory(factory), occurrence),
    }
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
