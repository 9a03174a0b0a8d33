//! What running a scenario produced: per trial, per step, per assertion.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::assertion::Check;
use crate::evidence::{ExceptionTrace, Operation, Role};

/// Why a step could not be judged on its assertions alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StepErrorKind {
    /// The step expected an error kind and the turn succeeded or failed otherwise.
    ExpectedError,
    /// The turn failed with an error the step did not expect.
    UnexpectedError,
    /// The target (or its constructor) panicked.
    TargetPanicked,
    /// The step ran past its time limit: the trial policy's, or a process
    /// target's request timeout (`ProcessTimeout`). The deployment hung, so
    /// a pack run starts no further scenario on it.
    StepTimeout,
    /// A resume step found no retained pause token in its conversation.
    NoPauseToResume,
    /// The harness could not set up the trial's fixtures.
    ContextFailed,
    /// Evidence the step's assertions read was not in the shape the pack's
    /// contract fixes (a published procedure that is not an object, a
    /// precondition nobody can evaluate, an effect oracle that failed).
    MalformedEvidence,
    /// A model request of the step was not in the cassette (model replay).
    ModelReplayMiss,
    /// The model endpoint could not start, load its cassette or record.
    ModelEndpointFailed,
    /// The deployment's process failed: it could not start, exited or was
    /// killed (the exit status or signal is in the observation), or broke
    /// the protocol.
    ProcessFailed,
    /// The step asked for a crash the deployment cannot have (it runs on the
    /// harness's own thread) or that never came (too few effects).
    CrashNotInjected,
}

impl StepErrorKind {
    /// The name failures and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ExpectedError => "ExpectedError",
            Self::UnexpectedError => "UnexpectedError",
            Self::TargetPanicked => "TargetPanicked",
            Self::StepTimeout => "StepTimeout",
            Self::NoPauseToResume => "NoPauseToResume",
            Self::ContextFailed => "ContextFailed",
            Self::MalformedEvidence => "MalformedEvidence",
            Self::ModelReplayMiss => "ModelReplayMiss",
            Self::ModelEndpointFailed => "ModelEndpointFailed",
            Self::ProcessFailed => "ProcessFailed",
            Self::CrashNotInjected => "CrashNotInjected",
        }
    }

    /// Whether the trial cannot go on after this error.
    pub fn ends_trial(self) -> bool {
        !matches!(self, Self::ExpectedError | Self::MalformedEvidence)
    }
}

/// A step that broke, with report-safe detail.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepError {
    /// What went wrong.
    pub kind: StepErrorKind,
    /// What was expected, report-safe.
    pub expected: String,
    /// What happened, report-safe (messages are digested).
    pub observed: String,
    /// The exception behind a deployment's error, report-safe (see
    /// [`ExceptionTrace::report_safe`]), when its companion reported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exception: Option<Box<ExceptionTrace>>,
}

/// One assertion's result within a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssertionRun {
    /// The assertion kind, e.g. `ToolSucceeded`.
    pub kind: String,
    /// Its parameters, e.g. `ToolSucceeded(issue_refund, times=0)`.
    pub description: String,
    /// Whether it held.
    pub passed: bool,
    /// What it required.
    pub expected: String,
    /// What the evidence showed.
    pub observed: String,
    /// The evidence was not in the contract's shape (see [`Check`]'s `malformed`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub malformed: bool,
}

impl AssertionRun {
    pub(crate) fn new(kind: &str, description: String, check: Check) -> Self {
        Self {
            kind: kind.to_owned(),
            description,
            passed: check.passed,
            expected: check.expected,
            observed: check.observed,
            malformed: check.malformed,
        }
    }
}

