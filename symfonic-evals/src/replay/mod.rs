//! Hermetic model replay: a record/replay model endpoint the harness owns.
//!
//! A deployment that calls a real model is slow, costly and
//! nondeterministic. Every agent SDK can be pointed at a base URL, so the
//! harness owns the model API itself: for each trial it runs a loopback
//! HTTP endpoint ([`ModelEndpoint`]) speaking OpenAI Chat Completions and
//! Responses, Anthropic Messages (streams included) and any JSON `POST`.
//! [`TargetContext::model_url`](crate::TargetContext::model_url) gives its
//! base URL; a [`ProcessTarget`](crate::ProcessTarget)'s child gets it in
//! [`MODEL_URL_ENV`], `OPENAI_BASE_URL` and `ANTHROPIC_BASE_URL` (see
//! [`child_env`]), so an unmodified SDK uses it.
//!
//! - **Replay** (the default) answers only from the pack's [`Cassette`]. A
//!   request it lacks gets an HTTP 404 the SDK surfaces, and the step fails
//!   with `ModelReplayMiss` ([`ReplayMiss`]): the request's digest and the
//!   JSON paths where it differs from the nearest recorded request. Replay
//!   never reaches the network.
//! - **Record** (`SYMFONIC_EVALS_RECORD=missing` or `all`) forwards to the
//!   upstream in `SYMFONIC_EVALS_UPSTREAM_URL` with the key in
//!   `SYMFONIC_EVALS_UPSTREAM_KEY` (feature `record`) and writes each
//!   exchange to `<cassette>.pending.jsonl`. Under `CI=true` recording is
//!   refused.
//! - **Review**: pending exchanges are never replayed. Read the pending
//!   file, then accept it with [`accept_pending`] or the
//!   `symfonic-evals-cassette accept` command, and commit the cassette.
//!
//! An exchange is keyed by the canonical request (JSON with sorted keys,
//! volatile fields removed, credentials scrubbed), the scenario, the trial
//! and its ordinal among identical requests in that trial: `k` trials
//! replay `k` independently recorded samples.

mod canonical;
mod cassette;
mod config;
mod diff;
mod endpoint;
mod error;
mod mode;
mod nearest;
#[cfg(test)]
mod policy_tests;
#[cfg(test)]
mod properties;
mod record;
mod safe_write;
mod scrub;
mod server;
mod sse;
mod stream_scrub;
mod target;
mod upstream;

use std::sync::Arc;

pub use cassette::{
    accept_pending, Accepted, Cassette, Exchange, RecordedRequest, RecordedResponse,
};
pub use config::{
    default_cassette, pending_path, ReplayConfig, ReplaySettings, Upstream, UpstreamAuth, CI_ENV,
    DEFAULT_VOLATILE_FIELDS, RECORD_ENV, UPSTREAM_AUTH_ENV, UPSTREAM_KEY_ENV, UPSTREAM_URL_ENV,
};
pub use diff::{structural_diff, PathDiff};
pub use endpoint::{child_env, EndpointFailure, ModelEndpoint, ReplaySession, MAX_FAILURES_KEPT};
pub use error::{MissReason, Nearest, ReplayError, ReplayMiss};
pub use mode::ReplayMode;
pub use target::TargetRefusal;
pub use upstream::{ScriptedUpstream, UpstreamReply, UpstreamRequest};

/// The variable a child process reads the endpoint's base URL from.
pub const MODEL_URL_ENV: &str = "MODEL_BASE_URL";

/// The API key a child's SDK is given: a placeholder, since the endpoint
/// ignores the client's credentials and record mode presents the upstream's.
pub const PLACEHOLDER_KEY: &str = "sk-proj-4f9c2a7e1b8d3065c9e2f1a4b7d0e3c6";

/// The scenario name of the capability probe's endpoint scope: a
/// deployment that calls its model while being built is recorded and
/// replayed under it.
pub const PROBE_SCENARIO: &str = "capability-probe";

/// What the runner needs of a pack run's replay: the session, or why it
/// could not open (every trial then fails naming that error).
#[derive(Debug, Clone)]
pub(crate) struct ReplayPlan(Result<Option<Arc<ReplaySession>>, ReplayError>);

impl Default for ReplayPlan {
    fn default() -> Self {
        Self::none()
    }
}

impl ReplayPlan {
    /// No endpoint (`run_scenario`, capability probes).
    pub(crate) fn none() -> Self {
        Self(Ok(None))
    }

    /// The plan of pack run `pack` under `config`.
    pub(crate) fn open(pack: &str, config: &ReplayConfig) -> Self {
        Self(ReplaySession::open(pack, config))
    }

    /// Why the plan has no endpoints, for a failure that may stem from it.
    pub(crate) fn failure_note(&self) -> String {
        match &self.0 {
            Err(error) => format!(" (the model endpoint could not start: {error})"),
            Ok(_) => String::new(),
        }
    }

    /// The endpoint of one trial, if the plan has one.
    pub(crate) fn start(
        &self,
        scenario: &str,
        trial: u32,
    ) -> Result<Option<ModelEndpoint>, ReplayError> {
        match &self.0 {
            Ok(None) => Ok(None),
            Ok(Some(session)) => session.start(scenario, trial).map(Some),
            Err(error) => Err(error.clone()),
        }
    }
}

/// The step error for the first endpoint failure of a step, if any: the
/// turn's own result is moot when its model calls were not answered.
pub(crate) fn step_failure(endpoint: Option<&ModelEndpoint>) -> Option<crate::StepError> {
    let failure = endpoint?.take_failures().into_iter().next()?;
    let (kind, expected) = match &failure {
        EndpointFailure::Miss(_) => (
            crate::StepErrorKind::ModelReplayMiss,
            "every model request of the step is answered from the cassette",
        ),
        EndpointFailure::Error(_) => (
            crate::StepErrorKind::ModelEndpointFailed,
            "the model endpoint records the step's requests",
        ),
    };
    Some(crate::StepError {
        kind,
        expected: expected.to_owned(),
        observed: failure.to_string(),
        exception: None,
    })
}
