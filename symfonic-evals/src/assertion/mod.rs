//! The assertions a pack makes about one step's evidence.
//!
//! Each assertion reads what the deployment reported (or what the harness
//! itself owns: the ledger, witness records, retained pause tokens, an
//! effect oracle) and answers with a [`Check`]: whether it held, what was
//! expected, and what was observed, the latter as a digest whenever it could
//! carry turn content.

pub(crate) mod check;
mod describe;
mod evidence;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::evidence::StageOutcome;

pub use check::Check;
pub use evidence::{
    attribute_digests, result_digest, CrashSeen, Evidence, FixtureEvidence, RetainedPause,
};

/// How a call's arguments are compared with the arguments a pack names.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentMatch {
    /// Exactly the named arguments, nothing more.
    #[default]
    Exact,
    /// At least the named arguments (objects compared key by key, inside
    /// nested objects too): a tool that adds a defaulted argument is not a
    /// failure.
    Subset,
}

impl ArgumentMatch {
    /// Whether `actual` satisfies `expected` under this match.
    pub fn accepts(self, expected: &Value, actual: &Value) -> bool {
        match self {
            Self::Exact => expected == actual,
            Self::Subset => subset(expected, actual),
        }
    }

    /// The lowercase name the pack argument uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Subset => "subset",
        }
    }
}

fn subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(want), Value::Object(have)) => want
            .iter()
            .all(|(key, value)| have.get(key).is_some_and(|v| subset(value, v))),
        _ => expected == actual,
    }
}

/// How strictly a pack counts retries of an effect.
///
/// A client or a framework may retry a tool call under the same
/// idempotency key; the ledger then records a second attempt and a
/// duplicate, and no second effect. Whether that is acceptable is the
/// adopter's documented choice, the same in every pack.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Retries {
    /// Every attempt applies: a duplicate fails the step (the seed
    /// scenarios' counts, the default).
    #[default]
    Exact,
    /// A retry under an applied key, which applied no second effect, is
    /// accepted and shown; the effects themselves stay exact.
    SameKey,
}

impl Retries {
    /// The lowercase name the pack argument uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::SameKey => "same_key",
        }
    }
}

/// What a gate sweep step expects the gate to do with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GateVerdict {
    /// The contract's precondition holds: the call must be admitted and run.
    Admit,
    /// It does not: the call must be refused and perform nothing.
    Refuse,
}

