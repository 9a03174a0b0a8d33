//! Out-of-process targets: evaluate a deployment written in any language.
//!
//! A [`ProcessTarget`] starts the adopter's command for each trial (and again
//! on each restart), speaks the versioned JSON-lines protocol described in
//! `protocol/README.md` with it, and turns every way a child can misbehave
//! into a [`TurnError`](crate::TurnError) whose kind is one of [`kinds`].

mod child;
mod conformance;
mod interpreter;
mod pipes;
pub mod protocol;
mod spare;
mod spec;
mod status;
mod target;
#[cfg(unix)]
mod zygote;

pub use child::{DURABLE_DIR_ENV, DURABLE_DIR_FLAG};
pub use conformance::{
    conformance, CheckVerdict, ConformanceCheck, ConformanceInputs, ConformanceReport,
};
pub use interpreter::python_interpreter;
pub(crate) use protocol::{PANICKED_CODE, TOO_DEEP_CODE};
pub(crate) use spare::discard as discard_spares;
pub use spec::{
    ProcessSpec, CHANNEL_ENV, DEFAULT_MAX_LINE_BYTES, SERVE_HISTORY_ENV, SERVE_RUN_ENV,
};
pub(crate) use target::split_stderr_tail;
pub use target::ProcessTarget;

/// The error kinds a [`ProcessTarget`] reports, each naming a cause. A
/// deployment's own typed errors pass through unchanged.
pub mod kinds {
    /// The command could not be started.
    pub const PROCESS_SPAWN_FAILED: &str = "ProcessSpawnFailed";
    /// The child exited (or closed its stdout) before answering.
    pub const PROCESS_EXITED: &str = "ProcessExited";
    /// The child wrote a line that is not a protocol message, or a message
    /// out of place.
    pub const PROTOCOL_VIOLATION: &str = "ProtocolViolation";
    /// The child wrote a line longer than the spec's cap (refused as soon
    /// as the line passes it).
    pub const MESSAGE_TOO_LARGE: &str = "MessageTooLarge";
    /// The child did not answer within the spec's request timeout.
    pub const PROCESS_TIMEOUT: &str = "ProcessTimeout";
    /// The child declared a protocol version this harness does not speak.
    pub const UNSUPPORTED_PROTOCOL_VERSION: &str = "UnsupportedProtocolVersion";
    /// The child answered a request it was not sent.
    pub const RESPONSE_ID_MISMATCH: &str = "ResponseIdMismatch";
    /// A request after an earlier error stopped the child.
    pub const PROCESS_UNAVAILABLE: &str = "ProcessUnavailable";
    /// The harness killed the child at an armed crash point, right after
    /// granting an effect.
    pub const INJECTED_CRASH: &str = "InjectedCrash";

    /// Whether `kind` is one the harness writes about a child process.
    pub fn is_process_kind(kind: &str) -> bool {
        [
            PROCESS_SPAWN_FAILED,
            PROCESS_EXITED,
            PROTOCOL_VIOLATION,
            MESSAGE_TOO_LARGE,
            PROCESS_TIMEOUT,
            UNSUPPORTED_PROTOCOL_VERSION,
            RESPONSE_ID_MISMATCH,
            PROCESS_UNAVAILABLE,
            INJECTED_CRASH,
        ]
        .contains(&kind)
    }
}
