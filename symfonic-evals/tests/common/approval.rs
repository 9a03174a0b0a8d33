//! A refund desk that pauses for a manager and resumes on the answer.
//!
//! Pending pauses live in a JSON file in the trial's durable directory, so a
//! spent token stays spent across a restart. Each [`ApprovalFlaw`] breaks one
//! fact the approval pack checks.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use symfonic_evals::{
    CapabilityEvidence, Pause, PromptRequest, ResolvedCall, ResumeRequest, Target, TargetContext,
    ToolCall, ToolOutcome, TurnError, TurnRecord,
};

/// The registered interaction that pauses the turn.
pub const INTERACTION: &str = "ask_manager";

/// One way the desk can be broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalFlaw {
    /// Says it paused (answer and hand-set attributes) but the turn completed.
    PauseDescribedOnly,
    /// A redeemed token can be redeemed again.
    TokenRedeemedTwice,
    /// The pause never recorded a checkpoint to rebuild from.
    NotBoundToCheckpoint,
    /// The token is spent but the paused turn is not continued.
    NotContinued,
    /// Spent tokens are remembered only in process memory.
    SpentOnlyInMemory,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Pending {
    conversation: String,
    call: String,
    checkpoint: Option<Value>,
    redeemed: bool,
}

/// The deployment.
pub struct ManagerDesk {
    path: PathBuf,
    pending: BTreeMap<String, Pending>,
    flaw: Option<ApprovalFlaw>,
}

impl ManagerDesk {
    /// Opens the desk on the trial's durable store.
    pub fn open(context: &TargetContext, flaw: Option<ApprovalFlaw>) -> Self {
        let path = context.durable_path("pauses.json");
        let pending = std::fs::read(&path)
            .ok()
            .map(|bytes| serde_json::from_slice(&bytes).expect("a readable store"))
            .unwrap_or_default();
        Self {
            path,
            pending,
            flaw,
        }
    }

    fn has(&self, flaw: ApprovalFlaw) -> bool {
        self.flaw == Some(flaw)
    }

    fn save(&self) {
        let bytes = serde_json::to_vec(&self.pending).expect("the store serializes");
        std::fs::write(&self.path, bytes).expect("the durable store is writable");
    }
}

impl Target for ManagerDesk {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
            .capability("human")
            .operation("resume")
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let n = self.pending.len() + 1;
        let call = format!("call-{n}");
        let question = json!({"question": request.prompt});
        if self.has(ApprovalFlaw::PauseDescribedOnly) {
            return Ok(TurnRecord::builder()
                .answer("I have paused and asked a manager")
                .tool_call(ToolCall::succeeded(
                    &call,
                    INTERACTION,
                    question,
                    json!("asked"),
                ))
                .attribute("paused", true)
                .attribute("pause_name", INTERACTION)
                .attribute("pause_resumable", true)
                .build());
        }
        let token = format!("tok-{n}");
        let checkpoint = (!self.has(ApprovalFlaw::NotBoundToCheckpoint))
            .then(|| json!({"prompt": request.prompt, "awaiting": INTERACTION}));
        self.pending.insert(
            token.clone(),
            Pending {
                conversation: request.conversation.clone(),
                call: call.clone(),
                checkpoint,
                redeemed: false,
            },
        );
        self.save();
        Ok(TurnRecord::builder()
            .answer("waiting for a manager")
            .tool_call(ToolCall::pending(call, INTERACTION, question))
            .paused(Pause::new(INTERACTION, true, token))
            .build())
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        let Some(approved) = request.answer.get("approved").and_then(Value::as_bool) else {
            return Err(TurnError::new(
                "AnswerRejected",
                "the answer must say yes or no",
            ));
        };
        let twice = self.has(ApprovalFlaw::TokenRedeemedTwice);
        let pending = self
            .pending
            .get_mut(&request.token)
            .ok_or_else(|| TurnError::new("UnknownPauseToken", "no such pause"))?;
        if pending.conversation != request.conversation {
            return Err(TurnError::new(
                "ForeignPauseToken",
                "this token belongs to another conversation",
            ));
        }
        if pending.redeemed && !twice {
            return Err(TurnError::new(
                "PauseTokenReplayedError",
                "this token was already redeemed",
            ));
        }
        pending.redeemed = true;
        let bound = pending.checkpoint.is_some();
        let call = pending.call.clone();
        if !self.has(ApprovalFlaw::SpentOnlyInMemory) {
            self.save();
        }
        let continued = bound && !self.has(ApprovalFlaw::NotContinued);
        Ok(TurnRecord::builder()
            .answer(if approved {
                "refund issued"
            } else {
                "refund declined"
            })
            .resolved(ResolvedCall::new(
                call,
                ToolOutcome::Succeeded {
                    result: request.answer.clone(),
                },
            ))
            .attribute("resume_outcome", "resumed")
            .attribute("resume_name", INTERACTION)
            .attribute("resume_checkpoint", bound)
            .attribute("resume_continued", continued)
            .build())
    }
}
