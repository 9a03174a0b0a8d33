//! The named errors of the model endpoint: a request the cassette cannot
//! answer ([`ReplayMiss`]) and everything else that stops replay or
//! recording ([`ReplayError`]). Messages name files, lines, JSON paths and
//! digests, never request or response content (unless
//! `SYMFONIC_EVALS_SHOW_VALUES` is set).

use std::fmt;
use std::path::PathBuf;

use super::diff::PathDiff;
use super::mode::ReplayMode;

/// Why the endpoint could not start, replay or record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplayError {
    /// A cassette line is not a valid exchange. Nothing is replayed from a
    /// cassette with such a line: a silent miss or pass would hide it.
    CassetteMalformed {
        /// The file.
        path: PathBuf,
        /// One-based line number.
        line: usize,
        /// What is wrong with it (never the line's content).
        reason: String,
    },
    /// The cassette exists but cannot be read.
    CassetteUnreadable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        reason: String,
    },
    /// The pending file cannot be written.
    PendingUnwritable {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        reason: String,
    },
    /// `SYMFONIC_EVALS_RECORD` holds an unknown value.
    InvalidRecordMode(String),
    /// `SYMFONIC_EVALS_UPSTREAM_AUTH` holds an unknown value.
    InvalidUpstreamAuth(String),
    /// Recording was asked for under `CI=true`.
    RecordingRefusedInCi {
        /// The mode that was asked for.
        mode: ReplayMode,
        /// Set when the configuration allowed loopback recording in CI but
        /// the upstream is elsewhere.
        remote_upstream: Option<String>,
    },
    /// A recording mode without an upstream URL.
    NoUpstream,
    /// Recording needs the crate's `record` feature (the upstream client).
    RecordingUnavailable,
    /// Forwarding to the upstream failed (connection, TLS, timeout).
    UpstreamFailed {
        /// The upstream URL forwarded to.
        url: String,
        /// The client's error.
        reason: String,
    },
    /// The loopback listener could not be opened.
    Bind(String),
    /// A request target that is not in origin form: it could steer a
    /// forwarded request (and the upstream key) to another host, so it is
    /// refused before any connection is made.
    TargetRefused(super::target::TargetRefusal),
}

impl ReplayError {
    /// The error's name, as failures and reports print it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::CassetteMalformed { .. } => "CassetteMalformed",
            Self::CassetteUnreadable { .. } => "CassetteUnreadable",
            Self::PendingUnwritable { .. } => "PendingUnwritable",
            Self::InvalidRecordMode(_) => "InvalidRecordMode",
            Self::InvalidUpstreamAuth(_) => "InvalidUpstreamAuth",
            Self::RecordingRefusedInCi { .. } => "RecordingRefusedInCi",
            Self::NoUpstream => "NoUpstream",
            Self::RecordingUnavailable => "RecordingUnavailable",
            Self::UpstreamFailed { .. } => "UpstreamFailed",
            Self::Bind(_) => "EndpointBindFailed",
            Self::TargetRefused(_) => "RequestTargetRefused",
        }
    }
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.name())?;
        match self {
            Self::CassetteMalformed { path, line, reason } => {
                write!(f, "{}:{line}: {reason}", path.display())
            }
            Self::CassetteUnreadable { path, reason } | Self::PendingUnwritable { path, reason } => {
                write!(f, "{}: {reason}", path.display())
            }
            Self::InvalidRecordMode(value) => write!(
                f,
                "SYMFONIC_EVALS_RECORD={value:?} is not a mode; use `missing` or `all` (or leave it unset to replay)"
            ),
            Self::InvalidUpstreamAuth(value) => write!(
                f,
                "SYMFONIC_EVALS_UPSTREAM_AUTH={value:?}; use `auto`, `bearer` or `x-api-key`"
            ),
            Self::RecordingRefusedInCi {
                mode,
                remote_upstream: None,
            } => write!(
                f,
                "recording (mode `{}`) is refused under CI=true: CI replays committed cassettes \
                 and never reaches a model; record locally, review, accept and commit",
                mode.as_str()
            ),
            Self::RecordingRefusedInCi {
                mode,
                remote_upstream: Some(url),
            } => write!(
                f,
                "recording (mode `{}`) is refused under CI=true: the upstream {} is not on \
                 the loopback interface, and the CI opt-in admits only a local scripted upstream",
                mode.as_str(),
                super::target::without_query(url)
            ),
            Self::NoUpstream => write!(
                f,
                "recording needs an upstream: set SYMFONIC_EVALS_UPSTREAM_URL (and \
                 SYMFONIC_EVALS_UPSTREAM_KEY if it needs a key)"
            ),
            Self::RecordingUnavailable => write!(
                f,
                "this build cannot record: enable the `record` feature of symfonic-evals \
                 (for example in your dev-dependencies)"
            ),
            Self::UpstreamFailed { url, reason } => write!(f, "{url}: {reason}"),
            Self::Bind(reason) => write!(f, "127.0.0.1: {reason}"),
            Self::TargetRefused(why) => write!(
                f,
                "{why}; the endpoint answers origin-form targets only (`/v1/...`) and forwards \
                 them to the configured upstream alone"
            ),
        }
    }
}

