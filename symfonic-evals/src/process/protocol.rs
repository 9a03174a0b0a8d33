//! The wire protocol between the harness and an out-of-process deployment.
//!
//! One JSON object per line over the child's stdin (harness to child) and
//! stdout (child to harness). Every object carries a `type`. The shapes of
//! requests, turn records, typed errors and capability evidence are the
//! in-process evidence model's own serde forms, so a Python deployment and a
//! Rust one report exactly the same facts. The one-page description and the
//! JSON Schema live in `protocol/` at the repository root.

use serde::{Deserialize, Serialize};

use crate::capability::CapabilityEvidence;
use crate::evidence::{
    PromptRequest, ResetRequest, ResumeRequest, ReviewRequest, TurnError, TurnRecord,
};
use crate::ledger::WitnessOutcome;

/// The protocol version this harness speaks. A child declaring any other is
/// refused at the handshake rather than misread later.
pub const PROTOCOL_VERSION: u32 = 1;

/// Every version this harness can speak, offered in the handshake.
pub const SUPPORTED_VERSIONS: [u32; 1] = [PROTOCOL_VERSION];

/// A line the harness writes to the child's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HarnessMessage {
    /// Opens the session: the versions the harness speaks and the trial's
    /// durable directory (also passed on the command line and in the
    /// environment, so a deployment can open its store before reading stdin).
    Hello {
        /// Versions the harness can speak; the child picks one.
        protocol_versions: Vec<u32>,
        /// The directory that survives a restart within the trial.
        durable_dir: String,
        /// The zero-based trial number.
        trial: u32,
        /// How far ahead of the real clock the trial's clock runs, in
        /// milliseconds (additive in version 1; absent means zero): a
        /// deployment declaring `context-clock` adds it to every time it
        /// reads.
        #[serde(default, skip_serializing_if = "is_zero")]
        clock_offset_ms: u64,
    },
    /// Runs one prompt turn.
    Prompt {
        /// The request id the answer must carry.
        id: u64,
        /// The turn to run.
        request: PromptRequest,
    },
    /// Redeems a pause with a person's answer.
    Resume {
        /// The request id the answer must carry.
        id: u64,
        /// The redemption to perform.
        request: ResumeRequest,
    },
    /// An operator's decision through the structured review door
    /// (additive in version 1: sent only to a child that declared the
    /// `review` operation).
    Review {
        /// The request id the answer must carry.
        id: u64,
        /// The decision to carry out.
        request: ReviewRequest,
    },
    /// Resets (or cancels) a conversation (additive in version 1: sent
    /// only to a child that declared the `reset` operation).
    Reset {
        /// The request id the answer must carry.
        id: u64,
        /// The conversation to reset.
        #[serde(flatten)]
        request: ResetRequest,
    },
    /// Answers a [`ChildMessage::LedgerApply`] the child sent mid-turn.
    LedgerResult {
        /// The id of the turn request the ledger operation belongs to.
        id: u64,
        /// The idempotency key the child applied.
        key: String,
        /// `true` when the effect is new and the child must perform it;
        /// `false` when the key was applied before.
        applied: bool,
    },
    /// Asks the child to exit; it is killed if it has not after a grace period.
    Shutdown,
}

/// A line the child writes to its stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ChildMessage {
    /// Answers [`HarnessMessage::Hello`]: the chosen version and what the
    /// deployment declares it can do.
    Ready {
        /// The protocol version the child speaks.
        protocol_version: u32,
        /// The deployment's capability evidence.
        capabilities: CapabilityEvidence,
    },
    /// Applies an effect through the harness's side-effect ledger, mid-turn.
    LedgerApply {
        /// The id of the turn request being served.
        id: u64,
        /// The effect's idempotency key.
        key: String,
        /// The tool whose call the effect belongs to, if the deployment
        /// names it (optional, additive in version 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
        /// The arguments the effect is applied with, if the deployment
        /// gives them (optional, additive in version 1): the harness keeps
        /// only their digest, to tell a repeated effect from another one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<serde_json::Value>,
    },
    /// A tool body's own account of one execution, mid-turn: the arguments
    /// it received and how it ended. Recorded on the harness's ledger; no
    /// answer is sent.
    Witness {
        /// The id of the turn request being served.
        id: u64,
        /// The tool whose body ran.
        tool: String,
        /// The arguments the body received.
        arguments: serde_json::Value,
        /// How it ended.
        outcome: WitnessOutcome,
    },
    /// The evidence a finished (or paused) turn left behind.
    TurnRecord {
        /// The id of the request this answers.
        id: u64,
        /// The turn's evidence.
        record: TurnRecord,
    },
    /// A turn that failed with a typed error.
    TurnError {
        /// The id of the request this answers.
        id: u64,
        /// The error, whose kind a step may expect.
        error: TurnError,
    },
}

