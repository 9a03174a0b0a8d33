//! Driving one trial on a thread of its own.
//!
//! The target lives and dies on the trial's worker thread, so a target that
//! panics is caught there and a target that hangs is abandoned there: the
//! caller's thread (a test, another pack) never blocks past the step limit.
//! Per step the worker only takes an uncontended lock to say which step it
//! is on; the watchdog reads that when its own wait runs out.

use std::any::Any;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::judge::judge_step;
use super::outcome::{StepError, StepErrorKind, StepRun, TrialRun};
use crate::evidence::{Operation, PromptRequest, ResumeRequest, TurnError, TurnRecord};
use crate::redact::{sensitive, short_digest};
use crate::replay::ReplayPlan;
use crate::scenario::{Scenario, StepInput};
use crate::target::{Target, TargetContext};

/// Builds a boxed target from the trial's context.
pub(crate) type Factory = Arc<dyn Fn(&TargetContext) -> Box<dyn Target> + Send + Sync>;

/// Thread names carry this prefix so the panic hook can keep them quiet.
pub(crate) const WORKER_PREFIX: &str = "symfonic-evals-trial-";

struct Progress {
    current: usize,
    started: Instant,
    steps: Vec<StepRun>,
    /// Every step is judged and the deployment is being dropped.
    tearing_down: bool,
    /// The watchdog gave up on this trial: the worker must not start
    /// another step (it would act after the verdict, beside the next trial).
    abandoned: bool,
}

/// Runs trial `trial` of `scenario` and waits for it, at most one step limit
/// per step.
pub(crate) fn run_trial(
    scenario: &Arc<Scenario>,
    factory: &Factory,
    trial: u32,
    replay: &Arc<ReplayPlan>,
) -> TrialRun {
    super::quiet_panics::install();
    let progress = Arc::new(Mutex::new(Progress {
        current: 0,
        started: Instant::now(),
        steps: Vec::with_capacity(scenario.steps.len()),
        tearing_down: false,
        abandoned: false,
    }));
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(1);
    let spawned = {
        let (scenario, factory, progress) = (scenario.clone(), factory.clone(), progress.clone());
        let replay = Arc::clone(replay);
        std::thread::Builder::new()
            .name(format!("{WORKER_PREFIX}{trial}"))
            .spawn(move || {
                drive(&scenario, &factory, trial, &progress, &replay);
                let _ = done_tx.send(());
            })
    };
    let planned_steps = scenario.steps.len();
    if let Err(error) = spawned {
        let step = broken_step(
            scenario,
            0,
            StepErrorKind::ContextFailed,
            "a trial thread",
            &error.to_string(),
        );
        return TrialRun {
            trial,
            steps: vec![step],
            planned_steps,
        };
    }
    let limit = scenario.policy.step_timeout;
    loop {
        let wait = {
            let p = lock(&progress);
            limit.saturating_sub(p.started.elapsed())
        };
        match done_rx.recv_timeout(wait.max(Duration::from_millis(1))) {
            Ok(()) => break,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Turns and constructors are caught; what is left is the
                // deployment panicking while it is dropped.
                let mut p = lock(&progress);
                let step = if p.tearing_down {
                    teardown_step(
                        scenario,
                        StepErrorKind::TargetPanicked,
                        "the deployment panicked while being dropped",
                    )
                } else {
                    broken_step(
                        scenario,
                        p.current,
                        StepErrorKind::TargetPanicked,
                        "the step to finish",
                        "the trial thread died (the deployment panicked while being dropped)",
                    )
                };
                p.steps.push(step);
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let mut p = lock(&progress);
                if p.started.elapsed() >= limit {
                    p.abandoned = true;
                    let ran_out = format!(
                        "still running after {} ms; trial abandoned",
                        limit.as_millis()
                    );
                    let step = if p.tearing_down {
                        teardown_step(scenario, StepErrorKind::StepTimeout, &ran_out)
                    } else {
                        broken_step(
                            scenario,
                            p.current,
                            StepErrorKind::StepTimeout,
                            &format!("step finishes within {} ms", limit.as_millis()),
                            &ran_out,
                        )
                    };
                    let mut steps = std::mem::take(&mut p.steps);
                    steps.push(step);
                    return TrialRun {
                        trial,
                        steps,
                        planned_steps,
                    };
                }
            }
        }
    }
    let steps = std::mem::take(&mut lock(&progress).steps);
    TrialRun {
        trial,
        steps,
        planned_steps,
    }
}

fn lock(progress: &Mutex<Progress>) -> std::sync::MutexGuard<'_, Progress> {
    progress.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A step that broke before or instead of its turn.
fn broken_step(
    scenario: &Scenario,
    index: usize,
    kind: StepErrorKind,
    expected: &str,
    observed: &str,
) -> StepRun {
    let step = scenario.steps.get(index);
    StepRun {
        index,
        label: step.map_or_else(|| "setup".to_owned(), |s| s.label.clone()),
        operation: step.map_or(Operation::Prompt, |s| operation_of(&s.input)),
        input_digest: step.map_or_else(String::new, |s| input_digest(&s.input)),
        restarted: step.is_some_and(|s| s.restart_before),
        assertions: Vec::new(),
        error: Some(StepError {
            kind,
            expected: expected.to_owned(),
            observed: observed.to_owned(),
        }),
        duration: Duration::ZERO,
    }
}

