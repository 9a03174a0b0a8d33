//! A turn that failed, as a typed error a step can expect.

use serde::{Deserialize, Serialize};

/// A turn the deployment refused or could not run.
///
/// `kind` is what a step's expected error is compared with (for example
/// `PauseTokenReplayedError`); `message` is for people and is digested in
/// reports because it may quote turn content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnError {
    /// The error's kind, compared exactly with a step's expected error.
    pub kind: String,
    /// A human-readable account.
    pub message: String,
}

impl TurnError {
    /// An error of `kind`.
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            message: message.into(),
        }
    }
}

impl TurnError {
    /// What a deployment without the `resume` operation answers a resume with.
    pub fn resume_unsupported() -> Self {
        Self::new(
            "ResumeUnsupported",
            "this deployment declares no resume operation",
        )
    }
}

impl std::fmt::Display for TurnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for TurnError {}
