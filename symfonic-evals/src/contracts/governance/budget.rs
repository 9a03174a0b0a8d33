//! The budget ceiling: a turn may admit only so many tool calls.

use super::rulebook::{FailureMode, Phase, BUDGET_CEILING_STAGE};
use super::stage::{GovernanceStage, Payload, StageError, StageVerdict, Subject};

/// Refuses a tool call once the turn has already admitted `max_calls` of them,
/// so a model stuck in a loop cannot spend without bound. Reports the call's
/// ordinal as `calls` and the ceiling as `ceiling`; abstains on every other
/// payload.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::{BudgetCeiling, GovernanceStage, Judgement, Subject};
///
/// let ceiling = BudgetCeiling::new(2);
/// let mut second = Subject::tool_call("search", json!({})).with_prior_tool_calls(1);
/// assert_eq!(ceiling.judge(&mut second).unwrap().judgement, Judgement::Pass);
/// let mut third = Subject::tool_call("search", json!({})).with_prior_tool_calls(2);
/// assert_eq!(ceiling.judge(&mut third).unwrap().judgement, Judgement::Reject);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetCeiling {
    max_calls: u32,
}

impl BudgetCeiling {
    /// A ceiling of `max_calls` tool calls per turn.
    pub fn new(max_calls: u32) -> Self {
        Self { max_calls }
    }

    /// The ceiling.
    pub fn max_calls(&self) -> u32 {
        self.max_calls
    }
}

impl GovernanceStage for BudgetCeiling {
    fn name(&self) -> &str {
        BUDGET_CEILING_STAGE
    }

    fn phase(&self) -> Phase {
        Phase::ToolCall
    }

    fn failure_mode(&self) -> FailureMode {
        FailureMode::FailClosed
    }

    fn judge(&self, subject: &mut Subject) -> Result<StageVerdict, StageError> {
        if !matches!(subject.payload, Payload::ToolCall { .. }) {
            return Ok(StageVerdict::abstain());
        }
        let ordinal = u64::from(subject.prior_tool_calls) + 1;
        let verdict = if subject.prior_tool_calls >= self.max_calls {
            StageVerdict::reject(format!(
                "tool-call budget of {} per turn is spent",
                self.max_calls
            ))
        } else {
            StageVerdict::pass()
        };
        Ok(verdict
            .count("calls", ordinal)
            .count("ceiling", u64::from(self.max_calls)))
    }
}
