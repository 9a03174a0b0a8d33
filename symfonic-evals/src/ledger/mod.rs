//! The side-effect ledger: the one record of effects a deployment cannot fake.
//!
//! The harness owns it and hands it to the deployment through the
//! [`TargetContext`](crate::TargetContext); the action tool applies its effect
//! through [`SideEffectLedger::apply`]. A call that was refused never reaches
//! it, so a refusal that "ran anyway" moves the counts.

mod crash;
mod witness;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

pub(crate) use crash::Grant;
pub use witness::{Witness, WitnessOutcome};

/// The harness on the other end of a ledger held by a deployment served in
/// a child process: it decides whether an effect is new, and keeps every
/// witness record.
pub(crate) trait LedgerPeer: Send + Sync + std::fmt::Debug {
    /// Asks the harness whether the effect under `key` is new. `call`
    /// names the tool and its arguments as far as the deployment does.
    fn apply(&self, key: &str, call: EffectCall<'_>) -> Applied;
    /// Hands a witness record to the harness.
    fn witness(&self, witness: &Witness);
}

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

/// What a deployment says about the call an effect belongs to: the tool,
/// and the arguments it was applied with. Both optional; the more it
/// says, the more a pack can tell apart.
#[derive(Debug, Clone, Copy, Default)]
pub struct EffectCall<'a> {
    /// The tool whose call applies the effect.
    pub tool: Option<&'a str>,
    /// The arguments the effect was applied with.
    pub arguments: Option<&'a serde_json::Value>,
}

impl<'a> EffectCall<'a> {
    /// An effect of `tool`'s call.
    pub fn of(tool: &'a str) -> Self {
        Self {
            tool: Some(tool),
            arguments: None,
        }
    }

    /// The same effect, applied with `arguments`.
    pub fn with_arguments(mut self, arguments: &'a serde_json::Value) -> Self {
        self.arguments = Some(arguments);
        self
    }
}

/// One attempt the ledger saw: its key, the tool call it belongs to and a
/// digest of the arguments it was applied with when the deployment said
/// so, and whether it applied an effect.
///
/// A deployment that names the tool lets a pack judge the effects of the
/// action under test and allow the others (a notice, an audit row); one
/// that does not is judged by the whole ledger. The arguments' digest lets
/// a pack see the same effect applied twice under two keys (a node that
/// re-runs on resume), without the ledger keeping any value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEvent {
    /// The idempotency key.
    pub key: String,
    /// The tool whose call applied it, if named.
    pub tool: Option<String>,
    /// Digest of the arguments it was applied with (keys sorted), if given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
    /// Whether the effect ran (`false`: a duplicate of an applied key).
    pub applied: bool,
}

/// How many effects each tool applied among `events` (duplicates left
/// out; an effect that names no tool counts under the empty name).
pub fn applied_by_tool(events: &[LedgerEvent]) -> std::collections::BTreeMap<String, u64> {
    per_tool(events.iter().filter(|event| event.applied))
}

/// How many attempts each tool made among `events`, duplicates included:
/// a call carried out again under an applied key is still an attempt.
pub fn attempted_by_tool(events: &[LedgerEvent]) -> std::collections::BTreeMap<String, u64> {
    per_tool(events.iter())
}

/// The argument digests of the effects `events` attempted, per tool
/// (attempts that gave no arguments left out, a retry counted once): what
/// a pack compares to tell which request a step carried out, without
/// keeping a value.
pub fn arguments_by_tool(events: &[LedgerEvent]) -> ArgumentsByTool {
    let mut digests = ArgumentsByTool::new();
    for event in events {
        if let Some(arguments) = &event.arguments {
            digests
                .entry(event.tool.clone().unwrap_or_default())
                .or_default()
                .insert(arguments.clone());
        }
    }
    digests
}

/// Argument digests per tool (an effect that names no tool under the
/// empty name); see [`arguments_by_tool`].
pub type ArgumentsByTool = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

fn per_tool<'a>(
    events: impl Iterator<Item = &'a LedgerEvent>,
) -> std::collections::BTreeMap<String, u64> {
    let mut counts = std::collections::BTreeMap::new();
    for event in events {
        *counts
            .entry(event.tool.clone().unwrap_or_default())
            .or_insert(0) += 1;
    }
    counts
}

#[derive(Debug, Default)]
struct LedgerState {
    counts: LedgerCounts,
    /// Every attempt, in order.
    events: Vec<LedgerEvent>,
    /// Attempts per idempotency key; a key is applied once it is here.
    keys: HashMap<String, u64>,
    /// Applied keys in the order their effects ran.
    applied: Vec<String>,
    witnesses: Vec<Witness>,
    crash: crash::Arming,
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
///
/// In a deployment served in a child process the ledger is a proxy: the
/// harness's ledger decides, and the counts the child can read are its own
/// requests only.
#[derive(Debug, Clone, Default)]
pub struct SideEffectLedger {
    state: Arc<Mutex<LedgerState>>,
    peer: Option<Arc<dyn LedgerPeer>>,
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
        self.apply_call(EffectCall::default(), idempotency_key, effect)
    }

