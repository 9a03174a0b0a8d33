//! Pausing a turn for a person and carrying it on from their answer.
//!
//! The paused record publishes the question and its id beside the token and
//! reports the `ask_user` call as pending; the resume record reports that
//! call resolved with the answer, and only the calls the continuation made.

use serde_json::{json, Value};
use symfonic_evals::{
    EditDecision, Pause, ResolvedCall, ResumeRequest, ToolOutcome, TurnError, TurnRecord,
    TurnRecordBuilder,
};

use super::turn::{Ending, Turn};
use super::Helpdesk;
use crate::honest::Variant;
use crate::interaction::{Checkpoint, ASK_USER};
use crate::model::observation;
use crate::tools::apply_effect;
use crate::twins::Flaw;

impl Helpdesk {
    /// Checkpoints the turn, issues the token and question id, and reports
    /// the pause.
    pub(super) fn pause(
        &mut self,
        turn: Turn,
        call: String,
        question: Value,
    ) -> Result<TurnRecordBuilder, TurnError> {
        let checkpoint = Checkpoint {
            conversation: turn.conversation.clone(),
            prompt: turn.prompt.clone(),
            state: turn.state.clone(),
            transcript: turn.transcript.clone(),
            calls: turn
                .earlier_calls
                .iter()
                .chain(&turn.calls)
                .cloned()
                .collect(),
            pending_call: call,
            call_count: turn.call_count,
        };
        let interaction = turn
            .calls
            .iter()
            .find(|c| c.id == checkpoint.pending_call)
            .map_or(ASK_USER, |c| c.name.as_str())
            .to_owned();
        if self.is(Variant::NoticeAtPause) || self.has(Flaw::NoticeRepostedOnResume) {
            // The change is announced before anyone decides on it; a retried
            // pause announces the same question once.
            let ask = question.get("question").cloned().unwrap_or(Value::Null);
            self.post_notice(&turn, &interaction, &format!("{ask}"))?;
        }
        if self.is(Variant::NoticeOnGovernedCalls) {
            // The governed call is held for a person: the channel hears it.
            let ask = question.get("question").cloned().unwrap_or(Value::Null);
            self.post_governed_notice(&turn, "held", &format!("{ask}"))?;
        }
        let saved = (!self.has(Flaw::ResumeWithoutCheckpoint)).then_some(&checkpoint);
        let issued = self
            .pauses
            .pause(&turn.conversation, &interaction, &question, saved)?;
        // Resumable when the token is bound to a stored checkpoint. The twin
        // without one claims it anyway.
        let resumable = issued.bound || self.has(Flaw::ResumeWithoutCheckpoint);
        let ask = question
            .get("question")
            .and_then(Value::as_str)
            .unwrap_or("A person must confirm.");
        let builder = if self.has(Flaw::PauseReportedAsAttribute) {
            // Claims the pause in attributes and leaves the waiting call
            // out, so the record is well formed and only the pause
            // assertions can see that no pause was taken.
            TurnRecord::builder()
                .model_input(turn.shown.clone())
                .tool_calls(turn.calls.iter().filter(|c| !c.is_pending()).cloned())
                .stages(turn.stages.iter().cloned())
                .answer(ask)
                .attribute("paused", true)
                .attribute("pause_name", interaction.as_str())
                .attribute("pause_resumable", resumable)
                .attribute("pause_token", issued.token)
        } else {
            let mut builder = self.record(&turn);
            if self.has(Flaw::TokenShownToModel) {
                // The interaction's result goes back into the transcript
                // the model reads, token included.
                builder = builder.model_input(format!(
                    "{}\ntool {interaction}: waiting, token {}",
                    turn.shown, issued.token
                ));
            }
            // A cancellation the desk holds for a person may be edited.
            let editable = (interaction != ASK_USER && self.held_for_approval(&interaction))
                .then(|| checkpoint.pending_call.clone());
            builder.answer(ask).paused(
                Pause::new(interaction, resumable, issued.token)
                    .asking(question, issued.question_id)
                    .editing(editable)
                    .answered_by("approver", crate::interaction::APPROVERS),
            )
        };
        self.procedural_attributes(builder, &turn.consulted)
    }

