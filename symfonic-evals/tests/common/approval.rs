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

/// How the desk mints its tokens and finds the pause a presented token
/// redeems.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TokenCheck {
    /// Plain `tok-<random hex>` tokens, looked up exactly.
    #[default]
    Exact,
    /// 16 bytes as unpadded base64url (22 characters, the last carrying
    /// four unused bits), decoded before they are looked up: correct, as
    /// every base64 library decodes.
    Decoded,
    /// Base64url tokens; a presented token redeems the pause whose token
    /// starts with it.
    Prefix,
    /// Base64url tokens compared without regard to letter case.
    CaseInsensitive,
    /// Base64url tokens compared only up to the genuine token's length.
    LengthBounded,
}

impl TokenCheck {
    fn mint(self, n: usize) -> String {
        match self {
            // Random: a counter is a predictable token.
            Self::Exact => {
                use std::hash::BuildHasher;
                let random = std::collections::hash_map::RandomState::new().hash_one(n);
                format!("tok-{random:016x}")
            }
            _ => {
                let bytes: Vec<u8> = (0..16).map(|i| (n * 37 + i * 11) as u8).collect();
                base64url(&bytes)
            }
        }
    }

    /// Whether `presented` redeems the pause that minted `genuine`.
    fn redeems(self, genuine: &str, presented: &str) -> bool {
        match self {
            Self::Exact => genuine == presented,
            Self::Decoded => {
                let decoded = debase64url(presented);
                decoded.is_some() && decoded == debase64url(genuine)
            }
            Self::Prefix => !presented.is_empty() && genuine.starts_with(presented),
            Self::CaseInsensitive => genuine.eq_ignore_ascii_case(presented),
            Self::LengthBounded => presented.starts_with(genuine),
        }
    }
}

const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url(bytes: &[u8]) -> String {
    let mut bits = String::new();
    for byte in bytes {
        bits.push_str(&format!("{byte:08b}"));
    }
    bits.as_bytes()
        .chunks(6)
        .map(|sextet| {
            let mut value = 0;
            for (i, bit) in sextet.iter().enumerate() {
                value |= usize::from(*bit == b'1') << (5 - i);
            }
            char::from(URL_SAFE[value])
        })
        .collect()
}

/// Decodes unpadded base64url as libraries do: the leftover bits of the
/// last character are dropped.
fn debase64url(text: &str) -> Option<Vec<u8>> {
    let mut bits = String::new();
    for c in text.bytes() {
        let value = URL_SAFE.iter().position(|&a| a == c)?;
        bits.push_str(&format!("{value:06b}"));
    }
    if text.len() % 4 == 1 {
        return None;
    }
    Some(
        bits.as_bytes()
            .chunks_exact(8)
            .map(|byte| {
                byte.iter()
                    .fold(0, |n, bit| n << 1 | u8::from(*bit == b'1'))
            })
            .collect(),
    )
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
    tokens: TokenCheck,
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
            tokens: TokenCheck::Exact,
        }
    }

    /// The same desk minting and checking its tokens as `tokens` says.
    #[allow(dead_code)]
    pub fn checking(mut self, tokens: TokenCheck) -> Self {
        self.tokens = tokens;
        self
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
        let token = self.tokens.mint(n);
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
        let tokens = self.tokens;
        let pending = self
            .pending
            .iter_mut()
            .find(|(genuine, _)| tokens.redeems(genuine, &request.token))
            .map(|(_, pending)| pending)
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
