//! Where each twin must be caught, and which scenarios it fails.

use super::{Catch, Flaw};

const PROCEDURAL: &str = "procedural-review-and-enforcement";
const APPROVAL: &str = "approval-pause-resume-and-replay-refusal";
const EXTENSION: &str = "extension-tool-execution";
const MCP_FIXTURE: &str = "extension/mcp-fixture";
const EXACTLY_ONCE: &str = "exactly-once-effects";

const fn at(
    scenario: &'static str,
    step: &'static str,
    assertion: &'static str,
    detail: &'static str,
) -> Catch {
    Catch {
        scenario,
        step,
        assertion,
        detail,
    }
}

/// The sweep step that sets the blocked state's `priority` to the draft
/// state's (urgent), a leaf no predicate names.
const URGENT_ON_BLOCKED: &str =
    "sweep 27: `priority` named by no predicate, on the blocked state: the value the draft state \
     holds";

/// The sweep step that sets `verified` to the text `"true"` where the rule
/// asks for the boolean.
const BOOLEAN_AS_TEXT: &str = "sweep 18: `verified` eq: the boolean as a string";

/// Every procedural scenario that repeats the seed's enforcement steps
/// before the lifecycle probes.
const PROCEDURAL_ENFORCING: &[&str] = &[
    PROCEDURAL,
    "procedural/enforcement-without-restart",
    "procedural/separate-conversations",
    "procedural/identity-bound",
    "procedural/gate-sweep",
    "procedural/decoy-stays-draft",
    "procedural/review-binding",
];

/// Every procedural scenario that restarts before enforcing (the seed's
/// placement).
const PROCEDURAL_RESTARTING: &[&str] = &[
    PROCEDURAL,
    "procedural/separate-conversations",
    "procedural/identity-bound",
    "procedural/gate-sweep",
    "procedural/decoy-stays-draft",
    "procedural/review-binding",
];

/// Every procedural scenario that repeats the seed's draft probe.
const PROCEDURAL_DRAFTING: &[&str] = &[
    PROCEDURAL,
    "procedural/enforcement-without-restart",
    "procedural/separate-conversations",
    "procedural/review-needs-operator",
    "procedural/identity-bound",
    "procedural/gate-sweep",
    "procedural/decoy-stays-draft",
    "procedural/review-binding",
    "procedural/replicas",
];

/// Every probe that approves through the structured review door.
const PROCEDURAL_LIFECYCLE: &[&str] = &[
    "procedural/rule-fidelity",
    "procedural/amend",
    "procedural/revoke",
    "procedural/two-procedures",
    "procedural/relearn-after-approval",
];

/// Every approval scenario: each pauses.
const APPROVAL_ALL: &[&str] = &[
    APPROVAL,
    "approval/restart-between-pause-and-resume",
    "approval/restart-before-replay",
    "approval/crash-inside-resume",
    "approval/forged-token",
    "approval/token-bound-to-conversation",
    "approval/two-conversations",
    "approval/token-predictable",
    "approval/second-request",
    "approval/one-of-two",
    "approval/foreign-answer",
    "approval/pending-call-resolved",
    "approval/question-id-checked",
    "approval/gated-action",
    "approval/deny-answer",
    "approval/unfit-answer",
    "approval/type-confused-answer",
    "approval/amended-answer",
    "approval/replicas",
    "approval/reset-between",
];

/// Every approval scenario that resumes (all but the look-alike answers'
/// probe, which only pauses and is refused).
pub const APPROVAL_RESUMING: &[&str] = &[
    APPROVAL,
    "approval/restart-between-pause-and-resume",
    "approval/restart-before-replay",
    "approval/crash-inside-resume",
    "approval/forged-token",
    "approval/token-bound-to-conversation",
    "approval/two-conversations",
    "approval/token-predictable",
    "approval/second-request",
    "approval/one-of-two",
    "approval/foreign-answer",
    "approval/pending-call-resolved",
    "approval/question-id-checked",
    "approval/gated-action",
    "approval/deny-answer",
    "approval/unfit-answer",
    "approval/amended-answer",
    "approval/replicas",
    "approval/reset-between",
];

