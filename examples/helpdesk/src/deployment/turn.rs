//! The agent loop: the model proposes, the gate judges, the tools run, and
//! everything the turn did is reported in its record.

use std::collections::BTreeSet;

use serde_json::{json, Value};
use symfonic_evals::contracts::{Episode, PRECONDITION_STAGE};
use symfonic_evals::{
    PromptRequest, StageRecord, ToolCall, ToolOutcome, TurnError, TurnRecord, TurnRecordBuilder,
};

use super::{Helpdesk, MAX_STEPS};
use crate::honest::{uuid_like, Variant};
use crate::interaction::ASK_USER;
use crate::memory::consolidation::{run_cycle, CycleReport, RuleExtractor};
use crate::memory::remember;
use crate::memory::totals::run_totals;
use crate::model::{observation, ModelInput, ModelStep};
use crate::store::store_error;
use crate::tools::{account_region, apply_effect, ToolEnv};
use crate::twins::Flaw;

/// The second system message of the `ExtraSystemMessage` variant.
const TONE: &str = "system: Write plainly and warmly; never promise a delivery date the \
                    carrier did not give.";

/// A turn in flight: everything the loop accumulates, and what a checkpoint
/// saves when the turn pauses.
pub(super) struct Turn {
    pub(super) conversation: String,
    pub(super) prompt: String,
    pub(super) state: Option<Value>,
    pub(super) recall: Vec<String>,
    pub(super) transcript: Vec<String>,
    /// Calls made before the pause this turn resumes from.
    pub(super) earlier_calls: Vec<ToolCall>,
    pub(super) calls: Vec<ToolCall>,
    pub(super) call_count: u32,
    pub(super) stages: Vec<StageRecord>,
    pub(super) consulted: BTreeSet<String>,
    pub(super) shown: String,
    /// Results shown to the customer beside the answer (a twin's only).
    pub(super) cards: Vec<String>,
    /// A reviewer rejected this demonstration: it is answered, never
    /// remembered, so no consolidation cycle learns from it.
    pub(super) rejected: bool,
}

/// How the loop ended.
pub(super) enum Ending {
    Answered(String),
    Paused { call: String, question: Value },
}

impl Helpdesk {
    pub(super) fn start(
        &self,
        conversation: &str,
        prompt: String,
        state: Option<Value>,
    ) -> Result<Turn, TurnError> {
        Ok(Turn {
            recall: self.recall(conversation)?,
            conversation: conversation.to_owned(),
            prompt,
            state,
            transcript: Vec::new(),
            earlier_calls: Vec::new(),
            calls: Vec::new(),
            call_count: 0,
            stages: Vec::new(),
            consulted: BTreeSet::new(),
            shown: String::new(),
            cards: Vec::new(),
            rejected: false,
        })
    }

