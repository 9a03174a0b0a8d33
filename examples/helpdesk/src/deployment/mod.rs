//! The help desk itself: what it is built from, the doors a turn comes in
//! through (a user's prompt, an operator's command, a person's answer to a
//! pause), and the `Target` implementation the packs drive. The agent loop
//! is in `turn`; pausing and resuming in `resume`.

mod resume;
mod turn;

use std::collections::BTreeSet;
use std::sync::Arc;

use symfonic_evals::contracts::ProceduralExtractor;
use symfonic_evals::{
    CapabilityEvidence, PromptRequest, ResetRequest, ResumeRequest, ReviewAction, ReviewRequest,
    Role, SideEffectLedger, Target, TargetContext, TurnError, TurnRecord, TurnRecordBuilder,
    CONCURRENT_PAUSES, CONTEXT_CLOCK, EDITABLE_CALLS, IDEMPOTENT_EFFECTS, PROCEDURAL_PRECONDITION,
    PROCEDURAL_REVIEW, REPLICAS, RESET,
};

use crate::extension::{Extension, ShippingExtension};
use crate::gate::{Gate, GateError};
use crate::honest::jwt::Signer;
use crate::honest::Variant;
use crate::interaction::{Pauses, ASK_USER};
use crate::memory::consolidation::RuleExtractor;
use crate::model::{Model, ScriptedModel};
use crate::review::{OperatorCommand, ReviewDoor};
use crate::store::runs::RunLease;
use crate::store::{Status, Store, StoredProcedure};
use crate::tools::{
    CancelSubscription, CustomerNotice, IssueRefund, LookupAccount, LookupSubscription, ToolCatalog,
};
use crate::twins::Flaw;

/// Model steps one turn may take before the desk gives up on it.
pub const MAX_STEPS: usize = 8;

/// Why the desk could not open.
#[derive(Debug)]
pub enum OpenError {
    /// The database could not be opened.
    Store(rusqlite::Error),
    /// The governance pipeline could not be built.
    Gate(GateError),
    /// The run's lease file could not be taken.
    Lease(std::io::Error),
    /// The pause-token signing secret could be neither read nor created.
    Secret(std::io::Error),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Store(error) => write!(f, "help desk database: {error}"),
            Self::Gate(error) => write!(f, "governance pipeline: {error}"),
            Self::Lease(error) => write!(f, "run lease: {error}"),
            Self::Secret(error) => write!(f, "pause-token secret: {error}"),
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
    pauses: Pauses,
    flaw: Option<Flaw>,
    variant: Option<Variant>,
    turns: u64,
    process_effects: std::sync::atomic::AtomicU64,
    /// The trial's clock: the desk reads the time only from it.
    clock: symfonic_evals::Clock,
    process_calls: std::sync::atomic::AtomicU64,
    /// Each tool's last result in this process: only the
    /// `PreviousResultShown` twin reads it.
    previous_results: std::collections::HashMap<String, serde_json::Value>,
    /// The tool the desk last ran in this process: only the
    /// `ReviewBindsLastTool` twin reads it.
    last_tool: Option<String>,
    /// Whether the shipping extension's tools run on the carrier's MCP
    /// server, which the desk then declares.
    on_carrier_server: bool,
    /// The requests (conversation, prompt) a person approved and the desk
    /// carried out, in this process only: the `AsksAgainAfterRestart`
    /// variant answers them again as done, and forgets them on a restart.
    carried_out: BTreeSet<(String, String)>,
}

/// Whether an earlier start in this durable directory bound the carrier's
/// server (marking it so): only the `CarrierBoundOnFirstStartOnly` twin
/// asks, and trusts its first binding from then on.
fn bound_before(ctx: &TargetContext) -> bool {
    let marker = ctx.durable_path("carrier-bound");
    let before = marker.exists();
    let _ = std::fs::write(marker, b"");
    before
}