/// Every approval scenario that resumes with the approving answer (the
/// denial probe answers otherwise).
const APPROVAL_APPROVING: &[&str] = &[
    APPROVAL,
    "approval/restart-between-pause-and-resume",
    "approval/restart-before-replay",
    "approval/crash-inside-resume",
    "approval/forged-token",
    "approval/token-bound-to-conversation",
    "approval/two-conversations",
    "approval/token-predictable",
    "approval/second-request",
    "approval/one-of-two",
    "approval/foreign-answer",
    "approval/pending-call-resolved",
    "approval/question-id-checked",
    "approval/gated-action",
    "approval/unfit-answer",
    "approval/amended-answer",
    "approval/replicas",
    "approval/reset-between",
];

/// Every approval scenario that replays a spent token (the pending-call
/// probe stops at the resume).
const APPROVAL_REPLAYING: &[&str] = &[
    APPROVAL,
    "approval/restart-between-pause-and-resume",
    "approval/restart-before-replay",
    "approval/crash-inside-resume",
    "approval/forged-token",
    "approval/token-bound-to-conversation",
    "approval/two-conversations",
    "approval/token-predictable",
    "approval/second-request",
    "approval/one-of-two",
    "approval/foreign-answer",
    "approval/question-id-checked",
    "approval/gated-action",
    "approval/deny-answer",
    "approval/unfit-answer",
    "approval/amended-answer",
    "approval/replicas",
    "approval/reset-between",
];

impl Flaw {
    /// Where the pack must catch it: the scenario, and in it the first
    /// failure's step, assertion kind and a detail the failure's
    /// description (or, for an error step, its expectation) names.
    pub fn expected_catch(self) -> Catch {
        match self {
            Self::PromotedCountIsTurnCounter => at(
                PROCEDURAL,
                "draft probe",
                "AttributeEquals",
                "AttributeEquals(procedural_review)",
            ),
            Self::DraftGovernsBeforeReview => at(
                PROCEDURAL,
                "draft probe",
                "AttributeEquals",
                "AttributeEquals(procedural_enforcement_ids)",
            ),
            Self::DraftLeaksIntoPrompt => at(
                PROCEDURAL,
                "draft probe",
                "PromptRecallExcludes",
                "PromptRecallExcludes(fragment)",
            ),
            Self::ApprovalOnlyInMemory => at(
                PROCEDURAL,
                "satisfied",
                "AttributeEquals",
                "AttributeEquals(procedural_review)",
            ),
            Self::EnforcementReadsShadowProcedure => at(
                PROCEDURAL,
                "satisfied",
                "AttributesSameNonEmpty",
                "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)",
            ),
            Self::GateIgnoresState => at(
                PROCEDURAL,
                "blocked",
                "StageObserved",
                "StageObserved(procedural_precondition, outcome=rejected",
            ),
            Self::ToolRunsDespiteRefusal => at(
                PROCEDURAL,
                "blocked",
                "GovernedEffectWithheld",
                "GovernedEffectWithheld(issue_refund, procedural_precondition)",
            ),
            Self::PauseReportedAsAttribute => at(
                APPROVAL,
                "pause",
                "AttributeEquals",
                "AttributeEquals(paused)",
            ),
            Self::ResumeWithoutCheckpoint => at(
                APPROVAL,
                "resume",
                "AttributeEquals",
                "AttributeEquals(resume_checkpoint)",
            ),
            Self::ResumeWithoutContinuation => at(
                APPROVAL,
                "resume",
                "AttributeEquals",
                "AttributeEquals(resume_continued)",
            ),
            Self::ResumeRestartsTurn => at(
                APPROVAL,
                "resume",
                "ToolCalled",
                "ToolCalled(ask_user, times=0)",
            ),
            Self::TokenRedeemableTwice => at(
                APPROVAL,
                "replay",
                "ExpectedError",
                "PauseTokenReplayedError",
            ),
            Self::ExtensionDeclaredNotBound => at(
                EXTENSION,
                "extension call",
                "ToolSucceeded",
                "ToolSucceeded(track_shipment, times=1)",
            ),
            Self::KeyPerAttempt | Self::KeyRecordedAfterEffect => at(
                EXACTLY_ONCE,
                "crash at resume effect 1",
                "CrashedEffectRetried",
                "CrashedEffectRetried",
            ),
            Self::ResumeNotRetriable => at(
                "approval/crash-inside-resume",
                "resume killed at its first effect",
                "UnexpectedError",
                "the turn succeeds",
            ),
            Self::KeyFromProcessCounter => at(
                EXACTLY_ONCE,
                "second request after a restart resumed",
                "EffectsApplied",
                "EffectsApplied(2)",
            ),
            Self::InvoiceSharesCancellationKey => at(
                EXACTLY_ONCE,
                "learn resume",
                "KeysNotShared",
                "KeysNotShared",
            ),
            // Told from a retry only because, with no crash, nothing
            // retries.
            Self::NoticeSharesCancellationKey => at(
                EXACTLY_ONCE,
                "learn resume",
                "KeysNotShared",
                "KeysNotShared(retries=exact)",
            ),
            Self::KeyFromClockHour => at(
                "exactly-once/clock-advanced",
                "resume crashed, then a later clock",
                "CrashedEffectRetried",
                "CrashedEffectRetried",
            ),
            Self::OutboxOnlyWhenApplied => at(
                EXACTLY_ONCE,
                "crash at resume effect 1",
                "EffectsMatchOracle",
                "the effect oracle counts the ledger's 1 applied effect(s)",
            ),
            _ => self.probe_catch(),
        }
    }