/// One claim about a step's evidence.
#[derive(Debug, Clone, PartialEq)]
pub enum Assertion {
    /// The fact `name` equals `expected` exactly (JSON equality).
    AttributeEquals {
        /// The attribute (or pause fact) to read.
        name: String,
        /// The value it must hold.
        expected: Value,
    },
    /// When the record has the fact `name`, it equals `expected`; a record
    /// without it passes. For facts a deployment may publish only on some
    /// turns (a promoted count), read where a wrong value would show.
    AttributeEqualsIfPresent {
        /// The attribute (or pause fact) to read.
        name: String,
        /// The value it must hold when present.
        expected: Value,
    },
    /// The fact `name` is a count, or a collection whose length is, at least `minimum`.
    AttributeCount {
        /// The attribute to read.
        name: String,
        /// The least acceptable count.
        minimum: u64,
    },
    /// Two attributes are present, equal and non-empty.
    AttributesSameNonEmpty {
        /// One attribute.
        left: String,
        /// The other.
        right: String,
    },
    /// The model input contains the fragment.
    PromptRecallContains(String),
    /// The model input does not contain the fragment.
    PromptRecallExcludes(String),
    /// The tool was called exactly `times` times (each with `arguments`,
    /// compared by `matching`, if given).
    ToolCalled {
        /// The tool's name.
        tool: String,
        /// How many calls.
        times: usize,
        /// The arguments each counted call must carry.
        arguments: Option<Value>,
        /// How the arguments are compared.
        matching: ArgumentMatch,
    },
    /// The person's amendment reached the action: a call that ran (of
    /// `tool`, or of any tool when it is `None`) carries `arguments`
    /// (compared as a subset), and no call of the same tool ran without
    /// them. An amended answer the deployment reads only for its decision
    /// runs the original request.
    AmendmentApplied {
        /// The gated tool, when the pack names it.
        tool: Option<String>,
        /// The arguments the amended call must carry.
        arguments: Value,
    },
    /// A person's edit of the held call `call` is what ran, or was refused:
    /// every call of `tool` that ran (among the turn's calls, or `call`
    /// resolved with the arguments it ran with) carries `edited` under
    /// `argument`; or none ran and the step applied no effect of `tool`
    /// (the edit refused, with a record or an error). Never the original
    /// arguments.
    EditApplied {
        /// The held call's id, as the pause reported it.
        call: String,
        /// Its tool.
        tool: String,
        /// The argument the edit changed.
        argument: String,
        /// The argument's value the edit replaced.
        original: Value,
        /// The value the edit gave it.
        edited: Value,
    },
    /// The tool ran and returned a result exactly `times` times.
    ToolSucceeded {
        /// The tool's name.
        tool: String,
        /// How many successful calls.
        times: usize,
    },
    /// Several calls of `tool` in one turn, each judged by the gate's
    /// `stage` on its own: at least two calls, every one admitted (ran)
    /// or every one refused, and the stage's `checked` (or `refused`)
    /// count, summed over its records, at least the number of calls. A
    /// gate that judges the first call of a message and lets the rest
    /// through fails it.
    EveryCallJudged {
        /// The governed tool.
        tool: String,
        /// The gate's stage in the governance trace.
        stage: String,
        /// Whether every call must be admitted (else refused).
        admitted: bool,
    },
    /// The tool has exactly `times` calls parked by the turn's pause.
    ToolPending {
        /// The tool's name.
        tool: String,
        /// How many pending calls.
        times: usize,
    },
    /// At least `minimum` tool calls, and no id repeated (within the turn,
    /// or also against every earlier turn of the trial).
    ToolCallIdsUnique {
        /// The least number of calls.
        minimum: usize,
        /// Whether ids must also differ from those of earlier turns.
        across_trial: bool,
    },
    /// The harness ledger shows exactly these counts after the step.
    SideEffectCount {
        /// Calls that reached the effect.
        attempts: u64,
        /// Effects applied.
        effects: u64,
        /// Attempts whose key had already been applied.
        duplicates: u64,
    },
    /// The harness ledger holds exactly this many applied effects (however
    /// many attempts and duplicates it took to get there).
    EffectsApplied {
        /// Effects applied.
        effects: u64,
    },
    /// The harness ledger holds fewer applied effects than this: a run
    /// that must withhold what another run applied (a denial against the
    /// approval's effects).
    EffectsFewerThan {
        /// The count the ledger must stay below.
        effects: u64,
    },
    /// The effects applied since the trial's fixtures were made (a denial's
    /// pause and answer) leave out part of what an approving run applied:
    /// of at least one tool the approval applied effects of, fewer effects
    /// than the approval did. An answer that is never read leaves every
    /// kind of effect the approval left (or more), whatever else it adds;
    /// a denial that posts a notice of its own still withholds the action.
    EffectsWithheld {
        /// The approving run's applied effects, counted per tool (an
        /// effect that names no tool counts under the empty name).
        approved: BTreeMap<String, u64>,
    },
    /// The turn paused for a person, or attempted no effect (applied or a
    /// duplicate) of a tool an earlier approval applied effects of: a request made again after an
    /// approval must be asked again, not granted on the strength of the
    /// earlier answer. A deployment that finds nothing left to do (the
    /// subscription already cancelled) may complete without asking, as
    /// long as it does nothing the approval was needed for.
    AskedOrWithheld {
        /// The approval's applied effects, counted per tool (an effect
        /// that names no tool counts under the empty name).
        approved: BTreeMap<String, u64>,
    },
    /// Of each tool an earlier approval applied effects of, the step
    /// attempted at least as many effects as that approval applied (the
    /// request was carried out, or found carried out under its key) and at
    /// most as many: one approval carries out one request, not every
    /// request pending beside it. The pause's own effects posted again
    /// under their keys (a framework that runs the paused step again from
    /// its start, as LangGraph does) are not a second request; a step
    /// that attempts none of a tool's effects, when other requests of the
    /// trial already applied as many, found its request carried out. Under
    /// `retries = same_key` a retry is allowed, and the bound is on the
    /// effects applied instead.
    EffectsOfOneApproval {
        /// The approval's applied effects, counted per tool (an effect
        /// that names no tool counts under the empty name).
        approved: BTreeMap<String, u64>,
        /// Whether a retry under an applied key is the deployment's way.
        retries: Retries,
    },
    /// The step resumes the later of two requests pending in one
    /// conversation, after the earlier one's resume (`earlier`: the
    /// argument digests that resume attempted, per tool). `request` holds
    /// the earlier request's effects where they carry the same arguments
    /// in every other conversation it ran in. Of each such tool, the
    /// earlier resume must have attempted them; if it did not, while this
    /// step did (the two approvals were taken for each other's requests)
    /// or both resumes attempted one same effect (both tokens continued
    /// one request), the check fails. Arguments that differ here from
    /// elsewhere, with no such crossing, are not judged.
    RequestsNotCrossed {
        /// The earlier request's effects' argument digests, per tool.
        request: BTreeMap<String, std::collections::BTreeSet<String>>,
        /// What the earlier request's resume attempted, per tool.
        earlier: BTreeMap<String, std::collections::BTreeSet<String>>,
    },
    /// No two effects of the step share an idempotency key. Two different
    /// effects under one key lose the second for good: the ledger refuses
    /// it as applied before. For a run with no crash in it (the
    /// exactly-once pack's uncrashed run), judged by `retries`:
    ///
    /// - [`Retries::Exact`]: no attempt of the step is refused as already
    ///   applied, save an effect of the pause the step answers attempted
    ///   again under its key with the same tool (and the same arguments,
    ///   where both name them), as a framework that runs the paused step
    ///   again from its start (LangGraph) does. With no crash and no retry,
    ///   any other refusal is a second effect sharing a key, or an effect
    ///   sent twice, even when nothing in the ledger tells the two apart
    ///   (one tool, no arguments).
    /// - [`Retries::SameKey`]: a refused attempt is a retry of the effect
    ///   applied under its key unless its tool, or its arguments when both
    ///   name them, differ; only a refusal told apart so is a second
    ///   effect.
    KeysNotShared {
        /// Whether a retry under an applied key is the deployment's way.
        retries: Retries,
    },
    /// No effect the step applied repeats, in tool and arguments, one
    /// applied in the step's conversation since its latest prompt (the
    /// pause the step answers) under another key: a resume that runs the
    /// paused step's body again posts what the pause posted a second
    /// time. Effects applied without their arguments are not judged.
    EffectNotRepeated,
    /// No attempt of the step is at the governed tool's effect, by
    /// whichever tool: an attempt belongs to it when a call of `tool`
    /// made it, or when its idempotency key is of a family (the key with
    /// every run of digits masked) a call of `tool` applied earlier in the
    /// trial. For a turn the gate must refuse: a second tool reaching the
    /// same effect (an alias, a "fast" variant) is a route around the
    /// gate, and the failure says whether the gate judged it (a call of
    /// that tool refused by `stage` in the trace) or not. Effects of other
    /// families (a notice, an audit row) are not judged.
    GovernedEffectWithheld {
        /// The governed tool.
        tool: String,
        /// The precondition stage whose refusals show a call was judged.
        stage: String,
    },
    /// The step attempted the governed tool's effect (in the sense of
    /// [`Self::GovernedEffectWithheld`]) at least once, by whichever tool,
    /// and applied it at most once: a wording of the request reaches the
    /// action, so the same wording refused elsewhere proves the gate.
    GovernedEffectReached {
        /// The governed tool.
        tool: String,
    },
    /// The step applied exactly `effects` effects of `tool`'s calls. When
    /// the deployment names the tool of its effects, the others (a notice,
    /// an audit row) are allowed and shown; when none of the step's
    /// effects names a tool, the whole ledger is judged, as
    /// [`Self::LedgerDelta`] would. Under [`Retries::SameKey`] a retry
    /// under an applied key (a duplicate, no second effect) is accepted;
    /// under [`Retries::Exact`] every attempt must apply.
    ToolEffects {
        /// The tool whose effects are counted.
        tool: String,
        /// Effects its calls applied during the step.
        effects: u64,
        /// Whether same-key retries are accepted.
        retries: Retries,
    },
    /// The harness ledger moved by exactly this much during the step.
    LedgerDelta {
        /// New attempts.
        attempts: u64,
        /// New effects.
        effects: u64,
        /// New duplicates.
        duplicates: u64,
    },
    /// The governance trace has the stage (with the outcome, if given) and
    /// its counts reach the minimums.
    StageObserved {
        /// The stage's name.
        stage: String,
        /// The outcome it must have had, if any.
        outcome: Option<StageOutcome>,
        /// Least values of named counts, summed over the matching records.
        minimum_counts: BTreeMap<String, u64>,
    },
    /// The answer contains every fragment.
    ResponseContains(Vec<String>),
    /// The pause this turn ended in issued a token no other conversation of
    /// the trial holds.
    PauseTokenDistinct,
    /// The turn paused, and its token cannot be worked out from the token
    /// any other conversation holds: it is not another one's with a number
    /// in it (a counter, a clock) moved on by a little (see the
    /// token-predictable probe). Whoever holds one approval link cannot
    /// redeem a neighbour's.
    PauseTokenUnpredictable,
    /// No genuine pause token the trial holds (the pause this turn made,
    /// every retained one, the one redeemed) appears in what the model was
    /// shown or in the arguments of a call the model made: a model that
    /// sees the token can redeem its own approval. The terminal event, the
    /// answer and the deployment's attributes may carry it.
    TokenKeptFromModel,
    /// The call the redeemed pause left pending is reported resolved by this
    /// turn (and `tool` was not called again).
    PendingResolved {
        /// The interaction tool.
        tool: String,
    },
    /// The procedures the deployment published (`procedures`: a list of
    /// `{"tool", "precondition", "text"}`) are bound to the identity digests
    /// it reported: the harness recomputes each identity, the review ids
    /// must be exactly those, at least one governs `tool`, and (when
    /// `enforced`) the enforcement ids are non-empty and each names one of
    /// them.
    ProceduresBound {
        /// Where the published procedures are.
        procedures: String,
        /// Where the review door's identity digests are.
        review_ids: String,
        /// Where the gate's identity digests are.
        enforcement_ids: String,
        /// The tool the procedure governs.
        tool: String,
        /// Whether this turn's gate must have read a published procedure.
        enforced: bool,
    },
    /// Every published precondition governing `tool`, judged by the
    /// library's own evaluator on `state`, holds (or, with `holds = false`,
    /// at least one does not): the pack's states mean what they claim.
    PreconditionVerdict {
        /// Where the published procedures are.
        procedures: String,
        /// The governed tool.
        tool: String,
        /// The state to judge.
        state: Value,
        /// Whether the precondition must hold.
        holds: bool,
    },
    /// The gate treated this turn's call as the contract says it must:
    /// admitted (stage not rejected, the tool succeeded, a ledger attempt)
    /// or refused (stage rejected, no success, the ledger unmoved).
    GateAgrees {
        /// The governed tool.
        tool: String,
        /// The precondition stage.
        stage: String,
        /// What the contract's evaluator decided.
        verdict: GateVerdict,
    },
    /// A tool body witnessed an execution of `tool` with the arguments
    /// (compared by `matching`) and a non-error outcome.
    ToolWitnessed {
        /// The tool's name.
        tool: String,
        /// The arguments the body must have received, if named.
        arguments: Option<Value>,
        /// How they are compared.
        matching: ArgumentMatch,
    },
    /// Each successful call of `tool` had its result shown to the model: the
    /// result's text fragments all appear in the model input.
    ToolResultShown {
        /// The tool's name.
        tool: String,
    },
    /// Each successful call of `tool` returned a result unlike every result
    /// `tool` returned earlier in the trial, so a result served from a
    /// cache, or an earlier call's result reported again, shows. Judged on
    /// digests of the results; the first call of a trial is fresh.
    ToolResultFresh {
        /// The tool's name.
        tool: String,
    },
    /// The harness's MCP server fixture received exactly `times` calls of
    /// `tool` during the step, from a deployment that listed its tools in
    /// the trial, each with the arguments (compared by `matching`, when
    /// named) and with the arguments the deployment reports the model's
    /// call carried; no request was refused. A built-in copy of the tool,
    /// a cache, a bridge that drops arguments and a binding made only on
    /// the first start all fail it.
    ServedByFixture {
        /// The tool's name.
        tool: String,
        /// How many calls.
        times: usize,
        /// The arguments each call must have carried, if named.
        arguments: Option<Value>,
        /// How they are compared.
        matching: ArgumentMatch,
    },
    /// Each result the fixture returned for `tool` during the step (its
    /// nonce) reached the model input of the step, and no result the
    /// fixture returned in another conversation did: the model saw this
    /// call's result, not an earlier or a foreign one.
    FixtureResultShown {
        /// The tool's name.
        tool: String,
    },
    /// The fixture answered the step's calls of `tool` with a tool error
    /// (as the step asked), and the deployment reports each of them as a
    /// failed call, none as a success.
    FixtureErrorReported {
        /// The tool's name.
        tool: String,
    },
    /// The procedures published for `tool` (in `procedures`) carry exactly
    /// these rules: one procedure per rule, and each procedure's state
    /// predicates meaning what its rule's do, predicate for predicate (the
    /// same path and operator, values equal by value; order, key order,
    /// extra keys and a `null` value beside `exists` aside). An empty list means no published procedure
    /// governs `tool`. What the review door stores is what the operator
    /// approved: no conjunct dropped, none added, no built-in copy.
    PublishedRules {
        /// Where the published procedures are.
        procedures: String,
        /// The governed tool.
        tool: String,
        /// The state predicates of each procedure the operator approved.
        rules: Vec<Vec<Value>>,
    },
    /// The attribute `name` equals (`unchanged`) or differs from
    /// (`!unchanged`) the value it had after the trial's step labelled
    /// `step`, compared by digest: an identity kept across re-learning, or
    /// changed with an amended rule.
    AttributeSinceStep {
        /// The attribute.
        name: String,
        /// The label of the earlier step.
        step: String,
        /// Whether it must be the same value.
        unchanged: bool,
    },
    /// The review rows in `name` (`[status, governed tool]` pairs, as
    /// `procedural_review_rows` builds them) hold no draft, no approved
    /// procedure and no row governing a tool: whatever is on file (a
    /// rejected draft, a guardrail kept as a negative example) is inert.
    ReviewRowsInert {
        /// The review-rows attribute.
        name: String,
    },
    /// The adopter's effect oracle, reading the deployment's own store,
    /// counts exactly the effects the ledger applied.
    EffectsMatchOracle,
    /// The effect a crash interrupted was retried under the same
    /// idempotency key (a duplicate the ledger refused), not applied again
    /// under a new one.
    CrashedEffectRetried,
}

