//! Everything an assertion may read about one step: the deployment's record,
//! and what the harness itself holds (ledger counts before and after, the
//! trial's earlier call ids, witness records, retained pauses, the effect
//! oracle's count).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::evidence::TurnRecord;
use crate::ledger::{LedgerCounts, LedgerEvent, Witness};

/// A pause the harness retained for its conversation: the token to redeem,
/// the question id to pass back, and the calls the pause left pending.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RetainedPause {
    /// The single-use token.
    pub token: String,
    /// The question id the pause published, if any.
    pub question_id: Option<String>,
    /// Ids of the calls the paused turn reported as pending.
    pub pending_calls: Vec<String>,
}

/// A crash the harness injected during the step: the effect whose grant it
/// followed, and how often that effect's key was attempted by the end of
/// the retried turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashSeen {
    /// The idempotency key granted just before the kill.
    pub key: String,
    /// Which of the step's effects it was (1-based).
    pub effect: u32,
    /// Attempts under that key once the retry finished.
    pub attempts: u64,
}

/// What the trial's MCP server fixture saw, for one step (see
/// [`crate::mcp`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FixtureEvidence {
    /// The calls it answered during the step, in order.
    pub calls: Vec<crate::mcp::FixtureCall>,
    /// The nonces of the trial's earlier calls, each with the conversation
    /// of the step that made it.
    pub earlier: Vec<(String, String)>,
    /// Whether the deployment listed the fixture's tools at least once in
    /// the trial. A client may keep the list it got (across a restart,
    /// too) and call by name; what shows a binding is the call arriving.
    pub listed: bool,
    /// Requests it refused during the step.
    pub refusals: Vec<crate::mcp::FixtureRefusal>,
}

/// One step's evidence, as assertions read it.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// What the deployment reported.
    pub record: &'a TurnRecord,
    /// Ledger counts after the step.
    pub ledger: LedgerCounts,
    /// Ledger counts before the step.
    pub ledger_before: LedgerCounts,
    /// Call ids of the trial's earlier turns.
    pub earlier_call_ids: Option<&'a HashSet<String>>,
    /// Per tool, digests of the results its successful calls returned in
    /// the trial's earlier turns, which
    /// [`Assertion::ToolResultFresh`](crate::Assertion::ToolResultFresh)
    /// compares with this turn's.
    pub earlier_results: Option<&'a HashMap<String, HashSet<String>>>,
    /// Per earlier step of the trial (by label), digests of the attributes
    /// its record carried, which
    /// [`Assertion::AttributeSinceStep`](crate::Assertion::AttributeSinceStep)
    /// compares with this turn's.
    pub earlier_attributes: Option<&'a HashMap<String, BTreeMap<String, String>>>,
    /// Witness records tool bodies made during the step.
    pub witnesses: &'a [Witness],
    /// The ledger attempts made during the step, each with the tool it
    /// belongs to when the deployment named it.
    pub ledger_events: &'a [LedgerEvent],
    /// Every ledger attempt since the trial's fixtures were made, this
    /// step's included.
    pub trial_events: &'a [LedgerEvent],
    /// The ledger attempts made in the step's conversation since its
    /// latest prompt step (the pause a resume answers), before this step.
    pub since_pause: &'a [LedgerEvent],
    /// The conversation the step ran in.
    pub conversation: &'a str,
    /// Every conversation's retained pause after the step.
    pub pauses: Option<&'a BTreeMap<String, RetainedPause>>,
    /// The pause this step's resume redeemed, if it was one.
    pub redeemed: Option<&'a RetainedPause>,
    /// The crash injected during the step, if one was.
    pub crash: Option<&'a CrashSeen>,
    /// The effect oracle's count after the step, if one was configured.
    pub oracle: Option<&'a Result<u64, String>>,
    /// Values public anyway (the pack's own), shown in clear in reports.
    pub public: Option<&'a crate::redact::PublicValues>,
    /// What the trial's MCP server fixture saw during the step, when the
    /// pack served one.
    pub fixture: Option<&'a FixtureEvidence>,
}

impl<'a> Evidence<'a> {
    /// Evidence of a lone turn: its record and the ledger counts after it
    /// (as if the ledger started empty), nothing else.
    pub fn of(record: &'a TurnRecord, ledger: LedgerCounts) -> Self {
        Self {
            record,
            ledger,
            ledger_before: LedgerCounts::default(),
            earlier_call_ids: None,
            earlier_results: None,
            earlier_attributes: None,
            witnesses: &[],
            ledger_events: &[],
            trial_events: &[],
            since_pause: &[],
            conversation: "",
            pauses: None,
            redeemed: None,
            crash: None,
            oracle: None,
            public: None,
            fixture: None,
        }
    }
}

/// Digests of every attribute `record` carries (keys sorted inside each
/// value), by attribute name: what a later step's
/// [`Assertion::AttributeSinceStep`](crate::Assertion::AttributeSinceStep)
/// compares with, without the harness keeping any value.
pub fn attribute_digests(record: &TurnRecord) -> BTreeMap<String, String> {
    record
        .attributes()
        .iter()
        .map(|(name, value)| (name.clone(), result_digest(value)))
        .collect()
}

/// The digest a tool result is remembered by across a trial's turns: its
/// compact JSON with every object's keys sorted, hashed, so no result is
/// kept and the order a deployment writes keys in does not matter.
pub fn result_digest(result: &serde_json::Value) -> String {
    let sorted = crate::packs::with_sorted_keys(result);
    crate::redact::short_digest(sorted.to_string().as_bytes())
}