    /// A user's turn: the request scrubbed, the loop driven, the turn
    /// finished (consolidated, or checkpointed when it paused).
    pub(super) fn user_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let (prompt, trace) = self.gate.query(&request.prompt);
        let mut turn = self.start(&request.conversation, prompt, request.state.clone())?;
        turn.rejected = request.is_rejected();
        turn.stages.extend(trace.to_stage_records());
        if self
            .carried_out
            .contains(&(turn.conversation.clone(), turn.prompt.clone()))
        {
            // Done in this conversation already: said so, nobody asked,
            // nothing run again.
            let builder = self
                .record(&turn)
                .answer("That was already done in this conversation; nothing more to do.");
            return Ok(self
                .procedural_attributes(builder, &turn.consulted)?
                .build());
        }
        let ending = self.drive(&mut turn)?;
        Ok(self.finish(turn, ending)?.build())
    }

    /// The next call id. Drawn from a counter in the store, so ids never
    /// repeat within a deployment's life: not across turns, conversations,
    /// or restarts.
    fn call_id(&self, turn: &mut Turn) -> Result<String, TurnError> {
        turn.call_count += 1;
        if self.has(Flaw::CallIdsRestartEveryTurn) {
            return Ok(format!("call-{}", turn.call_count));
        }
        if self.has(Flaw::CallIdsFromProcessCounter) {
            let n = 1 + self
                .process_calls
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            return Ok(format!("call-{n}"));
        }
        if self.is(Variant::RandomCallIds) {
            return Ok(format!("call_{}", uuid_like()));
        }
        let n = self.store.next("call").map_err(store_error)?;
        Ok(format!("call-{n}"))
    }

    /// The tool a call of `tool` is judged as at the gate: the express
    /// refund reaches the refund's effect, so the gate judges it under the
    /// refund's procedures; the alias-tool twin judges it by its own name,
    /// which no procedure governs.
    fn governed_as<'t>(&self, tool: &'t str) -> &'t str {
        if tool == crate::tools::EXPRESS_REFUND
            && self.is(Variant::GatedAliasTool)
            && !self.has(Flaw::AliasToolUngated)
        {
            "issue_refund"
        } else {
            tool
        }
    }

    /// Whether a call of `tool` waits for a person's approval before it
    /// runs: only the cancellations of the variants that hold the call do.
    pub(super) fn held_for_approval(&self, tool: &str) -> bool {
        self.variant.is_some_and(Variant::holds_the_call) && tool == "cancel_subscription"
    }

    /// Whether a call waits for a manager's approval before the gate judges
    /// it: a refund of a whole order (`"full": true`). The approval node
    /// comes first and the gate judges the approved call, so a manager's
    /// yes never overrides an approved procedure.
    pub(super) fn asks_a_manager_first(tool: &str, arguments: &Value) -> bool {
        tool == "issue_refund" && arguments.get("full") == Some(&Value::Bool(true))
    }

    pub(super) fn env<'a>(&'a self, turn: &'a Turn) -> ToolEnv<'a> {
        ToolEnv {
            ledger: &self.ledger,
            store: &self.store,
            state: turn.state.as_ref(),
            conversation: &turn.conversation,
            flaw: self.flaw,
            variant: self.variant,
            process_effects: &self.process_effects,
            clock: &self.clock,
        }
    }

    /// A refund the gate refused for want of a readable region, sent down
    /// the legacy manual path: the `RefusedRefundWrittenToStore` twin's.
    fn legacy_refund(&self, turn: &Turn, tool: &str, arguments: &Value) -> Result<(), TurnError> {
        let unreadable = account_region(turn.state.as_ref()).is_none();
        if tool != "issue_refund" || !unreadable {
            return Ok(());
        }
        let order = arguments.get("order").cloned().unwrap_or(Value::Null);
        self.store
            .write_outbox(
                &format!("manual-refund:order:{order}"),
                "refund",
                &json!({ "refunded_order": order, "route": "manual" }),
            )
            .map_err(store_error)
    }

    /// A refund request the gate refused, logged as requested under a key
    /// of its own next to the refund's: the `LogsRefundRequests` variant's
    /// trail of what customers asked for.
    fn log_refund_request(
        &self,
        turn: &Turn,
        tool: &str,
        arguments: &Value,
    ) -> Result<(), TurnError> {
        if tool != "issue_refund" {
            return Ok(());
        }
        let order = arguments.get("order").cloned().unwrap_or(Value::Null);
        apply_effect(
            self.env(turn),
            "log_refund_request",
            &format!("refund:order:{order}:requested"),
            "refund_request",
            json!({ "requested_order": order }),
        )
        .map(drop)
        .map_err(|f| TurnError::new("RequestLogUnavailable", f.message))
    }

    pub(super) fn drive(&mut self, turn: &mut Turn) -> Result<Ending, TurnError> {
        for _ in 0..MAX_STEPS {
            let input = ModelInput {
                recall: turn.recall.clone(),
                tools: self.offered_tools(),
                user: turn.prompt.clone(),
                transcript: turn.transcript.clone(),
            };
            turn.shown = input.render();
            if self.is(Variant::ExtraSystemMessage) {
                // A second system message, as deployments that assemble
                // their prompt from several sources send.
                turn.shown = turn
                    .shown
                    .replacen("\nrecall:", &format!("\n{TONE}\nrecall:"), 1);
            }
            let calls = match self.model.next_step(&turn.shown) {
                ModelStep::Answer(text) => return Ok(Ending::Answered(text)),
                ModelStep::Call { tool, arguments } => vec![(tool, arguments)],
                ModelStep::Several(calls) => calls,
            };
            // Each call of a message through the gate on its own; a call
            // that pauses the turn drops the rest of its message.
            for (n, (tool, arguments)) in calls.into_iter().enumerate() {
                let unjudged = n > 0 && self.has(Flaw::GateJudgesFirstCallOnly);
                if let Some(paused) = self.make_call(turn, tool, arguments, unjudged)? {
                    return Ok(paused);
                }
            }
        }
        Ok(Ending::Answered(
            "I stopped: this request needs more steps than one turn allows.".into(),
        ))
    }

    /// One call the model made: judged by the gate (unless `unjudged`),
    /// then refused, parked for a person (the ending returned) or run.
    fn make_call(
        &mut self,
        turn: &mut Turn,
        tool: String,
        arguments: Value,
        unjudged: bool,
    ) -> Result<Option<Ending>, TurnError> {
        let id = self.call_id(turn)?;
        // The budget counts calls already admitted this turn, before a
        // pause as well as after it; a refused call spent nothing.
        let admitted = turn
            .earlier_calls
            .iter()
            .chain(&turn.calls)
            .filter(|call| !matches!(call.outcome, ToolOutcome::Refused { .. }))
            .count();
        let prior = u32::try_from(admitted).unwrap_or(u32::MAX);
        let manager = Self::asks_a_manager_first(&tool, &arguments);
        let (arguments, blocked) = if unjudged || manager {
            // The twin's gate read the message's first call only; a call a
            // manager approves first is judged once approved.
            (arguments, None)
        } else {
            let admission = self.gate.admit(
                self.governed_as(&tool),
                arguments,
                turn.state.as_ref(),
                prior,
            );
            turn.stages.extend(admission.trace.to_stage_records());
            turn.consulted.extend(admission.consulted);
            let blocked = admission.trace.blocked_by().map(str::to_owned);
            (admission.arguments, blocked)
        };
        if let Some(stage) = blocked.as_deref() {
            if self.has(Flaw::ToolRunsDespiteRefusal) {
                let _ = self.tools.run(&tool, &arguments, self.env(turn));
            }
            if self.has(Flaw::RefusedRefundWrittenToStore) && stage == PRECONDITION_STAGE {
                self.legacy_refund(turn, &tool, &arguments)?;
            }
            if self.is(Variant::LogsRefundRequests) && stage == PRECONDITION_STAGE {
                self.log_refund_request(turn, &tool, &arguments)?;
            }
            turn.transcript
                .push(observation::refused(&id, &tool, &arguments, stage));
            turn.calls
                .push(ToolCall::refused(id, tool, arguments, stage));
            return Ok(None);
        }
        if tool == ASK_USER
            && self.has(Flaw::ApprovalReusedInConversation)
            && self.store.answered_in(&turn.conversation).unwrap_or(false)
        {
            // Somebody said yes in this conversation before: the twin
            // takes that answer for this request too.
            let yes = json!({ "approved": true });
            turn.transcript
                .push(observation::waiting(&id, &tool, &arguments));
            turn.transcript.push(observation::answered(&id, &yes));
            turn.calls
                .push(ToolCall::succeeded(&id, &tool, arguments.clone(), yes));
            return Ok(None);
        }
        if tool == ASK_USER || self.held_for_approval(&tool) || manager {
            let question = if tool == ASK_USER {
                arguments.clone()
            } else {
                // The person decides, may say when it takes effect,
                // or edits the call (the edit answer's decisions).
                json!({
                    "question": format!("Approve {tool} with {arguments}?"),
                    "schema": {
                        "approved": "boolean?",
                        "effective": "string?",
                        "decisions": "decisions?",
                    },
                })
            };
            turn.transcript
                .push(observation::waiting(&id, &tool, &arguments));
            // Parked, not answered: the resume that redeems the pause
            // reports how it ended.
            let call = if self.has(Flaw::ParkedCallReportedAsSuccess) {
                let waiting = json!({ "status": "waiting for a person" });
                ToolCall::succeeded(&id, &tool, arguments.clone(), waiting)
            } else {
                ToolCall::pending(&id, &tool, arguments.clone())
            };
            turn.calls.push(call);
            return Ok(Some(Ending::Paused { call: id, question }));
        }
        match self.tools.run(&tool, &arguments, self.env(turn)) {
            Ok(result) => {
                if tool == "cancel_subscription" && self.is(Variant::NoticeOnGovernedCalls) {
                    self.post_governed_notice(turn, "ran", &arguments.to_string())?;
                }
                self.last_tool = Some(tool.clone());
                let (result, trace) = self.gate.result(&tool, result);
                turn.stages.extend(trace.to_stage_records());
                let shown = if self.has(Flaw::ResultNeverShown) {
                    // The result goes to the customer as a card; the
                    // model is told only that it was sent.
                    turn.cards.push(format!("[{tool}: {result}]"));
                    json!("sent to the customer")
                } else if self.has(Flaw::PreviousResultShown) {
                    // The tool's last result, kept for the transcript,
                    // is updated after it was read.
                    self.previous_results
                        .insert(tool.clone(), result.clone())
                        .unwrap_or_else(|| result.clone())
                } else {
                    result.clone()
                };
                turn.transcript
                    .push(observation::succeeded(&id, &tool, &arguments, &shown));
                turn.calls
                    .push(ToolCall::succeeded(id, tool, arguments, result));
            }
            Err(failure) => {
                let line =
                    observation::failed(&id, &tool, &arguments, &failure.code, &failure.message);
                turn.transcript.push(line);
                let error = format!("{}: {}", failure.code, failure.message);
                turn.calls
                    .push(ToolCall::failed(id, tool, arguments, error));
            }
        }
        Ok(None)
    }

    /// What the cycle reports as promoted: its own count. `None` leaves
    /// the count out of the record.
    fn promoted(&self, cycle: CycleReport) -> Result<Option<u64>, TurnError> {
        Ok(Some(if self.has(Flaw::PromotedCountCountsEpisodes) {
            // Published only when the cycle promoted something.
            if cycle.promoted == 0 {
                return Ok(None);
            }
            cycle.episodes
        } else if self.has(Flaw::PromotedCountIsDraftsOnFile) {
            self.store.procedures().map_err(store_error)?.len() as u64
        } else {
            cycle.promoted
        }))
    }

    /// Finishes a turn: a completed record (after remembering the episode
    /// and consolidating) or a paused one (after checkpointing).
    pub(super) fn finish(
        &mut self,
        mut turn: Turn,
        ending: Ending,
    ) -> Result<TurnRecordBuilder, TurnError> {
        match ending {
            Ending::Answered(text) => {
                let mut text = text;
                for card in &turn.cards {
                    text.push('\n');
                    text.push_str(card);
                }
                let (answer, trace) = self.gate.answer(&text);
                turn.stages.extend(trace.to_stage_records());
                let tools: Vec<String> = turn
                    .earlier_calls
                    .iter()
                    .chain(&turn.calls)
                    .map(|c| c.name.clone())
                    .collect();
                let learns = !turn.rejected || self.has(Flaw::RejectedDemonstrationsLearned);
                let cycle = if !learns {
                    if self.has(Flaw::RejectedEpisodesKept) {
                        // No cycle now; the next turn's cycle reads it.
                        remember(&self.store, &turn.conversation, &turn.prompt, &tools)
                            .map_err(store_error)?;
                    }
                    if self.is(Variant::RejectedAsGuardrail) {
                        let verb = turn.prompt.split_whitespace().next().unwrap_or_default();
                        self.store
                            .record_guardrail(&format!("when asked to {}", verb.to_lowercase()))
                            .map_err(store_error)?;
                    }
                    CycleReport::default()
                } else if self.has(Flaw::PromotedCountIsTurnCounter) {
                    remember(&self.store, &turn.conversation, &turn.prompt, &tools)
                        .map_err(store_error)?;
                    CycleReport {
                        promoted: self.turns,
                        ..CycleReport::default()
                    }
                } else if self.is(Variant::RunningTotals) {
                    let id = remember(&self.store, &turn.conversation, &turn.prompt, &tools)
                        .map_err(store_error)?;
                    let episode = tools.iter().fold(
                        Episode::new(format!("episode-{id}"), turn.prompt.clone()),
                        |e, t| e.tool(t.clone()),
                    );
                    run_totals(&self.store, &RuleExtractor::default(), &episode)
                        .map_err(store_error)?
                } else {
                    remember(&self.store, &turn.conversation, &turn.prompt, &tools)
                        .map_err(store_error)?;
                    run_cycle(&self.store, self.extractor.as_ref()).map_err(store_error)?
                };
                // Both figures the cycle reported: a promoted count of zero
                // with errors is a broken extractor, not an empty lesson.
                let mut builder = self
                    .record(&turn)
                    .answer(answer)
                    .attribute("consolidation_extractor_errors", cycle.extractor_errors);
                if let Some(promoted) = self.promoted(cycle)? {
                    builder = builder.attribute("procedural_promoted", promoted);
                }
                self.procedural_attributes(builder, &turn.consulted)
            }
            Ending::Paused { call, question } => self.pause(turn, call, question),
        }
    }

    pub(super) fn record(&self, turn: &Turn) -> TurnRecordBuilder {
        TurnRecord::builder()
            .model_input(turn.shown.clone())
            .tool_calls(turn.calls.iter().cloned())
            .stages(turn.stages.iter().cloned())
    }
}