    /// As [`Self::apply`], naming the tool whose call the effect belongs to,
    /// so a pack can tell the gated action's effects from the others.
    ///
    /// ```
    /// use symfonic_evals::SideEffectLedger;
    /// let ledger = SideEffectLedger::new();
    /// ledger.apply_for("refund", "refund:3", || {});
    /// ledger.apply("audit:3", || {});
    /// let events = ledger.events_since(0);
    /// assert_eq!(events[0].tool.as_deref(), Some("refund"));
    /// assert_eq!(events[1].tool, None);
    /// ```
    pub fn apply_for(&self, tool: &str, idempotency_key: &str, effect: impl FnOnce()) -> Applied {
        self.apply_call(EffectCall::of(tool), idempotency_key, effect)
    }

    /// As [`Self::apply_for`], with the arguments the effect is applied
    /// with: the ledger keeps their digest, so a pack sees the same effect
    /// applied again under another key (a step re-run on resume) and tells
    /// a different effect of the same tool (a "declined" notice after an
    /// "awaiting approval" one) from a repeat.
    ///
    /// ```
    /// use serde_json::json;
    /// use symfonic_evals::{EffectCall, SideEffectLedger};
    /// let ledger = SideEffectLedger::new();
    /// let arguments = json!({"customer": 42});
    /// ledger.apply_call(EffectCall::of("notify").with_arguments(&arguments), "n:1", || {});
    /// ledger.apply_call(EffectCall::of("notify").with_arguments(&arguments), "n:2", || {});
    /// let events = ledger.events_since(0);
    /// assert_eq!(events[0].arguments, events[1].arguments, "the same effect, twice");
    /// assert!(events[0].arguments.is_some());
    /// ```
    pub fn apply_call(
        &self,
        call: EffectCall<'_>,
        idempotency_key: &str,
        effect: impl FnOnce(),
    ) -> Applied {
        let mut state = self.lock();
        let applied = match &self.peer {
            // The harness decides; the lock keeps this child's racing
            // threads in order, so the effect still runs once.
            Some(peer) => peer.apply(idempotency_key, call),
            None if state.keys.contains_key(idempotency_key) => Applied::Duplicate,
            None => Applied::Applied,
        };
        if applied == Applied::Applied {
            effect();
        }
        state.count(idempotency_key, call, applied);
        applied
    }

    /// A proxy ledger for a deployment served in a child process.
    pub(crate) fn proxy(peer: Arc<dyn LedgerPeer>) -> Self {
        Self {
            state: Arc::default(),
            peer: Some(peer),
        }
    }

    /// What a harness-side ledger answers a child's `ledger_apply`: the
    /// effect is recorded, and the answer says whether the armed crash point
    /// was reached (the child must then be killed before it hears back).
    pub(crate) fn grant(&self, idempotency_key: &str, call: EffectCall<'_>) -> Grant {
        let mut state = self.lock();
        let applied = if state.keys.contains_key(idempotency_key) {
            Applied::Duplicate
        } else {
            Applied::Applied
        };
        state.count(idempotency_key, call, applied);
        let crash = applied == Applied::Applied && state.crash.granted(idempotency_key);
        Grant { applied, crash }
    }

    /// Arms a crash at the `k`-th effect granted from now on (1-based).
    pub(crate) fn arm_crash(&self, k: u32) {
        self.lock().crash = crash::Arming::at(k);
    }

    /// Disarms any crash and returns the key whose grant triggered it.
    pub(crate) fn disarm_crash(&self) -> Option<String> {
        std::mem::take(&mut self.lock().crash).fired()
    }

    /// Records an attempt with no effect of its own to run.
    pub fn record(&self, idempotency_key: &str) -> Applied {
        self.apply(idempotency_key, || {})
    }

    /// Records an attempt of `tool`'s call with no effect of its own to run.
    pub fn record_for(&self, tool: &str, idempotency_key: &str) -> Applied {
        self.apply_for(tool, idempotency_key, || {})
    }

    /// How many attempts the ledger has seen: a position to read
    /// [`Self::events_since`] from.
    pub fn event_count(&self) -> usize {
        self.lock().events.len()
    }

    /// The attempts from position `from` on, in the order they came.
    pub fn events_since(&self, from: usize) -> Vec<LedgerEvent> {
        let state = self.lock();
        state.events.get(from..).unwrap_or_default().to_vec()
    }

    /// The counts so far.
    pub fn counts(&self) -> LedgerCounts {
        self.lock().counts
    }