/// The deployment failed while being dropped after its last step: an entry
/// past the scenario's steps, so no step is named twice.
fn teardown_step(scenario: &Scenario, kind: StepErrorKind, observed: &str) -> StepRun {
    StepRun {
        index: scenario.steps.len(),
        label: "teardown".to_owned(),
        operation: Operation::Prompt,
        input_digest: String::new(),
        restarted: false,
        assertions: Vec::new(),
        error: Some(StepError {
            kind,
            expected: "the deployment is dropped cleanly and promptly".to_owned(),
            observed: observed.to_owned(),
        }),
        duration: Duration::ZERO,
    }
}

/// Marks the teardown when dropped. Declared after the target, so it drops
/// first: the watchdog then blames a slow or panicking drop on the teardown
/// rather than on the last step.
struct TeardownMark<'a>(&'a Mutex<Progress>);

impl Drop for TeardownMark<'_> {
    fn drop(&mut self) {
        // Unwinding out of a step (a restart's drop panicked) is that step's
        // failure, not the teardown's.
        if std::thread::panicking() {
            return;
        }
        let mut p = lock(self.0);
        p.tearing_down = true;
        p.started = Instant::now();
    }
}

pub(crate) fn operation_of(input: &StepInput) -> Operation {
    match input {
        StepInput::Prompt(_) => Operation::Prompt,
        StepInput::Resume { .. } => Operation::Resume,
    }
}

pub(crate) fn input_digest(input: &StepInput) -> String {
    match input {
        StepInput::Prompt(text) => short_digest(text.as_bytes()),
        StepInput::Resume { answer } => short_digest(answer.to_string().as_bytes()),
    }
}

/// The panic payload's message, digested.
pub(crate) fn panic_text(payload: &(dyn Any + Send)) -> String {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-text panic payload".to_owned());
    format!("panicked with message {}", sensitive(&message))
}

fn build(factory: &Factory, context: &TargetContext) -> Result<Box<dyn Target>, String> {
    catch_unwind(AssertUnwindSafe(|| factory(context))).map_err(|payload| panic_text(&*payload))
}

fn drive(
    scenario: &Scenario,
    factory: &Factory,
    trial: u32,
    progress: &Mutex<Progress>,
    replay: &ReplayPlan,
) {
    let push = |step: StepRun| lock(progress).steps.push(step);
    // Model replay (issue 14): the trial's endpoint, declared before the
    // context so it outlives the deployment.
    let endpoint = match replay.start(&scenario.name, trial) {
        Ok(endpoint) => endpoint,
        Err(error) => {
            return push(broken_step(
                scenario,
                0,
                StepErrorKind::ModelEndpointFailed,
                "the trial's model endpoint starts",
                &error.to_string(),
            ));
        }
    };
    let context = match TargetContext::fresh(trial) {
        Ok(context) => context,
        Err(error) => {
            return push(broken_step(
                scenario,
                0,
                StepErrorKind::ContextFailed,
                "a durable directory",
                &error.to_string(),
            ));
        }
    };
    let context = match &endpoint {
        Some(endpoint) => context.with_model_url(endpoint.url()),
        None => context,
    };
    let mut target = match build(factory, &context) {
        Ok(target) => target,
        Err(why) => {
            return push(broken_step(
                scenario,
                0,
                StepErrorKind::TargetPanicked,
                "the deployment builds",
                &format!("constructor {why}"),
            ));
        }
    };
    let _teardown = TeardownMark(progress);
    let mut tokens: HashMap<&str, String> = HashMap::new();
    for (index, step) in scenario.steps.iter().enumerate() {
        {
            let mut p = lock(progress);
            if p.abandoned {
                return;
            }
            p.current = index;
            p.started = Instant::now();
        }
        if let Some(endpoint) = &endpoint {
            endpoint.set_step(Some(&step.label));
        }
        if step.restart_before {
            drop(target);
            target = match build(factory, &context) {
                Ok(target) => target,
                Err(why) => {
                    return push(broken_step(
                        scenario,
                        index,
                        StepErrorKind::TargetPanicked,
                        "the deployment rebuilds after the restart",
                        &format!("constructor {why}"),
                    ));
                }
            };
        }
        let started = Instant::now();
        let result: Result<Result<TurnRecord, TurnError>, String> = match &step.input {
            StepInput::Prompt(prompt) => {
                let request = PromptRequest {
                    conversation: step.conversation.clone(),
                    prompt: prompt.clone(),
                    state: step.state.clone(),
                };
                catch_unwind(AssertUnwindSafe(|| target.run_turn(&request)))
                    .map_err(|payload| panic_text(&*payload))
            }
            StepInput::Resume { answer } => match tokens.get(step.conversation.as_str()) {
                None => {
                    return push(broken_step(
                        scenario,
                        index,
                        StepErrorKind::NoPauseToResume,
                        "a pause retained in this conversation",
                        "no earlier step paused",
                    ));
                }
                Some(token) => {
                    let request = ResumeRequest {
                        conversation: step.conversation.clone(),
                        token: token.clone(),
                        answer: answer.clone(),
                    };
                    catch_unwind(AssertUnwindSafe(|| target.resume(&request)))
                        .map_err(|payload| panic_text(&*payload))
                }
            },
        };
        let duration = started.elapsed();
        if let Ok(Ok(record)) = &result {
            if let Some(pause) = record.pause() {
                tokens.insert(step.conversation.as_str(), pause.token.clone());
            }
        }
        let mut run = judge_step(index, step, result, context.ledger().counts(), duration);
        // Model replay: a step whose model requests went unanswered fails
        // with the endpoint's named error, not with what followed from it.
        if let Some(error) = crate::replay::step_failure(endpoint.as_ref()) {
            run.assertions.clear();
            run.error = Some(error);
        }
        let ends = run.error.as_ref().is_some_and(|e| e.kind.ends_trial());
        push(run);
        if ends {
            return;
        }
    }
}