    /// Posts the change notice for the question `ask` that `interaction`
    /// waits on, once per question. The twin keys each posting by the
    /// run that made it, as a node keyed by its execution would, so the
    /// run on resume posts it again.
    fn post_notice(&self, turn: &Turn, interaction: &str, ask: &str) -> Result<(), TurnError> {
        let unavailable =
            |f: crate::tools::ToolFailure| TurnError::new("NoticeUnavailable", f.message);
        let mut key = format!("notice:{}:{ask}", turn.conversation);
        if self.has(Flaw::NoticeRepostedOnResume) {
            let run = self.store.next("notice-run").map_err(|_| {
                TurnError::new("NoticeUnavailable", "the notice runs could not be counted")
            })?;
            key = format!("notice:{}:run{run}", turn.conversation);
        }
        apply_effect(
            self.env(turn),
            "post_notice",
            &key,
            "change_notice",
            json!({ "pending": interaction }),
        )
        .map(drop)
        .map_err(unavailable)
    }

    /// The notice-on-governed-calls variant's posting to its channel: the
    /// governed call `about` reached `stage` (`held` for a person, or
    /// `ran`). Each posting has a key of its own, which a retry of the
    /// same step repeats, so a crash never posts it twice.
    pub(super) fn post_governed_notice(
        &self,
        turn: &Turn,
        stage: &str,
        about: &str,
    ) -> Result<(), TurnError> {
        let key = format!("governed:{stage}:{}:{about}", turn.conversation);
        apply_effect(
            self.env(turn),
            "post_notice",
            &key,
            "governed_notice",
            json!({ "stage": stage, "about": about }),
        )
        .map(drop)
        .map_err(|f| TurnError::new("NoticeUnavailable", f.message))
    }

    /// The paused turn rebuilt from its checkpoint, with the person's answer
    /// filed under the call that asked. When the call that waited is the
    /// action itself (approval on the call), the answer settles it: an
    /// approval runs it, anything else declines it; how it ended is
    /// returned beside the turn.
    fn resumed(
        &self,
        checkpoint: Checkpoint,
        answer: &Value,
    ) -> Result<(Turn, Option<ResolvedCall>), TurnError> {
        let mut turn = self.start(
            &checkpoint.conversation,
            checkpoint.prompt,
            checkpoint.state,
        )?;
        turn.transcript = checkpoint.transcript;
        turn.earlier_calls = checkpoint.calls;
        turn.call_count = checkpoint.call_count;
        let held = turn
            .earlier_calls
            .iter()
            .find(|c| c.id == checkpoint.pending_call && c.name != ASK_USER)
            .map(|c| (c.name.clone(), c.arguments.clone()));
        if let Some((tool, arguments)) = held {
            let id = &checkpoint.pending_call;
            let settled = self.settle(&mut turn, id, &tool, &arguments, answer);
            return Ok((turn, Some(settled)));
        }
        // The continuation reads the answer the person gave; one twin only
        // notes that somebody answered, another only their decision.
        let heard = if self.has(Flaw::DenialReadAsApproval) {
            json!({ "approved": true })
        } else if self.has(Flaw::AmendmentIgnored) {
            json!({ "approved": answer.get("approved") })
        } else {
            answer.clone()
        };
        turn.transcript
            .push(observation::answered(&checkpoint.pending_call, &heard));
        Ok((turn, None))
    }

    /// The arguments the held call runs with on `answer`, or how it ends
    /// unrun: an approval runs it as asked (with the person's amendment of
    /// when it takes effect), an edit as edited, a rejection or any other
    /// answer declines it. The edit-refused variant refuses an edit of the
    /// customer; the twin hears an edit as a plain approval.
    fn decided(&self, tool: &str, arguments: &Value, answer: &Value) -> Result<Value, ToolOutcome> {
        let declined = || ToolOutcome::Failed {
            error: "declined: a person declined the call".into(),
        };
        let refused = |stage: &str| ToolOutcome::Refused {
            stage: stage.into(),
        };
        let decision = EditDecision::read(answer).and_then(|all| all.into_iter().next());
        match decision {
            Some(EditDecision::Approve) => Ok(arguments.clone()),
            Some(EditDecision::Edit { .. }) if self.has(Flaw::EditedCallIgnored) => {
                Ok(arguments.clone())
            }
            Some(EditDecision::Edit { edited_action }) => {
                let other_customer =
                    edited_action.args.get("customer") != arguments.get("customer");
                if edited_action.name != tool || (self.is(Variant::EditRefused) && other_customer) {
                    Err(refused("edit-review"))
                } else {
                    Ok(edited_action.args)
                }
            }
            // A rejection is a denial: refused by the person, not a failure.
            Some(EditDecision::Reject { .. }) => Err(refused("person")),
            None if answer.get("approved") == Some(&Value::Bool(true)) => {
                let mut arguments = arguments.clone();
                if let Some(when) = answer.get("effective") {
                    arguments["effective"] = when.clone();
                }
                Ok(arguments)
            }
            None => Err(declined()),
        }
    }

