//! A refund desk that learns, reviews, persists and enforces one procedure.
//!
//! Its store is a JSON file in the trial's durable directory, so an approval
//! survives a restart; the ledger comes from the [`TargetContext`]. Each
//! [`ProceduralFlaw`] breaks exactly one of the five facts the pack checks.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use symfonic_evals::contracts::skill_applies;
use symfonic_evals::{
    procedural_review_rows, procedure_identity, CapabilityEvidence, PromptRequest, Role,
    StageOutcome, StageRecord, Target, TargetContext, ToolCall, TurnError, TurnRecord,
    TurnRecordBuilder, PROCEDURAL_PRECONDITION, PROCEDURAL_REVIEW,
};

/// The tool the procedure governs.
pub const TOOL: &str = "issue_refund";
/// Text the recall block shows once the procedure is approved.
pub const FRAGMENT: &str = "verify the account region";
/// The precondition stage's name in the governance trace.
pub const STAGE: &str = "procedural_precondition";

/// One way the desk can be broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProceduralFlaw {
    /// The gate rejects the blocked call, and the tool runs anyway.
    ToolRanAnyway,
    /// A refused call still writes to the ledger.
    LedgerMovedOnRefusal,
    /// Drafts are recalled into the model input before anyone reviewed them.
    DraftInRecall,
    /// The gate enforces drafts as if they were approved.
    DraftGoverns,
    /// The approval lives only in process memory.
    ApprovalNotPersisted,
    /// The gate names procedures differently from the review door.
    IdsDiffer,
    /// Consolidation never promotes anything.
    NeverPromotes,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    episodes: u32,
    procedures: Vec<Procedure>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Procedure {
    status: String,
    tool: String,
    precondition: Value,
    text: String,
}

impl Procedure {
    fn identity(&self) -> String {
        procedure_identity(&self.tool, &self.precondition, &self.text)
    }

    /// Judged by the library's own evaluator, as a faithful gate does.
    fn holds(&self, state: &Value) -> bool {
        skill_applies(state, &self.precondition)
    }
}

/// The deployment.
pub struct RefundDesk {
    ledger: symfonic_evals::SideEffectLedger,
    path: PathBuf,
    store: Store,
    flaw: Option<ProceduralFlaw>,
    calls: u32,
}

impl RefundDesk {
    /// Opens the desk on the trial's durable store.
    pub fn open(context: &TargetContext, flaw: Option<ProceduralFlaw>) -> Self {
        let path = context.durable_path("procedures.json");
        let store = std::fs::read(&path)
            .ok()
            .map(|bytes| serde_json::from_slice(&bytes).expect("a readable store"))
            .unwrap_or_default();
        Self {
            ledger: context.ledger().clone(),
            path,
            store,
            flaw,
            calls: 0,
        }
    }

    fn has(&self, flaw: ProceduralFlaw) -> bool {
        self.flaw == Some(flaw)
    }

    fn save(&self) {
        let bytes = serde_json::to_vec(&self.store).expect("the store serializes");
        std::fs::write(&self.path, bytes).expect("the durable store is writable");
    }

    fn approved(&self) -> impl Iterator<Item = &Procedure> {
        self.store
            .procedures
            .iter()
            .filter(|p| p.status == symfonic_evals::APPROVED)
    }

    /// What the review door shows, published on every turn.
    fn with_review(&self, builder: TurnRecordBuilder) -> TurnRecordBuilder {
        let rows = procedural_review_rows(
            self.store
                .procedures
                .iter()
                .map(|p| (p.status.as_str(), p.tool.as_str())),
        );
        let mut ids: Vec<String> = self.approved().map(Procedure::identity).collect();
        ids.sort();
        let published: Vec<Value> = self
            .approved()
            .map(|p| json!({"tool": p.tool, "precondition": p.precondition, "text": p.text}))
            .collect();
        builder
            .attribute("procedural_review", rows)
            .attribute("procedural_review_ids", ids)
            .attribute("procedural_review_procedures", published)
    }

