//! Running scenarios against a deployment, one isolated trial at a time.

mod judge;
mod outcome;
mod quiet_panics;
mod trial;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc};
use std::time::Duration;

pub use outcome::{AssertionRun, StepError, StepErrorKind, StepRun, TrialRun};
pub(crate) use trial::{Factory, WORKER_PREFIX};

use crate::capability::CapabilityEvidence;
use crate::scenario::Scenario;
use crate::target::{Target, TargetContext};

/// Boxes a typed factory so the runner deals in one type.
pub(crate) fn boxed_factory<T, F>(factory: F) -> Factory
where
    T: Target + 'static,
    F: Fn(&TargetContext) -> T + Send + Sync + 'static,
{
    Arc::new(move |context: &TargetContext| Box::new(factory(context)) as Box<dyn Target>)
}

/// Runs every trial of `scenario`, each from a fresh context, and returns
/// their results. Trials stop early once the policy can no longer be met.
///
/// ```
/// use symfonic_evals::{run_scenario, Assertion, CapabilityEvidence, PromptRequest, Scenario,
///     Step, Target, TrialPolicy, TurnError, TurnRecord};
/// struct Echo;
/// impl Target for Echo {
///     fn capabilities(&self) -> CapabilityEvidence { CapabilityEvidence::new() }
///     fn run_turn(&mut self, r: &PromptRequest) -> Result<TurnRecord, TurnError> {
///         Ok(TurnRecord::builder().answer(r.prompt.clone()).build())
///     }
/// }
/// let scenario = Scenario {
///     name: "echo".into(),
///     steps: vec![Step::prompt("hello", "hello there", "c")
///         .asserting([Assertion::ResponseContains(vec!["there".into()])])],
///     policy: TrialPolicy::all_of(2),
/// };
/// let trials = run_scenario(&scenario, |_ctx| Echo);
/// assert!(trials.iter().all(|t| t.passed()));
/// ```
pub fn run_scenario<T, F>(scenario: &Scenario, factory: F) -> Vec<TrialRun>
where
    T: Target + 'static,
    F: Fn(&TargetContext) -> T + Send + Sync + 'static,
{
    let no_replay = Arc::new(crate::replay::ReplayPlan::none());
    run_boxed(
        &Arc::new(scenario.clone()),
        &boxed_factory(factory),
        &no_replay,
    )
}

pub(crate) fn run_boxed(
    scenario: &Arc<Scenario>,
    factory: &Factory,
    replay: &Arc<crate::replay::ReplayPlan>,
) -> Vec<TrialRun> {
    let policy = scenario.policy;
    let mut trials = Vec::with_capacity(policy.trials as usize);
    let mut failures = 0;
    for trial in 0..policy.trials {
        let run = trial::run_trial(scenario, factory, trial, replay);
        failures += u32::from(!run.passed());
        trials.push(run);
        if policy.trials - failures < policy.required {
            break;
        }
    }
    trials
}

/// Builds the deployment once on a fresh context to read what it declares.
/// A constructor that panics or hangs is reported, not propagated.
pub(crate) fn probe_capabilities(
    factory: &Factory,
    limit: Duration,
    replay: &Arc<crate::replay::ReplayPlan>,
) -> Result<CapabilityEvidence, StepError> {
    quiet_panics::install();
    let (tx, rx) = mpsc::sync_channel(1);
    let factory = factory.clone();
    let replay = Arc::clone(replay);
    let spawned = std::thread::Builder::new()
        .name(format!("{}probe", trial::WORKER_PREFIX))
        .spawn(move || {
            // Model replay (issue 14): the probe gets an endpoint of its own
            // scope, so a deployment whose SDK client needs a base URL and
            // key at construction builds here as in a trial.
            let endpoint = replay
                .start(crate::replay::PROBE_SCENARIO, 0)
                .ok()
                .flatten();
            let result = TargetContext::fresh(u32::MAX)
                .map(|context| match &endpoint {
                    Some(endpoint) => context.with_model_url(endpoint.url()),
                    None => context,
                })
                .map_err(|e| e.to_string())
                .and_then(|context| {
                    catch_unwind(AssertUnwindSafe(|| factory(&context).capabilities()))
                        .map_err(|payload| trial::panic_text(&*payload))
                });
            let _ = tx.send(result);
        });
    let probe_error = |kind, observed: String| StepError {
        kind,
        expected: "the deployment builds and declares its capabilities".into(),
        observed,
    };
    if let Err(error) = spawned {
        return Err(probe_error(StepErrorKind::ContextFailed, error.to_string()));
    }
    match rx.recv_timeout(limit) {
        Ok(Ok(evidence)) => Ok(evidence),
        Ok(Err(why)) => Err(probe_error(
            StepErrorKind::TargetPanicked,
            format!("constructor {why}"),
        )),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(probe_error(
            StepErrorKind::StepTimeout,
            format!("no answer within {} ms", limit.as_millis()),
        )),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(probe_error(
            StepErrorKind::TargetPanicked,
            "the probe thread died".into(),
        )),
    }
}
