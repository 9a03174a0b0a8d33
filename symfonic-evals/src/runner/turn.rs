//! One turn through the deployment: the request a step sends (with the
//! token and question id the harness retained, or forged), the call itself
//! with panics contained, and the checks at the door before anything else
//! reads what came back.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::forge::forged;
use super::outcome::{StepError, StepErrorKind};
use super::quiet_panics::panic_text;
use crate::assertion::RetainedPause;
use crate::evidence::{
    PromptRequest, ResetRequest, ResumeRequest, ReviewRequest, TurnError, TurnRecord,
};
use crate::scenario::step::{Forgery, QuestionSource, Step, StepInput, TokenSource};
use crate::target::Target;

/// What one step's turn produced. `Err(text)` from the call is a panic,
/// already report-safe.
pub(crate) type TurnResult = Result<Result<TurnRecord, TurnError>, String>;

/// What a step sends.
pub(super) enum Request {
    Prompt(PromptRequest),
    Resume(ResumeRequest),
    Review(ReviewRequest),
    Reset(ResetRequest),
}

/// The request `step` sends, and the retained pause it redeems genuinely
/// (for assertions about the pause it resolves). `pauses` holds the latest
/// pause of each conversation, `by_step` the pause each step ended in.
pub(super) fn request(
    step: &Step,
    pauses: &BTreeMap<String, RetainedPause>,
    by_step: &BTreeMap<String, RetainedPause>,
) -> Result<(Request, Option<RetainedPause>), StepError> {
    match &step.input {
        StepInput::Prompt(prompt) => Ok((
            Request::Prompt(PromptRequest {
                role: step.role,
                conversation: step.conversation.clone(),
                prompt: prompt.clone(),
                state: step.state.clone(),
                feedback: step.feedback,
            }),
            None,
        )),
        StepInput::Review(action) => Ok((
            Request::Review(ReviewRequest {
                conversation: step.conversation.clone(),
                action: action.clone(),
            }),
            None,
        )),
        StepInput::Reset => Ok((
            Request::Reset(ResetRequest {
                conversation: step.conversation.clone(),
            }),
            None,
        )),
        StepInput::Resume {
            answer,
            token,
            question,
        } => {
            let retained = match token {
                TokenSource::Conversation(other) | TokenSource::Guessed(other) => pauses.get(other),
                TokenSource::Own | TokenSource::Forged(_) => pauses.get(&step.conversation),
                TokenSource::Step(label) => by_step.get(label),
            };
            let retained = retained.cloned().ok_or_else(|| StepError {
                kind: StepErrorKind::NoPauseToResume,
                expected: "a pause retained in the conversation whose token the step presents"
                    .into(),
                observed: "no earlier step paused there".into(),
                exception: None,
            })?;
            let request = ResumeRequest {
                conversation: step.conversation.clone(),
                token: match token {
                    TokenSource::Forged(how) => forged(&retained.token, *how),
                    TokenSource::Guessed(_) => {
                        crate::packs::approval::tokens::next_guess(&retained.token)
                            .unwrap_or_else(|| forged(&retained.token, Forgery::Value))
                    }
                    _ => retained.token.clone(),
                },
                question_id: match question {
                    QuestionSource::Genuine => retained.question_id.clone(),
                    QuestionSource::Forged => Some(
                        retained
                            .question_id
                            .as_deref()
                            .map_or_else(|| "q".to_owned(), |id| forged(id, Forgery::Value)),
                    ),
                },
                answer: answer.clone(),
            };
            let genuine = matches!(token, TokenSource::Own | TokenSource::Step(_));
            Ok((Request::Resume(request), genuine.then_some(retained)))
        }
    }
}

/// The error kind the harness gives evidence nested deeper than it reads
/// (the same a served child reports).
pub(super) const EVIDENCE_TOO_DEEP: &str = "EvidenceTooDeep";

/// The error kind the harness gives a record that breaks the evidence
/// contract (a pending call on a completed turn, say).
pub(super) const MALFORMED_RECORD: &str = "MalformedRecord";

/// Sends `request` through `target`: a panic is contained (and a served
/// child's panic report read as one), and a record whose JSON nests too
/// deep is refused at the door and taken apart without recursion.
pub(super) fn invoke(target: &mut dyn Target, request: &Request) -> TurnResult {
    let result = catch_unwind(AssertUnwindSafe(|| match request {
        Request::Prompt(request) => target.run_turn(request),
        Request::Resume(request) => target.resume(request),
        Request::Review(request) => target.review_procedure(request),
        Request::Reset(request) => target.reset(request),
    }))
    .map_err(|payload| panic_text(&*payload));
    match result {
        Ok(Err(error)) if super::served_panic(&error) => Err(error.message),
        Ok(Ok(record)) => match record.too_deep_at() {
            None => match record.contract_problem() {
                None => Ok(Ok(record)),
                Some(problem) => Ok(Err(TurnError::harness(MALFORMED_RECORD, problem))),
            },
            Some(at) => {
                record.dismantle();
                Ok(Err(TurnError::harness(
                    EVIDENCE_TOO_DEEP,
                    format!(
                        "{at} nests deeper than {} levels, more than the harness reads",
                        crate::evidence::MAX_JSON_DEPTH
                    ),
                )))
            }
        },
        other => other,
    }
}

/// The step error a harness-written turn error stands for, if it is one:
/// the deployment's process failed or did not answer in time, or its
/// evidence was too deep to read.
pub(super) fn harness_failure(error: &TurnError) -> Option<StepErrorKind> {
    if !error.harness {
        None
    } else if error.kind == EVIDENCE_TOO_DEEP || error.kind == MALFORMED_RECORD {
        Some(StepErrorKind::MalformedEvidence)
    } else if error.kind == crate::process::kinds::PROCESS_TIMEOUT {
        // The child did not answer in time: it hung, as a turn past the
        // watchdog's limit does.
        Some(StepErrorKind::StepTimeout)
    } else if crate::process::kinds::is_process_kind(&error.kind) {
        Some(StepErrorKind::ProcessFailed)
    } else {
        None
    }
}
