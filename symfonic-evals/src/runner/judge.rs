//! Judging one step: its assertions, or its expected error.

use std::time::Duration;

use super::outcome::{AssertionRun, StepError, StepErrorKind, StepRun};
use super::trial::{input_digest, operation_of};
use crate::assertion::{Assertion, Check};
use crate::evidence::{TurnError, TurnRecord};
use crate::ledger::LedgerCounts;
use crate::redact::sensitive;
use crate::scenario::Step;

/// Turns a step's turn result into its [`StepRun`]. `Err(text)` is a panic.
pub(crate) fn judge_step(
    index: usize,
    step: &Step,
    result: Result<Result<TurnRecord, TurnError>, String>,
    ledger: LedgerCounts,
    duration: Duration,
) -> StepRun {
    let mut run = StepRun {
        index,
        label: step.label.clone(),
        operation: operation_of(&step.input),
        input_digest: input_digest(&step.input),
        restarted: step.restart_before,
        assertions: Vec::new(),
        error: None,
        duration,
    };
    let error = |kind, expected: String, observed: String| StepError {
        kind,
        expected,
        observed,
    };
    match (result, &step.expected_error) {
        (Err(panic), _) => {
            run.error = Some(error(
                StepErrorKind::TargetPanicked,
                "the turn returns".into(),
                format!("the target {panic}"),
            ));
        }
        (Ok(Ok(record)), None) => {
            run.assertions = step
                .assertions
                .iter()
                .map(|a| AssertionRun::new(a.kind(), a.describe(), a.check(&record, ledger)))
                .collect();
        }
        (Ok(Ok(_)), Some(kind)) => {
            run.error = Some(error(
                StepErrorKind::ExpectedError,
                format!("error {kind}"),
                "the turn succeeded".into(),
            ));
        }
        (Ok(Err(turn_error)), Some(kind)) if turn_error.kind == *kind => {
            // The expected failure leaves no record; only the harness-owned
            // ledger can still be read. Any other assertion on such a step
            // fails rather than passing unchecked.
            let no_record = TurnRecord::default();
            run.assertions = step
                .assertions
                .iter()
                .map(|a| {
                    let check = match a {
                        Assertion::SideEffectCount { .. } => a.check(&no_record, ledger),
                        _ => Check {
                            passed: false,
                            expected: "evidence from a turn record".into(),
                            observed: format!(
                                "the turn failed with {kind} as expected, so there is no record to read"
                            ),
                        },
                    };
                    AssertionRun::new(a.kind(), a.describe(), check)
                })
                .collect();
        }
        (Ok(Err(turn_error)), Some(kind)) => {
            run.error = Some(error(
                StepErrorKind::ExpectedError,
                format!("error {kind}"),
                format!(
                    "error {} ({})",
                    turn_error.kind,
                    sensitive(&turn_error.message)
                ),
            ));
        }
        (Ok(Err(turn_error)), None) => {
            run.error = Some(error(
                StepErrorKind::UnexpectedError,
                "the turn succeeds".into(),
                format!(
                    "error {} ({})",
                    turn_error.kind,
                    sensitive(&turn_error.message)
                ),
            ));
        }
    }
    run
}
