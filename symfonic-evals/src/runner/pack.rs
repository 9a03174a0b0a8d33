//! `run_pack`: check the arguments, read what the deployment declares,
//! resolve the pack's scenarios, run every trial, judge each scenario's
//! policy, and hand the run to the report.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::isolation::{place, record, Isolation, Placement, Recorded};
use super::session::EffectsProbe;
use super::trial::TrialSettings;
use super::{probe_capabilities, run_scenarios};
use crate::packs::{NotRunReason, PackDefinition, PackResolution, ProbeNotRun};
use crate::report::{PackRun, ScenarioRun, Verdict};
use crate::target::{Target, TargetContext};

/// How a pack run should treat the edges.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Let a shared suite accept "not applicable" with a printed note
    /// instead of a failure.
    pub accept_not_applicable: bool,
    /// The adopter's oracle over the deployment's own effect store: after
    /// every step of every scenario its count must equal the ledger's
    /// applied effects.
    pub effects_probe: Option<EffectsProbe>,
    /// The pack's model endpoint: mode, cassette, volatile fields, scrub
    /// patterns, upstream (see [`crate::replay`]).
    pub replay: crate::replay::ReplayConfig,
    /// Where each trial's deployment runs: a child process (the default)
    /// or a thread of this one.
    pub isolation: Isolation,
    /// What the run is for (a reference, a twin pinned to a catch, an
    /// honest variant), recorded in its report so the overview can show a
    /// caught twin as the expected failure it is. `None` for an ordinary
    /// test.
    pub role: Option<crate::RunRole>,
}

