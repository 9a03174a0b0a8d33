//! A deployment that pauses a refund for a person's approval, redeems the
//! token once through its own resume operation (only in the conversation
//! that paused, and only for the question it asked), and refuses a replay;
//! and a twin that never marks a token spent.

use std::path::PathBuf;

use serde_json::{json, Value};
use symfonic_evals::{
    CapabilityEvidence, Pause, PromptRequest, ResolvedCall, ResumeRequest, Target, TargetContext,
    ToolCall, ToolOutcome, TurnError, TurnRecord,
};

const INTERACTION: &str = "approve_refund";

/// Whether a redeemed token is spent.
#[derive(Clone, Copy)]
pub enum Tokens {
    SingleUse,
    Reusable,
}

/// Pending pauses and spent tokens live in the durable directory, so a
/// restart between resume and replay changes nothing.
pub struct Approvals {
    store: PathBuf,
    trial: u32,
    tokens: Tokens,
}

impl Approvals {
    pub fn open(ctx: &TargetContext, tokens: Tokens) -> Self {
        Self {
            store: ctx.durable_path("pauses.json"),
            trial: ctx.trial(),
            tokens,
        }
    }

    fn load(&self) -> Value {
        std::fs::read_to_string(&self.store)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_else(|| json!({ "pending": {}, "spent": [] }))
    }

    fn save(&self, store: &Value) -> Result<(), TurnError> {
        std::fs::write(&self.store, store.to_string())
            .map_err(|e| TurnError::new("Store", e.to_string()))
    }
}

impl Target for Approvals {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
            .capability("human")
            .operation("resume")
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let mut store = self.load();
        let n = store["pending"].as_object().map_or(0, serde_json::Map::len);
        // Random, as a token must be: a counter is predictable.
        let random = {
            use std::hash::BuildHasher;
            std::collections::hash_map::RandomState::new().hash_one((self.trial, n))
        };
        let token = format!("pause-{random:016x}");
        let (call, question_id) = (format!("call-{n}"), format!("question-{n}"));
        store["pending"][&token] = json!({
            "conversation": request.conversation,
            "prompt": request.prompt,
            "call": call,
            "question": question_id,
        });
        self.save(&store)?;
        let question = json!({ "question": "approve this refund?" });
        Ok(TurnRecord::builder()
            .tool_call(ToolCall::pending(&call, INTERACTION, question.clone()))
            .paused(Pause::new(INTERACTION, true, token).asking(question, question_id))
            .answer("waiting for approval")
            .build())
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        let mut store = self.load();
        let spent = store["spent"]
            .as_array()
            .is_some_and(|s| s.contains(&json!(request.token)));
        if spent {
            return Err(TurnError::new(
                "PauseTokenReplayedError",
                "this pause was already answered",
            ));
        }
        let Some(checkpoint) = store["pending"]
            .get(&request.token)
            .filter(|pause| pause["conversation"] == json!(request.conversation))
            .cloned()
        else {
            return Err(TurnError::new(
                "UnknownPauseToken",
                "no pause in this conversation issued this token",
            ));
        };
        if request.question_id.as_deref() != checkpoint["question"].as_str() {
            return Err(TurnError::new(
                "UnknownQuestion",
                "the answer is for another question",
            ));
        }
        if request
            .answer
            .get("approved")
            .and_then(Value::as_bool)
            .is_none()
        {
            return Err(TurnError::new(
                "AnswerRejected",
                "the answer does not fit the question",
            ));
        }
        if matches!(self.tokens, Tokens::SingleUse) {
            if let Some(spent) = store["spent"].as_array_mut() {
                spent.push(json!(request.token));
            }
            self.save(&store)?;
        }
        let continued = checkpoint.get("prompt").is_some();
        let call = checkpoint["call"].as_str().unwrap_or_default();
        let answered = ToolOutcome::Succeeded {
            result: request.answer.clone(),
        };
        Ok(TurnRecord::builder()
            .resolved(ResolvedCall::new(call, answered))
            .attribute("resume_outcome", "resumed")
            .attribute("resume_name", INTERACTION)
            .attribute("resume_checkpoint", true)
            .attribute("resume_continued", continued)
            .answer("refund approved and issued")
            .build())
    }
}
