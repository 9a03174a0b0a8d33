//! The side-effect ledger: the one record of effects a deployment cannot fake.
//!
//! The harness owns it and hands it to the deployment through the
//! [`TargetContext`](crate::TargetContext); the action tool applies its effect
//! through [`SideEffectLedger::apply`]. A call that was refused never reaches
//! it, so a refusal that "ran anyway" moves the counts.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

/// What the ledger has seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerCounts {
    /// Calls that reached the effect.
    pub attempts: u64,
    /// Effects actually applied.
    pub effects: u64,
    /// Attempts whose idempotency key had already been applied.
    pub duplicates: u64,
}

/// Whether [`SideEffectLedger::apply`] ran the effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The key was new and the effect ran.
    Applied,
    /// The key had been applied before; the effect did not run again.
    Duplicate,
}

#[derive(Debug, Default)]
struct LedgerState {
    counts: LedgerCounts,
    keys: HashSet<String>,
}

/// A shared, thread-safe ledger of side effects. Clones share one ledger.
///
/// ```
/// use symfonic_evals::{Applied, SideEffectLedger};
/// let ledger = SideEffectLedger::new();
/// let mut refunds = 0;
/// assert_eq!(ledger.apply("refund:3", || refunds += 1), Applied::Applied);
/// assert_eq!(ledger.apply("refund:3", || refunds += 1), Applied::Duplicate);
/// assert_eq!(refunds, 1);
/// let counts = ledger.counts();
/// assert_eq!((counts.attempts, counts.effects, counts.duplicates), (2, 1, 1));
/// ```
#[derive(Debug, Clone, Default)]
pub struct SideEffectLedger {
    state: Arc<Mutex<LedgerState>>,
}

impl SideEffectLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records an attempt under `idempotency_key` and runs `effect` unless
    /// that key was applied before. The effect runs while the ledger is held,
    /// so two threads racing on one key apply it once.
    pub fn apply(&self, idempotency_key: &str, effect: impl FnOnce()) -> Applied {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.counts.attempts += 1;
        if state.keys.contains(idempotency_key) {
            state.counts.duplicates += 1;
            return Applied::Duplicate;
        }
        effect();
        state.keys.insert(idempotency_key.to_owned());
        state.counts.effects += 1;
        Applied::Applied
    }

    /// Records an attempt with no effect of its own to run.
    pub fn record(&self, idempotency_key: &str) -> Applied {
        self.apply(idempotency_key, || {})
    }

    /// The counts so far.
    pub fn counts(&self) -> LedgerCounts {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_attempts_effects_and_duplicates() {
        let ledger = SideEffectLedger::new();
        assert_eq!(ledger.record("a"), Applied::Applied);
        assert_eq!(ledger.record("b"), Applied::Applied);
        assert_eq!(ledger.record("a"), Applied::Duplicate);
        assert_eq!(
            ledger.counts(),
            LedgerCounts {
                attempts: 3,
                effects: 2,
                duplicates: 1
            }
        );
    }

    #[test]
    fn racing_threads_apply_a_key_once() {
        let ledger = SideEffectLedger::new();
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let ledger = ledger.clone();
                std::thread::spawn(move || ledger.record("same"))
            })
            .collect();
        let applied = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|a| *a == Applied::Applied)
            .count();
        assert_eq!(applied, 1);
        let counts = ledger.counts();
        assert_eq!(
            (counts.attempts, counts.effects, counts.duplicates),
            (8, 1, 7)
        );
    }
}
