//! The endpoint's mode: replay, record or off. A module of its own because
//! both the configuration (which chooses it) and the errors (which name it)
//! need it, and neither should need the other for it.

/// What the endpoint does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplayMode {
    /// Answer only from the reviewed cassette; anything else is a
    /// [`ReplayMiss`](super::ReplayMiss). Never reaches the network.
    Replay,
    /// Replay what the cassette has; forward the rest upstream and write it
    /// to the pending file for review.
    RecordMissing,
    /// Forward every request upstream and write every exchange to the
    /// pending file; accepting it replaces the recorded scopes.
    RecordAll,
    /// No endpoint at all: [`TargetContext::model_url`](crate::TargetContext::model_url)
    /// is `None`.
    Off,
}

impl ReplayMode {
    /// Whether this mode forwards anything upstream.
    pub fn records(self) -> bool {
        matches!(self, Self::RecordMissing | Self::RecordAll)
    }

    /// The name used in the environment and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Replay => "replay",
            Self::RecordMissing => "missing",
            Self::RecordAll => "all",
            Self::Off => "off",
        }
    }
}