/// One step's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRun {
    /// Zero-based position in the scenario.
    pub index: usize,
    /// The step's readable label.
    pub label: String,
    /// Which door the step went through.
    pub operation: Operation,
    /// Who spoke.
    pub role: Role,
    /// The conversation it ran in (a name from the pack's own arguments).
    pub conversation: String,
    /// Digest of the prompt or answer the step sent.
    pub input_digest: String,
    /// Digest of the explicit turn state a prompt step sent, `None` when it
    /// sent none: what tells apart steps that send one prompt in many
    /// states (the gate sweep's). Never the state's values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_digest: Option<String>,
    /// Whether the deployment was rebuilt before this step.
    pub restarted: bool,
    /// How the rebuilt deployment started when not from nothing: `"from a
    /// spare"` for a process started ahead and waiting for its handshake
    /// ([`ProcessSpec::spare`](crate::process::ProcessSpec::spare)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_start: Option<String>,
    /// Each assertion's result.
    pub assertions: Vec<AssertionRun>,
    /// The error that broke the step, if any.
    pub error: Option<StepError>,
    /// The harness ledger's counts once the step was over.
    #[serde(default)]
    pub ledger: crate::ledger::LedgerCounts,
    /// The calls the trial's MCP fixture received during the step (empty
    /// when none served the run), beside what the deployment reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixture_calls: Vec<FixtureCallSeen>,
    /// Wall time of the step: the restart before it (if any) and the turn.
    #[serde(
        rename = "duration_us",
        serialize_with = "serialize_micros",
        deserialize_with = "deserialize_micros"
    )]
    pub duration: Duration,
}

/// One call the MCP fixture received, as reports show it: the tool, and
/// digests of the arguments as received and of the nonce its result
/// carried (so a reader can match it with the deployment's own record).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FixtureCallSeen {
    /// The tool the call named.
    pub tool: String,
    /// Digest of the arguments as received (keys sorted).
    pub arguments_digest: String,
    /// Digest of the nonce the result carried.
    pub nonce_digest: String,
    /// Whether the fixture answered with a tool error, as the step asked.
    pub failed: bool,
    /// Whether the answer was delivered to the client (written whole and
    /// acknowledged); only a delivered call counts as served.
    #[serde(default)]
    pub delivered: bool,
}

impl FixtureCallSeen {
    pub(crate) fn of(call: &crate::mcp::FixtureCall) -> Self {
        Self {
            tool: call.tool.clone(),
            arguments_digest: crate::assertion::result_digest(&call.arguments),
            nonce_digest: crate::redact::short_digest(call.nonce.as_bytes()),
            failed: call.failed,
            delivered: call.delivered,
        }
    }
}

impl StepRun {
    /// Whether every assertion held and nothing broke.
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.assertions.iter().all(|a| a.passed)
    }
}

fn serialize_micros<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

fn deserialize_micros<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    u64::deserialize(d).map(Duration::from_micros)
}

/// One trial's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialRun {
    /// Zero-based trial number.
    pub trial: u32,
    /// The steps that ran (a broken trial stops at the step that broke).
    pub steps: Vec<StepRun>,
    /// The scenario's fixed steps; a scenario with a continuation runs more.
    pub planned_steps: usize,
    /// Whether the trial ran to its end (every fixed step, then its
    /// continuation) rather than stopping at a step that broke.
    pub finished: bool,
    /// What the harness found worth saying beyond pass and fail (the
    /// smallest disagreeing state a sweep shrank to, say), report-safe.
    pub notes: Vec<String>,
    /// Why the probe's own check could not be made on this deployment,
    /// when so (the pause published nothing to forge, no approvers to
    /// spell an outsider's answer from): its steps ran as the seed's and
    /// passed, which proves nothing the seed does not, so a pack run lists
    /// such a probe as not run, with this reason, rather than as passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unproven: Option<String>,
    /// Wall time of the whole trial: building, every step and restart, and
    /// the teardown.
    #[serde(
        rename = "duration_us",
        serialize_with = "serialize_micros",
        deserialize_with = "deserialize_micros"
    )]
    pub duration: Duration,
}

impl TrialRun {
    /// Whether the trial ran to its end and every step passed.
    pub fn passed(&self) -> bool {
        self.finished && self.steps.iter().all(StepRun::passed)
    }

    /// Whether the deployment hung in this trial: a step (or its teardown)
    /// ran out of time.
    pub fn hung(&self) -> bool {
        self.steps.iter().any(|step| {
            step.error
                .as_ref()
                .is_some_and(|error| error.kind == StepErrorKind::StepTimeout)
        })
    }
}
