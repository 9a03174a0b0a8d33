//! Judging one step: its assertions, or its expected error.

use std::time::Duration;

use super::outcome::{AssertionRun, StepError, StepErrorKind, StepRun};
use super::turn::{harness_failure, TurnResult};
use crate::assertion::{Assertion, Check, Evidence};
use crate::evidence::{shown_as_is, ExceptionTrace, Operation, TurnError, TurnRecord};
use crate::redact::sensitive;
use crate::scenario::step::{ErrorMatch, Expect, Step, StepInput};

/// A step's identity in reports, before anything is judged.
pub(crate) fn step_run(index: usize, step: &Step, duration: Duration) -> StepRun {
    StepRun {
        index,
        label: step.label.clone(),
        operation: operation_of(&step.input),
        role: step.role,
        conversation: step.conversation.clone(),
        input_digest: input_digest(&step.input),
        state_digest: state_digest(step),
        restarted: step.restart.rebuilds(),
        warm_start: None,
        assertions: Vec::new(),
        error: None,
        ledger: crate::ledger::LedgerCounts::default(),
        fixture_calls: Vec::new(),
        duration,
    }
}

pub(crate) fn operation_of(input: &StepInput) -> Operation {
    match input {
        StepInput::Prompt(_) => Operation::Prompt,
        StepInput::Resume { .. } => Operation::Resume,
        StepInput::Review(_) => Operation::Review,
        StepInput::Reset => Operation::Reset,
    }
}

pub(crate) fn input_digest(input: &StepInput) -> String {
    use crate::redact::short_digest;
    match input {
        StepInput::Prompt(text) => short_digest(text.as_bytes()),
        StepInput::Resume { answer, .. } => short_digest(answer.to_string().as_bytes()),
        StepInput::Review(action) => {
            short_digest(serde_json::to_string(action).unwrap_or_default().as_bytes())
        }
        StepInput::Reset => short_digest(b"reset"),
    }
}

/// The short digest of the explicit turn state `step` sends: a prompt
/// step's state, as sent; a resume step sends none.
pub(crate) fn state_digest(step: &Step) -> Option<String> {
    match (&step.input, &step.state) {
        (StepInput::Prompt(_), Some(state)) => {
            Some(crate::redact::short_digest(state.to_string().as_bytes()))
        }
        _ => None,
    }
}

