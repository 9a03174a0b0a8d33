//! What a stage judges, what it answers, and the trait it implements.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::rulebook::{FailureMode, Phase};

/// The thing under judgment on one rung of a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Payload {
    /// The user's query, before the model reads it.
    Query {
        /// The query text.
        text: String,
    },
    /// A tool call the model asked for, before it is admitted.
    ToolCall {
        /// The tool's registered name.
        tool: String,
        /// The JSON arguments the model passed.
        arguments: Value,
    },
    /// A tool's result, before the model sees it.
    ToolResult {
        /// The tool that produced it.
        tool: String,
        /// What it returned.
        result: Value,
    },
    /// The draft answer, before it is released.
    Draft {
        /// The answer text.
        answer: String,
    },
}

/// What passes through a pipeline: the payload plus the turn's context.
///
/// Stages take it mutably, so a scrubber can redact a secret before any later
/// stage, or the tool itself, sees it.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::{Payload, Phase, Subject};
///
/// let subject = Subject::tool_call("issue_refund", json!({"order": 3}))
///     .with_state(json!({"region": "US"}))
///     .with_prior_tool_calls(1);
/// assert_eq!(subject.phase(), Phase::ToolCall);
/// assert!(matches!(subject.payload, Payload::ToolCall { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subject {
    /// What is being judged.
    pub payload: Payload,
    /// The turn's explicit state (`null` when the turn declared none).
    pub state: Value,
    /// Tool calls already admitted earlier in this turn.
    pub prior_tool_calls: u32,
    /// Identities of the stored procedures stages read while judging, in the
    /// order first read; a deployment reports these as enforcement evidence.
    pub consulted: Vec<String>,
}

impl Subject {
    fn of(payload: Payload) -> Self {
        Self {
            payload,
            state: Value::Null,
            prior_tool_calls: 0,
            consulted: Vec::new(),
        }
    }

    /// A query about to reach the model.
    pub fn query(text: impl Into<String>) -> Self {
        Self::of(Payload::Query { text: text.into() })
    }

    /// A tool call about to be admitted.
    pub fn tool_call(tool: impl Into<String>, arguments: Value) -> Self {
        Self::of(Payload::ToolCall {
            tool: tool.into(),
            arguments,
        })
    }

    /// A tool result about to reach the model.
    pub fn tool_result(tool: impl Into<String>, result: Value) -> Self {
        Self::of(Payload::ToolResult {
            tool: tool.into(),
            result,
        })
    }

    /// A draft answer about to be released.
    pub fn draft(answer: impl Into<String>) -> Self {
        Self::of(Payload::Draft {
            answer: answer.into(),
        })
    }

    /// Sets the turn state predicates are judged against.
    #[must_use]
    pub fn with_state(mut self, state: Value) -> Self {
        self.state = state;
        self
    }

    /// Sets how many tool calls this turn already made.
    #[must_use]
    pub fn with_prior_tool_calls(mut self, calls: u32) -> Self {
        self.prior_tool_calls = calls;
        self
    }

    /// The rung this payload belongs to.
    pub fn phase(&self) -> Phase {
        match self.payload {
            Payload::Query { .. } => Phase::Query,
            Payload::ToolCall { .. } => Phase::ToolCall,
            Payload::ToolResult { .. } => Phase::ToolResult,
            Payload::Draft { .. } => Phase::Draft,
        }
    }

    /// Records that a stage read the stored procedure `id` (once).
    pub fn consult(&mut self, id: impl Into<String>) {
        let id = id.into();
        if !self.consulted.contains(&id) {
            self.consulted.push(id);
        }
    }
}

/// A stage's decision, before the pipeline applies observe mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Judgement {
    /// Looked and admitted.
    Pass,
    /// Looked and refused.
    Reject,
    /// Had nothing to judge.
    Abstain,
}

/// What a stage answered, with the named counts it reports.
///
/// ```
/// use symfonic_evals::contracts::{Judgement, StageVerdict};
///
/// let verdict = StageVerdict::reject("precondition does not hold").count("refused", 1);
/// assert_eq!(verdict.judgement, Judgement::Reject);
/// assert_eq!(verdict.counts["refused"], 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageVerdict {
    /// The decision.
    pub judgement: Judgement,
    /// Why, for a rejection. Must not quote turn content.
    pub reason: Option<String>,
    /// Named counts such as `checked` and `refused`.
    pub counts: BTreeMap<String, u64>,
}

