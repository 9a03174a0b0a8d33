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
    /// An operator's decision through the structured review door.
    Review,
    /// Resetting (or cancelling) a conversation.
    Reset,
}

impl Operation {
    /// The lowercase name a deployment declares in its capability evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prompt => "prompt",
            Self::Resume => "resume",
            Self::Review => "review",
            Self::Reset => "reset",
        }
    }
}

/// Who is speaking in a turn. Reviews in real frameworks are admin actions
/// (an admin API, a review queue), not chat: an operator turn goes to the
/// deployment's operator door, and a deployment must route on this role,
/// never on the prompt's words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A user of the agent.
    #[default]
    User,
    /// An operator acting on the deployment (reviewing, approving).
    Operator,
}

impl Role {
    /// The lowercase name used on the wire and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Operator => "operator",
        }
    }

    fn is_user(&self) -> bool {
        *self == Self::User
    }
}

/// A reviewer's verdict on a demonstration, carried on the turn that
/// replays it: how a deployment that learns from its conversations is told
/// which of them it must not learn from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    /// A reviewer marked this handling wrong: the turn may be answered (and
    /// kept as a negative example, a guardrail that governs nothing), but
    /// no draft or procedure may be learned from it.
    Rejected,
}

impl Feedback {
    /// The lowercase name used on the wire and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rejected => "rejected",
        }
    }
}

/// A prompt turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptRequest {
    /// Who speaks: a user (the default) or an operator.
    #[serde(default, skip_serializing_if = "Role::is_user")]
    pub role: Role,
    /// The conversation the turn belongs to.
    pub conversation: String,
    /// The prompt text.
    pub prompt: String,
    /// The explicit turn state (a JSON object), for steps that declare one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    /// A reviewer's verdict on this demonstration, when it carries one
    /// (`"rejected"`: learn nothing from it); absent on ordinary turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<Feedback>,
}

impl PromptRequest {
    /// A user's prompt in `conversation`, with no explicit state.
    pub fn new(conversation: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            conversation: conversation.into(),
            prompt: prompt.into(),
            state: None,
            feedback: None,
        }
    }

    /// The same request with explicit turn state.
    #[must_use]
    pub fn with_state(mut self, state: Value) -> Self {
        self.state = Some(state);
        self
    }

    /// The same request spoken by `role`.
    #[must_use]
    pub fn by(mut self, role: Role) -> Self {
        self.role = role;
        self
    }

    /// The same request carrying a reviewer's `feedback`.
    #[must_use]
    pub fn with_feedback(mut self, feedback: Feedback) -> Self {
        self.feedback = Some(feedback);
        self
    }

    /// Whether a reviewer marked this demonstration rejected: nothing may
    /// be learned from it.
    pub fn is_rejected(&self) -> bool {
        self.feedback == Some(Feedback::Rejected)
    }
}

/// Redeeming the latest pause of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResumeRequest {
    /// The conversation that paused.
    pub conversation: String,
    /// The token the pause issued, retained by the harness.
    pub token: String,
    /// The id of the question the pause asked, when it published one: a
    /// redemption that needs the question's server-issued id gets it from
    /// the harness instead of keeping its own copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question_id: Option<String>,
    /// What the person answered.
    pub answer: Value,
}

/// A reset of one conversation (the `reset` operation): the user starts
/// over or cancels what is in flight, so whatever the conversation had
/// pending, a pause and its token included, must not outlive it. Declared
/// apart from a prompt because a deployment's reset is its own door (a
/// "new chat" button, a cancel endpoint), not a turn the model reads.
///
/// On the wire it is one object: `{"conversation"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResetRequest {
    /// The conversation to reset.
    pub conversation: String,
}

/// An operator's decision on a learned procedure, sent through the
/// deployment's structured review door (the `review` operation) rather than
/// as a chat turn: the harness acts as the operator, so it knows exactly
/// what was approved and can hold the published procedure to it.
///
/// On the wire it is one object: `{"conversation", "action", ...}` with the
/// action's fields beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRequest {
    /// The operator's conversation (an audit trail, as for an operator turn).
    pub conversation: String,
    /// What the operator decides.
    #[serde(flatten)]
    pub action: ReviewAction,
}

/// What an operator decides through the review door. Procedures are named
/// by the operator (`procedure`), so a later amendment or revocation says
/// which one it means without knowing the deployment's own ids.
///
/// A `precondition` is a list of state predicates
/// (`{"path", "op", "value"}`, see [`crate::contracts`]), all of which must
/// hold; the published procedure's state predicates must be exactly these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ReviewAction {
    /// Approve the one draft whose text contains `draft`, under the name
    /// `procedure`, governing `tool` when every predicate holds.
    Approve {
        /// The name the operator gives the approved procedure.
        procedure: String,
        /// Text of the draft's procedure that picks exactly one draft.
        draft: String,
        /// The tool it will govern.
        tool: String,
        /// The state predicates that must all hold.
        precondition: Vec<Value>,
    },
    /// Replace the precondition of the approved procedure `procedure`.
    Amend {
        /// Which approved procedure.
        procedure: String,
        /// Its new state predicates, replacing the old ones.
        precondition: Vec<Value>,
    },
    /// Withdraw the approved procedure `procedure`: it no longer governs.
    Revoke {
        /// Which approved procedure.
        procedure: String,
    },
    /// Reject the one draft whose text contains `draft`: it never governs,
    /// and the same lesson taught again does not bring it back as a draft
    /// or a procedure.
    Reject {
        /// Text of the draft's procedure that picks exactly one draft.
        draft: String,
    },
}

impl ReviewAction {
    /// The operator's verb, for reports (never a predicate's value).
    pub fn verb(&self) -> &'static str {
        match self {
            Self::Approve { .. } => "approve",
            Self::Amend { .. } => "amend",
            Self::Revoke { .. } => "revoke",
            Self::Reject { .. } => "reject",
        }
    }

    /// The procedure name the action is about; a rejection names no
    /// procedure (a draft has none yet), so it gives the draft's text.
    pub fn procedure(&self) -> &str {
        match self {
            Self::Approve { procedure, .. }
            | Self::Amend { procedure, .. }
            | Self::Revoke { procedure } => procedure,
            Self::Reject { draft } => draft,
        }
    }
}
