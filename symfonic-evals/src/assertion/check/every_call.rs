//! Several governed calls in one turn, each judged by the gate: a gate
//! that reads only the first call of a model message lets the others
//! through unjudged.

use super::tools::calls_of;
use super::Check;
use crate::evidence::{StageOutcome, ToolOutcome, TurnRecord};

/// The fewest calls that make "each call judged" mean anything.
const SEVERAL: usize = 2;

/// At least two calls of `tool`, every one admitted (ran) or every one
/// refused, and the `stage`'s `checked` (or `refused`) count, summed over
/// its records of that outcome, covering every call.
pub(super) fn judged(record: &TurnRecord, tool: &str, stage: &str, admitted: bool) -> Check {
    // An admitting stage may still record its outcome as passed or
    // downgraded; a refusal is a rejection.
    let (count, outcome) = if admitted {
        ("checked", None)
    } else {
        ("refused", Some(StageOutcome::Rejected))
    };
    let verdict = if admitted { "admitted" } else { "refused" };
    let expected = format!(
        "at least {SEVERAL} calls of {tool}, each {verdict}, each counted by stage {stage} \
         ({count})"
    );
    let calls: Vec<_> = calls_of(record, tool).collect();
    let as_required = calls
        .iter()
        .filter(|call| {
            if admitted {
                call.is_success()
            } else {
                matches!(call.outcome, ToolOutcome::Refused { .. })
            }
        })
        .count();
    let judged: u64 = record
        .governance()
        .iter()
        .filter(|r| r.stage == stage && outcome.is_none_or(|o| r.outcome == o))
        .filter_map(|r| r.counts.get(count))
        .sum();
    let passed =
        calls.len() >= SEVERAL && as_required == calls.len() && judged >= calls.len() as u64;
    Check::new(
        passed,
        expected,
        format!(
            "{} call(s) of {tool}, {as_required} {verdict}; stage {stage} {count}={judged}",
            calls.len()
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::evidence::{StageRecord, ToolCall};

    const GATE: &str = "procedural_precondition";

    fn refused(id: &str) -> ToolCall {
        ToolCall::refused(id, "issue_refund", json!({}), GATE)
    }

    fn ran(id: &str) -> ToolCall {
        ToolCall::succeeded(id, "issue_refund", json!({}), json!({}))
    }

    fn stage(outcome: StageOutcome, count: &str) -> StageRecord {
        StageRecord::new(GATE, outcome).count(count, 1)
    }

    #[test]
    fn every_call_refused_and_judged_holds() {
        let record = TurnRecord::builder()
            .tool_calls([refused("c1"), refused("c2")])
            .stages([
                stage(StageOutcome::Rejected, "refused"),
                stage(StageOutcome::Rejected, "refused"),
            ])
            .build();
        assert!(judged(&record, "issue_refund", GATE, false).passed);
    }

    #[test]
    fn a_second_call_run_unjudged_fails() {
        let record = TurnRecord::builder()
            .tool_calls([refused("c1"), ran("c2")])
            .stages([stage(StageOutcome::Rejected, "refused")])
            .build();
        let check = judged(&record, "issue_refund", GATE, false);
        assert!(!check.passed);
        assert_eq!(
            check.observed,
            "2 call(s) of issue_refund, 1 refused; stage procedural_precondition refused=1"
        );
        // Admitted, but judged once for two calls.
        let record = TurnRecord::builder()
            .tool_calls([ran("c1"), ran("c2")])
            .stages([stage(StageOutcome::Passed, "checked")])
            .build();
        assert!(!judged(&record, "issue_refund", GATE, true).passed);
    }

    #[test]
    fn one_call_proves_nothing_about_several() {
        let record = TurnRecord::builder()
            .tool_calls([ran("c1")])
            .stages([stage(StageOutcome::Passed, "checked")])
            .build();
        assert!(!judged(&record, "issue_refund", GATE, true).passed);
    }
}