    /// The catches of the twins only a probe sees.
    fn probe_catch(self) -> Catch {
        let any_error = "an error (any kind)";
        match self {
            Self::ApprovalReusedInConversation => at(
                "approval/second-request",
                "same request again",
                "AskedOrWithheld",
                "AskedOrWithheld",
            ),
            Self::ApprovalGrantsEveryPending => at(
                "approval/one-of-two",
                "resume one",
                "EffectsOfOneApproval",
                "EffectsOfOneApproval",
            ),
            Self::ApprovalGrantsConversationQueue => at(
                "approval/one-of-two",
                "resume first",
                "EffectsOfOneApproval",
                "EffectsOfOneApproval",
            ),
            // Its second resume attempts again what the first applied.
            Self::CheckpointPerConversation => at(
                "approval/one-of-two",
                "resume second",
                "EffectsOfOneApproval",
                "EffectsOfOneApproval",
            ),
            Self::PausesAnsweredLastFirst => at(
                "approval/one-of-two",
                "resume second",
                "RequestsNotCrossed",
                "RequestsNotCrossed",
            ),
            Self::AnyApproverAccepted => at(
                "approval/foreign-answer",
                "foreign answer",
                "EffectsWithheld",
                "EffectsWithheld",
            ),
            Self::AmendmentIgnored => at(
                "approval/amended-answer",
                "amended resume",
                "AmendmentApplied",
                "AmendmentApplied(cancel_subscription)",
            ),
            Self::EditedCallIgnored => at(
                "approval/edited-call",
                "edited resume",
                "EditApplied",
                "EditApplied(cancel_subscription.customer)",
            ),
            Self::TokensNumberedInOrder => at(
                "approval/token-predictable",
                "pause 2",
                "PauseTokenUnpredictable",
                "PauseTokenUnpredictable",
            ),
            Self::NoticeRepostedOnResume => at(
                "approval/restart-between-pause-and-resume",
                "resume",
                "EffectNotRepeated",
                "EffectNotRepeated",
            ),
            Self::CheckpointOnlyInMemory => at(
                "approval/restart-between-pause-and-resume",
                "resume after the restart",
                "AttributeEquals",
                "AttributeEquals(resume_checkpoint)",
            ),
            Self::SpentMarkOnlyInMemory | Self::SpentMarksWrittenAtShutdown => at(
                "approval/restart-before-replay",
                "replay",
                "ExpectedError",
                "PauseTokenReplayedError",
            ),
            Self::TokenNeverChecked => at(
                "approval/forged-token",
                "forged token",
                "ExpectedError",
                any_error,
            ),
            Self::TokenRedeemsAnyConversation => at(
                "approval/token-bound-to-conversation",
                "foreign conversation",
                "ExpectedError",
                any_error,
            ),
            Self::OnePausePerDeployment => at(
                "approval/two-conversations",
                "pause b",
                "PauseTokenDistinct",
                "PauseTokenDistinct",
            ),
            Self::ParkedCallReportedAsSuccess => at(
                "approval/pending-call-resolved",
                "pause",
                "ToolPending",
                "ToolPending(ask_user, times=1)",
            ),
            Self::QuestionIdIgnored => at(
                "approval/question-id-checked",
                "forged question id",
                "ExpectedError",
                any_error,
            ),
            Self::GatedActionBeforeAnswer => at(
                "approval/gated-action",
                "pause",
                "ToolSucceeded",
                "ToolSucceeded(cancel_subscription, times=0)",
            ),
            Self::DenialReadAsApproval => at(
                "approval/deny-answer",
                "deny",
                "ToolSucceeded",
                "ToolSucceeded(cancel_subscription, times=0)",
            ),
            Self::SpentTokensLoadedAtStart => at(
                "approval/replicas",
                "replay on the first instance",
                "ExpectedError",
                "PauseTokenReplayedError",
            ),
            Self::ResetKeepsPause => at(
                "approval/reset-between",
                "pre-reset token",
                "ExpectedError",
                any_error,
            ),
            Self::UnfitAnswerAccepted => at(
                "approval/unfit-answer",
                "unfit answer",
                "ExpectedError",
                any_error,
            ),
            Self::UnfitAnswerSpendsToken => at(
                "approval/unfit-answer",
                "resume",
                "UnexpectedError",
                "the turn succeeds",
            ),
            Self::AnswerCoerced => at(
                "approval/type-confused-answer",
                "look-alike answer 1",
                "ExpectedError",
                any_error,
            ),
            Self::TokenShownToModel => at(
                "approval/restart-between-pause-and-resume",
                "pause",
                "TokenKeptFromModel",
                "TokenKeptFromModel",
            ),
            Self::LedgerKeyPerConversation => at(
                "approval/two-conversations",
                "resume b",
                "EffectsMatchOracle",
                "EffectsMatchOracle",
            ),
            _ => self.procedural_probe_catch(),
        }
    }

