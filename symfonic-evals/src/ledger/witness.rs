//! Witness records: a tool body's own account of one execution.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How an execution ended, as the tool body saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum WitnessOutcome {
    /// The body returned `result`.
    Succeeded {
        /// What it returned.
        result: Value,
    },
    /// The body (or the upstream it called) failed.
    Failed {
        /// The error it saw.
        error: String,
    },
}

impl WitnessOutcome {
    /// A successful execution returning `result`.
    pub fn succeeded(result: Value) -> Self {
        Self::Succeeded { result }
    }

    /// A failed execution.
    pub fn failed(error: impl Into<String>) -> Self {
        Self::Failed {
            error: error.into(),
        }
    }

    /// Whether the body saw a success.
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Succeeded { .. })
    }
}

/// One execution a tool body witnessed: the arguments it actually received
/// and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Witness {
    /// The tool whose body ran.
    pub tool: String,
    /// The arguments the body received.
    pub arguments: Value,
    /// How it ended.
    pub outcome: WitnessOutcome,
}
