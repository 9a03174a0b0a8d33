//! What the harness asks a deployment to do.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which door of the deployment a step goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// A prompt turn.
    Prompt,
    /// Redeeming a pause with a person's answer.
    Resume,
}

impl Operation {
    /// The lowercase name a deployment declares in its capability evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prompt => "prompt",
            Self::Resume => "resume",
        }
    }
}

/// A prompt turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptRequest {
    /// The conversation the turn belongs to.
    pub conversation: String,
    /// The prompt text.
    pub prompt: String,
    /// The explicit turn state (a JSON object), for steps that declare one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
}

/// Redeeming the latest pause of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResumeRequest {
    /// The conversation that paused.
    pub conversation: String,
    /// The token the pause issued, retained by the harness.
    pub token: String,
    /// What the person answered.
    pub answer: Value,
}