impl ChildMessage {
    /// The `type` tag, for error messages that must not quote content.
    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Ready { .. } => "ready",
            Self::LedgerApply { .. } => "ledger_apply",
            Self::Witness { .. } => "witness",
            Self::TurnRecord { .. } => "turn_record",
            Self::TurnError { .. } => "turn_error",
        }
    }
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// Serialises a message as one protocol line, newline included.
///
/// # Panics
///
/// Never in practice: every message type serialises to JSON.
pub fn encode(message: &HarnessMessage) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).expect("protocol messages serialise to JSON");
    line.push(b'\n');
    line
}

/// Why a line from the child is not a protocol message. Carries only the
/// position of the problem, never the line itself: it may hold turn content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// A description naming the position and category of the problem.
    pub reason: String,
}

/// Parses one line the child wrote (without its newline).
///
/// # Errors
///
/// When the line is not UTF-8 JSON or not one of the [`ChildMessage`] shapes.
pub fn decode(line: &[u8]) -> Result<ChildMessage, DecodeError> {
    serde_json::from_slice(line).map_err(|error| DecodeError {
        reason: format!(
            "{} error at line {} column {}",
            match error.classify() {
                serde_json::error::Category::Io => "i/o",
                serde_json::error::Category::Syntax => "syntax",
                serde_json::error::Category::Data => "shape",
                serde_json::error::Category::Eof => "truncation",
            },
            error.line(),
            error.column()
        ),
    })
}

/// The error code a served child puts on a turn that panicked, so the
/// harness reports a panic rather than an error kind the deployment chose.
/// Honoured only from a child the harness started to serve its own binary.
pub(crate) const PANICKED_CODE: &str = "symfonic-evals.panicked";

/// The error code a served child puts on a turn whose evidence nests too
/// deep to send (see [`MAX_JSON_DEPTH`](crate::evidence::MAX_JSON_DEPTH)).
pub(crate) const TOO_DEEP_CODE: &str = "symfonic-evals.too-deep";

/// Codes only the harness's own serving code writes.
pub(crate) fn is_harness_code(code: &str) -> bool {
    code == PANICKED_CODE || code == TOO_DEEP_CODE
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shutdown_is_a_bare_type_tag() {
        assert_eq!(
            encode(&HarnessMessage::Shutdown),
            b"{\"type\":\"shutdown\"}\n"
        );
    }

    #[test]
    fn decodes_a_turn_record_in_the_evidence_shape() {
        let line = json!({
            "type": "turn_record", "id": 4,
            "record": {"answer": "ok", "terminal": {"kind": "paused", "interaction": "ask_user",
                "resumable": true, "token": "t"}}
        });
        let message = decode(line.to_string().as_bytes()).unwrap();
        let ChildMessage::TurnRecord { id, record } = message else {
            panic!("not a turn record");
        };
        assert_eq!(id, 4);
        assert_eq!(record.fact("pause_name"), Some(json!("ask_user")));
    }

    #[test]
    fn a_non_protocol_line_names_no_content() {
        let error = decode(b"secret account 1234").unwrap_err();
        assert!(!error.reason.contains("secret"), "{}", error.reason);
        assert!(decode(b"{\"type\":\"gossip\"}").is_err());
    }

    #[test]
    fn a_ledger_apply_may_name_its_tool_and_older_children_need_not() {
        let plain = decode(br#"{"type":"ledger_apply","id":1,"key":"k"}"#).unwrap();
        let ChildMessage::LedgerApply { tool: None, .. } = plain else {
            panic!("a ledger_apply without a tool: {plain:?}");
        };
        let named =
            decode(br#"{"type":"ledger_apply","id":1,"key":"k","tool":"issue_refund"}"#).unwrap();
        let ChildMessage::LedgerApply {
            tool: Some(tool), ..
        } = named
        else {
            panic!("a ledger_apply with its tool: {named:?}");
        };
        assert_eq!(tool, "issue_refund");
    }
}