fn recall_line(procedure: &StoredProcedure) -> String {
    let conditions: Vec<String> = procedure
        .precondition
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.get("state"))
        .map(|p| {
            let value = p.get("value").map(|v| format!(" {v}")).unwrap_or_default();
            format!(
                "{} {}{value}",
                p["path"].as_str().unwrap_or("?"),
                p["op"].as_str().unwrap_or("?"),
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
        Self::build(ctx, flaw, None)
    }

    /// Opens the reference desk in the honest configuration `variant`.
    ///
    /// # Panics
    ///
    /// When the database or the gate cannot be opened.
    pub fn open_variant(ctx: &TargetContext, variant: Variant) -> Self {
        Self::build(ctx, None, Some(variant))
            .unwrap_or_else(|error| panic!("the help desk cannot open: {error}"))
    }

    fn build(
        ctx: &TargetContext,
        flaw: Option<Flaw>,
        variant: Option<Variant>,
    ) -> Result<Self, OpenError> {
        let variant = variant.or_else(|| flaw.and_then(Flaw::base));
        let mut store = Store::open_in(ctx.durable_dir()).map_err(OpenError::Store)?;
        if flaw == Some(Flaw::RelearnRewritesApproved) {
            store = store.refreshing_reviewed();
        }
        if flaw == Some(Flaw::RelearnRestoresRevoked) {
            store = store.restoring_revoked();
        }
        if flaw == Some(Flaw::RejectedDraftRedrafted) {
            store = store.redrafting_rejected();
        }
        let store = Arc::new(store);
        let mut tools = ToolCatalog::default();
        tools.register(Box::new(IssueRefund));
        tools.register(Box::new(LookupAccount));
        tools.register(Box::new(CancelSubscription));
        if variant == Some(Variant::LooksUpBeforeActing) {
            tools.register(Box::new(LookupSubscription));
        }
        if variant == Some(Variant::NotifyOnDenial) {
            tools.register(Box::new(CustomerNotice::DENIAL));
        }
        if variant == Some(Variant::GatedAliasTool) {
            tools.register(Box::new(crate::tools::ExpressRefund));
        }
        if variant == Some(Variant::InvoiceBeforeCancelling)
            || flaw == Some(Flaw::InvoiceSharesCancellationKey)
        {
            tools.register(Box::new(CustomerNotice::FINAL_INVOICE));
        }
        // Tracking runs on the carrier's MCP server when the context
        // names one (the harness's fixture, under the extension pack).
        let carrier_server = match flaw {
            Some(Flaw::BuiltInDeclaredAsExtension) => None,
            Some(Flaw::CarrierBoundOnFirstStartOnly) if bound_before(ctx) => None,
            _ => ctx.mcp_url(),
        };
        let shipping = ShippingExtension {
            defaulted_detail: variant == Some(Variant::DefaultedToolArgument),
            carrier_server,
        };
        let extensions: Vec<Box<dyn Extension>> = vec![Box::new(shipping)];
        let mut contributed = Vec::new();
        for extension in &extensions {
            for tool in extension.manifest() {
                tools.declare(tool.name);
                contributed.push(tool.name.to_owned());
            }
            if flaw != Some(Flaw::ExtensionDeclaredNotBound) {
                extension.bind(&mut tools, flaw);
            }
        }
        let run = RunLease::take(ctx.durable_dir()).map_err(OpenError::Lease)?;
        let door = ReviewDoor::new(Arc::clone(&store), flaw);
        let gate = Gate::build(door.clone(), flaw).map_err(OpenError::Gate)?;
        let model = if flaw == Some(Flaw::GatedActionBeforeAnswer) {
            ScriptedModel::confirming_after_acting()
        } else {
            ScriptedModel::default()
        };
        let model = model.variant(variant);
        let mut pauses = Pauses::new(Arc::clone(&store), run, flaw);
        if variant == Some(Variant::JwtPauseTokens) {
            let signer = Signer::in_dir(ctx.durable_dir()).map_err(OpenError::Secret)?;
            pauses = pauses.signing(signer);
        }
        if variant == Some(Variant::TimeOrderedPauseTokens) {
            pauses = pauses.time_ordered();
        }
        if variant == Some(Variant::ResetIsNewSession) {
            pauses = pauses.per_session();
        }
        Ok(Self {
            pauses,
            store,
            ledger: ctx.ledger().clone(),
            model: Box::new(model),
            extractor: Box::new(RuleExtractor {
                support_since_first_seen: flaw == Some(Flaw::PromotionCountsTurnsSinceFirstSeen),
                ..RuleExtractor::default()
            }),
            tools,
            contributed,
            door,
            gate,
            flaw,
            variant,
            turns: 0,
            process_effects: std::sync::atomic::AtomicU64::new(0),
            clock: ctx.clock().clone(),
            process_calls: std::sync::atomic::AtomicU64::new(0),
            previous_results: std::collections::HashMap::new(),
            last_tool: None,
            on_carrier_server: ctx.mcp_url().is_some(),
            carried_out: BTreeSet::new(),
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

    fn is(&self, variant: Variant) -> bool {
        self.variant == Some(variant)
    }

    /// The recall block for a turn in `conversation`: every approved
    /// procedure, read from the store.
    fn recall(&self, conversation: &str) -> Result<Vec<String>, TurnError> {
        let shown = |p: &StoredProcedure| match p.status {
            Status::Approved if self.has(Flaw::RecallScopedToReviewConversation) => {
                p.reviewed_in == conversation
            }
            Status::Approved => true,
            Status::Draft => self.has(Flaw::DraftLeaksIntoPrompt),
            Status::Revoked => self.has(Flaw::RevokedStaysInRecall),
            Status::Rejected | Status::Guardrail => false,
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

    /// The procedural evidence every turn publishes, read back from the
    /// store: the review rows, the approved procedures as data and their
    /// identities, and the identities of what the gate read this turn.
    fn procedural_attributes(
        &self,
        builder: TurnRecordBuilder,
        consulted: &BTreeSet<String>,
    ) -> Result<TurnRecordBuilder, TurnError> {
        Ok(builder
            .attribute("procedural_review", self.door.rows()?)
            .attribute("procedural_review_ids", self.door.approved_ids()?)
            .attribute("procedural_review_procedures", self.door.published()?)
            .attribute(
                "procedural_enforcement_ids",
                self.door.enforced_ids(consulted)?,
            ))
    }

    /// The door an operator's turn comes through. It decides procedures and
    /// nothing else: it runs no model and no tool.
    fn operator_turn(
        &mut self,
        request: &PromptRequest,
        command: Result<OperatorCommand, String>,
    ) -> Result<TurnRecord, TurnError> {
        let command = command.map_err(|why| TurnError::new("OperatorCommandError", why))?;
        let conversation = request.conversation.as_str();
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
                // The twin binds the approval to the tool the desk ran
                // last, as if the review were about the latest call.
                let tool = match &self.last_tool {
                    Some(last) if self.has(Flaw::ReviewBindsLastTool) => last,
                    _ => tool,
                };
                self.door
                    .approve(selector, tool, predicates, conversation)?;
                format!(
                    "Approved; it now governs {tool} under {} state predicate(s).",
                    predicates.len()
                )
            }
            OperatorCommand::Reject { selector } => {
                self.door.reject(selector, conversation)?;
                "Rejected; it will not be drafted again.".to_owned()
            }
        };
        let builder = TurnRecord::builder().answer(answer);
        Ok(self
            .procedural_attributes(builder, &BTreeSet::new())?
            .build())
    }

    /// Which door a prompt goes through: an operator's turn is a command to
    /// the review door, whatever it says; a user's turn is chat, whatever it
    /// says (a user writing "approve ..." approves nothing).
    fn operator_command(request: &PromptRequest) -> Option<Result<OperatorCommand, String>> {
        (request.role == Role::Operator).then(|| {
            OperatorCommand::parse(&request.prompt)
                .unwrap_or_else(|| Err("not an operator command".to_owned()))
        })
    }
}

impl Target for Helpdesk {
    fn capabilities(&self) -> CapabilityEvidence {
        let evidence = CapabilityEvidence::new()
            .capability("tools")
            .capability("human")
            .with_trait(PROCEDURAL_PRECONDITION)
            .with_trait(PROCEDURAL_REVIEW)
            .with_trait(IDEMPOTENT_EFFECTS)
            .operation("resume")
            .operation("review")
            .operation(RESET)
            .with_trait(REPLICAS)
            .with_trait(CONTEXT_CLOCK)
            // Each pause has its own checkpoint and token, so a conversation
            // may hold several at once, each answered on its own.
            .with_trait(CONCURRENT_PAUSES);
        // A person may edit the cancellation the desk holds for them.
        let evidence = if self.variant.is_some_and(Variant::holds_the_call) {
            evidence.with_trait(EDITABLE_CALLS)
        } else {
            evidence
        };
        let evidence = if self.on_carrier_server {
            evidence.with_trait(symfonic_evals::mcp::MCP_FIXTURE)
        } else {
            evidence
        };
        self.contributed
            .iter()
            .fold(evidence, |e, tool| e.contributes("extensions", tool))
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        self.turns += 1;
        let command = if self.has(Flaw::ReviewDoorOpenToUsers) {
            // Routed on the prompt's words: anyone who says "approve" is heard.
            OperatorCommand::parse(&request.prompt)
        } else if self.has(Flaw::OperatorRightsByConversationName)
            && request.conversation.contains("operator")
        {
            // Routed on the channel: whoever writes in the operator's
            // conversation is heard as the operator.
            OperatorCommand::parse(&request.prompt)
        } else {
            Self::operator_command(request)
        };
        if let Some(command) = command {
            return self.operator_turn(request, command);
        }
        self.user_turn(request)
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        self.redeem(request)
    }

    /// A user starting the conversation over: the pauses it had pending
    /// are forgotten in the store, so their tokens are refused after it.
    fn reset(&mut self, request: &ResetRequest) -> Result<TurnRecord, TurnError> {
        self.pauses.forget(&request.conversation)?;
        Ok(TurnRecord::builder().answer("conversation reset").build())
    }

    fn review_procedure(&mut self, request: &ReviewRequest) -> Result<TurnRecord, TurnError> {
        let conversation = request.conversation.as_str();
        match &request.action {
            ReviewAction::Approve {
                procedure,
                draft,
                tool,
                precondition,
            } => self
                .door
                .approve_named(draft, procedure, tool, precondition, conversation)?,
            ReviewAction::Amend {
                procedure,
                precondition,
            } => self.door.amend(procedure, precondition, conversation)?,
            ReviewAction::Revoke { procedure } => self.door.revoke(procedure, conversation)?,
            ReviewAction::Reject { draft } => self.door.reject_named(draft, conversation)?,
        }
        let builder = TurnRecord::builder().answer(format!("{} done", request.action.verb()));
        Ok(self
            .procedural_attributes(builder, &BTreeSet::new())?
            .build())
    }
}
