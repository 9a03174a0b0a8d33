//! The help desk itself: the agent loop, the operator door, pause and
//! resume, and the `Target` implementation the packs drive.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};
use symfonic_evals::contracts::{PipelineError, ProceduralExtractor};
use symfonic_evals::{
    CapabilityEvidence, Pause, PromptRequest, ResumeRequest, SideEffectLedger, StageRecord, Target,
    TargetContext, ToolCall, ToolOutcome, TurnError, TurnRecord, TurnRecordBuilder,
    PROCEDURAL_PRECONDITION, PROCEDURAL_REVIEW,
};

use crate::extension::{Extension, ShippingExtension};
use crate::gate::Gate;
use crate::interaction::{self, Checkpoint, ASK_USER};
use crate::memory::consolidation::{run_cycle, CycleReport, RuleExtractor};
use crate::memory::remember;
use crate::model::{observation, Model, ModelInput, ModelStep, ScriptedModel};
use crate::review::{OperatorCommand, ReviewDoor};
use crate::store::{store_error, Status, Store, StoredProcedure};
use crate::tools::{CancelSubscription, IssueRefund, LookupAccount, ToolCatalog, ToolEnv};
use crate::twins::Flaw;

/// Model steps one turn may take before the desk gives up on it.
pub const MAX_STEPS: usize = 8;

/// Why the desk could not open.
#[derive(Debug)]
pub enum OpenError {
    /// The database could not be opened.
    Store(rusqlite::Error),
    /// The governance pipeline was refused by the rulebook.
    Gate(PipelineError),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Store(error) => write!(f, "help desk database: {error}"),
            Self::Gate(error) => write!(f, "governance pipeline: {error}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// The help desk agent.
pub struct Helpdesk {
    store: Arc<Store>,
    ledger: SideEffectLedger,
    model: Box<dyn Model>,
    extractor: Box<dyn ProceduralExtractor>,
    tools: ToolCatalog,
    contributed: Vec<String>,
    door: ReviewDoor,
    gate: Gate,
    flaw: Option<Flaw>,
    turns: u64,
}

/// A turn in flight: everything the loop accumulates, and what a checkpoint
/// saves when the turn pauses.
struct Turn {
    conversation: String,
    prompt: String,
    state: Option<Value>,
    recall: Vec<String>,
    transcript: Vec<String>,
    earlier_calls: Vec<ToolCall>,
    calls: Vec<ToolCall>,
    call_count: u32,
    stages: Vec<StageRecord>,
    consulted: BTreeSet<String>,
    shown: String,
}

enum Ending {
    Answered(String),
    Paused { call: String, question: Value },
}

fn recall_line(procedure: &StoredProcedure) -> String {
    let conditions: Vec<String> = procedure
        .precondition
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.get("state"))
        .map(|p| {
            format!(
                "{} {} {}",
                p["path"].as_str().unwrap_or("?"),
                p["op"].as_str().unwrap_or("?"),
                p["value"]
            )
        })
        .collect();
    let mut line = format!(
        "{} {}: {}",
        procedure.kind, procedure.trigger, procedure.action
    );
    if !conditions.is_empty() {
        line.push_str(&format!(" (applies when {})", conditions.join(" and ")));
    }
    line
}

impl Helpdesk {
    /// Opens the reference desk on the harness's fixtures.
    ///
    /// # Panics
    ///
    /// When the database or the gate cannot be opened; see [`Self::try_open`].
    pub fn open(ctx: &TargetContext) -> Self {
        Self::open_with(ctx, None)
    }

    /// Opens the desk with `flaw` switched on (`None` is the reference).
    ///
    /// # Panics
    ///
    /// When the database or the gate cannot be opened.
    pub fn open_with(ctx: &TargetContext, flaw: Option<Flaw>) -> Self {
        Self::try_open(ctx, flaw)
            .unwrap_or_else(|error| panic!("the help desk cannot open: {error}"))
    }