/// How a deployment's error appears in a report: its kind (and code) as
/// they are when the harness wrote them, the step expected them (the pack's
/// own names) or they are plain identifiers ([`shown_as_is`]), digested
/// otherwise; the message digested unless the harness wrote it,
/// and the child's stderr a harness message quotes digested even then;
/// then the exception behind it, when its companion reported one: type,
/// qualified name and where it was raised (see [`ExceptionTrace::headline`]).
pub(crate) fn error_text(error: &TurnError, expected: Option<&ErrorMatch>) -> String {
    let named = |name: &str| {
        let expected_name = expected.is_some_and(|m| m.any_of.iter().any(|n| n == name));
        if expected_name || error.harness || shown_as_is(name) {
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
        match crate::process::split_stderr_tail(&error.message) {
            (account, None) => account.to_owned(),
            (account, Some(tail)) => format!("{account}; stderr tail {}", sensitive(tail)),
        }
    } else {
        sensitive(&error.message)
    };
    let Some(exception) = error.exception.as_deref().map(ExceptionTrace::report_safe) else {
        return format!("error {}{code} ({message})", named(&error.kind));
    };
    // A companion names an unhandled exception's type as the message: the
    // trace shows it, so its digest would say nothing more.
    let message = if !error.harness && error.message == exception.type_name {
        String::new()
    } else {
        format!(" ({message})")
    };
    format!(
        "error {}{code}{message}; raised {}",
        named(&error.kind),
        exception.headline()
    )
}

/// The step error for a deployment's `turn_error`, carrying the exception
/// behind it, report-safe.
fn turn_step_error(
    kind: StepErrorKind,
    expected: String,
    turn_error: &TurnError,
    errors: Option<&ErrorMatch>,
) -> StepError {
    StepError {
        kind,
        expected,
        observed: error_text(turn_error, errors),
        exception: turn_error
            .exception
            .as_deref()
            .map(|e| Box::new(e.report_safe())),
    }
}

/// Turns a step's turn result into its [`StepRun`].
pub(crate) fn judge_step(run: &mut StepRun, step: &Step, result: TurnResult, evidence: Judged<'_>) {
    let error = |kind, expected: String, observed: String| StepError {
        kind,
        expected,
        observed,
        exception: None,
    };
    match (result, &step.expect) {
        (Ok(Err(turn_error)), _) if harness_failure(&turn_error).is_some() => {
            let kind = harness_failure(&turn_error).unwrap_or(StepErrorKind::ProcessFailed);
            run.error = Some(turn_step_error(
                kind,
                "the deployment's process answers the turn with evidence the harness reads".into(),
                &turn_error,
                None,
            ));
        }
        (Err(panic), _) => {
            run.error = Some(error(
                StepErrorKind::TargetPanicked,
                "the turn returns".into(),
                format!("the target {panic}"),
            ));
        }
        (Ok(Ok(record)), Expect::Record | Expect::RecordOrAnyError) => {
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
            run.error = Some(turn_step_error(
                StepErrorKind::ExpectedError,
                errors.describe(),
                &turn_error,
                Some(errors),
            ));
        }
        (Ok(Err(turn_error)), Expect::RecordOrAnyError) => {
            // Refused with an error: what needs a record is not asked of
            // it, since a record was not the only right answer.
            let mut checks = vec![AssertionRun::new(
                "RecordOrAnyError",
                "RecordOrAnyError".into(),
                Check::new(
                    true,
                    "a record or an error (any kind)",
                    error_text(&turn_error, None),
                ),
            )];
            checks.extend(evidence.without_record(step));
            run.assertions = checks;
        }
        (Ok(Err(turn_error)), Expect::Record) => {
            run.error = Some(turn_step_error(
                StepErrorKind::UnexpectedError,
                "the turn succeeds".into(),
                &turn_error,
                None,
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
    /// The step's assertions that need no record, judged without one.
    fn without_record(&self, step: &Step) -> Vec<AssertionRun> {
        let record = TurnRecord::default();
        let evidence = Evidence {
            record: &record,
            ..self.base
        };
        step.assertions
            .iter()
            .chain(self.extra)
            .filter(|a| !a.needs_record())
            .map(|a| AssertionRun::new(a.kind(), a.describe(), a.check(&evidence)))
            .collect()
    }

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

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use serde_json::json;

    use super::*;
    use crate::report::{PackRun, ScenarioRun, Verdict};
    use crate::runner::TrialRun;
    use crate::scenario::ScenarioKind;

    const SECRET: &str = "SECRET-CARD-4111-1111-1111-1111";

    #[test]
    fn a_refusal_either_way_is_judged_by_the_ledger_when_it_errs() {
        let step = Step::resume("foreign answer", json!({"ok": true}), "c")
            .record_or_any_error()
            .asserting([
                Assertion::tool_called("ask", 0),
                Assertion::ledger_moved(0, 0, 0),
            ]);
        let empty = TurnRecord::default();
        let judged = Judged {
            base: Evidence::of(&empty, crate::ledger::LedgerCounts::default()),
            extra: &[],
        };
        let judge = |result: TurnResult| {
            let mut run = step_run(0, &step, Duration::ZERO);
            judge_step(&mut run, &step, result, judged);
            run
        };
        // An error: accepted, and only what needs no record is asked.
        let refused = judge(Ok(Err(TurnError::new("NotEntitled", "no"))));
        assert!(refused.error.is_none());
        let kinds: Vec<&str> = refused.assertions.iter().map(|a| a.kind.as_str()).collect();
        assert_eq!(kinds, ["RecordOrAnyError", "LedgerDelta"]);
        assert!(refused.assertions.iter().all(|a| a.passed));
        // A record: every assertion is asked of it.
        let answered = judge(Ok(Ok(TurnRecord::default())));
        assert!(answered.error.is_none());
        let kinds: Vec<&str> = answered
            .assertions
            .iter()
            .map(|a| a.kind.as_str())
            .collect();
        assert_eq!(kinds, ["ToolCalled", "LedgerDelta"]);
        // A panic is still a broken step.
        let panicked = judge(Err("panicked".into()));
        assert!(panicked.error.is_some());
    }

    #[test]
    fn one_prompt_in_two_states_is_told_apart_by_its_state_digest_alone() {
        let step = |state| Step::prompt("sweep", "refund order 4", "c").with_state(state);
        let eu = step_run(
            0,
            &step(json!({"region": "EU", "card": SECRET})),
            Duration::ZERO,
        );
        let us = step_run(
            1,
            &step(json!({"region": "US", "card": SECRET})),
            Duration::ZERO,
        );
        assert_eq!(eu.input_digest, us.input_digest);
        let (eu_state, us_state) = (
            eu.state_digest.clone().unwrap(),
            us.state_digest.clone().unwrap(),
        );
        assert_ne!(eu_state, us_state);
        assert!(eu_state.starts_with("sha256:"), "{eu_state}");
        // No state, no digest; a resume sends none.
        let bare = step_run(
            2,
            &Step::prompt("bare", "refund order 4", "c"),
            Duration::ZERO,
        );
        assert_eq!(bare.state_digest, None);
        let resume = Step::resume("resume", json!({"ok": true}), "c").with_state(json!({"a": 1}));
        assert_eq!(step_run(3, &resume, Duration::ZERO).state_digest, None);

        // Rendered (the steps of a failing trial are shown) and as JSON, the
        // digests appear and the state's values never do.
        let mut failing = us.clone();
        failing.error = Some(StepError {
            kind: StepErrorKind::UnexpectedError,
            expected: "the turn succeeds".into(),
            observed: "error Declined".into(),
            exception: None,
        });
        let trial = TrialRun {
            trial: 0,
            steps: vec![eu, failing, bare],
            planned_steps: 3,
            finished: true,
            notes: Vec::new(),
            unproven: None,
            duration: Duration::ZERO,
        };
        let run = PackRun {
            name: "judge.states".into(),
            kind: crate::PackKind::Procedural,
            fingerprint: String::new(),
            verdict: Verdict::Failed,
            scenarios: vec![ScenarioRun {
                name: "procedural/gate-sweep".into(),
                kind: ScenarioKind::Probe,
                trials: vec![trial],
                planned_trials: 1,
                required: 1,
            }],
            probes_not_run: Vec::new(),
            accept_not_applicable: false,
            started: SystemTime::now(),
            duration: Duration::ZERO,
            report_path: None,
            viewer_path: None,
            elsewhere: false,
            role: None,
        };
        let rendered = run.render();
        assert!(
            rendered.contains(&format!(
                "(prompt {}; state {eu_state}; ledger 0/0/0)",
                run.scenarios[0].trials[0].steps[0].input_digest
            )),
            "{rendered}"
        );
        assert!(
            rendered.contains(&format!("; state {us_state};")),
            "{rendered}"
        );
        assert!(!rendered.contains(SECRET), "{rendered}");
        assert!(!rendered.contains("region"), "{rendered}");
        let json = serde_json::to_string(&run.scenarios[0].trials).unwrap();
        assert!(json.contains(&us_state) && !json.contains(SECRET), "{json}");
        // A step that sent no state has no field, and an old report without
        // it still loads.
        let steps: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(steps[0]["steps"][2].get("state_digest").is_none());
        let mut old = steps[0]["steps"][0].clone();
        old.as_object_mut().unwrap().remove("state_digest");
        let loaded: StepRun = serde_json::from_value(old).unwrap();
        assert_eq!(loaded.state_digest, None);
    }
}