    /// The approved call of a tool a manager approves before the gate
    /// (see `asks_a_manager_first`), judged by the gate now, under the
    /// paused turn's state: refused by its stage, or admitted with the
    /// arguments the gate passed on. Other held calls were judged before
    /// they paused. The twin runs an approved call straight away.
    fn judged_after_approval(
        &self,
        turn: &mut Turn,
        tool: &str,
        approved: Value,
    ) -> Result<Value, ToolOutcome> {
        if !Self::asks_a_manager_first(tool, &approved) || self.has(Flaw::ApprovedCallSkipsGate) {
            return Ok(approved);
        }
        // The calls admitted before the pause; the held call is not one yet.
        let admitted = turn
            .earlier_calls
            .iter()
            .filter(|call| {
                !call.is_pending() && !matches!(call.outcome, ToolOutcome::Refused { .. })
            })
            .count();
        let prior = u32::try_from(admitted).unwrap_or(u32::MAX);
        let admission = self.gate.admit(tool, approved, turn.state.as_ref(), prior);
        turn.stages.extend(admission.trace.to_stage_records());
        turn.consulted.extend(admission.consulted);
        match admission.trace.blocked_by() {
            Some(stage) => Err(ToolOutcome::Refused {
                stage: stage.to_owned(),
            }),
            None => Ok(admission.arguments),
        }
    }

    /// Runs the held call `id` as `answer` decides, or ends it unrun, files
    /// the observation the model reads next, and reports how it was
    /// resolved (with the arguments it ran with, when it ran).
    fn settle(
        &self,
        turn: &mut Turn,
        id: &str,
        tool: &str,
        arguments: &Value,
        answer: &Value,
    ) -> ResolvedCall {
        let decided = match self.decided(tool, arguments, answer) {
            // The twin asks the gate instead of hearing the person out.
            Err(_)
                if self.has(Flaw::GateOverridesDenial)
                    && Self::asks_a_manager_first(tool, arguments) =>
            {
                Ok(arguments.clone())
            }
            decided => decided,
        };
        let judged = decided.and_then(|approved| self.judged_after_approval(turn, tool, approved));
        let arguments = match judged {
            Ok(arguments) => arguments,
            Err(outcome) => {
                turn.transcript.push(match &outcome {
                    ToolOutcome::Refused { stage } => {
                        observation::refused(id, tool, arguments, stage)
                    }
                    _ => observation::failed(
                        id,
                        tool,
                        arguments,
                        "declined",
                        "a person declined the call",
                    ),
                });
                return ResolvedCall::new(id, outcome);
            }
        };
        let outcome = match self.tools.run(tool, &arguments, self.env(turn)) {
            Ok(result) => {
                let (result, trace) = self.gate.result(tool, result);
                turn.stages.extend(trace.to_stage_records());
                turn.transcript
                    .push(observation::succeeded(id, tool, &arguments, &result));
                ToolOutcome::Succeeded { result }
            }
            Err(failure) => {
                turn.transcript.push(observation::failed(
                    id,
                    tool,
                    &arguments,
                    &failure.code,
                    &failure.message,
                ));
                ToolOutcome::Failed {
                    error: format!("{}: {}", failure.code, failure.message),
                }
            }
        };
        ResolvedCall::new(id, outcome).ran_with(arguments)
    }

    /// Whether the continuation of an approved request carried it out: the
    /// held call, or a call after the answer, ran and succeeded.
    fn carried_out(turn: &Turn, settled: Option<&ResolvedCall>) -> bool {
        let succeeded = |outcome: &ToolOutcome| matches!(outcome, ToolOutcome::Succeeded { .. });
        settled.is_some_and(|call| succeeded(&call.outcome))
            || turn
                .calls
                .iter()
                .any(|call| call.name != ASK_USER && succeeded(&call.outcome))
    }

    /// Redeems the token and continues the paused turn from its checkpoint.
    /// A continuation that fails with an error gives the token back, so the
    /// client's retry carries the turn on (its effects deduplicated under
    /// their keys); only a finished continuation spends it.
    pub(super) fn redeem(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        let redeemed = self.pauses.redeem(request)?;
        let token = redeemed.token.clone();
        let continued = self.continue_redeemed(request, redeemed);
        if continued.is_err() {
            // The continuation's error is what the client must hear; a
            // failed release leaves the claim to the dead-run takeover.
            let _ = self.pauses.release(&token);
        } else if self.has(Flaw::ApprovalGrantsEveryPending) {
            self.drain_pending(&request.answer, None)?;
        } else if self.has(Flaw::ApprovalGrantsConversationQueue) {
            let failed = |_| TurnError::new("StoreError", "the redeemed pause could not be read");
            let filed = self.store.token(&token).map_err(failed)?;
            let conversation = filed.map(|row| row.conversation);
            self.drain_pending(&request.answer, conversation.as_deref())?;
        }
        continued
    }