    /// Opens the desk: database in the durable directory, tools and
    /// extensions registered, review door and gate built over the store.
    ///
    /// # Errors
    ///
    /// [`OpenError`] when the database or the pipeline is refused.
    pub fn try_open(ctx: &TargetContext, flaw: Option<Flaw>) -> Result<Self, OpenError> {
        let store = Arc::new(Store::open_in(ctx.durable_dir()).map_err(OpenError::Store)?);
        let mut tools = ToolCatalog::default();
        tools.register(Box::new(IssueRefund));
        tools.register(Box::new(LookupAccount));
        tools.register(Box::new(CancelSubscription));
        let extensions: Vec<Box<dyn Extension>> = vec![Box::new(ShippingExtension)];
        let mut contributed = Vec::new();
        for extension in &extensions {
            for tool in extension.manifest() {
                tools.declare(tool);
                contributed.push(tool.to_owned());
            }
            if flaw != Some(Flaw::ExtensionDeclaredNotBound) {
                extension.bind(&mut tools);
            }
        }
        let door = if flaw == Some(Flaw::ApprovalOnlyInMemory) {
            ReviewDoor::keeping_approvals_in_memory(Arc::clone(&store))
        } else {
            ReviewDoor::new(Arc::clone(&store))
        };
        let gate = Gate::build(door.clone(), flaw).map_err(OpenError::Gate)?;
        Ok(Self {
            store,
            ledger: ctx.ledger().clone(),
            model: Box::new(ScriptedModel),
            extractor: Box::new(RuleExtractor::default()),
            tools,
            contributed,
            door,
            gate,
            flaw,
            turns: 0,
        })
    }

    /// Replaces the model (for example with an LLM client).
    #[must_use]
    pub fn with_model(mut self, model: Box<dyn Model>) -> Self {
        self.model = model;
        self
    }

    /// Replaces the consolidation extractor.
    #[must_use]
    pub fn with_extractor(mut self, extractor: Box<dyn ProceduralExtractor>) -> Self {
        self.extractor = extractor;
        self
    }

    fn has(&self, flaw: Flaw) -> bool {
        self.flaw == Some(flaw)
    }

    fn recall(&self) -> Result<Vec<String>, TurnError> {
        let shown = |p: &StoredProcedure| {
            p.status == Status::Approved
                || (self.has(Flaw::DraftLeaksIntoPrompt) && p.status == Status::Draft)
        };
        Ok(self
            .door
            .list()?
            .iter()
            .filter(|p| shown(p))
            .map(recall_line)
            .collect())
    }

    fn offered_tools(&self) -> Vec<String> {
        let mut offered = self.tools.declared().to_vec();
        offered.push(ASK_USER.to_owned());
        offered
    }

    fn drive(&mut self, turn: &mut Turn) -> Ending {
        for _ in 0..MAX_STEPS {
            let input = ModelInput {
                recall: turn.recall.clone(),
                tools: self.offered_tools(),
                user: turn.prompt.clone(),
                transcript: turn.transcript.clone(),
            };
            turn.shown = input.render();
            let (tool, arguments) = match self.model.next_step(&turn.shown) {
                ModelStep::Answer(text) => return Ending::Answered(text),
                ModelStep::Call { tool, arguments } => (tool, arguments),
            };
            turn.call_count += 1;
            let id = format!("call-{}", turn.call_count);
            // The budget counts calls already admitted this turn, before a
            // pause as well as after it; a refused call spent nothing.
            let admitted = turn
                .earlier_calls
                .iter()
                .chain(&turn.calls)
                .filter(|call| !matches!(call.outcome, ToolOutcome::Refused { .. }))
                .count();
            let prior = u32::try_from(admitted).unwrap_or(u32::MAX);
            let admission = self
                .gate
                .admit(&tool, arguments, turn.state.as_ref(), prior);
            turn.stages.extend(admission.trace.to_stage_records());
            turn.consulted.extend(admission.consulted);
            let arguments = admission.arguments;
            if let Some(stage) = admission.trace.blocked_by() {
                if self.has(Flaw::ToolRunsDespiteRefusal) {
                    let _ = self
                        .tools
                        .run(&tool, &arguments, self.env(turn.state.as_ref()));
                }
                turn.transcript
                    .push(observation::refused(&id, &tool, &arguments, stage));
                turn.calls
                    .push(ToolCall::refused(id, tool, arguments, stage));
                continue;
            }
            if tool == ASK_USER {
                turn.transcript
                    .push(observation::waiting(&id, &tool, &arguments));
                let waiting = json!({ "status": "waiting for a person" });
                turn.calls
                    .push(ToolCall::succeeded(&id, &tool, arguments.clone(), waiting));
                return Ending::Paused {
                    call: id,
                    question: arguments,
                };
            }
            match self
                .tools
                .run(&tool, &arguments, self.env(turn.state.as_ref()))
            {
                Ok(result) => {
                    let (result, trace) = self.gate.result(&tool, result);
                    turn.stages.extend(trace.to_stage_records());
                    turn.transcript
                        .push(observation::succeeded(&id, &tool, &arguments, &result));
                    turn.calls
                        .push(ToolCall::succeeded(id, tool, arguments, result));
                }
                Err(failure) => {
                    let line = observation::failed(
                        &id,
                        &tool,
                        &arguments,
                        &failure.code,
                        &failure.message,
                    );
                    turn.transcript.push(line);
                    let error = format!("{}: {}", failure.code, failure.message);
                    turn.calls
                        .push(ToolCall::failed(id, tool, arguments, error));
                }
            }
        }
        Ending::Answered("I stopped: this request needs more steps than one turn allows.".into())
    }

