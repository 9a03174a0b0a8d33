//! Running scenarios against a deployment: every trial isolated on a thread
//! of its own, trials of several scenarios side by side up to a limit.

mod fixture;
mod forge;
mod isolation;
mod judge;
mod outcome;
mod pack;
mod quiet_panics;
pub(crate) mod session;
mod trial;
mod turn;
mod worker;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, PoisonError};
use std::time::Duration;

pub use isolation::Isolation;
pub use outcome::{AssertionRun, FixtureCallSeen, StepError, StepErrorKind, StepRun, TrialRun};
pub use pack::{run_pack, RunOptions};
pub(crate) use quiet_panics::WORKER_PREFIX;
pub use session::{EffectsProbe, Session};
use trial::TrialSettings;
pub use trial::PROGRESS_AFTER_ENV;
use worker::{Factory, TRIAL_STACK};

use crate::capability::CapabilityEvidence;
use crate::scenario::Scenario;
use crate::target::{Target, TargetContext};

/// Boxes a typed factory so the runner deals in one type.
pub(crate) fn boxed_factory<T, F>(factory: F) -> Factory
where
    T: Target + 'static,
    F: Fn(&TargetContext) -> T + Send + Sync + 'static,
{
    Arc::new(move |context: &TargetContext| Ok(Box::new(factory(context)) as Box<dyn Target>))
}

/// Whether `error` is a served child's report that its deployment panicked
/// (trusted only from a child the harness started to serve its own binary).
pub(crate) fn served_panic(error: &crate::evidence::TurnError) -> bool {
    error.harness && error.code.as_deref() == Some(crate::process::PANICKED_CODE)
}

/// Runs every trial of `scenario`, each from a fresh context, and returns
/// their results in trial order. Trials run side by side up to the policy's
/// concurrency and stop early once the policy can no longer be met.
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
/// let scenario = Scenario::new(
///     "echo",
///     vec![Step::prompt("hello", "hello there", "c")
///         .asserting([Assertion::ResponseContains(vec!["there".into()])])],
///     TrialPolicy::all_of(2),
/// );
/// let trials = run_scenario(&scenario, |_ctx| Echo);
/// assert!(trials.iter().all(|t| t.passed()));
/// ```
pub fn run_scenario<T, F>(scenario: &Scenario, factory: F) -> Vec<TrialRun>
where
    T: Target + 'static,
    F: Fn(&TargetContext) -> T + Send + Sync + 'static,
{
    run_scenario_with(scenario, Isolation::Thread, factory)
}

/// [`run_scenario`], with the deployment placed as `isolation` says: in a
/// child process (each restart real, crashes injectable; the child finds its
/// run by the scenario's name), or on a thread.
pub fn run_scenario_with<T, F>(
    scenario: &Scenario,
    isolation: Isolation,
    factory: F,
) -> Vec<TrialRun>
where
    T: Target + 'static,
    F: Fn(&TargetContext) -> T + Send + Sync + 'static,
{
    let timeout = scenario.policy.step_timeout;
    let (factory, occurrence) = match isolation::place(&scenario.name, isolation, timeout, factory)
    {
        isolation::Placement::Build(factory, occurrence) => (factory, occurrence),
        isolation::Placement::Recorded(Some(isolation::Recorded::Trials(trials))) => return trials,
        isolation::Placement::Recorded(_) => return Vec::new(),
    };
    let scenarios = [Arc::new(scenario.clone())];
    let settings = TrialSettings {
        run: scenario.name.as_str().into(),
        ..TrialSettings::default()
    };
    let trials = run_scenarios(&scenarios, &factory, &settings)
        .trials
        .pop()
        .unwrap_or_default();
    isolation::record(
        &scenario.name,
        occurrence,
        isolation::Recorded::Trials(trials.clone()),
    );
    trials
}

/// What [`run_scenarios`] ran.
pub(crate) struct ScenariosRun {
    /// Per scenario, its trials in trial order (none for a scenario that
    /// was not started).
    pub(crate) trials: Vec<Vec<TrialRun>>,
    /// The first scenario (in the run's order) in which the deployment hung;
    /// no trial was started after the hang was seen.
    pub(crate) hung_in: Option<String>,
}