/// Runs one pack against the deployment `factory` builds: checks the
/// arguments, reads the deployment's declared capabilities, runs every
/// scenario's trials from fresh contexts, judges each scenario's policy and
/// writes the JSON report. The pack passes when every scenario (the seed
/// scenario and each probe) meets its policy.
///
/// `SYMFONIC_EVALS_TRIALS` (and `SYMFONIC_EVALS_REQUIRED`) override the
/// trial counts of every scenario for one run.
///
/// ```
/// use symfonic_evals::{run_pack, ExtensionToolPack, PackDefinition, RunOptions, Verdict,
///     CapabilityEvidence, PromptRequest, Target, TurnError, TurnRecord};
/// struct NoExtensions;
/// impl Target for NoExtensions {
///     fn capabilities(&self) -> CapabilityEvidence { CapabilityEvidence::new().capability("tools") }
///     fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
///         Ok(TurnRecord::builder().build())
///     }
/// }
/// let pack = PackDefinition::ExtensionTool(ExtensionToolPack {
///     prompt: "what is the weather".into(),
///     tool_name: "weather".into(),
///     ..Default::default()
/// });
/// let run = run_pack("doc::no_extensions", &pack, &RunOptions::default(), |_| NoExtensions);
/// assert!(matches!(run.verdict(), Verdict::NotApplicable(_)));
/// ```
pub fn run_pack<T, F>(
    name: &str,
    definition: &PackDefinition,
    options: &RunOptions,
    factory: F,
) -> PackRun
where
    T: Target + 'static,
    F: Fn(&TargetContext) -> T + Send + Sync + 'static,
{
    let step_timeout = definition.policy().step_timeout;
    let (factory, occurrence) = match place(name, options.isolation, step_timeout, factory) {
        Placement::Build(factory, occurrence) => (factory, occurrence),
        Placement::Recorded(Some(Recorded::Pack(run))) => return *run,
        Placement::Recorded(_) => return PackRun::not_run_here(name, definition),
    };
    if crate::packs::explaining() {
        eprintln!("{name}:\n{}", definition.explain());
    }
    let began = Instant::now();
    let mut run = PackRun {
        name: name.to_owned(),
        kind: definition.kind(),
        fingerprint: definition.fingerprint(),
        verdict: Verdict::Passed,
        scenarios: Vec::new(),
        probes_not_run: Vec::new(),
        accept_not_applicable: options.accept_not_applicable,
        started: SystemTime::now(),
        duration: Duration::ZERO,
        report_path: None,
        viewer_path: None,
        elsewhere: false,
        role: options.role.clone(),
    };
    let policy = definition.policy().overridden_by_env();
    run.verdict = match (definition.check(), policy) {
        (Err(errors), _) => {
            Verdict::InvalidArguments(errors.iter().map(ToString::to_string).collect())
        }
        (Ok(()), Err(problem)) => Verdict::InvalidArguments(vec![problem]),
        (Ok(()), Ok(policy)) => {
            // One model replay session per pack run.
            let replay = Arc::new(crate::replay::ReplayPlan::open(name, &options.replay));
            let fixture = definition.fixture_tool().map(Arc::new);
            match probe_capabilities(&factory, policy.step_timeout, &replay, fixture.as_ref()) {
                Err(error) => Verdict::Unbuildable(format!(
                    "{}: {}{}",
                    error.kind.as_str(),
                    error.observed,
                    replay.failure_note()
                )),
                Ok(evidence) => match definition.resolve_checked(&evidence) {
                    PackResolution::NotApplicable(missing) => Verdict::NotApplicable(missing),
                    PackResolution::Scenarios(scenarios) => {
                        let scenarios: Vec<_> = scenarios
                            .into_iter()
                            .map(|mut s| {
                                s.policy.trials = policy.trials;
                                s.policy.required = policy.required;
                                Arc::new(s)
                            })
                            .collect();
                        let settings = TrialSettings {
                            run: name.into(),
                            oracle: options.effects_probe,
                            replay,
                            fixture,
                        };
                        let ran = run_scenarios(&scenarios, &factory, &settings);
                        // Probes that ran and proved nothing, or never
                        // started because the deployment hung.
                        let mut left_out = Vec::new();
                        for (scenario, trials) in scenarios.iter().zip(ran.trials) {
                            let reason = match (&ran.hung_in, unproven(&trials)) {
                                (Some(hung_in), _) if trials.is_empty() => {
                                    Some(NotRunReason::DeploymentHung {
                                        scenario: hung_in.clone(),
                                    })
                                }
                                (_, Some(why)) => Some(NotRunReason::NothingToJudge { why }),
                                _ => None,
                            };
                            match reason {
                                Some(reason) => left_out.push(ProbeNotRun {
                                    probe: scenario.name.clone(),
                                    reason,
                                }),
                                None => run.scenarios.push(ScenarioRun {
                                    name: scenario.name.clone(),
                                    kind: scenario.kind,
                                    trials,
                                    planned_trials: scenario.policy.trials,
                                    required: scenario.policy.required,
                                }),
                            }
                        }
                        let resolved: Vec<&str> =
                            scenarios.iter().map(|s| s.name.as_str()).collect();
                        run.probes_not_run = definition.probes_left_out(&resolved, Some(&evidence));
                        run.probes_not_run.extend(left_out);
                        if run.scenarios.iter().all(ScenarioRun::passed) {
                            Verdict::Passed
                        } else {
                            Verdict::Failed
                        }
                    }
                },
            }
        }
    };
    run.duration = began.elapsed();
    (run.report_path, run.viewer_path) = crate::report::write_report(&run);
    record(name, occurrence, Recorded::Pack(Box::new(run.clone())));
    run
}

/// Why a probe proved nothing, when every trial of it passed without its
/// own check being made ([`TrialRun::unproven`]): a failing trial, or one
/// that made the check, keeps the probe in the run.
fn unproven(trials: &[crate::TrialRun]) -> Option<String> {
    if !trials.iter().all(crate::TrialRun::passed) {
        return None;
    }
    let mut reasons = trials.iter().map(|trial| trial.unproven.clone());
    reasons.try_fold(None::<String>, |first, why| {
        why.map(|why| first.or(Some(why)))
    })?
}

#[cfg(test)]
mod tests {
    use super::unproven;
    use crate::TrialRun;

    fn trial(passed: bool, unproven: Option<&str>) -> TrialRun {
        TrialRun {
            trial: 0,
            steps: Vec::new(),
            planned_steps: 0,
            finished: passed,
            notes: Vec::new(),
            unproven: unproven.map(str::to_owned),
            duration: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn a_probe_proves_nothing_only_when_every_trial_passed_without_its_check() {
        let why = Some("the pause published no approvers");
        assert_eq!(
            unproven(&[trial(true, why), trial(true, why)]).as_deref(),
            why
        );
        // One trial that made the check, or one that failed, keeps it run.
        assert_eq!(unproven(&[trial(true, why), trial(true, None)]), None);
        assert_eq!(unproven(&[trial(false, why)]), None);
        assert_eq!(unproven(&[]), None);
    }
}