    fn procedural_probe_catch(self) -> Catch {
        let sweep = |step| at("procedural/gate-sweep", step, "GateAgrees", "refuse");
        match self {
            Self::PolicyCachedAtStartup => at(
                "procedural/enforcement-without-restart",
                "satisfied",
                "AttributesSameNonEmpty",
                "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)",
            ),
            Self::RecallScopedToReviewConversation => at(
                "procedural/separate-conversations",
                "satisfied",
                "PromptRecallContains",
                "PromptRecallContains(fragment)",
            ),
            Self::OperatorRightsByConversationName => at(
                "procedural/review-needs-operator",
                "review as a user in the operator's conversation",
                "AttributeEquals",
                "AttributeEquals(procedural_review)",
            ),
            Self::ReviewDoorOpenToUsers => at(
                "procedural/review-needs-operator",
                "review as a user",
                "AttributeEquals",
                "AttributeEquals(procedural_review)",
            ),
            Self::IdentityIsRowLabel => at(
                "procedural/identity-bound",
                "review",
                "ProceduresBound",
                "ProceduresBound(procedural_review_procedures, procedural_review_ids)",
            ),
            Self::GateKeysCaseInsensitive => {
                sweep("sweep 10: `region` eq: key in capitalised case")
            }
            Self::GateKeysLowerCaseOnly => at(
                "procedural/gate-sweep",
                "sweep 9: `receipt` exists: key in upper case",
                "GateAgrees",
                "admit",
            ),
            Self::GateMissingKeyAsNull => sweep("sweep 6: `receipt` exists: key missing"),
            Self::GateJudgesFirstPredicateOnly => sweep("sweep 6: `receipt` exists: key missing"),
            Self::GateUrgentFastLane => sweep(URGENT_ON_BLOCKED),
            Self::GateComparesAsStrings => sweep(BOOLEAN_AS_TEXT),
            Self::GateEnforcesCompiledRule => sweep("sweep 15: `region` eq: null"),
            Self::ReviewApprovesEveryDraft => at(
                "procedural/decoy-stays-draft",
                "review",
                "AttributeEquals",
                "AttributeEquals(procedural_review)",
            ),
            Self::PromotedCountCountsEpisodes => at(
                "procedural/control-promotes-nothing",
                "control 1",
                "AttributeEquals",
                "AttributeEquals(procedural_promoted)",
            ),
            Self::PromotedCountIsDraftsOnFile => at(
                "procedural/identity-bound",
                "draft probe",
                "AttributeEqualsIfPresent",
                "AttributeEqualsIfPresent(procedural_promoted)",
            ),
            Self::RefusedRefundWrittenToStore => at(
                "procedural/gate-sweep",
                "sweep 4: `region` eq: key missing",
                "EffectsMatchOracle",
                "EffectsMatchOracle",
            ),
            Self::ReviewDoorDropsConjunct => at(
                "procedural/rule-fidelity",
                "approve",
                "PublishedRules",
                "PublishedRules(issue_refund, 1 rule(s) of [2] predicate(s))",
            ),
            Self::GateCachesRulesByRow => at(
                "procedural/amend",
                "blocked after amend",
                "GateAgrees",
                "admit",
            ),
            Self::RevokedStillGoverns => at(
                "procedural/revoke",
                "blocked after revoke",
                "GateAgrees",
                "admit",
            ),
            Self::RevokedStaysInRecall => at(
                "procedural/revoke",
                "blocked after revoke",
                "PromptRecallExcludes",
                "PromptRecallExcludes(fragment)",
            ),
            // Only the kill before the restarted step loses the revocation.
            Self::RevocationWrittenAtShutdown => at(
                "procedural/revoke",
                "blocked after restart",
                "GateAgrees",
                "admit",
            ),
            // The consolidation cycle after the next turn learns the
            // lesson again from the episodes on file.
            Self::RelearnRestoresRevoked => at(
                "procedural/revoke",
                "blocked after revoke",
                "PublishedRules",
                "PublishedRules(issue_refund, 0 rule(s)",
            ),
            Self::GateJudgesFirstCallOnly => at(
                "procedural/multi-call",
                "several calls, blocked",
                "EveryCallJudged",
                "EveryCallJudged(issue_refund, procedural_precondition, refused)",
            ),
            Self::ApprovedCallSkipsGate => at(
                "procedural/through-approval",
                "approved, blocked",
                "StageObserved",
                "StageObserved(procedural_precondition",
            ),
            Self::GateOverridesDenial => at(
                "procedural/through-approval",
                "denied, satisfied",
                "GovernedEffectWithheld",
                "GovernedEffectWithheld(issue_refund, procedural_precondition)",
            ),
            Self::PromotionCountsTurnsSinceFirstSeen => at(
                "procedural/one-demonstration-then-control",
                "control after one demonstration",
                "AttributeEquals",
                "AttributeEquals(procedural_promoted)",
            ),
            Self::GateJudgesFirstProcedureOnly => at(
                "procedural/two-procedures",
                "only the first approval holds",
                "GateAgrees",
                "refuse",
            ),
            Self::PolicyCachePerInstance => at(
                "procedural/replicas",
                "satisfied",
                "AttributesSameNonEmpty",
                "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)",
            ),
            // The lesson's own example, asked again, is re-derived at once:
            // the cycle counts the rewrite of the approved procedure as a
            // promotion.
            Self::RelearnRewritesApproved => at(
                "procedural/relearn-after-approval",
                "relearn 1",
                "AttributeEqualsIfPresent",
                "AttributeEqualsIfPresent(procedural_promoted)",
            ),
            // The blocked paraphrase refunds through the ungated alias.
            Self::AliasToolUngated => at(
                "procedural/paraphrases",
                "blocked, paraphrase 1",
                "GovernedEffectWithheld",
                "GovernedEffectWithheld(issue_refund, procedural_precondition)",
            ),
            // The parcel was tracked last: the approval governs tracking.
            Self::ReviewBindsLastTool => at(
                "procedural/review-binding",
                "review",
                "AttributeEquals",
                "AttributeEquals(procedural_review",
            ),
            Self::RejectedDemonstrationsLearned => at(
                "procedural/rejected-demonstrations",
                "rejected 2",
                "AttributeEqualsIfPresent",
                "AttributeEqualsIfPresent(procedural_promoted)",
            ),
            Self::RejectedDraftApprovable => at(
                "procedural/reject-draft",
                "approve after reject",
                "ExpectedError",
                "ExpectedError",
            ),
            // The blocked turn's cycle reads the rejected episodes.
            Self::RejectedEpisodesKept => at(
                "procedural/rejected-demonstrations",
                "blocked",
                "ReviewRowsInert",
                "ReviewRowsInert(procedural_review)",
            ),
            // The cycle after the next turn proposes the lesson again from
            // the episodes on file.
            Self::RejectedDraftRedrafted => at(
                "procedural/reject-draft",
                "blocked after reject",
                "ReviewRowsInert",
                "ReviewRowsInert(procedural_review)",
            ),
            _ => self.extension_probe_catch(),
        }
    }

