//! Driving one trial on a thread of its own.
//!
//! The target lives and dies on the trial's worker thread, so a target that
//! panics is caught there and a target that hangs is abandoned there: the
//! caller's thread (a test, another pack) never blocks past the step limit.
//! Per step the worker only takes an uncontended lock to say which step it
//! is on; the watchdog reads that when its own wait runs out.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::outcome::{StepError, StepErrorKind, StepRun, TrialRun};
use super::session::{EffectsProbe, Session};
use crate::evidence::{Operation, Role, TurnError};
use crate::redact::sensitive;
use crate::replay::ReplayPlan;
use crate::scenario::Scenario;
use crate::target::{Target, TargetContext};

/// Builds a boxed target from the trial's context; an error is the
/// harness's account of why a deployment in a child could not start.
pub(crate) type Factory =
    Arc<dyn Fn(&TargetContext) -> Result<Box<dyn Target>, TurnError> + Send + Sync>;

/// Thread names carry this prefix so the panic hook can keep them quiet.
/// A deployment can read its thread's name, so the prefix names no project
/// and no testing.
pub(crate) const WORKER_PREFIX: &str = "step-worker-";

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
    pub(crate) finished: bool,
    /// Every step is judged and the deployment is being dropped.
    pub(crate) tearing_down: bool,
    /// The watchdog gave up on this trial: the worker must not start
    /// another step (it would act after the verdict, beside the next trial).
    pub(crate) abandoned: bool,
}

pub(crate) fn lock(progress: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    progress.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long a step runs before the watchdog says it is still running, in
/// milliseconds (5 s when unset).
pub const PROGRESS_AFTER_ENV: &str = "SYMFONIC_EVALS_PROGRESS_AFTER_MS";

fn progress_after() -> Duration {
    static AFTER: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *AFTER.get_or_init(|| {
        std::env::var(PROGRESS_AFTER_ENV)
            .ok()
            .and_then(|ms| ms.trim().parse().ok())
            .map_or(Duration::from_secs(5), Duration::from_millis)
    })
}

/// What a trial needs besides its scenario and factory.
#[derive(Clone, Default)]
pub(crate) struct TrialSettings {
    /// The pack run's name, for progress lines.
    pub(crate) run: Arc<str>,
    pub(crate) oracle: Option<EffectsProbe>,
    /// The pack run's model replay: each trial starts its own endpoint.
    pub(crate) replay: Arc<ReplayPlan>,
    /// The tool the trial's MCP fixture serves, when the pack has one.
    pub(crate) fixture: Option<Arc<crate::mcp::FixtureTool>>,
}

/// Runs trial `trial` of `scenario` and waits for it, at most one step limit
/// per step.
pub(crate) fn run_trial(
    scenario: &Arc<Scenario>,
    factory: &Factory,
    trial: u32,
    settings: &TrialSettings,
) -> TrialRun {
    let _active = super::quiet_panics::Active::enter();
    let progress = Arc::new(Mutex::new(Progress {
        current_label: scenario
            .steps
            .first()
            .map_or_else(|| "setup".to_owned(), |s| s.label.clone()),
        started: Instant::now(),
        steps: Vec::with_capacity(scenario.steps.len()),
        notes: Vec::new(),
        finished: false,
        tearing_down: false,
        abandoned: false,
    }));
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(1);
    let spawned = {
        let (scenario, factory, progress) = (scenario.clone(), factory.clone(), progress.clone());
        let settings = settings.clone();
        std::thread::Builder::new()
            .name(format!("{WORKER_PREFIX}{trial}"))
            .stack_size(TRIAL_STACK)
            .spawn(move || {
                drive(&scenario, &factory, trial, &progress, &settings);
                let _ = done_tx.send(());
            })
    };
    let planned_steps = scenario.steps.len();
    let began = Instant::now();
    let finish = |p: &mut Progress, extra: Option<StepRun>| {
        let mut steps = std::mem::take(&mut p.steps);
        steps.extend(extra);
        TrialRun {
            trial,
            steps,
            planned_steps,
            finished: p.finished,
            notes: std::mem::take(&mut p.notes),
            duration: began.elapsed(),
        }
    };
    if let Err(error) = spawned {
        let step = broken_step(
            &lock(&progress),
            StepErrorKind::ContextFailed,
            "a trial thread",
            &error.to_string(),
        );
        return finish(&mut lock(&progress), Some(step));
    }
    let limit = scenario.policy.step_timeout;
    // One line on stderr for a step still running after a while, so a slow
    // run is not mistaken for a hung one (or the other way round).
    let mut told = None;
    let progress_after = progress_after();
    loop {
        let wait = {
            let p = lock(&progress);
            let elapsed = p.started.elapsed();
            if elapsed >= progress_after && told != Some(p.started) && elapsed < limit {
                told = Some(p.started);
                eprintln!(
                    "symfonic-evals: {} `{}` trial {}: step `{}` still running after {} ms (limit {} ms)",
                    settings.run,
                    scenario.name,
                    trial + 1,
                    p.current_label,
                    elapsed.as_millis(),
                    limit.as_millis()
                );
            }
            let next = if told == Some(p.started) {
                limit
            } else {
                progress_after.min(limit)
            };
            next.saturating_sub(elapsed)
        };
        match done_rx.recv_timeout(wait.max(Duration::from_millis(1))) {
            Ok(()) => return finish(&mut lock(&progress), None),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Turns and constructors are caught; what is left is the
                // deployment panicking while it is dropped.
                let mut p = lock(&progress);
                p.finished = false;
                let step = if p.tearing_down {
                    teardown_step(
                        &p,
                        StepErrorKind::TargetPanicked,
                        "the deployment panicked while being dropped",
                    )
                } else {
                    broken_step(
                        &p,
                        StepErrorKind::TargetPanicked,
                        "the step to finish",
                        "the trial thread died (the deployment panicked while being dropped)",
                    )
                };
                return finish(&mut p, Some(step));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let mut p = lock(&progress);
                if p.started.elapsed() >= limit {
                    p.abandoned = true;
                    p.finished = false;
                    let ran_out = format!(
                        "still running after {} ms; trial abandoned",
                        limit.as_millis()
                    );
                    let step = if p.tearing_down {
                        teardown_step(&p, StepErrorKind::StepTimeout, &ran_out)
                    } else {
                        broken_step(
                            &p,
                            StepErrorKind::StepTimeout,
                            &format!("step finishes within {} ms", limit.as_millis()),
                            &ran_out,
                        )
                    };
                    return finish(&mut p, Some(step));
                }
            }
        }
    }
}