/// Runs the trials of every scenario, scenarios in order and each trial from
/// a fresh context, on a pool of workers as wide as the first scenario's
/// policy allows. A scenario stops starting trials once its policy can no
/// longer be met; trials already running finish. Once a trial hangs (a step
/// runs out of time) no trial of any scenario starts: each would wait out
/// the step limit again on the same deployment. Results come back per
/// scenario, in trial order.
pub(crate) fn run_scenarios(
    scenarios: &[Arc<Scenario>],
    factory: &Factory,
    settings: &TrialSettings,
) -> ScenariosRun {
    let work: Vec<(usize, u32)> = scenarios
        .iter()
        .enumerate()
        .flat_map(|(s, scenario)| (0..scenario.policy.trials).map(move |t| (s, t)))
        .collect();
    let workers = scenarios
        .iter()
        .map(|s| s.policy.workers())
        .max()
        .unwrap_or(1)
        .min(work.len().max(1));
    let next = AtomicUsize::new(0);
    let hung: Mutex<Option<usize>> = Mutex::new(None);
    let failures: Vec<AtomicUsize> = scenarios.iter().map(|_| AtomicUsize::new(0)).collect();
    let results: Mutex<Vec<Vec<Option<TrialRun>>>> = Mutex::new(
        scenarios
            .iter()
            .map(|s| vec![None; s.policy.trials as usize])
            .collect(),
    );
    let worker = || loop {
        let Some(&(s, t)) = work.get(next.fetch_add(1, Ordering::Relaxed)) else {
            return;
        };
        let policy = scenarios[s].policy;
        let failed = failures[s].load(Ordering::Relaxed) as u32;
        let stopped = hung
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        if stopped || policy.trials - failed < policy.required {
            continue;
        }
        let run = trial::run_trial(&scenarios[s], factory, t, settings);
        if !run.passed() {
            failures[s].fetch_add(1, Ordering::Relaxed);
        }
        if run.hung() {
            let mut first = hung.lock().unwrap_or_else(PoisonError::into_inner);
            *first = Some(first.map_or(s, |earlier| earlier.min(s)));
        }
        results.lock().unwrap_or_else(PoisonError::into_inner)[s][t as usize] = Some(run);
    };
    if workers <= 1 {
        worker();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(worker);
            }
        });
    }
    let trials = results
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .into_iter()
        .zip(scenarios)
        .map(|(trials, scenario)| in_order_until_lost(trials, scenario.policy))
        .collect();
    let hung_in = hung
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .map(|s| scenarios[s].name.clone());
    ScenariosRun { trials, hung_in }
}

/// The trials as a serial run would have kept them: in trial order, up to
/// and including the one after which the policy could no longer be met.
/// Workers side by side may have started a trial or two past that point;
/// dropping them makes the report the same however the trials interleaved.
fn in_order_until_lost(trials: Vec<Option<TrialRun>>, policy: crate::TrialPolicy) -> Vec<TrialRun> {
    let mut kept = Vec::with_capacity(trials.len());
    let mut failures = 0;
    for trial in trials.into_iter().flatten() {
        failures += u32::from(!trial.passed());
        kept.push(trial);
        if policy.trials - failures < policy.required {
            break;
        }
    }
    kept
}

const EXPECTED_TO_BUILD: &str = "the deployment builds and declares its capabilities";

/// Builds the deployment once on a fresh context to read what it declares.
/// A constructor that panics or hangs is reported, not propagated; a
/// deployment whose drop hangs has still declared its capabilities, so the
/// hang is left to the trials' teardown to report.
pub(crate) fn probe_capabilities(
    factory: &Factory,
    limit: Duration,
    replay: &Arc<crate::replay::ReplayPlan>,
    fixture: Option<&Arc<crate::mcp::FixtureTool>>,
) -> Result<CapabilityEvidence, StepError> {
    quiet_panics::install();
    let (tx, rx) = mpsc::sync_channel(1);
    let factory = factory.clone();
    let replay = Arc::clone(replay);
    let fixture = fixture.cloned();
    let spawned = std::thread::Builder::new()
        .name(format!("{}probe", WORKER_PREFIX))
        .stack_size(TRIAL_STACK)
        .spawn(move || {
            // The probe gets an endpoint of its own scope, so a deployment
            // whose SDK client needs a base URL and key at construction
            // builds here as in a trial.
            let endpoint = replay
                .start(crate::replay::PROBE_SCENARIO, 0)
                .ok()
                .flatten();
            // And a fixture of its own, so a deployment that binds its
            // extension tools at construction builds, and declares that
            // it does.
            let fixture = fixture::TrialFixture::start(fixture.as_deref())
                .ok()
                .flatten();
            let context = match TargetContext::fresh(u32::MAX) {
                Ok(context) => fixture::bind(
                    fixture.as_ref(),
                    match &endpoint {
                        Some(endpoint) => context.with_model_url(endpoint.url()),
                        None => context,
                    },
                ),
                Err(error) => {
                    let step = (
                        StepErrorKind::ContextFailed,
                        String::new(),
                        error.to_string(),
                    );
                    let _ = tx.send(Err(step));
                    return;
                }
            };
            let built = worker::build(&factory, &context).and_then(|target| {
                catch_unwind(AssertUnwindSafe(|| target.capabilities()))
                    .map(|evidence| (evidence, target))
                    .map_err(|payload| {
                        worker::Unbuilt::Panicked(quiet_panics::panic_text(&*payload))
                    })
            });
            match built {
                Ok((evidence, target)) => {
                    let _ = tx.send(Ok(evidence));
                    drop(target);
                }
                Err(unbuilt) => {
                    let _ = tx.send(Err(unbuilt.into_step(EXPECTED_TO_BUILD)));
                }
            }
        });
    let probe_error = |kind, observed: String| StepError {
        kind,
        expected: EXPECTED_TO_BUILD.into(),
        observed,
        exception: None,
    };
    if let Err(error) = spawned {
        return Err(probe_error(StepErrorKind::ContextFailed, error.to_string()));
    }
    match rx.recv_timeout(limit) {
        Ok(Ok(evidence)) => Ok(evidence),
        Ok(Err((kind, _, observed))) => Err(probe_error(kind, observed)),
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