    fn env<'a>(&'a self, state: Option<&'a Value>) -> ToolEnv<'a> {
        ToolEnv {
            ledger: &self.ledger,
            store: &self.store,
            state,
        }
    }

    /// The procedural evidence every turn publishes, read back from the store.
    fn procedural_attributes(
        &self,
        builder: TurnRecordBuilder,
        consulted: &BTreeSet<String>,
    ) -> Result<TurnRecordBuilder, TurnError> {
        Ok(builder
            .attribute("procedural_review", self.door.rows()?)
            .attribute("procedural_review_ids", self.door.approved_ids()?)
            .attribute(
                "procedural_enforcement_ids",
                consulted.iter().collect::<Vec<_>>(),
            ))
    }

    /// Finishes a turn: a completed record (after remembering the episode
    /// and consolidating) or a paused one (after checkpointing).
    fn finish(&mut self, mut turn: Turn, ending: Ending) -> Result<TurnRecordBuilder, TurnError> {
        match ending {
            Ending::Answered(text) => {
                let (answer, trace) = self.gate.answer(&text);
                turn.stages.extend(trace.to_stage_records());
                let tools: Vec<String> = turn
                    .earlier_calls
                    .iter()
                    .chain(&turn.calls)
                    .map(|c| c.name.clone())
                    .collect();
                remember(&self.store, &turn.conversation, &turn.prompt, &tools)
                    .map_err(store_error)?;
                let cycle = if self.has(Flaw::PromotedCountIsTurnCounter) {
                    CycleReport {
                        promoted: self.turns,
                        extractor_errors: 0,
                    }
                } else {
                    run_cycle(&self.store, self.extractor.as_ref()).map_err(store_error)?
                };
                // Both figures the cycle reported: a promoted count of zero
                // with errors is a broken extractor, not an empty lesson.
                let builder = self
                    .record(&turn)
                    .answer(answer)
                    .attribute("procedural_promoted", cycle.promoted)
                    .attribute("consolidation_extractor_errors", cycle.extractor_errors);
                self.procedural_attributes(builder, &turn.consulted)
            }
            Ending::Paused { call, question } => self.pause(turn, call, question),
        }
    }

    fn pause(
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
        let saved = (!self.has(Flaw::ResumeWithoutCheckpoint)).then_some(&checkpoint);
        let token = interaction::pause(&self.store, &question, saved, &turn.conversation)?;
        // Measured, not assumed: resumable when the issued token is bound to
        // a stored checkpoint. The twin without one claims it anyway.
        let bound = self
            .store
            .token(&token)
            .map_err(store_error)?
            .is_some_and(|row| row.checkpoint_id.is_some());
        let resumable = bound || self.has(Flaw::ResumeWithoutCheckpoint);
        let ask = question
            .get("question")
            .and_then(Value::as_str)
            .unwrap_or("A person must confirm.");
        let builder = self.record(&turn).answer(ask);
        let builder = if self.has(Flaw::PauseReportedAsAttribute) {
            builder
                .attribute("paused", true)
                .attribute("pause_name", ASK_USER)
                .attribute("pause_resumable", resumable)
                .attribute("pause_token", token)
        } else {
            builder.paused(Pause::new(ASK_USER, resumable, token))
        };
        self.procedural_attributes(builder, &turn.consulted)
    }

    fn record(&self, turn: &Turn) -> TurnRecordBuilder {
        TurnRecord::builder()
            .model_input(turn.shown.clone())
            .tool_calls(turn.calls.iter().cloned())
            .stages(turn.stages.iter().cloned())
    }