impl std::error::Error for ReplayError {}

/// Why a request had no recorded answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissReason {
    /// Nothing like it was recorded in this scenario and trial.
    NotRecorded {
        /// The closest recorded request, if the cassette has any for the
        /// same method and path.
        nearest: Option<Nearest>,
    },
    /// The request was recorded, but fewer times in this trial than it was
    /// now made.
    MoreOccurrences {
        /// How many times it was recorded in this trial.
        recorded: u32,
    },
    /// The cassette holds fewer trials of this scenario than are replayed.
    TrialNotRecorded {
        /// How many trials of the scenario the cassette holds.
        recorded_trials: u32,
    },
    /// The exchange exists, but only in the pending file: recorded and not
    /// yet reviewed.
    PendingReview {
        /// The pending file.
        pending: PathBuf,
    },
    /// The endpoint answers only JSON `POST` requests.
    Unsupported(String),
}

/// The recorded request closest to a miss, and how it differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nearest {
    /// Its one-based line in the cassette.
    pub line: usize,
    /// Its scenario.
    pub scenario: String,
    /// Its trial.
    pub trial: u32,
    /// The JSON paths that differ, values digested.
    pub differences: Vec<PathDiff>,
    /// How many more paths differ than are listed.
    pub more: usize,
}

/// A request the cassette could not answer: the step that made it fails
/// with `ModelReplayMiss` and this account, and the deployment's client got
/// an HTTP 404 carrying the same text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayMiss {
    /// The step during which the request arrived, if the runner said.
    pub step: Option<String>,
    /// The scenario.
    pub scenario: String,
    /// The trial (zero-based).
    pub trial: u32,
    /// `POST` and the like (a non-standard method is digested).
    pub method: String,
    /// The request path: a known model API path as it is, any other path
    /// as a digest (client input may carry a key or turn content).
    pub path: String,
    /// Short digest of the canonical request.
    pub digest: String,
    /// Which occurrence of this request in the trial it was (zero-based).
    pub ordinal: u32,
    /// The cassette consulted.
    pub cassette: PathBuf,
    /// Why it missed.
    pub reason: MissReason,
}

impl fmt::Display for ReplayMiss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ModelReplayMiss: {} {} {}",
            self.method, self.path, self.digest
        )?;
        if let Some(step) = &self.step {
            write!(f, " during step `{step}`")?;
        }
        write!(
            f,
            " (scenario `{}`, trial {}, occurrence {}) is not in {}: ",
            self.scenario,
            self.trial,
            self.ordinal + 1,
            self.cassette.display()
        )?;
        match &self.reason {
            MissReason::NotRecorded { nearest: None } => write!(
                f,
                "nothing is recorded for this method and path; record with SYMFONIC_EVALS_RECORD=missing"
            ),
            MissReason::NotRecorded {
                nearest: Some(near),
            } if near.differences.is_empty() => write!(
                f,
                "the same request is recorded at line {} under scenario `{}`, trial {}: requests \
                 replay only in the scenario and trial that recorded them, so the scenarios or \
                 their order changed since recording; re-record with SYMFONIC_EVALS_RECORD=missing",
                near.line, near.scenario, near.trial
            ),
            MissReason::NotRecorded {
                nearest: Some(near),
            } => {
                write!(
                    f,
                    "nearest recorded request is line {} (scenario `{}`, trial {}); differing paths: ",
                    near.line, near.scenario, near.trial
                )?;
                for (i, d) in near.differences.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{d}")?;
                }
                if near.more > 0 {
                    write!(f, "; and {} more", near.more)?;
                }
                Ok(())
            }
            MissReason::MoreOccurrences { recorded } => write!(
                f,
                "the request was recorded {recorded} time(s) in this trial and is now made once more; \
                 re-record with SYMFONIC_EVALS_RECORD=missing"
            ),
            MissReason::TrialNotRecorded { recorded_trials } => write!(
                f,
                "the cassette holds {recorded_trials} trial(s) of this scenario and this is trial {}: \
                 replaying more trials than were recorded; record them with SYMFONIC_EVALS_RECORD=missing",
                self.trial + 1
            ),
            MissReason::PendingReview { pending } => write!(
                f,
                "it is recorded in {} awaiting review; accept it with \
                 `symfonic-evals-cassette accept {}` (or replay::accept_pending) after reading it",
                pending.display(),
                pending.display()
            ),
            MissReason::Unsupported(what) => write!(f, "unsupported request: {what}"),
        }
    }
}

impl std::error::Error for ReplayMiss {}
