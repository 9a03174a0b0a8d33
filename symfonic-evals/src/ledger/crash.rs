//! Crash arming: the harness kills a deployment's child process at a
//! chosen effect boundary, right after granting the effect and before the
//! child hears back, as a crash between applying an effect and reporting it
//! would.

use super::Applied;

/// What the harness's ledger answers one `ledger_apply`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grant {
    /// Whether the effect was new.
    pub(crate) applied: Applied,
    /// Whether this grant reached the armed crash point.
    pub(crate) crash: bool,
}

/// A crash waiting for its effect, or the key that triggered it.
#[derive(Debug, Default)]
pub(crate) enum Arming {
    /// No crash is armed.
    #[default]
    Disarmed,
    /// Crash at the grant of this many more new effects.
    Armed(u32),
    /// The crash fired at the grant of this key.
    Fired(String),
}

impl Arming {
    /// Armed to fire on the `k`-th new effect (1-based).
    pub(crate) fn at(k: u32) -> Self {
        Self::Armed(k.max(1))
    }

    /// Counts one new effect; whether the crash fires on it.
    pub(crate) fn granted(&mut self, key: &str) -> bool {
        match self {
            Self::Armed(1) => {
                *self = Self::Fired(key.to_owned());
                true
            }
            Self::Armed(n) => {
                *n -= 1;
                false
            }
            Self::Disarmed | Self::Fired(_) => false,
        }
    }

    /// The key the crash fired on, if it fired.
    pub(crate) fn fired(self) -> Option<String> {
        match self {
            Self::Fired(key) => Some(key),
            Self::Disarmed | Self::Armed(_) => None,
        }
    }
}