    fn operator_turn(
        &mut self,
        command: Result<OperatorCommand, String>,
    ) -> Result<TurnRecord, TurnError> {
        let command = command.map_err(|why| TurnError::new("OperatorCommandError", why))?;
        let answer = match &command {
            OperatorCommand::List => {
                let rows = self.door.rows()?;
                format!("{} procedures on file.", rows.len())
            }
            OperatorCommand::Approve {
                selector,
                tool,
                predicates,
            } => {
                self.door.approve(selector, tool, predicates)?;
                format!(
                    "Approved; it now governs {tool} under {} state predicate(s).",
                    predicates.len()
                )
            }
            OperatorCommand::Reject { selector } => {
                self.door.reject(selector)?;
                "Rejected; it will not be drafted again.".to_owned()
            }
        };
        let builder = TurnRecord::builder().answer(answer);
        Ok(self
            .procedural_attributes(builder, &BTreeSet::new())?
            .build())
    }

    fn start(
        &self,
        conversation: &str,
        prompt: String,
        state: Option<Value>,
    ) -> Result<Turn, TurnError> {
        Ok(Turn {
            conversation: conversation.to_owned(),
            prompt,
            state,
            recall: self.recall()?,
            transcript: Vec::new(),
            earlier_calls: Vec::new(),
            calls: Vec::new(),
            call_count: 0,
            stages: Vec::new(),
            consulted: BTreeSet::new(),
            shown: String::new(),
        })
    }

    fn resumed(&self, checkpoint: Checkpoint, answer: &Value) -> Result<Turn, TurnError> {
        let mut turn = self.start(
            &checkpoint.conversation,
            checkpoint.prompt,
            checkpoint.state,
        )?;
        turn.transcript = checkpoint.transcript;
        turn.transcript
            .push(observation::answered(&checkpoint.pending_call, answer));
        turn.earlier_calls = checkpoint.calls;
        turn.call_count = checkpoint.call_count;
        Ok(turn)
    }
}

impl Target for Helpdesk {
    fn capabilities(&self) -> CapabilityEvidence {
        let evidence = CapabilityEvidence::new()
            .capability("tools")
            .capability("human")
            .with_trait(PROCEDURAL_PRECONDITION)
            .with_trait(PROCEDURAL_REVIEW)
            .operation("resume");
        self.contributed
            .iter()
            .fold(evidence, |e, tool| e.contributes("extensions", tool))
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        self.turns += 1;
        if let Some(command) = OperatorCommand::parse(&request.prompt) {
            return self.operator_turn(command);
        }
        let (prompt, trace) = self.gate.query(&request.prompt);
        let mut turn = self.start(&request.conversation, prompt, request.state.clone())?;
        turn.stages.extend(trace.to_stage_records());
        let ending = self.drive(&mut turn);
        Ok(self.finish(turn, ending)?.build())
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        let guarded = !self.has(Flaw::TokenRedeemableTwice);
        let redeemed = interaction::redeem(&self.store, request, guarded)?;
        let bound = redeemed.checkpoint.is_some();
        let resumed = |builder: TurnRecordBuilder, continued: bool| {
            builder
                .attribute("resume_outcome", "resumed")
                .attribute("resume_name", redeemed.interaction.as_str())
                .attribute("resume_checkpoint", bound)
                .attribute("resume_continued", continued)
        };
        let Some(checkpoint) = redeemed.checkpoint.clone() else {
            let builder = TurnRecord::builder()
                .answer("Your answer was recorded; the paused request was not.");
            return Ok(resumed(builder, false).build());
        };
        if self.has(Flaw::ResumeWithoutContinuation) {
            let builder = TurnRecord::builder().answer("Thanks, your answer was recorded.");
            return Ok(resumed(builder, false).build());
        }
        let mut turn = if self.has(Flaw::ResumeRestartsTurn) {
            self.start(
                &checkpoint.conversation,
                checkpoint.prompt,
                checkpoint.state,
            )?
        } else {
            self.resumed(checkpoint, &request.answer)?
        };
        let mut ending = self.drive(&mut turn);
        if self.has(Flaw::ResumeRestartsTurn) {
            // Starting over asks the person again; the twin answers for them.
            if let Ending::Paused { call, .. } = &ending {
                turn.transcript
                    .push(observation::answered(call, &request.answer));
                ending = self.drive(&mut turn);
            }
        }
        let builder = self.finish(turn, ending)?;
        Ok(resumed(builder, true).build())
    }
}