    /// How many attempts reached the effect under `idempotency_key` (zero
    /// for a key never seen): a retry that reused its key shows here as a
    /// second attempt.
    pub fn attempts_for(&self, idempotency_key: &str) -> u64 {
        self.lock().keys.get(idempotency_key).copied().unwrap_or(0)
    }

    /// The keys whose effects ran, in the order they ran.
    pub fn applied_keys(&self) -> Vec<String> {
        self.lock().applied.clone()
    }

    /// Records what a tool body actually received and how it ended. The
    /// tool calls a turn reports are the agent loop's account; a witness is
    /// the tool's own, so a bridge that drops arguments or turns an error
    /// into a success shows as a disagreement between the two.
    pub fn witness(&self, tool: &str, arguments: &serde_json::Value, outcome: WitnessOutcome) {
        let witness = Witness {
            tool: tool.to_owned(),
            arguments: arguments.clone(),
            outcome,
        };
        if let Some(peer) = &self.peer {
            peer.witness(&witness);
        }
        self.lock().witnesses.push(witness);
    }

    /// How many witness records the ledger holds.
    pub fn witness_count(&self) -> usize {
        self.lock().witnesses.len()
    }

    /// The witness records from position `from` on, in the order they came.
    pub fn witnesses_since(&self, from: usize) -> Vec<Witness> {
        let state = self.lock();
        state.witnesses.get(from..).unwrap_or_default().to_vec()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LedgerState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl LedgerState {
    fn count(&mut self, key: &str, call: EffectCall<'_>, applied: Applied) {
        self.events.push(LedgerEvent {
            key: key.to_owned(),
            tool: call.tool.map(str::to_owned),
            arguments: call.arguments.map(crate::assertion::result_digest),
            applied: applied == Applied::Applied,
        });
        self.counts.attempts += 1;
        *self.keys.entry(key.to_owned()).or_insert(0) += 1;
        match applied {
            Applied::Applied => {
                self.applied.push(key.to_owned());
                self.counts.effects += 1;
            }
            Applied::Duplicate => self.counts.duplicates += 1,
        }
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
    fn keys_remember_their_attempts_and_order() {
        let ledger = SideEffectLedger::new();
        ledger.record("b");
        ledger.record("a");
        ledger.record("b");
        assert_eq!(ledger.attempts_for("b"), 2);
        assert_eq!(ledger.attempts_for("a"), 1);
        assert_eq!(ledger.attempts_for("never"), 0);
        assert_eq!(ledger.applied_keys(), ["b", "a"]);
    }

    #[test]
    fn witnesses_are_read_from_a_position() {
        let ledger = SideEffectLedger::new();
        let args = serde_json::json!({"city": "Oslo"});
        ledger.witness("weather", &args, WitnessOutcome::failed("upstream 500"));
        let from = ledger.witness_count();
        ledger.witness(
            "weather",
            &args,
            WitnessOutcome::succeeded(serde_json::json!("12 C")),
        );
        let later = ledger.witnesses_since(from);
        assert_eq!(later.len(), 1);
        assert!(later[0].outcome.is_success());
        assert!(ledger.witnesses_since(99).is_empty());
    }

    #[test]
    fn an_armed_crash_fires_on_the_kth_new_effect_only() {
        let ledger = SideEffectLedger::new();
        ledger.arm_crash(2);
        assert!(!ledger.grant("a", EffectCall::default()).crash);
        assert!(
            !ledger.grant("a", EffectCall::default()).crash,
            "a duplicate is not an effect"
        );
        assert!(ledger.grant("b", EffectCall::default()).crash);
        assert!(
            !ledger.grant("c", EffectCall::default()).crash,
            "a crash fires once"
        );
        assert_eq!(ledger.disarm_crash().as_deref(), Some("b"));
        assert_eq!(ledger.disarm_crash(), None);
        assert_eq!(ledger.counts().effects, 3);
    }

    #[test]
    fn a_proxy_asks_its_peer_and_runs_only_granted_effects() {
        #[derive(Debug, Default)]
        struct Peer(Mutex<Vec<String>>);
        impl LedgerPeer for Peer {
            fn apply(&self, key: &str, _: EffectCall<'_>) -> Applied {
                let mut seen = self.0.lock().unwrap();
                let applied = if seen.iter().any(|k| k == key) {
                    Applied::Duplicate
                } else {
                    Applied::Applied
                };
                seen.push(key.to_owned());
                applied
            }
            fn witness(&self, _: &Witness) {}
        }
        let ledger = SideEffectLedger::proxy(Arc::new(Peer::default()));
        let mut ran = 0;
        ledger.apply("k", || ran += 1);
        ledger.apply("k", || ran += 1);
        assert_eq!(ran, 1);
        assert_eq!(ledger.counts().duplicates, 1);
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
