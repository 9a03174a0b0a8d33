//! Driving one trial on a thread of its own.
//!
//! The target lives and dies on the trial's worker thread, so a target that
//! panics is caught there and a target that hangs is abandoned there: the
//! caller's thread (a test, another pack) never blocks past the step limit.
//! Per step the worker only takes an uncontended lock to say which step it
//! is on; the watchdog reads that when its own wait runs out.

use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::outcome::{StepErrorKind, StepRun, TrialRun};
use super::quiet_panics::WORKER_PREFIX;
use super::session::{EffectsProbe, Session};
use super::worker::{build, entry, lock, Factory, Progress, TRIAL_STACK};
use crate::replay::ReplayPlan;
use crate::scenario::Scenario;
use crate::target::TargetContext;

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
        unproven: None,
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
            unproven: p.unproven.take(),
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
        &scenario.steps,
        &scenario.public,
        factory,
        context,
        target,
        progress,
        settings.oracle,
    )
    .with_endpoint(endpoint.as_ref())
    .with_fixture(fixture.as_ref());
    session.run_scenario(|session| {
        if let Some(tail) = &scenario.tail {
            tail.0.run(session);
        }
    });
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
