//! The pipeline: order and declarations checked when it is built, each
//! stage contained by its own failure mode when it runs, and a trace of every
//! answer.

use std::any::Any;
use std::collections::BTreeSet;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::StageOutcome;

use super::rulebook::{FailureMode, Phase, PipelineError, RuleBook};
use super::stage::{GovernanceStage, Judgement, Subject};
use super::trace::{GovernanceTrace, TraceEntry};

/// Governance stages run in rulebook order, with their answers traced.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::{
///     ApprovedProcedure, BudgetCeiling, CredentialScrubber, GovernancePipeline, GovernanceStage,
///     Phase, ProceduralPrecondition, RuleBook, Subject, CREDENTIAL_SCRUB_STAGE, PRECONDITION_STAGE,
/// };
///
/// let only_us = ApprovedProcedure::new(
///     "issue_refund",
///     json!([{"state": {"path": "region", "op": "eq", "value": "US"}}]),
///     "verify the account region",
/// );
/// let only_us_identity = only_us.identity();
/// let stages: Vec<Box<dyn GovernanceStage>> = vec![
///     Box::new(CredentialScrubber::new()),
///     Box::new(BudgetCeiling::new(5)),
///     Box::new(ProceduralPrecondition::new(vec![only_us])),
/// ];
/// let pipeline = GovernancePipeline::new(stages, RuleBook::canonical()).unwrap();
///
/// // The tool-call rung, with the scrubber carried in front of it.
/// let gate = pipeline.for_phase(Phase::ToolCall, &[CREDENTIAL_SCRUB_STAGE]).unwrap().unwrap();
/// assert_eq!(gate.stage_names(), ["credential_scrub", "budget_ceiling", "procedural_precondition"]);
///
/// let mut eu = Subject::tool_call("issue_refund", json!({"order": 5})).with_state(json!({"region": "EU"}));
/// let trace = gate.run(&mut eu);
/// assert_eq!(trace.blocked_by(), Some(PRECONDITION_STAGE));
/// assert_eq!(eu.consulted, [only_us_identity]);
/// ```
#[derive(Clone)]
pub struct GovernancePipeline {
    stages: Vec<Arc<dyn GovernanceStage>>,
    rulebook: Arc<RuleBook>,
    observed: BTreeSet<String>,
}

impl GovernancePipeline {
    /// Builds a pipeline, refusing an empty one, an unknown or repeated
    /// stage, an order the rulebook contradicts, and a stage whose declared
    /// phase or failure mode differs from its rule.
    pub fn new<I>(stages: I, rulebook: RuleBook) -> Result<Self, PipelineError>
    where
        I: IntoIterator<Item = Box<dyn GovernanceStage>>,
    {
        let stages = stages.into_iter().map(Arc::from).collect();
        Self::assemble(stages, Arc::new(rulebook), BTreeSet::new())
    }

    fn assemble(
        stages: Vec<Arc<dyn GovernanceStage>>,
        rulebook: Arc<RuleBook>,
        observed: BTreeSet<String>,
    ) -> Result<Self, PipelineError> {
        if stages.is_empty() {
            return Err(PipelineError::Empty);
        }
        rulebook.validate(stages.iter().map(|stage| stage.name()))?;
        for stage in &stages {
            let name = stage.name();
            let rule = rulebook
                .rule_for(name)
                .ok_or_else(|| PipelineError::UnknownStage { stage: name.into() })?;
            if stage.phase() != rule.phase {
                return Err(PipelineError::PhaseMismatch {
                    stage: name.into(),
                    declared: stage.phase(),
                    rule: rule.phase,
                });
            }
            if stage.failure_mode() != rule.failure_mode {
                return Err(PipelineError::FailureModeMismatch {
                    stage: name.into(),
                    declared: stage.failure_mode(),
                    rule: rule.failure_mode,
                });
            }
        }
        let observed = observed
            .into_iter()
            .filter(|name| stages.iter().any(|stage| stage.name() == name))
            .collect();
        Ok(Self {
            stages,
            rulebook,
            observed,
        })
    }

    /// Puts `stage` in observe mode: its rejections are recorded as
    /// downgraded and the subject admitted. Breakage is still contained by
    /// the stage's failure mode.
    pub fn observing(mut self, stage: &str) -> Result<Self, PipelineError> {
        if !self.stages.iter().any(|s| s.name() == stage) {
            return Err(PipelineError::NotInPipeline {
                stage: stage.into(),
            });
        }
        self.observed.insert(stage.to_owned());
        Ok(self)
    }

    /// Puts every stage in observe mode.
    #[must_use]
    pub fn observing_all(mut self) -> Self {
        self.observed = self.stages.iter().map(|s| s.name().to_owned()).collect();
        self
    }

    /// Whether `stage` runs in observe mode.
    pub fn is_observed(&self, stage: &str) -> bool {
        self.observed.contains(stage)
    }

