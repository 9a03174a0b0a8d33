//! `run_pack`: resolve, run every trial, judge against the policy.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::capability::Missing;
use crate::packs::{PackDefinition, PackKind, PackResolution};
use crate::runner::{boxed_factory, probe_capabilities, run_boxed, TrialRun};
use crate::target::{Target, TargetContext};

/// How a pack run should treat the edges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Let a shared suite accept "not applicable" with a printed note
    /// instead of a failure.
    pub accept_not_applicable: bool,
    /// The pack's model endpoint: mode, cassette, volatile fields, scrub
    /// patterns, upstream (see [`crate::replay`]).
    pub replay: crate::replay::ReplayConfig,
}

/// The pack's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Verdict {
    /// Enough trials passed.
    Passed,
    /// Too few trials passed.
    Failed,
    /// The deployment lacks what the pack needs.
    NotApplicable(Vec<Missing>),
    /// The pack's arguments cannot make a meaningful scenario.
    InvalidArguments(Vec<String>),
    /// The deployment could not even be built to declare its capabilities.
    Unbuildable(String),
}

/// The first thing that went wrong, for tests that assert a broken
/// deployment fails for the right reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// Zero-based trial.
    pub trial: u32,
    /// Zero-based step.
    pub step: usize,
    /// The step's label ("blocked", "replay", ...).
    pub step_label: String,
    /// The assertion kind or step error kind ("SideEffectCount", "ExpectedError", ...).
    pub assertion: String,
    /// The assertion with its parameters.
    pub description: String,
    /// What was required.
    pub expected: String,
    /// What the evidence showed (digests for turn content).
    pub observed: String,
}

/// Everything one pack run produced.
#[derive(Debug, Clone, Serialize)]
pub struct PackRun {
    pub(crate) name: String,
    pub(crate) kind: PackKind,
    pub(crate) scenario: Option<String>,
    pub(crate) verdict: Verdict,
    pub(crate) trials: Vec<TrialRun>,
    pub(crate) required: u32,
    pub(crate) planned_trials: u32,
    #[serde(skip)]
    pub(crate) accept_not_applicable: bool,
    #[serde(skip)]
    pub(crate) report_path: Option<PathBuf>,
}

impl PackRun {
    /// The name the run was given (usually the annotated function's path).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Which pack ran.
    pub fn kind(&self) -> PackKind {
        self.kind
    }

    /// The verdict.
    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }

    /// Whether the verdict is a pass.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Passed
    }

    /// Every trial that ran.
    pub fn trials(&self) -> &[TrialRun] {
        &self.trials
    }

    /// Where the JSON report was written, if it could be.
    pub fn report_path(&self) -> Option<&Path> {
        self.report_path.as_deref()
    }

    /// The first failed assertion or broken step, across trials in order.
    pub fn first_failure(&self) -> Option<Failure> {
        self.failures().into_iter().next()
    }

    /// Every failed assertion and broken step, in order.
    pub fn failures(&self) -> Vec<Failure> {
        let mut out = Vec::new();
        for trial in &self.trials {
            for step in &trial.steps {
                let failure = |assertion: &str,
                               description: String,
                               expected: &str,
                               observed: &str| Failure {
                    trial: trial.trial,
                    step: step.index,
                    step_label: step.label.clone(),
                    assertion: assertion.to_owned(),
                    description,
                    expected: expected.to_owned(),
                    observed: observed.to_owned(),
                };
                for a in step.assertions.iter().filter(|a| !a.passed) {
                    out.push(failure(
                        a.kind,
                        a.description.clone(),
                        &a.expected,
                        &a.observed,
                    ));
                }
                if let Some(e) = &step.error {
                    out.push(failure(
                        e.kind.as_str(),
                        e.kind.as_str().to_owned(),
                        &e.expected,
                        &e.observed,
                    ));
                }
            }
        }
        out
    }

    /// Panics with a readable account unless the pack passed (or was not
    /// applicable and the run accepts that, in which case a note is printed).
    ///
    /// # Panics
    ///
    /// On any verdict but a pass.
    pub fn assert_passed(&self) {
        match &self.verdict {
            Verdict::Passed => {}
            Verdict::NotApplicable(_) if self.accept_not_applicable => {
                eprintln!("{}", self.render());
            }
            _ => panic!("{}", self.render()),
        }
    }
}

/// Runs one pack against the deployment `factory` builds: checks the
/// arguments, reads the deployment's declared capabilities, runs every trial
/// from a fresh context, judges the policy and writes the JSON report.
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
    let kind = definition.kind();
    let policy = definition.policy();
    let mut run = PackRun {
        name: name.to_owned(),
        kind,
        scenario: None,
        verdict: Verdict::Passed,
        trials: Vec::new(),
        required: policy.required,
        planned_trials: policy.trials,
        accept_not_applicable: options.accept_not_applicable,
        report_path: None,
    };
    run.verdict = match definition.check() {
        Err(errors) => Verdict::InvalidArguments(errors.iter().map(ToString::to_string).collect()),
        Ok(()) => {
            let factory = boxed_factory(factory);
            // Model replay (issue 14): one session per pack run.
            let replay = Arc::new(crate::replay::ReplayPlan::open(name, &options.replay));
            match probe_capabilities(&factory, policy.step_timeout, &replay) {
                Err(error) => Verdict::Unbuildable(format!(
                    "{}: {}{}",
                    error.kind.as_str(),
                    error.observed,
                    replay.failure_note()
                )),
                Ok(evidence) => match definition.resolve_checked(&evidence) {
                    PackResolution::NotApplicable(missing) => Verdict::NotApplicable(missing),
                    PackResolution::Scenario(scenario) => {
                        run.scenario = Some(scenario.name.clone());
                        run.trials = run_boxed(&Arc::new(scenario), &factory, &replay);
                        let passes = run.trials.iter().filter(|t| t.passed()).count();
                        if passes >= policy.required as usize {
                            Verdict::Passed
                        } else {
                            Verdict::Failed
                        }
                    }
                },
            }
        }
    };
    run.report_path = super::write::write_report(&run);
    run
}