    fn demonstrate(&mut self, rejected: bool) -> TurnRecord {
        if rejected {
            // A reviewer rejected this handling: answered, never learned from.
            return self
                .with_review(TurnRecord::builder().answer("noted"))
                .attribute("procedural_promoted", 0)
                .build();
        }
        self.store.episodes += 1;
        let ready = self.store.episodes >= 2 && self.store.procedures.is_empty();
        let promoted = u32::from(ready && !self.has(ProceduralFlaw::NeverPromotes));
        if promoted == 1 {
            self.store.procedures.push(Procedure {
                status: "draft".into(),
                tool: String::new(),
                precondition: json!([{"state": {"path": "region", "op": "eq", "value": "US"}}]),
                text: format!("{FRAGMENT} before any refund"),
            });
        }
        self.save();
        self.with_review(TurnRecord::builder().answer("noted"))
            .attribute("procedural_promoted", promoted)
            .build()
    }

    fn review(&mut self) -> TurnRecord {
        for procedure in &mut self.store.procedures {
            procedure.status = symfonic_evals::APPROVED.into();
            procedure.tool = TOOL.into();
        }
        if !self.has(ProceduralFlaw::ApprovalNotPersisted) {
            self.save();
        }
        self.with_review(TurnRecord::builder().answer("approved"))
            .build()
    }

    fn act(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let state = request
            .state
            .as_ref()
            .ok_or_else(|| TurnError::new("MissingState", "an action turn needs state"))?;
        let is_draft = |p: &&Procedure| p.status == "draft";
        let governing: Vec<&Procedure> = self
            .store
            .procedures
            .iter()
            .filter(|p| !is_draft(p) || self.has(ProceduralFlaw::DraftGoverns))
            .collect();
        let recalled: Vec<&str> = self
            .store
            .procedures
            .iter()
            .filter(|p| !is_draft(p) || self.has(ProceduralFlaw::DraftInRecall))
            .map(|p| p.text.as_str())
            .collect();
        let model_input = format!(
            "system: refund desk\nrecall:\n{}\nuser: {}",
            recalled.join("\n"),
            request.prompt
        );
        let mut enforcement: Vec<String> = governing
            .iter()
            .map(|p| {
                if self.has(ProceduralFlaw::IdsDiffer) {
                    procedure_identity(&p.tool, &Value::Null, &p.text)
                } else {
                    p.identity()
                }
            })
            .collect();
        enforcement.sort();
        let checked = governing.len() as u64;
        let admitted = governing.iter().all(|p| p.holds(state));
        let stage = match (checked, admitted) {
            (0, _) => StageRecord::new(STAGE, StageOutcome::Abstained),
            (_, true) => StageRecord::new(STAGE, StageOutcome::Passed).count("checked", checked),
            (_, false) => StageRecord::new(STAGE, StageOutcome::Rejected)
                .count("checked", checked)
                .count("refused", 1),
        };
        self.calls += 1;
        let id = format!("call-{}", self.calls);
        let arguments = json!({"order": request.prompt});
        let key = format!("refund:{}", request.prompt);
        let call = if admitted || self.has(ProceduralFlaw::ToolRanAnyway) {
            self.ledger.record(&key);
            ToolCall::succeeded(id, TOOL, arguments, json!("refunded"))
        } else {
            if self.has(ProceduralFlaw::LedgerMovedOnRefusal) {
                self.ledger.record(&format!("{key}:refused"));
            }
            ToolCall::refused(id, TOOL, arguments, STAGE)
        };
        Ok(self
            .with_review(TurnRecord::builder().answer("done"))
            .model_input(model_input)
            .stage(stage)
            .tool_call(call)
            .attribute("procedural_enforcement_ids", enforcement)
            .build())
    }
}

impl Target for RefundDesk {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
            .capability("tools")
            .with_trait(PROCEDURAL_PRECONDITION)
            .with_trait(PROCEDURAL_REVIEW)
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        if request.role == Role::Operator && request.prompt.starts_with("approve") {
            Ok(self.review())
        } else if request.prompt.starts_with("demonstrate") {
            Ok(self.demonstrate(request.is_rejected()))
        } else if request.prompt.starts_with("refund") {
            self.act(request)
        } else {
            // Anything else a user says is chat: it reviews nothing.
            Ok(self
                .with_review(TurnRecord::builder().answer("only an operator reviews procedures"))
                .build())
        }
    }
}