impl StageVerdict {
    fn of(judgement: Judgement, reason: Option<String>) -> Self {
        Self {
            judgement,
            reason,
            counts: BTreeMap::new(),
        }
    }

    /// The stage looked and admitted.
    pub fn pass() -> Self {
        Self::of(Judgement::Pass, None)
    }

    /// The stage looked and refused, for `reason` (which must not quote turn content).
    pub fn reject(reason: impl Into<String>) -> Self {
        Self::of(Judgement::Reject, Some(reason.into()))
    }

    /// The stage had nothing to judge.
    pub fn abstain() -> Self {
        Self::of(Judgement::Abstain, None)
    }

    /// Adds `n` to the count called `name` (recorded even when zero).
    #[must_use]
    pub fn count(mut self, name: impl Into<String>, n: u64) -> Self {
        *self.counts.entry(name.into()).or_insert(0) += n;
        self
    }
}

/// A stage that could not reach a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageError {
    message: String,
}

impl StageError {
    /// An error saying what failed; must not quote turn content.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for StageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StageError {}

/// One governance stage. Its declared phase and failure mode must equal its
/// rule's, or a pipeline refuses it: a guard declared fail-open where the
/// rulebook says fail-closed is a disarmed guard.
///
/// ```
/// use symfonic_evals::contracts::{
///     FailureMode, GovernanceStage, Payload, Phase, StageError, StageVerdict, Subject,
/// };
///
/// /// Refuses any draft answer that is empty.
/// struct NonEmpty;
///
/// impl GovernanceStage for NonEmpty {
///     fn name(&self) -> &str { "reflection" }
///     fn phase(&self) -> Phase { Phase::Draft }
///     fn failure_mode(&self) -> FailureMode { FailureMode::FailOpen }
///     fn judge(&self, subject: &mut Subject) -> Result<StageVerdict, StageError> {
///         Ok(match &subject.payload {
///             Payload::Draft { answer } if answer.trim().is_empty() => StageVerdict::reject("empty answer"),
///             Payload::Draft { .. } => StageVerdict::pass(),
///             _ => StageVerdict::abstain(),
///         })
///     }
/// }
///
/// assert!(NonEmpty.judge(&mut Subject::draft("done")).is_ok());
/// ```
pub trait GovernanceStage: Send + Sync {
    /// The stage's name, as the rulebook knows it.
    fn name(&self) -> &str;
    /// The rung the stage declares it belongs to.
    fn phase(&self) -> Phase;
    /// How the stage declares it must be contained when it breaks.
    fn failure_mode(&self) -> FailureMode;
    /// Judges `subject`, possibly rewriting it (for example to redact).
    fn judge(&self, subject: &mut Subject) -> Result<StageVerdict, StageError>;
}

type Judge = dyn Fn(&mut Subject) -> Result<StageVerdict, StageError> + Send + Sync;

/// A stage made from a closure, for small policies that need no type of their own.
///
/// ```
/// use symfonic_evals::contracts::{FailureMode, FnStage, GovernanceStage, Phase, StageVerdict, Subject};
///
/// let critic = FnStage::new("reflection", Phase::Draft, FailureMode::FailOpen, |_subject| {
///     Ok(StageVerdict::pass())
/// });
/// assert_eq!(critic.name(), "reflection");
/// assert!(critic.judge(&mut Subject::draft("ok")).is_ok());
/// ```
pub struct FnStage {
    name: String,
    phase: Phase,
    failure_mode: FailureMode,
    judge: Box<Judge>,
}

impl FnStage {
    /// A stage named `name` that judges with `judge`.
    pub fn new<F>(
        name: impl Into<String>,
        phase: Phase,
        failure_mode: FailureMode,
        judge: F,
    ) -> Self
    where
        F: Fn(&mut Subject) -> Result<StageVerdict, StageError> + Send + Sync + 'static,
    {
        Self {
            name: name.into(),
            phase,
            failure_mode,
            judge: Box::new(judge),
        }
    }
}

impl fmt::Debug for FnStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnStage")
            .field("name", &self.name)
            .field("phase", &self.phase)
            .field("failure_mode", &self.failure_mode)
            .finish_non_exhaustive()
    }
}

impl GovernanceStage for FnStage {
    fn name(&self) -> &str {
        &self.name
    }

    fn phase(&self) -> Phase {
        self.phase
    }

    fn failure_mode(&self) -> FailureMode {
        self.failure_mode
    }

    fn judge(&self, subject: &mut Subject) -> Result<StageVerdict, StageError> {
        (self.judge)(subject)
    }
}