    /// The batch of the twins that approve more than they were asked:
    /// every other paused turn on the desk (or, given `conversation`, every
    /// other one filed under it) is carried on with `answer`, its token
    /// left as it was, so its own resume later runs it again under the
    /// same keys (the ledger finds them applied) and reports success.
    fn drain_pending(
        &mut self,
        answer: &Value,
        conversation: Option<&str>,
    ) -> Result<(), TurnError> {
        let failed = |_| TurnError::new("StoreError", "the pending pauses could not be read");
        for token in self.store.unspent_tokens().map_err(failed)? {
            let Some(id) = self
                .store
                .token(&token)
                .map_err(failed)?
                .filter(|row| conversation.is_none_or(|c| row.conversation == c))
                .and_then(|row| row.checkpoint_id)
            else {
                continue;
            };
            if let Some(checkpoint) = self.pauses.load(id)? {
                let (mut turn, _) = self.resumed(checkpoint, answer)?;
                self.drive(&mut turn)?;
            }
        }
        Ok(())
    }

    fn continue_redeemed(
        &mut self,
        request: &ResumeRequest,
        redeemed: crate::interaction::Redeemed,
    ) -> Result<TurnRecord, TurnError> {
        let bound = redeemed.checkpoint.is_some();
        let resumed = |builder: TurnRecordBuilder, continued: bool| {
            builder
                .attribute("resume_outcome", "resumed")
                .attribute("resume_name", redeemed.interaction.as_str())
                .attribute("resume_checkpoint", bound)
                .attribute("resume_continued", continued)
        };
        let Some(checkpoint) = redeemed.checkpoint.clone() else {
            self.pauses.finish(&redeemed.token)?;
            let builder = TurnRecord::builder()
                .answer("Your answer was recorded; the paused request was not.");
            return Ok(resumed(builder, false).build());
        };
        if self.has(Flaw::ResumeWithoutContinuation) {
            self.pauses.finish(&redeemed.token)?;
            let builder = TurnRecord::builder().answer("Thanks, your answer was recorded.");
            return Ok(resumed(builder, false).build());
        }
        let pending = checkpoint.pending_call.clone();
        if self.has(Flaw::NoticeRepostedOnResume) {
            // The step that asked runs again from its top on resume, and
            // posts its notice again before it reads the answer.
            let turn = self.start(
                &checkpoint.conversation,
                checkpoint.prompt.clone(),
                checkpoint.state.clone(),
            )?;
            self.post_notice(&turn, &redeemed.interaction, "")?;
        }
        let (mut turn, settled) = if self.has(Flaw::ResumeRestartsTurn) {
            let turn = self.start(
                &checkpoint.conversation,
                checkpoint.prompt,
                checkpoint.state,
            )?;
            (turn, None)
        } else {
            self.resumed(checkpoint, &request.answer)?
        };
        let mut ending = self.drive(&mut turn)?;
        if self.has(Flaw::ResumeRestartsTurn) {
            // Starting over asks the person again; the twin answers for them.
            // It files the answer under the new call too, so its record
            // stays well formed and shows only the second ask.
            if let Ending::Paused { call, .. } = &ending {
                for asked in turn.calls.iter_mut().filter(|c| &c.id == call) {
                    asked.outcome = ToolOutcome::Succeeded {
                        result: request.answer.clone(),
                    };
                }
                turn.transcript
                    .push(observation::answered(call, &request.answer));
                ending = self.drive(&mut turn)?;
            }
        }
        if self.is(Variant::AsksAgainAfterRestart) && Self::carried_out(&turn, settled.as_ref()) {
            self.carried_out
                .insert((turn.conversation.clone(), turn.prompt.clone()));
        }
        let answered = settled.unwrap_or_else(|| {
            ResolvedCall::new(
                pending,
                ToolOutcome::Succeeded {
                    result: request.answer.clone(),
                },
            )
        });
        let builder = self.finish(turn, ending)?.resolved(answered);
        // Only now is the token spent for good: a crash anywhere before
        // leaves it claimed by a dead run, and the client's retry finishes
        // the turn (its effects deduplicated under their keys).
        self.pauses.finish(&redeemed.token)?;
        Ok(resumed(builder, true).build())
    }
}
