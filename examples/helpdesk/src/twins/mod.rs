//! Broken twins: the reference desk with one flaw switched on.
//!
//! Each [`Flaw`] is a failure a deployment can have while still *looking*
//! like it has the capability: the answer reads right, the attributes are
//! set, the pause is described. The switch sits at the exact line in the
//! real code where the flaw lives (search for `Flaw::` to find them), so a
//! reader sees how small the difference between a working desk and a broken
//! one can be, and which pack assertion notices it.
//!
//! The first flaws are caught by a pack's seed scenario. The others are
//! written as an adversary would write them against the seed alone: the
//! smallest realistic change that keeps every other scenario passing, so
//! exactly one probe catches each (see [`Flaw::failing_scenarios`]).

mod catches;

pub use catches::APPROVAL_RESUMING;

/// The packs, as the twins are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pack {
    /// `procedural-skills`
    Procedural,
    /// `approval-resume`
    ApprovalResume,
    /// `extension-tools`
    ExtensionTool,
    /// `exactly-once-effects`
    ExactlyOnce,
}

impl Pack {
    /// Every pack, in the order the main job and the benchmarks run them.
    pub const ALL: [Self; 4] = [
        Self::Procedural,
        Self::ApprovalResume,
        Self::ExtensionTool,
        Self::ExactlyOnce,
    ];
}