impl Assertion {
    /// A tool-called assertion with no argument constraint.
    pub fn tool_called(tool: impl Into<String>, times: usize) -> Self {
        Self::ToolCalled {
            tool: tool.into(),
            times,
            arguments: None,
            matching: ArgumentMatch::Exact,
        }
    }

    /// A tool-succeeded assertion.
    pub fn tool_succeeded(tool: impl Into<String>, times: usize) -> Self {
        Self::ToolSucceeded {
            tool: tool.into(),
            times,
        }
    }

    /// An attribute-equals assertion.
    pub fn attribute_equals(name: impl Into<String>, expected: Value) -> Self {
        Self::AttributeEquals {
            name: name.into(),
            expected,
        }
    }

    /// An attributes-same-non-empty assertion.
    pub fn same_non_empty(left: impl Into<String>, right: impl Into<String>) -> Self {
        Self::AttributesSameNonEmpty {
            left: left.into(),
            right: right.into(),
        }
    }

    /// A ledger assertion on absolute counts.
    pub fn ledger(attempts: u64, effects: u64, duplicates: u64) -> Self {
        Self::SideEffectCount {
            attempts,
            effects,
            duplicates,
        }
    }

    /// The step applied exactly `effects` effects of `tool` (see
    /// [`Self::ToolEffects`]).
    pub fn tool_effects(tool: impl Into<String>, effects: u64, retries: Retries) -> Self {
        Self::ToolEffects {
            tool: tool.into(),
            effects,
            retries,
        }
    }