/// The step the worker was on broke before or instead of its turn.
fn broken_step(p: &Progress, kind: StepErrorKind, expected: &str, observed: &str) -> StepRun {
    entry(p.steps.len(), &p.current_label, kind, expected, observed)
}

/// The deployment failed while being dropped after its last step: an entry
/// past the trial's steps, so no step is named twice.
fn teardown_step(p: &Progress, kind: StepErrorKind, observed: &str) -> StepRun {
    entry(
        p.steps.len(),
        "teardown",
        kind,
        "the deployment is dropped cleanly and promptly",
        observed,
    )
}

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

/// The panic's location (the deployment's own file and line, which helps
/// and quotes nothing) and its message, digested (which may quote state).
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-text panic payload".to_owned());
    match super::quiet_panics::take_location() {
        Some(at) => format!("panicked at {at} with message {}", sensitive(&message)),
        None => format!("panicked with message {}", sensitive(&message)),
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
        Ok(Err(error)) => Err(Unbuilt::Unstarted(super::judge::error_text(&error, None))),
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

fn drive(
    scenario: &Scenario,
    factory: &Factory,
    trial: u32,
    progress: &Mutex<Progress>,
    settings: &TrialSettings,
) {
    let push = |kind, expected: &str, observed: &str| {
        let mut p = lock(progress);
        let step = broken_step(&p, kind, expected, observed);
        p.steps.push(step);
    };
    // The trial's model endpoint, declared before the context so it
    // outlives the deployment.
    let endpoint = match settings.replay.start(&scenario.name, trial) {
        Ok(endpoint) => endpoint,
        Err(error) => {
            return push(
                StepErrorKind::ModelEndpointFailed,
                "the trial's model endpoint starts",
                &error.to_string(),
            );
        }
    };
    // The trial's MCP fixture, likewise.
    let fixture = match super::fixture::TrialFixture::start(settings.fixture.as_deref()) {
        Ok(fixture) => fixture,
        Err(error) => {
            return push(
                StepErrorKind::ContextFailed,
                "the trial's MCP fixture starts",
                &error.to_string(),
            );
        }
    };
    let context = match TargetContext::fresh(trial) {
        Ok(context) => super::fixture::bind(fixture.as_ref(), context),
        Err(error) => {
            return push(
                StepErrorKind::ContextFailed,
                "a durable directory",
                &error.to_string(),
            );
        }
    };
    let context = match &endpoint {
        Some(endpoint) => context.with_model_url(endpoint.url()),
        None => context,
    };
    let target = match build(factory, &context) {
        Ok(target) => target,
        Err(unbuilt) => {
            let (kind, expected, observed) = unbuilt.into_step("the deployment builds");
            return push(kind, &expected, &observed);
        }
    };
    let mut session = Session::new(
        scenario,
        factory,
        context,
        target,
        progress,
        settings.oracle,
    )
    .with_endpoint(endpoint.as_ref())
    .with_fixture(fixture.as_ref());
    session.run_scenario();
    let (target, _context) = session.into_parts();
    // Marks the teardown before the deployment is dropped: the watchdog
    // then blames a slow or panicking drop on the teardown rather than on
    // the last step.
    {
        let mut p = lock(progress);
        p.tearing_down = true;
        p.started = Instant::now();
    }
    drop(target);
}