    fn extension_probe_catch(self) -> Catch {
        let witnessed = || {
            at(
                "extension/witnessed",
                "extension call",
                "ToolWitnessed",
                "ToolWitnessed(track_shipment, with arguments, exact)",
            )
        };
        match self {
            Self::CallIdsFromProcessCounter => at(
                "extension/repeated-and-fresh-conversation",
                "after a restart",
                "ToolCallIdsUnique",
                "ToolCallIdsUnique(minimum=1, across the trial)",
            ),
            Self::CallIdsRestartEveryTurn => at(
                "extension/repeated-and-fresh-conversation",
                "second call",
                "ToolCallIdsUnique",
                "ToolCallIdsUnique(minimum=1, across the trial)",
            ),
            Self::BridgeDropsArguments => witnessed(),
            Self::UpstreamErrorReportedAsSuccess => at(
                "extension/mcp-fixture",
                "upstream error",
                "FixtureErrorReported",
                "FixtureErrorReported(track_shipment)",
            ),
            Self::BuiltInDeclaredAsExtension => at(
                "extension/mcp-fixture",
                "through the fixture",
                "ServedByFixture",
                "ServedByFixture(track_shipment, times=1, with arguments, exact)",
            ),
            Self::CarrierBoundOnFirstStartOnly => at(
                "extension/mcp-fixture",
                "after a restart",
                "ServedByFixture",
                "ServedByFixture(track_shipment, times=1, with arguments, exact)",
            ),
            Self::ResultNeverShown => at(
                "extension/result-reaches-model",
                "extension call",
                "ToolResultShown",
                "ToolResultShown(track_shipment)",
            ),
            Self::ResultServedFromCache => at(
                "extension/fresh-result",
                "first request again",
                "ToolWitnessed",
                "ToolWitnessed(track_shipment, with arguments, exact)",
            ),
            Self::PreviousResultShown => at(
                "extension/fresh-result",
                "second request",
                "ToolResultShown",
                "ToolResultShown(track_shipment)",
            ),
            other => unreachable!("{other:?} is caught by a seed scenario"),
        }
    }

