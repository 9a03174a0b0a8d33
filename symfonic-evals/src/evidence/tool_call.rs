//! One tool call and how it ended.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a tool call ended. A call refused by a governance stage never ran.
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
}