    /// The stages' names, in the order they run.
    pub fn stage_names(&self) -> Vec<&str> {
        self.stages.iter().map(|stage| stage.name()).collect()
    }

    /// The rulebook the pipeline was checked against.
    pub fn rulebook(&self) -> &RuleBook {
        &self.rulebook
    }

    /// The stages of rung `phase`, led by the stages named in `carry` (which
    /// run on every rung, keeping their rulebook rank), or `None` when no
    /// stage would run: a rung with nothing to run mounts nothing rather than
    /// an empty pipeline that looks like one that found nothing. A stage is
    /// never added twice; a carried stage ranked after a stage of the rung is
    /// refused like any other misordering.
    pub fn for_phase(&self, phase: Phase, carry: &[&str]) -> Result<Option<Self>, PipelineError> {
        self.check_known(carry)?;
        let in_phase = |stage: &Arc<dyn GovernanceStage>| {
            self.rulebook
                .rule_for(stage.name())
                .is_some_and(|rule| rule.phase == phase)
        };
        let carried = self
            .stages
            .iter()
            .filter(|stage| carry.contains(&stage.name()) && !in_phase(stage));
        let selected = self.stages.iter().filter(|stage| in_phase(stage));
        let stages: Vec<_> = carried.chain(selected).cloned().collect();
        self.derive(stages)
    }

    /// The stages named in `names`, in canonical order whatever the order of
    /// `names`, or `None` when none of them is in this pipeline. A name the
    /// rulebook does not know is refused.
    pub fn select(&self, names: &[&str]) -> Result<Option<Self>, PipelineError> {
        self.check_known(names)?;
        let stages = self
            .stages
            .iter()
            .filter(|stage| names.contains(&stage.name()))
            .cloned()
            .collect();
        self.derive(stages)
    }

    fn check_known(&self, names: &[&str]) -> Result<(), PipelineError> {
        match names
            .iter()
            .find(|name| self.rulebook.rule_for(name).is_none())
        {
            Some(name) => Err(PipelineError::UnknownStage {
                stage: (*name).to_owned(),
            }),
            None => Ok(()),
        }
    }

    fn derive(&self, stages: Vec<Arc<dyn GovernanceStage>>) -> Result<Option<Self>, PipelineError> {
        if stages.is_empty() {
            return Ok(None);
        }
        Self::assemble(stages, Arc::clone(&self.rulebook), self.observed.clone()).map(Some)
    }

    /// Runs every stage on `subject` in order, stopping at the first that
    /// blocks. A stage that errors or panics is recorded as broken and
    /// contained by its declared failure mode: fail-closed blocks, fail-open
    /// admits. In observe mode a rejection is recorded as downgraded and the
    /// run continues.
    pub fn run(&self, subject: &mut Subject) -> GovernanceTrace {
        let mut trace = GovernanceTrace::default();
        for stage in &self.stages {
            let name = stage.name();
            let answer = catch_unwind(AssertUnwindSafe(|| stage.judge(subject)));
            let (entry, blocks) = match answer {
                Ok(Ok(verdict)) => {
                    let (outcome, blocks) = match verdict.judgement {
                        Judgement::Pass => (StageOutcome::Passed, false),
                        Judgement::Abstain => (StageOutcome::Abstained, false),
                        Judgement::Reject if self.is_observed(name) => {
                            (StageOutcome::Downgraded, false)
                        }
                        Judgement::Reject => (StageOutcome::Rejected, true),
                    };
                    let entry = TraceEntry {
                        stage: name.to_owned(),
                        outcome,
                        counts: verdict.counts,
                        reason: verdict.reason,
                        error: None,
                    };
                    (entry, blocks)
                }
                Ok(Err(error)) => broken(stage.as_ref(), error.message().to_owned()),
                Err(panic) => broken(stage.as_ref(), panic_message(panic.as_ref())),
            };
            trace.record(entry);
            if blocks {
                trace.block(name);
                break;
            }
        }
        trace
    }
}

impl fmt::Debug for GovernancePipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GovernancePipeline")
            .field("stages", &self.stage_names())
            .field("observed", &self.observed)
            .finish_non_exhaustive()
    }
}

fn broken(stage: &dyn GovernanceStage, error: String) -> (TraceEntry, bool) {
    let entry = TraceEntry {
        stage: stage.name().to_owned(),
        outcome: StageOutcome::Broken,
        counts: Default::default(),
        reason: None,
        error: Some(error),
    };
    (entry, stage.failure_mode() == FailureMode::FailClosed)
}

/// A literal panic message is code, and kept; a formatted one may quote turn
/// content, and is withheld.
fn panic_message(panic: &(dyn Any + Send)) -> String {
    match panic.downcast_ref::<&'static str>() {
        Some(message) => format!("panicked: {message}"),
        None => "panicked (formatted message withheld)".to_owned(),
    }
}
