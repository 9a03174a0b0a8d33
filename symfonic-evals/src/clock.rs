//! The clock a deployment reads through its context.
//!
//! A deployment that derives anything from the time (an idempotency key
//! from the current hour, a token's expiry, a day's quota) behaves
//! differently once the clock crosses a window. Between two calls a test
//! compares, the real clock rarely does: a crash and its retry are
//! milliseconds apart. A deployment that takes its time from
//! [`TargetContext::clock`](crate::TargetContext::clock) lets the harness
//! move that clock forward (never back) between the crash and the retry, as
//! an hour-long outage would.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// The trait a deployment declares when it reads the time through its
/// context's [`Clock`] (or, over the process protocol, through the offset
/// the handshake carries): the clock probes then run.
pub const CONTEXT_CLOCK: &str = "context-clock";

/// The harness's clock: the real time plus an offset the harness moves
/// forward. Cheap to clone; clones share the offset, so a deployment that
/// keeps one sees every advance at once. A deployment in a child process
/// gets the offset in the handshake, so it sees the advance from its next
/// start (a crash and the restart that follows, say).
#[derive(Debug, Clone, Default)]
pub struct Clock {
    offset_ms: Arc<AtomicU64>,
}

impl Clock {
    /// A clock `offset` ahead of the real one.
    pub fn ahead_by(offset: Duration) -> Self {
        let clock = Self::default();
        clock.advance(offset);
        clock
    }

    /// The time now, as the deployment must read it.
    pub fn now(&self) -> SystemTime {
        SystemTime::now() + self.offset()
    }

    /// How far ahead of the real clock this one runs.
    pub fn offset(&self) -> Duration {
        Duration::from_millis(self.offset_ms.load(Ordering::SeqCst))
    }

    /// Moves the clock forward by `by` (the harness's to call).
    pub(crate) fn advance(&self, by: Duration) {
        let millis = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.offset_ms.fetch_add(millis, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_advance_and_the_clock_only_moves_forward() {
        let clock = Clock::default();
        let kept = clock.clone();
        let before = kept.now();
        clock.advance(Duration::from_secs(3600));
        assert_eq!(kept.offset(), Duration::from_secs(3600));
        assert!(kept.now() >= before + Duration::from_secs(3600));
        assert_eq!(
            Clock::ahead_by(Duration::from_millis(5)).offset(),
            Duration::from_millis(5)
        );
    }
}
