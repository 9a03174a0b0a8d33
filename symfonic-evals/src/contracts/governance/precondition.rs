//! The procedural precondition gate: an approved procedure's state
//! predicates must hold before the tool it governs is admitted.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contracts::predicates::applies_on_value;

use super::rulebook::{FailureMode, Phase, PRECONDITION_STAGE};
use super::stage::{GovernanceStage, Payload, StageError, StageVerdict, Subject};

/// An approved procedure as the gate reads it from a deployment's store.
///
/// It carries no id of its own: the gate records the procedure's
/// [`identity`](Self::identity), a digest of exactly what it judged, so a gate
/// enforcing some other rule cannot borrow the approved procedure's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovedProcedure {
    /// The tool it governs.
    pub tool: String,
    /// Its precondition list: bare tool identifiers and `{"state": predicate}`
    /// entries; only the state predicates are judged here.
    pub precondition: Value,
    /// The procedure's text (what the recall block shows).
    pub text: String,
}

impl ApprovedProcedure {
    /// A procedure governing `tool` under `precondition`, worded `text`.
    pub fn new(tool: impl Into<String>, precondition: Value, text: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            precondition,
            text: text.into(),
        }
    }

    /// [`procedure_identity`](crate::procedure_identity) of this procedure:
    /// what a review door publishing the same stored row publishes.
    pub fn identity(&self) -> String {
        crate::procedure_identity(&self.tool, &self.precondition, &self.text)
    }
}

type Source = dyn Fn(&str) -> Result<Vec<ApprovedProcedure>, StageError> + Send + Sync;

/// Refuses a tool call when any approved procedure governing that tool has a
/// state predicate that does not hold for the turn's state.
///
/// Reports `checked` (procedures judged) and `refused` (procedures whose
/// precondition failed); abstains, with both counts at zero, when no approved
/// procedure governs the tool, and on every payload other than a tool call.
/// Each procedure read is recorded in [`Subject::consulted`].
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::{ApprovedProcedure, GovernanceStage, Judgement, ProceduralPrecondition, Subject};
///
/// let gate = ProceduralPrecondition::new(vec![ApprovedProcedure::new(
///     "issue_refund",
///     json!([{"state": {"path": "region", "op": "eq", "value": "US"}}]),
///     "verify the account region",
/// )]);
/// let mut us = Subject::tool_call("issue_refund", json!({})).with_state(json!({"region": "US"}));
/// let verdict = gate.judge(&mut us).unwrap();
/// assert_eq!((verdict.judgement, verdict.counts["checked"]), (Judgement::Pass, 1));
///
/// let mut eu = Subject::tool_call("issue_refund", json!({})).with_state(json!({"region": "EU"}));
/// let verdict = gate.judge(&mut eu).unwrap();
/// assert_eq!((verdict.judgement, verdict.counts["refused"]), (Judgement::Reject, 1));
/// ```
pub struct ProceduralPrecondition {
    source: Box<Source>,
}

impl ProceduralPrecondition {
    /// A gate over a fixed set of approved procedures.
    pub fn new(procedures: Vec<ApprovedProcedure>) -> Self {
        Self::from_source(move |_tool| Ok(procedures.clone()))
    }

    /// A gate that reads the approved procedures for a tool when it judges a
    /// call to it, so enforcement reads the same store the review door
    /// shows. A read that fails breaks the stage, which fails closed.
    pub fn from_source<F>(source: F) -> Self
    where
        F: Fn(&str) -> Result<Vec<ApprovedProcedure>, StageError> + Send + Sync + 'static,
    {
        Self {
            source: Box::new(source),
        }
    }
}

impl fmt::Debug for ProceduralPrecondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProceduralPrecondition")
            .finish_non_exhaustive()
    }
}

impl GovernanceStage for ProceduralPrecondition {
    fn name(&self) -> &str {
        PRECONDITION_STAGE
    }

    fn phase(&self) -> Phase {
        Phase::ToolCall
    }

    fn failure_mode(&self) -> FailureMode {
        FailureMode::FailClosed
    }

    fn judge(&self, subject: &mut Subject) -> Result<StageVerdict, StageError> {
        let Payload::ToolCall { tool, .. } = &subject.payload else {
            return Ok(StageVerdict::abstain());
        };
        let governing: Vec<ApprovedProcedure> = (self.source)(tool)?
            .into_iter()
            .filter(|procedure| &procedure.tool == tool)
            .collect();
        let (mut checked, mut refused) = (0u64, 0u64);
        for procedure in &governing {
            subject.consult(procedure.identity());
            checked += 1;
            if !applies_on_value(&subject.state, &procedure.precondition) {
                refused += 1;
            }
        }
        let verdict = if checked == 0 {
            StageVerdict::abstain()
        } else if refused > 0 {
            StageVerdict::reject(format!(
                "{refused} of {checked} approved procedures governing this tool do not hold for the turn state"
            ))
        } else {
            StageVerdict::pass()
        };
        Ok(verdict.count("checked", checked).count("refused", refused))
    }
}
