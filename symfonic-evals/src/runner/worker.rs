//! What a trial's worker thread shares with the rest of the runner: the
//! factory that builds a deployment (and containing its constructor's
//! panic), the progress the watchdog reads, the thread's stack, and the
//! entry for a step that broke before its turn. The session, the trial and
//! the isolation's serving loop all use these, so they sit below all three.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::judge::error_text;
use super::outcome::{StepError, StepErrorKind, StepRun};
use super::quiet_panics::panic_text;
use crate::evidence::{Operation, Role, TurnError};
use crate::target::{Target, TargetContext};

/// Builds a boxed target from the trial's context; an error is the
/// harness's account of why a deployment in a child could not start.
pub(crate) type Factory =
    Arc<dyn Fn(&TargetContext) -> Result<Box<dyn Target>, TurnError> + Send + Sync>;

/// The stack of every thread a deployment runs on: deep enough that the
/// harness's own walk of evidence nested far past [`MAX_JSON_DEPTH`]
/// (building it, measuring it, refusing it) cannot overflow. Reserved, not
/// committed: pages are only used as deep as a turn goes.
///
/// [`MAX_JSON_DEPTH`]: crate::evidence::MAX_JSON_DEPTH
pub(crate) const TRIAL_STACK: usize = 512 << 20;

/// What the worker has done so far, shared with the watchdog so that a hung
/// trial still reports every step it finished.
pub(crate) struct Progress {
    pub(crate) current_label: String,
    pub(crate) started: Instant,
    pub(crate) steps: Vec<StepRun>,
    pub(crate) notes: Vec<String>,
    /// The first reason the probe's check could not be made, if any.
    pub(crate) unproven: Option<String>,
    pub(crate) finished: bool,
    /// Every step is judged and the deployment is being dropped.
    pub(crate) tearing_down: bool,
    /// The watchdog gave up on this trial: the worker must not start
    /// another step (it would act after the verdict, beside the next trial).
    pub(crate) abandoned: bool,
}

/// The progress, locked: a panic on the worker while it held the lock
/// leaves what it recorded readable.
pub(crate) fn lock(progress: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    progress.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A step's entry that records only its error: the step broke before or
/// instead of its turn.
pub(crate) fn entry(
    index: usize,
    label: &str,
    kind: StepErrorKind,
    expected: &str,
    observed: &str,
) -> StepRun {
    StepRun {
        index,
        label: label.to_owned(),
        operation: Operation::Prompt,
        role: Role::User,
        conversation: String::new(),
        input_digest: String::new(),
        state_digest: None,
        restarted: false,
        warm_start: None,
        assertions: Vec::new(),
        error: Some(StepError {
            kind,
            expected: expected.to_owned(),
            observed: observed.to_owned(),
            exception: None,
        }),
        ledger: crate::ledger::LedgerCounts::default(),
        fixture_calls: Vec::new(),
        duration: Duration::ZERO,
    }
}

/// Why a deployment could not be built, as report-safe text.
pub(crate) enum Unbuilt {
    /// The constructor panicked (or the served child's did).
    Panicked(String),
    /// The deployment's process could not start or answer its handshake.
    Unstarted(String),
}

/// Builds the deployment, containing a panic.
pub(crate) fn build(
    factory: &Factory,
    context: &TargetContext,
) -> Result<Box<dyn Target>, Unbuilt> {
    match catch_unwind(AssertUnwindSafe(|| factory(context))) {
        Ok(Ok(target)) => Ok(target),
        Ok(Err(error)) if super::served_panic(&error) => Err(Unbuilt::Panicked(error.message)),
        Ok(Err(error)) => Err(Unbuilt::Unstarted(error_text(&error, None))),
        Err(payload) => Err(Unbuilt::Panicked(panic_text(&*payload))),
    }
}

impl Unbuilt {
    /// The step error of a deployment that did not build.
    pub(crate) fn into_step(self, expected: &str) -> (StepErrorKind, String, String) {
        match self {
            Self::Panicked(why) => (
                StepErrorKind::TargetPanicked,
                expected.to_owned(),
                format!("constructor {why}"),
            ),
            Self::Unstarted(why) => (StepErrorKind::ProcessFailed, expected.to_owned(), why),
        }
    }
}
