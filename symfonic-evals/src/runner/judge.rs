//! Judging one step: its assertions, or its expected error.

use std::time::Duration;

use super::outcome::{AssertionRun, StepError, StepErrorKind, StepRun};
use crate::assertion::{Assertion, Check, Evidence};
use crate::evidence::{is_plain_name, Operation, TurnError, TurnRecord};
use crate::redact::sensitive;
use crate::scenario::{ErrorMatch, Expect, Step, StepInput};

/// What one step's turn produced. `Err(text)` from the call is a panic,
/// already report-safe.
pub(crate) type TurnResult = Result<Result<TurnRecord, TurnError>, String>;

/// A step's identity in reports, before anything is judged.
pub(crate) fn step_run(index: usize, step: &Step, duration: Duration) -> StepRun {
    StepRun {
        index,
        label: step.label.clone(),
        operation: operation_of(&step.input),
        role: step.role,
        conversation: step.conversation.clone(),
        input_digest: input_digest(&step.input),
        restarted: step.restart.rebuilds(),
        assertions: Vec::new(),
        error: None,
        ledger: crate::ledger::LedgerCounts::default(),
        duration,
    }
}

pub(crate) fn operation_of(input: &StepInput) -> Operation {
    match input {
        StepInput::Prompt(_) => Operation::Prompt,
        StepInput::Resume { .. } => Operation::Resume,
    }
}

pub(crate) fn input_digest(input: &StepInput) -> String {
    use crate::redact::short_digest;
    match input {
        StepInput::Prompt(text) => short_digest(text.as_bytes()),
        StepInput::Resume { answer, .. } => short_digest(answer.to_string().as_bytes()),
    }
}

/// How a deployment's error appears in a report: its kind (and code) as
/// they are when they are plain identifiers or what the step expected,
/// digested otherwise; the message digested unless the harness wrote it.
pub(crate) fn error_text(error: &TurnError, expected: Option<&ErrorMatch>) -> String {
    let named = |name: &str| {
        let expected_name = expected.is_some_and(|m| m.any_of.iter().any(|n| n == name));
        if expected_name || is_plain_name(name) {
            name.to_owned()
        } else {
            sensitive(name)
        }
    };
    let code = error
        .code
        .as_deref()
        .map(|code| format!(" [code {}]", named(code)))
        .unwrap_or_default();
    let message = if error.harness {
        error.message.clone()
    } else {
        sensitive(&error.message)
    };
    format!("error {}{code} ({message})", named(&error.kind))
}

/// Turns a step's turn result into its [`StepRun`].
pub(crate) fn judge_step(run: &mut StepRun, step: &Step, result: TurnResult, evidence: Judged<'_>) {
    let error = |kind, expected: String, observed: String| StepError {
        kind,
        expected,
        observed,
    };
    match (result, &step.expect) {
        (Ok(Err(turn_error)), _) if super::turn::harness_failure(&turn_error).is_some() => {
            let kind =
                super::turn::harness_failure(&turn_error).unwrap_or(StepErrorKind::ProcessFailed);
            run.error = Some(error(
                kind,
                "the deployment's process answers the turn with evidence the harness reads".into(),
                error_text(&turn_error, None),
            ));
        }
        (Err(panic), _) => {
            run.error = Some(error(
                StepErrorKind::TargetPanicked,
                "the turn returns".into(),
                format!("the target {panic}"),
            ));
        }
        (Ok(Ok(record)), Expect::Record) => {
            run.assertions = evidence.all(step, &record, None);
        }
        (Ok(Ok(_)), Expect::Error(errors)) => {
            run.error = Some(error(
                StepErrorKind::ExpectedError,
                errors.describe(),
                "the turn succeeded".into(),
            ));
        }
        (Ok(Err(turn_error)), Expect::Error(errors)) if errors.matches(&turn_error) => {
            // The expected failure leaves no record; only what the harness
            // owns can still be read. Any other assertion on such a step
            // fails rather than passing unchecked. The refusal itself is
            // recorded as a check, so the report proves it was seen.
            let shown = error_text(&turn_error, Some(errors));
            let mut checks = vec![AssertionRun::new(
                "ExpectedError",
                format!("ExpectedError({})", errors.describe()),
                Check::new(true, errors.describe(), shown),
            )];
            let kind = errors.describe();
            checks.extend(evidence.all(step, &TurnRecord::default(), Some(&kind)));
            run.assertions = checks;
        }
        (Ok(Err(turn_error)), Expect::Error(errors)) => {
            run.error = Some(error(
                StepErrorKind::ExpectedError,
                errors.describe(),
                error_text(&turn_error, Some(errors)),
            ));
        }
        (Ok(Err(turn_error)), Expect::Record) => {
            run.error = Some(error(
                StepErrorKind::UnexpectedError,
                "the turn succeeds".into(),
                error_text(&turn_error, None),
            ));
        }
    }
    if run.error.is_none() {
        if let Some(broken) = run.assertions.iter().find(|a| a.malformed) {
            run.error = Some(error(
                StepErrorKind::MalformedEvidence,
                broken.expected.clone(),
                broken.observed.clone(),
            ));
        }
    }
}

/// The evidence a step is judged on, before its record is known.
#[derive(Clone, Copy)]
pub(crate) struct Judged<'a> {
    /// Everything but the record, which judging fills in.
    pub(crate) base: Evidence<'a>,
    /// Assertions the runner adds to every step (the effect oracle).
    pub(crate) extra: &'a [Assertion],
}

impl Judged<'_> {
    fn all(&self, step: &Step, record: &TurnRecord, expected: Option<&str>) -> Vec<AssertionRun> {
        let evidence = Evidence {
            record,
            ..self.base
        };
        step.assertions
            .iter()
            .chain(self.extra)
            .map(|a| {
                let check = match expected {
                    Some(kind) if a.needs_record() => Check::new(
                        false,
                        "evidence from a turn record",
                        format!(
                            "the turn failed with {kind} as expected, so there is no record to read"
                        ),
                    ),
                    _ => a.check(&evidence),
                };
                AssertionRun::new(a.kind(), a.describe(), check)
            })
            .collect()
    }
}
