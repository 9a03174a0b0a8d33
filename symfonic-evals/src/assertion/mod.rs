//! The assertions a pack makes about one step's evidence.
//!
//! Each assertion reads what the deployment reported (or the ledger the
//! harness owns) and answers with a [`Check`]: whether it held, what was
//! expected, and what was observed, the latter as a digest whenever it could
//! carry turn content.

mod check;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::evidence::StageOutcome;

pub use check::Check;

/// One claim about a step's evidence.
#[derive(Debug, Clone, PartialEq)]
pub enum Assertion {
    /// The fact `name` equals `expected` exactly (JSON equality).
    AttributeEquals {
        /// The attribute (or pause fact) to read.
        name: String,
        /// The value it must hold.
        expected: Value,
    },
    /// The fact `name` is a count, or a collection whose length is, at least `minimum`.
    AttributeCount {
        /// The attribute to read.
        name: String,
        /// The least acceptable count.
        minimum: u64,
    },
    /// Two attributes are present, equal and non-empty.
    AttributesSameNonEmpty {
        /// One attribute.
        left: String,
        /// The other.
        right: String,
    },
    /// The model input contains the fragment.
    PromptRecallContains(String),
    /// The model input does not contain the fragment.
    PromptRecallExcludes(String),
    /// The tool was called exactly `times` times (with exactly `arguments`, if given).
    ToolCalled {
        /// The tool's name.
        tool: String,
        /// How many calls.
        times: usize,
        /// The exact arguments each counted call must carry.
        arguments: Option<Value>,
    },
    /// The tool ran and returned a result exactly `times` times.
    ToolSucceeded {
        /// The tool's name.
        tool: String,
        /// How many successful calls.
        times: usize,
    },
    /// At least `minimum` tool calls, and no id repeated.
    ToolCallIdsUnique {
        /// The least number of calls.
        minimum: usize,
    },
    /// The harness ledger shows exactly these counts after the step.
    SideEffectCount {
        /// Calls that reached the effect.
        attempts: u64,
        /// Effects applied.
        effects: u64,
        /// Attempts whose key had already been applied.
        duplicates: u64,
    },
    /// The governance trace has the stage (with the outcome, if given) and
    /// its counts reach the minimums.
    StageObserved {
        /// The stage's name.
        stage: String,
        /// The outcome it must have had, if any.
        outcome: Option<StageOutcome>,
        /// Least values of named counts, summed over the matching records.
        minimum_counts: BTreeMap<String, u64>,
    },
    /// The answer contains every fragment.
    ResponseContains(Vec<String>),
}

impl Assertion {
    /// The assertion's kind, as failures name it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::AttributeEquals { .. } => "AttributeEquals",
            Self::AttributeCount { .. } => "AttributeCount",
            Self::AttributesSameNonEmpty { .. } => "AttributesSameNonEmpty",
            Self::PromptRecallContains(_) => "PromptRecallContains",
            Self::PromptRecallExcludes(_) => "PromptRecallExcludes",
            Self::ToolCalled { .. } => "ToolCalled",
            Self::ToolSucceeded { .. } => "ToolSucceeded",
            Self::ToolCallIdsUnique { .. } => "ToolCallIdsUnique",
            Self::SideEffectCount { .. } => "SideEffectCount",
            Self::StageObserved { .. } => "StageObserved",
            Self::ResponseContains(_) => "ResponseContains",
        }
    }

    /// A one-line description naming the assertion's parameters (never any
    /// observed value).
    pub fn describe(&self) -> String {
        match self {
            Self::AttributeEquals { name, .. } => format!("AttributeEquals({name})"),
            Self::AttributeCount { name, minimum } => {
                format!("AttributeCount({name}, minimum={minimum})")
            }
            Self::AttributesSameNonEmpty { left, right } => {
                format!("AttributesSameNonEmpty({left}, {right})")
            }
            Self::PromptRecallContains(_) => "PromptRecallContains(fragment)".into(),
            Self::PromptRecallExcludes(_) => "PromptRecallExcludes(fragment)".into(),
            Self::ToolCalled {
                tool,
                times,
                arguments,
            } => match arguments {
                Some(_) => format!("ToolCalled({tool}, times={times}, with arguments)"),
                None => format!("ToolCalled({tool}, times={times})"),
            },
            Self::ToolSucceeded { tool, times } => format!("ToolSucceeded({tool}, times={times})"),
            Self::ToolCallIdsUnique { minimum } => format!("ToolCallIdsUnique(minimum={minimum})"),
            Self::SideEffectCount {
                attempts,
                effects,
                duplicates,
            } => format!(
                "SideEffectCount(attempts={attempts}, effects={effects}, duplicates={duplicates})"
            ),
            Self::StageObserved {
                stage,
                outcome,
                minimum_counts,
            } => {
                let mut text = format!("StageObserved({stage}");
                if let Some(outcome) = outcome {
                    text.push_str(&format!(", outcome={outcome}"));
                }
                for (name, least) in minimum_counts {
                    text.push_str(&format!(", {name}>={least}"));
                }
                text.push(')');
                text
            }
            Self::ResponseContains(fragments) => {
                format!("ResponseContains({} fragments)", fragments.len())
            }
        }
    }

    /// A tool-called assertion with no argument constraint.
    pub fn tool_called(tool: impl Into<String>, times: usize) -> Self {
        Self::ToolCalled {
            tool: tool.into(),
            times,
            arguments: None,
        }
    }

    /// A tool-succeeded assertion.
    pub fn tool_succeeded(tool: impl Into<String>, times: usize) -> Self {
        Self::ToolSucceeded {
            tool: tool.into(),
            times,
        }
    }

    /// An attribute-equals assertion.
    pub fn attribute_equals(name: impl Into<String>, expected: Value) -> Self {
        Self::AttributeEquals {
            name: name.into(),
            expected,
        }
    }

    /// An attributes-same-non-empty assertion.
    pub fn same_non_empty(left: impl Into<String>, right: impl Into<String>) -> Self {
        Self::AttributesSameNonEmpty {
            left: left.into(),
            right: right.into(),
        }
    }

    /// A stage-observed assertion.
    pub fn stage_observed(
        stage: impl Into<String>,
        outcome: Option<StageOutcome>,
        minimum_counts: impl IntoIterator<Item = (&'static str, u64)>,
    ) -> Self {
        Self::StageObserved {
            stage: stage.into(),
            outcome,
            minimum_counts: minimum_counts
                .into_iter()
                .map(|(name, n)| (name.to_owned(), n))
                .collect(),
        }
    }
}
