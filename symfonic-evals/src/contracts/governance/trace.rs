//! The evidence a pipeline run leaves: every stage's answer, in order.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{StageOutcome, StageRecord};

/// One stage's answer in a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceEntry {
    /// The stage's name.
    pub stage: String,
    /// What it decided, after containment and observe mode.
    pub outcome: StageOutcome,
    /// The named counts it reported (none for a broken stage).
    pub counts: BTreeMap<String, u64>,
    /// Why it rejected (or would have, in observe mode).
    pub reason: Option<String>,
    /// What broke, for a broken stage.
    pub error: Option<String>,
}

/// Every answer of one run, and whether the subject was admitted.
///
/// A run stops at the first stage that blocks, so stages after it have no
/// entry: they never saw the subject.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::{
///     BudgetCeiling, CredentialScrubber, GovernancePipeline, GovernanceStage, RuleBook, Subject,
/// };
/// use symfonic_evals::{StageOutcome, StageRecord};
///
/// let stages: Vec<Box<dyn GovernanceStage>> =
///     vec![Box::new(CredentialScrubber::new()), Box::new(BudgetCeiling::new(1))];
/// let pipeline = GovernancePipeline::new(stages, RuleBook::canonical()).unwrap();
///
/// let mut call = Subject::tool_call("search", json!({"q": "x"})).with_prior_tool_calls(1);
/// let trace = pipeline.run(&mut call);
/// assert_eq!(trace.blocked_by(), Some("budget_ceiling"));
///
/// let records: Vec<StageRecord> = (&trace).into();
/// assert_eq!(records[1].outcome, StageOutcome::Rejected);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct GovernanceTrace {
    entries: Vec<TraceEntry>,
    blocked_by: Option<String>,
}

impl GovernanceTrace {
    pub(crate) fn record(&mut self, entry: TraceEntry) {
        self.entries.push(entry);
    }

    pub(crate) fn block(&mut self, stage: &str) {
        self.blocked_by = Some(stage.to_owned());
    }

    /// The answers in the order the stages ran.
    pub fn entries(&self) -> &[TraceEntry] {
        &self.entries
    }

    /// The answer of the stage called `stage`, if it ran.
    pub fn entry(&self, stage: &str) -> Option<&TraceEntry> {
        self.entries.iter().find(|entry| entry.stage == stage)
    }

    /// Whether the subject may proceed.
    pub fn admitted(&self) -> bool {
        self.blocked_by.is_none()
    }

    /// The stage that blocked the subject, if one did.
    pub fn blocked_by(&self) -> Option<&str> {
        self.blocked_by.as_deref()
    }

    /// Appends another run's answers (for a turn governed over several
    /// rungs); the first block wins.
    pub fn extend(&mut self, other: GovernanceTrace) {
        self.entries.extend(other.entries);
        if self.blocked_by.is_none() {
            self.blocked_by = other.blocked_by;
        }
    }

    /// The trace as a turn record reports it.
    pub fn to_stage_records(&self) -> Vec<StageRecord> {
        self.entries
            .iter()
            .map(|entry| {
                entry.counts.iter().fold(
                    StageRecord::new(&entry.stage, entry.outcome),
                    |record, (name, n)| record.count(name, *n),
                )
            })
            .collect()
    }
}

impl From<&GovernanceTrace> for Vec<StageRecord> {
    fn from(trace: &GovernanceTrace) -> Self {
        trace.to_stage_records()
    }
}

impl From<GovernanceTrace> for Vec<StageRecord> {
    fn from(trace: GovernanceTrace) -> Self {
        trace.to_stage_records()
    }
}