    /// Every scenario of its pack this twin fails, its catch's scenario
    /// first. A twin a probe catches fails that probe alone: the seed and
    /// every other probe pass, which is what makes the probe necessary. A
    /// twin the seed catches also fails the probes that repeat the seed's
    /// failing step.
    pub fn failing_scenarios(self) -> Vec<&'static str> {
        let parts: &[&[&str]] = match self {
            // One demonstration and a control turn: the control's cycle
            // read two episodes.
            Self::PromotedCountCountsEpisodes => &[&[
                "procedural/control-promotes-nothing",
                "procedural/one-demonstration-then-control",
            ]],
            // The relearn turns show the one procedure on file too.
            Self::PromotedCountIsDraftsOnFile => &[&[
                "procedural/identity-bound",
                "procedural/control-promotes-nothing",
                "procedural/relearn-after-approval",
            ]],
            Self::PromotedCountIsTurnCounter => &[
                &[
                    PROCEDURAL,
                    "procedural/enforcement-without-restart",
                    "procedural/separate-conversations",
                    "procedural/review-needs-operator",
                    "procedural/identity-bound",
                    "procedural/gate-sweep",
                    "procedural/decoy-stays-draft",
                    "procedural/control-promotes-nothing",
                    "procedural/review-binding",
                ],
                PROCEDURAL_LIFECYCLE,
                // No cycle runs, so there is no draft to reject.
                &[
                    "procedural/reject-draft",
                    "procedural/replicas",
                    "procedural/multi-call",
                    "procedural/through-approval",
                    "procedural/one-demonstration-then-control",
                ],
            ],
            Self::DraftGovernsBeforeReview | Self::DraftLeaksIntoPrompt => &[
                PROCEDURAL_DRAFTING,
                &["procedural/multi-call", "procedural/through-approval"],
            ],
            // The admin API's approval is held in memory too, so the
            // amendment and the revocation find nothing on file, and the
            // relearn turns' cycle reinforces what the store still holds
            // as a draft. The second instance never sees the first's
            // memory either.
            Self::ApprovalOnlyInMemory => &[
                PROCEDURAL_RESTARTING,
                &[
                    "procedural/amend",
                    "procedural/revoke",
                    "procedural/relearn-after-approval",
                    "procedural/replicas",
                    "procedural/multi-call",
                    "procedural/through-approval",
                ],
            ],
            Self::EnforcementReadsShadowProcedure
            | Self::GateIgnoresState
            | Self::ToolRunsDespiteRefusal => &[
                PROCEDURAL_ENFORCING,
                PROCEDURAL_LIFECYCLE,
                &[
                    "procedural/replicas",
                    "procedural/multi-call",
                    "procedural/through-approval",
                ],
            ],
            // Every lifecycle probe binds the identities too.
            Self::IdentityIsRowLabel => &[&["procedural/identity-bound"], PROCEDURAL_LIFECYCLE],
            // Every lifecycle probe enforces an approval given without a
            // restart since.
            Self::PolicyCachedAtStartup => &[
                &["procedural/enforcement-without-restart"],
                PROCEDURAL_LIFECYCLE,
                &["procedural/replicas"],
            ],
            // The two-procedure probe ends with a gate sweep of its own.
            Self::GateKeysCaseInsensitive | Self::GateKeysLowerCaseOnly => {
                &[&["procedural/gate-sweep", "procedural/two-procedures"]]
            }
            // The two-procedure probe's sweep varies the same leaf.
            Self::GateUrgentFastLane => &[&["procedural/gate-sweep", "procedural/two-procedures"]],
            // A compiled copy of the seed's rule disagrees with the rules
            // the harness composes.
            Self::GateEnforcesCompiledRule => &[&[
                "procedural/gate-sweep",
                "procedural/amend",
                "procedural/two-procedures",
            ]],
            Self::GateJudgesFirstPredicateOnly => {
                &[&["procedural/gate-sweep", "procedural/rule-fidelity"]]
            }
            // Both refuse refunds whose state lacks the rule's keys.
            Self::RefusedRefundWrittenToStore => &[&[
                "procedural/gate-sweep",
                "procedural/two-procedures",
                "procedural/relearn-after-approval",
            ]],
            Self::PauseReportedAsAttribute => &[APPROVAL_ALL],
            Self::ResumeRestartsTurn => &[APPROVAL_RESUMING],
            Self::ResumeWithoutCheckpoint | Self::ResumeWithoutContinuation => {
                &[APPROVAL_APPROVING]
            }
            Self::TokenRedeemableTwice => &[APPROVAL_REPLAYING],
            Self::UnfitAnswerAccepted => {
                &[&["approval/unfit-answer", "approval/type-confused-answer"]]
            }
            // Every probe checks it; the seed stays as its contract fixes
            // it, so it is the one approval scenario this twin passes.
            Self::TokenShownToModel => &[&APPROVAL_ALL[1..]],
            // Every probe's resume is judged for a repeated effect; the
            // seed's, as its contract fixes it, is not.
            Self::NoticeRepostedOnResume => &[&APPROVAL_RESUMING[1..]],
            // A crash is a restart too.
            // And a second instance is a process of its own.
            Self::CheckpointOnlyInMemory => &[&[
                "approval/restart-between-pause-and-resume",
                "approval/crash-inside-resume",
                "approval/replicas",
            ]],
            // Two requests pending side by side, in two conversations,
            // both resumed.
            Self::OnePausePerDeployment | Self::LedgerKeyPerConversation => {
                &[&["approval/two-conversations", "approval/one-of-two"]]
            }
            // A redemption that reads the conversation's latest pause
            // answers the wrong one of two pending in one conversation.
            Self::TokenNeverChecked => &[&["approval/forged-token", "approval/one-of-two"]],
            // What the continuation hears of the answer, or an action run
            // before it, leaves the amendment out too.
            Self::DenialReadAsApproval => &[&["approval/deny-answer", "approval/amended-answer"]],
            Self::GatedActionBeforeAnswer => {
                &[&["approval/gated-action", "approval/amended-answer"]]
            }
            // Both learn their effects from an uncrashed run.
            Self::InvoiceSharesCancellationKey | Self::NoticeSharesCancellationKey => {
                &[&[EXACTLY_ONCE, "exactly-once/clock-advanced"]]
            }
            Self::SpentMarkOnlyInMemory | Self::SpentMarksWrittenAtShutdown => {
                &[&["approval/restart-before-replay", "approval/replicas"]]
            }
            // Every crash experiment retries under a fresh key.
            Self::KeyPerAttempt | Self::KeyRecordedAfterEffect | Self::OutboxOnlyWhenApplied => {
                &[&[EXACTLY_ONCE, "exactly-once/clock-advanced"]]
            }
            Self::ExtensionDeclaredNotBound => &[&[
                EXTENSION,
                "extension/repeated-and-fresh-conversation",
                "extension/result-reaches-model",
                "extension/witnessed",
                "extension/fresh-result",
                MCP_FIXTURE,
            ]],
            // The MCP fixture's probe repeats the call across turns and a
            // restart, and sees every call arrive and its result shown.
            Self::CallIdsRestartEveryTurn | Self::CallIdsFromProcessCounter => {
                &[&["extension/repeated-and-fresh-conversation", MCP_FIXTURE]]
            }
            // The fresh-result probe shows and witnesses its calls too.
            Self::BridgeDropsArguments => {
                &[&["extension/witnessed", "extension/fresh-result", MCP_FIXTURE]]
            }
            Self::ResultNeverShown => &[&[
                "extension/result-reaches-model",
                "extension/fresh-result",
                MCP_FIXTURE,
            ]],
            Self::ResultServedFromCache | Self::PreviousResultShown => {
                &[&["extension/fresh-result", MCP_FIXTURE]]
            }
            _ => return vec![self.expected_catch().scenario],
        };
        parts.concat()
    }
}
