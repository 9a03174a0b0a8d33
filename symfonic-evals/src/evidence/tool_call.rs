//! One tool call and how it ended.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a tool call ended. A call refused by a governance stage never ran; a
/// call parked by a pause has not ended yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool ran and returned `result`.
    Succeeded {
        /// What the tool returned.
        result: Value,
    },
    /// The tool ran and failed.
    Failed {
        /// The error the tool raised.
        error: String,
    },
    /// A governance stage refused the call before it ran.
    Refused {
        /// The stage that refused it.
        stage: String,
    },
    /// The call is parked by the pause that ended the turn: it is neither a
    /// success nor a failure until a resume resolves it.
    Pending,
}

/// A tool call the turn made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id; ids within one turn must be unique.
    pub id: String,
    /// The tool's registered name.
    pub name: String,
    /// The JSON arguments the model passed.
    pub arguments: Value,
    /// How it ended.
    pub outcome: ToolOutcome,
}

impl ToolCall {
    /// A call that ran and returned `result`.
    pub fn succeeded(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
        result: Value,
    ) -> Self {
        Self::with_outcome(id, name, arguments, ToolOutcome::Succeeded { result })
    }

    /// A call that ran and failed with `error`.
    pub fn failed(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
        error: impl Into<String>,
    ) -> Self {
        let error = error.into();
        Self::with_outcome(id, name, arguments, ToolOutcome::Failed { error })
    }

    /// A call that `stage` refused before it ran.
    pub fn refused(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
        stage: impl Into<String>,
    ) -> Self {
        let stage = stage.into();
        Self::with_outcome(id, name, arguments, ToolOutcome::Refused { stage })
    }

    /// A call parked by the pause that ended the turn (an interaction
    /// waiting for a person).
    pub fn pending(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self::with_outcome(id, name, arguments, ToolOutcome::Pending)
    }

    fn with_outcome(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
        outcome: ToolOutcome,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            outcome,
        }
    }

    /// Whether the tool ran and returned a result.
    pub fn is_success(&self) -> bool {
        matches!(self.outcome, ToolOutcome::Succeeded { .. })
    }

    /// Whether the call is parked by a pause.
    pub fn is_pending(&self) -> bool {
        matches!(self.outcome, ToolOutcome::Pending)
    }
}

/// A call parked by an earlier pause that this turn (a resume) settled: the
/// interaction got its answer. Reported apart from the turn's own calls, so a
/// resolution is never mistaken for the interaction being called again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolvedCall {
    /// The id the pending call had in the paused turn.
    pub id: String,
    /// How it ended now that it was resumed.
    pub outcome: ToolOutcome,
    /// The arguments the call ran with, when the resume ran it (the held
    /// action itself, approved): a person's edit shows here, where the
    /// pending call still carries what the model asked for. `None` when the
    /// call did not run or the deployment does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
}

impl ResolvedCall {
    /// The pending call `id`, resolved with `outcome`.
    pub fn new(id: impl Into<String>, outcome: ToolOutcome) -> Self {
        Self {
            id: id.into(),
            outcome,
            arguments: None,
        }
    }

    /// The same resolution, saying the call ran with `arguments`.
    #[must_use]
    pub fn ran_with(mut self, arguments: Value) -> Self {
        self.arguments = Some(arguments);
        self
    }
}