/// Declares [`Flaw`], its names, its packs and [`Flaw::ALL`] from one list,
/// so a flaw cannot be added without being run by the main job and the
/// twin suite.
macro_rules! flaws {
    ($($(#[$doc:meta])* $name:ident = $kebab:literal in $pack:ident,)*) => {
        /// One failure, switched on in an otherwise real deployment.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Flaw {
            $($(#[$doc])* $name,)*
        }

        impl Flaw {
            /// Every flaw, in the order the main job reports them.
            pub const ALL: &'static [Self] = &[$(Self::$name),*];

            /// A short kebab-case name for reports.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$name => $kebab,)*
                }
            }

            /// The pack whose scenario this flaw defeats.
            pub fn pack(self) -> Pack {
                match self {
                    $(Self::$name => Pack::$pack,)*
                }
            }
        }
    };
}

flaws! {
    /// No consolidation cycle runs; the "promoted" count is a turn counter.
    PromotedCountIsTurnCounter = "promoted-count-is-turn-counter" in Procedural,
    /// The gate reads drafts as well as approved procedures, so a draft
    /// governs before anyone reviewed it.
    DraftGovernsBeforeReview = "draft-governs-before-review" in Procedural,
    /// The recall block lists drafts, so an unreviewed procedure reaches
    /// the model's input.
    DraftLeaksIntoPrompt = "draft-leaks-into-prompt" in Procedural,
    /// Approvals live in process memory; the review door shows them until
    /// the next restart.
    ApprovalOnlyInMemory = "approval-only-in-memory" in Procedural,
    /// The gate enforces a compiled-in policy (the same-looking rule, under
    /// other wording) instead of the procedure the review door shows.
    EnforcementReadsShadowProcedure = "enforcement-reads-shadow-procedure" in Procedural,
    /// The precondition stage judges the turn's state against the approved
    /// procedure, but runs in observe mode: a failing state is recorded as a
    /// downgraded refusal and the call admitted anyway.
    GateIgnoresState = "gate-ignores-state" in Procedural,
    /// The gate refuses the call and the record says so, but the tool's
    /// effect is applied anyway.
    ToolRunsDespiteRefusal = "tool-runs-despite-refusal" in Procedural,
    /// The turn completes and the pause is only described in attributes.
    PauseReportedAsAttribute = "pause-reported-as-attribute" in ApprovalResume,
    /// Spent tokens are a blocklist loaded when the desk opens and kept
    /// up by its own redemptions; the store records claims but is never
    /// asked, so a replica opened before the spend redeems the token again.
    SpentTokensLoadedAtStart = "spent-tokens-loaded-at-start" in ApprovalResume,
    /// The pause issues a token but writes no checkpoint to bind it to.
    ResumeWithoutCheckpoint = "resume-without-checkpoint" in ApprovalResume,
    /// Redemption loads the checkpoint and stops there: the paused turn is
    /// never carried on.
    ResumeWithoutContinuation = "resume-without-continuation" in ApprovalResume,
    /// Redemption re-runs the request from the top instead of continuing
    /// from the checkpoint, so the interaction is asked again.
    ResumeRestartsTurn = "resume-restarts-turn" in ApprovalResume,
    /// The token is spent without checking it was unspent.
    TokenRedeemableTwice = "token-redeemable-twice" in ApprovalResume,
    /// The extension's manifest is declared but its tool is never bound.
    ExtensionDeclaredNotBound = "extension-declared-not-bound" in ExtensionTool,
    /// Checkpoints are kept in process memory; the token row in the store
    /// still names one, so the pause looks resumable until a restart.
    CheckpointOnlyInMemory = "checkpoint-only-in-memory" in ApprovalResume,
    /// Spent tokens are remembered in process memory; after a restart the
    /// replayed token redeems again.
    SpentMarkOnlyInMemory = "spent-mark-only-in-memory" in ApprovalResume,
    /// Spent tokens are kept in memory and written to the store when the
    /// desk shuts down: an orderly restart keeps them, a crash loses them
    /// and the replayed token redeems again.
    SpentMarksWrittenAtShutdown = "spent-marks-written-at-shutdown" in ApprovalResume,
    /// Redemption looks up the conversation's latest pause and never
    /// compares the token it was handed.
    TokenNeverChecked = "token-never-checked" in ApprovalResume,
    /// Redemption finds the token but not whose it is: any conversation
    /// may redeem it.
    TokenRedeemsAnyConversation = "token-redeems-any-conversation" in ApprovalResume,
    /// The desk has one pending-pause slot: a second pause re-arms the
    /// first one's token for itself.
    OnePausePerDeployment = "one-pause-per-deployment" in ApprovalResume,
    /// The parked `ask_user` call is reported as a call that succeeded.
    ParkedCallReportedAsSuccess = "parked-call-reported-as-success" in ApprovalResume,
    /// A conversation whose request a person approved once has its later
    /// requests carried out without asking: the earlier answer is taken
    /// for them too.
    ApprovalReusedInConversation = "approval-reused-in-conversation" in ApprovalResume,
    /// An approval is applied as a batch: redeeming one pause carries out
    /// every request still pending on the desk with the same answer, as a
    /// queue drained by whoever approves next.
    ApprovalGrantsEveryPending = "approval-grants-every-pending" in ApprovalResume,
    /// An approval is applied to the conversation's queue: redeeming one
    /// pause carries out every request still pending in the same
    /// conversation, as a thread whose approval node runs every queued
    /// request. Other conversations are left alone.
    ApprovalGrantsConversationQueue = "approval-grants-conversation-queue" in ApprovalResume,
    /// The paused turn is checkpointed under its conversation, one slot
    /// each, as a thread keeps one state: a second pause in the same
    /// conversation overwrites the first's, and either token, still
    /// genuine, continues the later request. Each resume carries out one
    /// request's effects, so counting them shows nothing.
    CheckpointPerConversation = "checkpoint-per-conversation" in ApprovalResume,
    /// A conversation's pending pauses are a stack: any genuine token of
    /// the conversation continues the latest pause not yet continued, so
    /// two requests answered first-to-last are carried out last-first,
    /// each with one request's effects, each under the other's approval.
    PausesAnsweredLastFirst = "pauses-answered-last-first" in ApprovalResume,
    /// The approver an answer names is never checked: anyone's approval
    /// carries the request out.
    AnyApproverAccepted = "any-approver-accepted" in ApprovalResume,
    /// The continuation hears the person's decision and nothing else: an
    /// approval that says when the cancellation takes effect cancels now.
    AmendmentIgnored = "amendment-ignored" in ApprovalResume,
    /// The approval sits on the held cancellation, which a person may edit
    /// (the desk declares `editable-calls`); an edit is heard as a plain
    /// approval, and the call runs with the arguments the model asked for.
    EditedCallIgnored = "edited-call-ignored" in ApprovalResume,
    /// Pause tokens are numbered one after another from a durable counter:
    /// unique, looked up, and the next one is this one plus one.
    TokensNumberedInOrder = "tokens-numbered-in-order" in ApprovalResume,
    /// The pause publishes a question id; redemption never compares it.
    QuestionIdIgnored = "question-id-ignored" in ApprovalResume,
    /// The model cancels first and asks the person to confirm after.
    GatedActionBeforeAnswer = "gated-action-before-answer" in ApprovalResume,
    /// The continuation hears that somebody answered, not what: a denial
    /// cancels like an approval.
    DenialReadAsApproval = "denial-read-as-approval" in ApprovalResume,
    /// The step that asks posts a change notice keyed by the run that
    /// posts it, and runs again from its top on resume (a graph node
    /// re-executed after its interrupt): the notice goes out twice.
    NoticeRepostedOnResume = "notice-reposted-on-resume" in ApprovalResume,
    /// Answers are never checked against the question's schema.
    UnfitAnswerAccepted = "unfit-answer-accepted" in ApprovalResume,
    /// The token is spent before the answer is validated, so a rejected
    /// answer burns it.
    UnfitAnswerSpendsToken = "unfit-answer-spends-token" in ApprovalResume,
    /// A look-alike answer is coerced to the value it resembles (`"yes"`,
    /// `"true"` or `1` read as `true`) instead of being refused.
    AnswerCoerced = "answer-coerced" in ApprovalResume,
    /// The pause's token reaches the model: the interaction's result, token
    /// and all, is put in the transcript the model reads, so a model could
    /// redeem its own approval.
    TokenShownToModel = "token-shown-to-model" in ApprovalResume,
    /// Effects are deduplicated per conversation in the ledger but per
    /// customer in the store: a second conversation's cancellation is a
    /// ledger effect with no row behind it.
    LedgerKeyPerConversation = "ledger-key-per-conversation" in ApprovalResume,
    /// The token is spent for good before the continuation runs, so a
    /// crash inside the continuation leaves a turn nobody can finish.
    ResumeNotRetriable = "resume-not-retriable" in ApprovalResume,
    /// A reset clears the conversation's transcript only: the pause it had
    /// pending stays, and its token still redeems after the reset.
    ResetKeepsPause = "reset-keeps-pause" in ApprovalResume,
    /// The gate reads approvals once, when the desk opens: an approval
    /// takes effect only after a restart.
    PolicyCachedAtStartup = "policy-cached-at-startup" in Procedural,
    /// Recall lists only the procedures approved in the turn's own
    /// conversation, as if approvals lived in its transcript.
    RecallScopedToReviewConversation = "recall-scoped-to-review-conversation" in Procedural,
    /// Turns are routed to the review door on their words: a user who
    /// writes "approve ..." approves.
    ReviewDoorOpenToUsers = "review-door-open-to-users" in Procedural,
    /// Operator rights go with the channel: any turn in a conversation
    /// whose name says "operator" is heard at the review door, whoever
    /// sent it.
    OperatorRightsByConversationName = "operator-rights-by-conversation-name" in Procedural,
    /// The door and the gate name procedures by row labels, agreeing with
    /// each other and with no digest of what was reviewed.
    IdentityIsRowLabel = "identity-is-row-label" in Procedural,
    /// The gate's own evaluator matches keys in any casing.
    GateKeysCaseInsensitive = "gate-keys-case-insensitive" in Procedural,
    /// The gate's own evaluator looks keys up in lower case only.
    GateKeysLowerCaseOnly = "gate-keys-lower-case-only" in Procedural,
    /// The gate's own evaluator reads a missing key as `null`.
    GateMissingKeyAsNull = "gate-missing-key-as-null" in Procedural,
    /// The gate names the approved procedure but judges a hand-written copy
    /// of its rule, which agrees on the pack's two states only.
    GateEnforcesCompiledRule = "gate-enforces-compiled-rule" in Procedural,
    /// The gate's own evaluator judges only a precondition's first
    /// predicate: the pack's blocked state fails that one, so the seed
    /// passes.
    GateJudgesFirstPredicateOnly = "gate-judges-first-predicate-only" in Procedural,
    /// The gate keeps a fast lane for urgent refunds: a turn whose
    /// `priority` is `"urgent"` is admitted whatever the approved
    /// procedure says. The pack's satisfied and blocked states are both of
    /// normal priority, so the seed and every state it varies pass.
    GateUrgentFastLane = "gate-urgent-fast-lane" in Procedural,
    /// The gate's own evaluator compares each value by its text, as a
    /// form-handling layer hands fields over: a `verified` of `"true"`
    /// passes a rule that asks for the boolean `true`. The pack's satisfied
    /// and blocked states carry the boolean itself, so the seed passes.
    GateComparesAsStrings = "gate-compares-as-strings" in Procedural,
    /// An operator's approval turn approves every draft on file, not the
    /// one it selects (the admin API approves the one it names).
    ReviewApprovesEveryDraft = "review-approves-every-draft" in Procedural,
    /// The promoted count is the number of episodes the cycle read, and is
    /// published only when the cycle promoted something.
    PromotedCountCountsEpisodes = "promoted-count-counts-episodes" in Procedural,
    /// The promoted count is the number of procedures on file: zero on an
    /// empty store and one after the first promotion, as the cycle's own
    /// would be, and one again on every later turn.
    PromotedCountIsDraftsOnFile = "promoted-count-is-drafts-on-file" in Procedural,
    /// A refund the gate refused for want of a readable region goes down a
    /// legacy path that writes it straight to the outbox, outside the ledger.
    RefusedRefundWrittenToStore = "refused-refund-written-to-store" in Procedural,
    /// The admin API's approval reads only the first predicate of the rule
    /// it is given (the chat command still reads them all).
    ReviewDoorDropsConjunct = "review-door-drops-conjunct" in Procedural,
    /// The gate compiles each approved procedure's rule once, keyed by its
    /// row: an amendment keeps the row, so the gate enforces the rule it
    /// first read until a restart (a revocation drops the row, and shows).
    GateCachesRulesByRow = "gate-caches-rules-by-row" in Procedural,
    /// Revocation marks the row, but the gate reads revoked procedures as
    /// well as approved ones.
    RevokedStillGoverns = "revoked-still-governs" in Procedural,
    /// Revocation stops the gate, but the recall block still lists the
    /// revoked procedure, so the model goes on following it.
    RevokedStaysInRecall = "revoked-stays-in-recall" in Procedural,
    /// Revocations are kept in memory, where the gate, the recall block
    /// and the review door honour them at once, and written to the store
    /// when the desk shuts down: an orderly restart keeps them, a crash
    /// loses them and the revoked procedure governs again.
    RevocationWrittenAtShutdown = "revocation-written-at-shutdown" in Procedural,
    /// A lesson taught again after its procedure was revoked brings the
    /// procedure back approved: approvals are remembered by their text.
    RelearnRestoresRevoked = "relearn-restores-revoked" in Procedural,
    /// The gate judges only the first approved procedure on a tool.
    GateJudgesFirstProcedureOnly = "gate-judges-first-procedure-only" in Procedural,
    /// The desk offers an express refund beside the refund, reaching the
    /// same effect under the same key, and the gate judges calls by tool
    /// name: no procedure governs `express_refund`, so a request worded
    /// "express" refunds whatever the state.
    AliasToolUngated = "alias-tool" in Procedural,
    /// The review door's chat approval binds the procedure to the tool the
    /// desk ran last, not the one the operator names: right whenever the
    /// review follows the draft's own call.
    ReviewBindsLastTool = "review-binds-last-tool" in Procedural,
    /// The gate judges the first call of a model message; the others the
    /// message carries run unjudged (a gate node that reads
    /// `tool_calls[0]`).
    GateJudgesFirstCallOnly = "gate-judges-first-call-only" in Procedural,
    /// A call a manager approves before the gate runs as soon as it is
    /// approved: the approval edge leads straight to the tool, around the
    /// procedure gate (a graph whose approval node routes to the tool
    /// node).
    ApprovedCallSkipsGate = "approved-call-skips-gate" in Procedural,
    /// After the manager answers, a call the gate would admit runs
    /// whatever the manager said: the graph routes on the gate's verdict
    /// alone, so a declined full refund under a satisfied procedure is
    /// paid.
    GateOverridesDenial = "gate-overrides-denial" in Procedural,
    /// A lesson's support is counted over the turns since it was first
    /// seen ("the pattern has held for two turns"), not over the
    /// demonstrations that show it: one demonstration and any later turn
    /// promote the draft.
    PromotionCountsTurnsSinceFirstSeen = "promotion-counts-turns-since-first-seen" in Procedural,
    /// Each instance keeps the approved procedures in a cache loaded when it
    /// opens and refreshed by its own review door: a replica that was
    /// already running enforces without the approval.
    PolicyCachePerInstance = "policy-cache-per-instance" in Procedural,
    /// Re-learning refreshes a matching procedure whatever its status,
    /// resetting an approved one's rule to the extractor's.
    RelearnRewritesApproved = "relearn-rewrites-approved" in Procedural,
    /// A demonstration a reviewer marked rejected is remembered and
    /// consolidated like any other: the feedback is read by nobody.
    RejectedDemonstrationsLearned = "rejected-demonstrations-learned" in Procedural,
    /// A demonstration marked rejected runs no consolidation cycle of its
    /// own, but is kept as an episode like any other, so the next turn's
    /// cycle learns from it.
    RejectedEpisodesKept = "rejected-episodes-kept" in Procedural,
    /// The admin review door's approval finds a rejected draft by its text
    /// as it finds a draft, so a rejected lesson can still be approved.
    RejectedDraftApprovable = "rejected-draft-approvable" in Procedural,
    /// A draft rejected at the review door is opened as a draft again when
    /// consolidation proposes its lesson again: the rejection holds only
    /// until the lesson is next seen.
    RejectedDraftRedrafted = "rejected-draft-redrafted" in Procedural,
    /// Call ids count from one again in every turn.
    CallIdsRestartEveryTurn = "call-ids-restart-every-turn" in ExtensionTool,
    /// Call ids come from a counter in memory: unique within one process,
    /// repeated after every restart.
    CallIdsFromProcessCounter = "call-ids-from-process-counter" in ExtensionTool,
    /// The extension bridge forwards only the arguments of the first
    /// manifest's schema, dropping `include_eta`.
    BridgeDropsArguments = "bridge-drops-arguments" in ExtensionTool,
    /// The carrier feed is down and the bridge serves the timetable's
    /// estimate as a successful lookup.
    UpstreamErrorReportedAsSuccess = "upstream-error-reported-as-success" in ExtensionTool,
    /// Tool results go to the customer as cards; the model is told only
    /// that one was sent.
    ResultNeverShown = "result-never-shown" in ExtensionTool,
    /// The extension bridge keeps each result it returned, keyed by the
    /// call's arguments, and answers a repeated call from that cache
    /// without running the tool.
    ResultServedFromCache = "result-served-from-cache" in ExtensionTool,
    /// The model is shown the tool's previous result in this process in
    /// place of the one the call returned (the same result, as long as the
    /// calls ask the same).
    PreviousResultShown = "previous-result-shown" in ExtensionTool,
    /// Tracking runs on the desk's own copy of the carrier's timetable,
    /// while the desk declares the carrier server's tool as the shipping
    /// extension's and says it binds that server.
    BuiltInDeclaredAsExtension = "built-in-declared-as-extension" in ExtensionTool,
    /// The carrier's server is bound on the desk's first start only; a
    /// restarted desk trusts that binding and tracks on its own copy.
    CarrierBoundOnFirstStartOnly = "carrier-bound-on-first-start-only" in ExtensionTool,
    /// Every attempt at an effect takes a fresh call id from a durable
    /// sequence as its idempotency key, so a retry after a crash is a new
    /// effect.
    KeyPerAttempt = "key-per-attempt" in ExactlyOnce,
    /// Effects reuse the key recorded for their subject, but the key is
    /// recorded only after the effect is done: a crash in between forgets
    /// it.
    KeyRecordedAfterEffect = "key-recorded-after-effect" in ExactlyOnce,
    /// The outbox row is written only when the ledger applies the effect,
    /// never on a duplicate: a crash between the two loses the row for
    /// good.
    OutboxOnlyWhenApplied = "outbox-only-when-applied" in ExactlyOnce,
    /// Effects are keyed by how many this process has applied: a retry
    /// after a crash, in a fresh process, reuses the key, and so does the
    /// next distinct request after a restart, which is then lost.
    KeyFromProcessCounter = "key-from-process-counter" in ExactlyOnce,
    /// The final invoice before a cancellation goes under the
    /// cancellation's own key, so the ledger refuses the cancellation as
    /// applied before: two effects share one key, and the second never
    /// happens.
    InvoiceSharesCancellationKey = "invoice-shares-cancellation-key" in ExactlyOnce,
    /// The cancellation tool confirms to the customer through the ledger
    /// under the cancellation's own key, as an effect of the same tool
    /// with no arguments (the message is fixed): the ledger refuses the
    /// confirmation as applied before, the customer is never told, and
    /// nothing in the ledger tells the lost effect from a retry.
    NoticeSharesCancellationKey = "notice-shares-cancellation-key" in ExactlyOnce,
    /// Effects are keyed by subject and the current hour of the clock: a
    /// retry an hour after the crash keys afresh and applies again.
    KeyFromClockHour = "key-from-clock-hour" in ExactlyOnce,
}

impl Flaw {
    /// The honest configuration this twin's desk is otherwise in: the
    /// edited-call twin holds the call itself, as the approval-on-the-call
    /// variant does. `None`: the reference.
    pub fn base(self) -> Option<crate::Variant> {
        match self {
            Self::EditedCallIgnored => Some(crate::Variant::ApprovalOnTheCall),
            // The desk offers the express refund, judged with paraphrases.
            Self::AliasToolUngated => Some(crate::Variant::GatedAliasTool),
            _ => None,
        }
    }

    /// The pack arguments this twin is judged with: the reference's, or
    /// its base configuration's.
    pub fn definition(self) -> symfonic_evals::PackDefinition {
        match self.base() {
            Some(variant) => variant.definition(self.pack()),
            None => crate::packs::definition(self.pack()),
        }
    }
}

/// Where a pack must catch a twin: the scenario (the seed scenario's name
/// or a probe's), and in it the first failure's step, assertion and detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Catch {
    /// The scenario whose first failure it is.
    pub scenario: &'static str,
    /// The step label.
    pub step: &'static str,
    /// The assertion (or step error) kind.
    pub assertion: &'static str,
    /// Text the failure's description or expectation must contain.
    pub detail: &'static str,
}

impl Catch {
    /// The catch a pin spells as one tuple: scenario, step, assertion, and
    /// the text the failure must contain. The twin tables of every desk
    /// write their catches this way.
    pub const fn at(
        (scenario, step, assertion, detail): (
            &'static str,
            &'static str,
            &'static str,
            &'static str,
        ),
    ) -> Self {
        Self {
            scenario,
            step,
            assertion,
            detail,
        }
    }

    /// Whether a failure is this catch.
    pub fn matches(&self, failure: &symfonic_evals::Failure) -> bool {
        failure.scenario == self.scenario
            && failure.step_label == self.step
            && failure.assertion == self.assertion
            && (failure.description.contains(self.detail) || failure.expected.contains(self.detail))
    }

    /// The first failure of this catch's scenario in `run`, if it failed.
    pub fn first_in(&self, run: &symfonic_evals::PackRun) -> Option<symfonic_evals::Failure> {
        run.failures()
            .into_iter()
            .find(|failure| failure.scenario == self.scenario)
    }
}