    /// A ledger assertion on what the step moved.
    pub fn ledger_moved(attempts: u64, effects: u64, duplicates: u64) -> Self {
        Self::LedgerDelta {
            attempts,
            effects,
            duplicates,
        }
    }

    /// A stage-observed assertion.
    pub fn stage_observed(
        stage: impl Into<String>,
        outcome: Option<StageOutcome>,
        minimum_counts: impl IntoIterator<Item = (&'static str, u64)>,
    ) -> Self {
        Self::StageObserved {
            stage: stage.into(),
            outcome,
            minimum_counts: minimum_counts
                .into_iter()
                .map(|(name, n)| (name.to_owned(), n))
                .collect(),
        }
    }

    /// Whether the assertion can be judged without a turn record (a step
    /// that ended in its expected error still has the ledger and the
    /// oracle).
    pub fn needs_record(&self) -> bool {
        !matches!(
            self,
            Self::SideEffectCount { .. }
                | Self::EffectsApplied { .. }
                | Self::EffectsFewerThan { .. }
                | Self::EffectsWithheld { .. }
                | Self::EffectsOfOneApproval { .. }
                | Self::RequestsNotCrossed { .. }
                | Self::EffectNotRepeated
                | Self::KeysNotShared { .. }
                | Self::GovernedEffectReached { .. }
                | Self::LedgerDelta { .. }
                | Self::ToolEffects { .. }
                | Self::EffectsMatchOracle
                | Self::CrashedEffectRetried
                // Without a record nothing ran: an edit refused with an
                // error is judged by the ledger.
                | Self::EditApplied { .. }
        )
    }
}
