//! Every broken twin of the help desk fails its pack where it must, and
//! nowhere else: the scenario, step label, assertion kind and the
//! assertion's own description are pinned here, independently of the table
//! the main job reads (which is checked against these), and so is the set
//! of scenarios the twin fails. A twin a probe catches fails that probe
//! alone, so the seed scenario and every other probe pass it: each probe is
//! shown to be needed.

use std::sync::Barrier;

use helpdesk::packs::{definition, run_options};
use helpdesk::{Flaw, Helpdesk};
use serde_json::json;
use symfonic_evals::{
    run_pack, PackRun, PromptRequest, ResumeRequest, Target, TargetContext, Verdict,
};
use symfonic_evals_e2e::side_by_side;

fn run_twin(flaw: Flaw) -> PackRun {
    run_pack(
        &format!("helpdesk_twins::{}", flaw.name()),
        &flaw.definition(),
        &run_options(),
        move |ctx| Helpdesk::open_with(ctx, Some(flaw)),
    )
}

/// Runs the flaw's pack against its twin and checks where it was caught and
/// which scenarios failed.
fn caught(flaw: Flaw, scenario: &str, step: &str, assertion: &str, detail: &str) {
    let run = run_twin(flaw);
    assert!(matches!(run.verdict(), Verdict::Failed), "{}", run.render());
    let failure = run
        .failures()
        .into_iter()
        .find(|f| f.scenario == scenario)
        .unwrap_or_else(|| panic!("{scenario} did not fail:\n{}", run.render()));
    assert_eq!(
        (failure.step_label.as_str(), failure.assertion.as_str()),
        (step, assertion),
        "{}",
        run.render()
    );
    assert!(
        failure.description.contains(detail) || failure.expected.contains(detail),
        "{failure:?}"
    );
    let seed = flaw.pack_kind_seed();
    let failed = run.failed_scenarios();
    // The scenario pinned is the first to fail; the others it fails are
    // pinned below (a probe's twin usually fails that probe alone, but a
    // crash is a restart too).
    assert_eq!(failed.first(), Some(&scenario), "{failed:?}");
    if scenario != seed {
        assert!(!failed.contains(&seed), "the seed passes a probe's twin");
    }
    assert_eq!(failed, flaw.failing_scenarios(), "{}", run.render());
    // The first failure of the whole run is the catch: nothing earlier broke.
    assert_eq!(run.first_failure().as_ref(), Some(&failure));
    // The main job's table agrees with what is pinned here.
    let table = flaw.expected_catch();
    assert_eq!(
        (table.scenario, table.step, table.assertion, table.detail),
        (scenario, step, assertion, detail)
    );
    assert!(table.matches(&failure));
}

trait SeedOf {
    fn pack_kind_seed(self) -> &'static str;
}

impl SeedOf for Flaw {
    fn pack_kind_seed(self) -> &'static str {
        self.definition().kind().seed_scenario()
    }
}

/// One test per twin, and the list the coverage test checks.
macro_rules! twins {
    ($($test:ident: $flaw:ident => $scenario:literal, $step:literal, $assertion:literal, $detail:literal;)*) => {
        $(
            #[test]
            fn $test() {
                caught(Flaw::$flaw, $scenario, $step, $assertion, $detail);
            }
        )*

        const PINNED: &[Flaw] = &[$(Flaw::$flaw),*];
    };
}

twins! {
    // Caught by the seed scenarios.
    promoted_count_faked_as_a_turn_counter: PromotedCountIsTurnCounter =>
        "procedural-review-and-enforcement", "draft probe", "AttributeEquals",
        "AttributeEquals(procedural_review)";
    draft_governs_before_review: DraftGovernsBeforeReview =>
        "procedural-review-and-enforcement", "draft probe", "AttributeEquals",
        "AttributeEquals(procedural_enforcement_ids)";
    draft_leaks_into_the_model_input: DraftLeaksIntoPrompt =>
        "procedural-review-and-enforcement", "draft probe", "PromptRecallExcludes",
        "PromptRecallExcludes(fragment)";
    approval_kept_only_in_memory: ApprovalOnlyInMemory =>
        "procedural-review-and-enforcement", "satisfied", "AttributeEquals",
        "AttributeEquals(procedural_review)";
    enforcement_reads_another_procedure_than_the_door_shows: EnforcementReadsShadowProcedure =>
        "procedural-review-and-enforcement", "satisfied", "AttributesSameNonEmpty",
        "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)";
    gate_ignores_state: GateIgnoresState =>
        "procedural-review-and-enforcement", "blocked", "StageObserved",
        "StageObserved(procedural_precondition, outcome=rejected";
    tool_runs_despite_refusal: ToolRunsDespiteRefusal =>
        "procedural-review-and-enforcement", "blocked", "GovernedEffectWithheld",
        "GovernedEffectWithheld(issue_refund, procedural_precondition)";
    approval_reused_in_conversation: ApprovalReusedInConversation =>
        "approval/second-request", "same request again", "AskedOrWithheld",
        "AskedOrWithheld";
    approval_grants_every_pending: ApprovalGrantsEveryPending =>
        "approval/one-of-two", "resume one", "EffectsOfOneApproval",
        "EffectsOfOneApproval";
    approval_grants_the_conversation_queue: ApprovalGrantsConversationQueue =>
        "approval/one-of-two", "resume first", "EffectsOfOneApproval",
        "EffectsOfOneApproval";
    checkpoint_kept_per_conversation: CheckpointPerConversation =>
        "approval/one-of-two", "resume second", "EffectsOfOneApproval",
        "EffectsOfOneApproval";
    pauses_answered_last_first: PausesAnsweredLastFirst =>
        "approval/one-of-two", "resume second", "RequestsNotCrossed",
        "RequestsNotCrossed";
    any_approver_accepted: AnyApproverAccepted =>
        "approval/foreign-answer", "foreign answer", "EffectsWithheld",
        "EffectsWithheld";
    amendment_ignored: AmendmentIgnored =>
        "approval/amended-answer", "amended resume", "AmendmentApplied",
        "AmendmentApplied(cancel_subscription)";
    edited_call_ignored: EditedCallIgnored =>
        "approval/edited-call", "edited resume", "EditApplied",
        "EditApplied(cancel_subscription.customer)";
    tokens_numbered_in_order: TokensNumberedInOrder =>
        "approval/token-predictable", "pause 2", "PauseTokenUnpredictable",
        "PauseTokenUnpredictable";
    notice_reposted_on_resume: NoticeRepostedOnResume =>
        "approval/restart-between-pause-and-resume", "resume", "EffectNotRepeated",
        "EffectNotRepeated";
    pause_reported_as_an_attribute: PauseReportedAsAttribute =>
        "approval-pause-resume-and-replay-refusal", "pause", "AttributeEquals",
        "AttributeEquals(paused)";
    resume_without_checkpoint: ResumeWithoutCheckpoint =>
        "approval-pause-resume-and-replay-refusal", "resume", "AttributeEquals",
        "AttributeEquals(resume_checkpoint)";
    resume_that_does_not_continue_the_turn: ResumeWithoutContinuation =>
        "approval-pause-resume-and-replay-refusal", "resume", "AttributeEquals",
        "AttributeEquals(resume_continued)";
    resume_that_restarts_the_turn_asks_again: ResumeRestartsTurn =>
        "approval-pause-resume-and-replay-refusal", "resume", "ToolCalled",
        "ToolCalled(ask_user, times=0)";
    token_redeemable_twice: TokenRedeemableTwice =>
        "approval-pause-resume-and-replay-refusal", "replay", "ExpectedError",
        "PauseTokenReplayedError";
    extension_declared_but_not_bound: ExtensionDeclaredNotBound =>
        "extension-tool-execution", "extension call", "ToolSucceeded",
        "ToolSucceeded(track_shipment, times=1)";

    // Caught by one approval probe each.
    checkpoint_only_in_memory: CheckpointOnlyInMemory =>
        "approval/restart-between-pause-and-resume", "resume after the restart", "AttributeEquals",
        "AttributeEquals(resume_checkpoint)";
    spent_mark_only_in_memory: SpentMarkOnlyInMemory =>
        "approval/restart-before-replay", "replay", "ExpectedError", "PauseTokenReplayedError";
    // Caught only because every probe's restart is a kill.
    spent_marks_written_at_shutdown: SpentMarksWrittenAtShutdown =>
        "approval/restart-before-replay", "replay", "ExpectedError", "PauseTokenReplayedError";
    token_never_checked: TokenNeverChecked =>
        "approval/forged-token", "forged token", "ExpectedError", "an error (any kind)";
    token_redeems_any_conversation: TokenRedeemsAnyConversation =>
        "approval/token-bound-to-conversation", "foreign conversation", "ExpectedError",
        "an error (any kind)";
    one_pause_per_deployment: OnePausePerDeployment =>
        "approval/two-conversations", "pause b", "PauseTokenDistinct", "PauseTokenDistinct";
    parked_call_reported_as_success: ParkedCallReportedAsSuccess =>
        "approval/pending-call-resolved", "pause", "ToolPending",
        "ToolPending(ask_user, times=1)";
    question_id_ignored: QuestionIdIgnored =>
        "approval/question-id-checked", "forged question id", "ExpectedError",
        "an error (any kind)";
    gated_action_before_answer: GatedActionBeforeAnswer =>
        "approval/gated-action", "pause", "ToolSucceeded",
        "ToolSucceeded(cancel_subscription, times=0)";
    denial_read_as_approval: DenialReadAsApproval =>
        "approval/deny-answer", "deny", "ToolSucceeded",
        "ToolSucceeded(cancel_subscription, times=0)";
    unfit_answer_accepted: UnfitAnswerAccepted =>
        "approval/unfit-answer", "unfit answer", "ExpectedError", "an error (any kind)";
    unfit_answer_spends_the_token: UnfitAnswerSpendsToken =>
        "approval/unfit-answer", "resume", "UnexpectedError", "the turn succeeds";
    look_alike_answer_coerced: AnswerCoerced =>
        "approval/type-confused-answer", "look-alike answer 1", "ExpectedError",
        "an error (any kind)";
    token_shown_to_the_model: TokenShownToModel =>
        "approval/restart-between-pause-and-resume", "pause", "TokenKeptFromModel",
        "TokenKeptFromModel";
    ledger_effect_without_a_row_in_the_store: LedgerKeyPerConversation =>
        "approval/two-conversations", "resume b", "EffectsMatchOracle", "EffectsMatchOracle";
    token_spent_before_the_continuation: ResumeNotRetriable =>
        "approval/crash-inside-resume", "resume killed at its first effect", "UnexpectedError",
        "the turn succeeds";
    a_reset_that_keeps_the_pause: ResetKeepsPause =>
        "approval/reset-between", "pre-reset token", "ExpectedError", "an error (any kind)";

    // Caught by one procedural probe each.
    policy_cached_at_start_up: PolicyCachedAtStartup =>
        "procedural/enforcement-without-restart", "satisfied", "AttributesSameNonEmpty",
        "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)";
    recall_scoped_to_the_review_conversation: RecallScopedToReviewConversation =>
        "procedural/separate-conversations", "satisfied", "PromptRecallContains",
        "PromptRecallContains(fragment)";
    review_door_open_to_users: ReviewDoorOpenToUsers =>
        "procedural/review-needs-operator", "review as a user", "AttributeEquals",
        "AttributeEquals(procedural_review)";
    operator_rights_by_conversation_name: OperatorRightsByConversationName =>
        "procedural/review-needs-operator", "review as a user in the operator's conversation",
        "AttributeEquals", "AttributeEquals(procedural_review)";
    identities_are_row_labels: IdentityIsRowLabel =>
        "procedural/identity-bound", "review", "ProceduresBound",
        "ProceduresBound(procedural_review_procedures, procedural_review_ids)";
    gate_matches_keys_in_any_case: GateKeysCaseInsensitive =>
        "procedural/gate-sweep", "sweep 10: `region` eq: key in capitalised case", "GateAgrees",
        "refuse";
    gate_looks_keys_up_in_lower_case_only: GateKeysLowerCaseOnly =>
        "procedural/gate-sweep", "sweep 9: `receipt` exists: key in upper case", "GateAgrees",
        "admit";
    gate_reads_a_missing_key_as_null: GateMissingKeyAsNull =>
        "procedural/gate-sweep", "sweep 6: `receipt` exists: key missing", "GateAgrees",
        "refuse";
    gate_enforces_a_compiled_copy_of_the_rule: GateEnforcesCompiledRule =>
        "procedural/gate-sweep", "sweep 15: `region` eq: null",
        "GateAgrees", "refuse";
    gate_judges_only_the_first_predicate: GateJudgesFirstPredicateOnly =>
        "procedural/gate-sweep", "sweep 6: `receipt` exists: key missing", "GateAgrees",
        "refuse";
    gate_keeps_a_fast_lane_for_urgent_refunds: GateUrgentFastLane =>
        "procedural/gate-sweep",
        "sweep 27: `priority` named by no predicate, on the blocked state: the value the draft \
         state holds",
        "GateAgrees", "refuse";
    gate_compares_values_as_text: GateComparesAsStrings =>
        "procedural/gate-sweep", "sweep 18: `verified` eq: the boolean as a string",
        "GateAgrees", "refuse";
    review_approves_every_draft: ReviewApprovesEveryDraft =>
        "procedural/decoy-stays-draft", "review", "AttributeEquals",
        "AttributeEquals(procedural_review)";
    promoted_count_counts_episodes: PromotedCountCountsEpisodes =>
        "procedural/control-promotes-nothing", "control 1", "AttributeEquals",
        "AttributeEquals(procedural_promoted)";
    promoted_count_is_the_drafts_on_file: PromotedCountIsDraftsOnFile =>
        "procedural/identity-bound", "draft probe", "AttributeEqualsIfPresent",
        "AttributeEqualsIfPresent(procedural_promoted)";
    refused_refund_written_straight_to_the_store: RefusedRefundWrittenToStore =>
        "procedural/gate-sweep", "sweep 4: `region` eq: key missing", "EffectsMatchOracle",
        "EffectsMatchOracle";
    review_door_drops_a_conjunct: ReviewDoorDropsConjunct =>
        "procedural/rule-fidelity", "approve", "PublishedRules",
        "PublishedRules(issue_refund, 1 rule(s) of [2] predicate(s))";
    gate_caches_rules_by_row: GateCachesRulesByRow =>
        "procedural/amend", "blocked after amend", "GateAgrees", "admit";
    revoked_procedure_still_governs: RevokedStillGoverns =>
        "procedural/revoke", "blocked after revoke", "GateAgrees", "admit";
    revoked_procedure_stays_in_recall: RevokedStaysInRecall =>
        "procedural/revoke", "blocked after revoke", "PromptRecallExcludes",
        "PromptRecallExcludes(fragment)";
    // Caught only because every probe's restart is a kill.
    revocation_written_at_shutdown: RevocationWrittenAtShutdown =>
        "procedural/revoke", "blocked after restart", "GateAgrees", "admit";
    relearning_restores_a_revoked_procedure: RelearnRestoresRevoked =>
        "procedural/revoke", "blocked after revoke", "PublishedRules",
        "PublishedRules(issue_refund, 0 rule(s)";
    gate_judges_the_first_call_only: GateJudgesFirstCallOnly =>
        "procedural/multi-call", "several calls, blocked", "EveryCallJudged",
        "EveryCallJudged(issue_refund, procedural_precondition, refused)";
    an_approved_call_skips_the_gate: ApprovedCallSkipsGate =>
        "procedural/through-approval", "approved, blocked", "StageObserved",
        "StageObserved(procedural_precondition";
    a_gate_overrules_the_managers_denial: GateOverridesDenial =>
        "procedural/through-approval", "denied, satisfied", "GovernedEffectWithheld",
        "GovernedEffectWithheld(issue_refund, procedural_precondition)";
    promotion_counted_over_turns_since_first_seen: PromotionCountsTurnsSinceFirstSeen =>
        "procedural/one-demonstration-then-control", "control after one demonstration",
        "AttributeEquals", "AttributeEquals(procedural_promoted)";
    gate_judges_the_first_procedure_only: GateJudgesFirstProcedureOnly =>
        "procedural/two-procedures", "only the first approval holds", "GateAgrees", "refuse";
    a_policy_cache_per_instance_misses_a_replicas_approval: PolicyCachePerInstance =>
        "procedural/replicas", "satisfied", "AttributesSameNonEmpty",
        "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)";
    spent_tokens_loaded_at_start_let_a_replica_redeem_again: SpentTokensLoadedAtStart =>
        "approval/replicas", "replay on the first instance", "ExpectedError",
        "PauseTokenReplayedError";
    relearning_rewrites_the_approved_procedure: RelearnRewritesApproved =>
        "procedural/relearn-after-approval", "relearn 1", "AttributeEqualsIfPresent",
        "AttributeEqualsIfPresent(procedural_promoted)";
    an_alias_tool_the_gate_does_not_judge: AliasToolUngated =>
        "procedural/paraphrases", "blocked, paraphrase 1", "GovernedEffectWithheld",
        "GovernedEffectWithheld(issue_refund, procedural_precondition)";
    the_review_binds_the_last_tool_called: ReviewBindsLastTool =>
        "procedural/review-binding", "review", "AttributeEquals",
        "AttributeEquals(procedural_review";
    rejected_demonstrations_learned_from: RejectedDemonstrationsLearned =>
        "procedural/rejected-demonstrations", "rejected 2", "AttributeEqualsIfPresent",
        "AttributeEqualsIfPresent(procedural_promoted)";
    rejected_episodes_kept_for_the_next_cycle: RejectedEpisodesKept =>
        "procedural/rejected-demonstrations", "blocked", "ReviewRowsInert",
        "ReviewRowsInert(procedural_review)";
    a_door_rejected_draft_approved_after_all: RejectedDraftApprovable =>
        "procedural/reject-draft", "approve after reject", "ExpectedError", "ExpectedError";
    a_door_rejected_draft_drafted_again: RejectedDraftRedrafted =>
        "procedural/reject-draft", "blocked after reject", "ReviewRowsInert",
        "ReviewRowsInert(procedural_review)";

    // Caught by one extension probe each.
    call_ids_restart_every_turn: CallIdsRestartEveryTurn =>
        "extension/repeated-and-fresh-conversation", "second call", "ToolCallIdsUnique",
        "ToolCallIdsUnique(minimum=1, across the trial)";
    call_ids_from_a_counter_in_memory: CallIdsFromProcessCounter =>
        "extension/repeated-and-fresh-conversation", "after a restart", "ToolCallIdsUnique",
        "ToolCallIdsUnique(minimum=1, across the trial)";
    bridge_drops_arguments: BridgeDropsArguments =>
        "extension/witnessed", "extension call", "ToolWitnessed",
        "ToolWitnessed(track_shipment, with arguments, exact)";
    upstream_error_reported_as_success: UpstreamErrorReportedAsSuccess =>
        "extension/mcp-fixture", "upstream error", "FixtureErrorReported",
        "FixtureErrorReported(track_shipment)";
    result_never_shown_to_the_model: ResultNeverShown =>
        "extension/result-reaches-model", "extension call", "ToolResultShown",
        "ToolResultShown(track_shipment)";
    result_served_from_a_cache: ResultServedFromCache =>
        "extension/fresh-result", "first request again", "ToolWitnessed",
        "ToolWitnessed(track_shipment, with arguments, exact)";
    previous_result_shown_to_the_model: PreviousResultShown =>
        "extension/fresh-result", "second request", "ToolResultShown",
        "ToolResultShown(track_shipment)";
    built_in_tool_declared_as_the_extensions: BuiltInDeclaredAsExtension =>
        "extension/mcp-fixture", "through the fixture", "ServedByFixture",
        "ServedByFixture(track_shipment, times=1, with arguments, exact)";
    carrier_server_bound_on_the_first_start_only: CarrierBoundOnFirstStartOnly =>
        "extension/mcp-fixture", "after a restart", "ServedByFixture",
        "ServedByFixture(track_shipment, times=1, with arguments, exact)";

    // Caught by the exactly-once pack's crash experiments; each passes every
    // other pack (see below).
    key_drawn_afresh_per_attempt: KeyPerAttempt =>
        "exactly-once-effects", "crash at resume effect 1", "CrashedEffectRetried",
        "CrashedEffectRetried";
    key_recorded_only_after_the_effect: KeyRecordedAfterEffect =>
        "exactly-once-effects", "crash at resume effect 1", "CrashedEffectRetried",
        "CrashedEffectRetried";
    key_from_a_counter_that_restarts_with_the_process: KeyFromProcessCounter =>
        "exactly-once-effects", "second request after a restart resumed", "EffectsApplied",
        "EffectsApplied(2)";
    key_from_the_clock_hour_applies_again_an_hour_later: KeyFromClockHour =>
        "exactly-once/clock-advanced", "resume crashed, then a later clock",
        "CrashedEffectRetried", "CrashedEffectRetried";
    two_effects_sharing_one_key: InvoiceSharesCancellationKey =>
        "exactly-once-effects", "learn resume", "KeysNotShared", "KeysNotShared";
    a_second_effect_of_the_same_tool_sharing_one_key: NoticeSharesCancellationKey =>
        "exactly-once-effects", "learn resume", "KeysNotShared",
        "KeysNotShared(retries=exact)";
    outbox_written_only_when_the_ledger_applies: OutboxOnlyWhenApplied =>
        "exactly-once-effects", "crash at resume effect 1", "EffectsMatchOracle",
        "the effect oracle counts the ledger's 1 applied effect(s)";
}

/// The exactly-once twins keep the procedural and extension packs green:
/// without a crash nothing tells them from the reference. The approval
/// pack crashes inside its resume, and that probe alone catches them. The
/// one whose keys restart with the process is seen by any restart between
/// distinct requests instead: the procedural seed's, not the approval
/// pack's. Those that file a second effect under the cancellation's key
/// lose it on every approved run, where the approval pack counts the
/// cancellation's effects or attempts.
const PROCEDURAL_SEED: &str = "procedural-review-and-enforcement";

#[test]
fn exactly_once_twins_pass_every_other_pack() {
    let runs = Flaw::ALL
        .iter()
        .copied()
        .filter(|f| f.pack() == helpdesk::Pack::ExactlyOnce)
        .flat_map(|flaw| {
            [
                helpdesk::Pack::Procedural,
                helpdesk::Pack::ApprovalResume,
                helpdesk::Pack::ExtensionTool,
            ]
            .map(|pack| (flaw, pack))
        });
    let runs = side_by_side(runs, |(flaw, pack)| {
        let run = run_pack(
            &format!("helpdesk_twins::{}-vs-{pack:?}", flaw.name()),
            &definition(pack),
            &run_options(),
            move |ctx| Helpdesk::open_with(ctx, Some(flaw)),
        );
        (flaw, pack, run)
    });
    for (flaw, pack, run) in runs {
        let failed = run.failed_scenarios();
        match (flaw, pack) {
            // Keys that restart with the process collide across any
            // restart between distinct requests, and the procedural
            // seed restarts between its refunds.
            (Flaw::KeyFromProcessCounter, helpdesk::Pack::Procedural) => {
                assert_eq!(failed.first().copied(), Some(PROCEDURAL_SEED), "{failed:?}");
            }
            // No other pack moves the clock.
            (Flaw::KeyFromProcessCounter | Flaw::KeyFromClockHour, _) => {
                assert!(run.passed(), "{flaw:?} under {pack:?}:\n{}", run.render());
            }
            // The cancellation never happens: the approval pack counts
            // the gated tool's effects where it names it.
            (Flaw::InvoiceSharesCancellationKey, helpdesk::Pack::ApprovalResume) => {
                assert_eq!(failed, ["approval/gated-action"], "{flaw:?}");
            }
            // The confirmation refused under the cancellation's key is
            // one more attempt of the cancellation than one approval makes:
            // every approval probe that counts the gated tool's attempts
            // under exact retries sees it.
            (Flaw::NoticeSharesCancellationKey, helpdesk::Pack::ApprovalResume) => {
                assert_eq!(
                    failed,
                    [
                        "approval/restart-between-pause-and-resume",
                        "approval/one-of-two",
                        "approval/foreign-answer",
                        "approval/gated-action",
                    ],
                    "{flaw:?}"
                );
            }
            (_, helpdesk::Pack::ApprovalResume) => {
                assert_eq!(failed, ["approval/crash-inside-resume"], "{flaw:?}");
            }
            _ => assert!(run.passed(), "{flaw:?} under {pack:?}:\n{}", run.render()),
        }
    }
}

/// The write-behind twin is caught by the kill alone. Restarted in order
/// (on a thread, where a restart drops the desk), its revocations reach the
/// store on the way out and every scenario passes: the flaw is the write at
/// shutdown, not a revocation that never reaches the store.
#[test]
fn a_revocation_written_at_shutdown_survives_an_orderly_restart() {
    let flaw = Flaw::RevocationWrittenAtShutdown;
    let options = symfonic_evals::RunOptions {
        isolation: symfonic_evals::Isolation::Thread,
        ..run_options()
    };
    let run = run_pack(
        "helpdesk_twins::revocation-written-at-shutdown-in-order",
        &flaw.definition(),
        &options,
        move |ctx| Helpdesk::open_with(ctx, Some(flaw)),
    );
    run.assert_passed();
    assert!(
        run.scenario("procedural/revoke").is_some(),
        "the revoke probe ran:\n{}",
        run.render()
    );
}

/// The re-learning twin reports its rewrite of the approved procedure as a
/// promotion, which is where it is caught first; the rewritten rule is
/// there to see as well, published at the last relearn turn, so the probe
/// catches a desk that rewrites without counting it too.
#[test]
fn relearning_rewrites_the_published_rule_too() {
    let run = run_twin(Flaw::RelearnRewritesApproved);
    let rewritten = run.failures().into_iter().any(|failure| {
        (
            failure.scenario.as_str(),
            failure.step_label.as_str(),
            failure.assertion.as_str(),
        ) == (
            "procedural/relearn-after-approval",
            "relearn 2",
            "PublishedRules",
        ) && failure
            .description
            .contains("PublishedRules(issue_refund, 1 rule(s) of [1] predicate(s))")
    });
    assert!(rewritten, "{}", run.render());
}

#[test]
fn every_flaw_is_pinned_above_exactly_once() {
    // Flaw::ALL is declared from the same list as the enum, so a flaw added
    // without a pinned test fails here.
    for flaw in Flaw::ALL {
        let pins = PINNED.iter().filter(|pinned| *pinned == flaw).count();
        assert_eq!(pins, 1, "{flaw:?} is pinned {pins} times");
    }
    assert_eq!(PINNED.len(), Flaw::ALL.len());
}

#[test]
fn the_urgent_fast_lane_shrinks_to_the_field_it_reads() {
    // The gate admits the blocked state with the draft's urgent priority;
    // the shrink removes every key the contract reads and keeps the one
    // the gate does, reported as its shape, never its value.
    let rendered = run_twin(Flaw::GateUrgentFastLane).render();
    let note = rendered
        .lines()
        .find(|l| l.contains("note: smallest disagreeing state"))
        .unwrap_or_else(|| panic!("no shrink note:\n{rendered}"));
    assert!(
        note.contains(": {\"priority\": string sha256:")
            && note.contains("the contract refuses it and the gate did not"),
        "{note}"
    );
    assert!(!rendered.contains("\"urgent\""), "{rendered}");
}

#[test]
fn every_probe_the_desk_runs_has_a_twin_it_catches_first() {
    for pack in [
        helpdesk::Pack::Procedural,
        helpdesk::Pack::ApprovalResume,
        helpdesk::Pack::ExtensionTool,
        helpdesk::Pack::ExactlyOnce,
    ] {
        let definition = definition(pack);
        let seed = definition.kind().seed_scenario();
        for scenario in definition.scenarios() {
            let name = scenario.name.as_str();
            // A probe's twin passes the seed and fails that probe first;
            // almost always that probe alone (pinned per twin above), but a
            // crash is a restart too, so a checkpoint held in memory fails
            // both the restart and the crash probes; and the fresh-result
            // probe shows and witnesses its calls too, so a result never
            // shown or a bridge that loses arguments fails it beside the
            // result-reaches-model or witnessed probe (which run without
            // `second_prompt`, and catch those twins first); every lifecycle
            // probe and the replicas probe enforce an approval with no
            // restart since, so an approval read only at start-up fails
            // them beside the probe that enforces without a restart, and
            // they bind identities to content as the identity probe does;
            // and a second instance is another process, so what a restart
            // loses (a spent mark held in memory) a replica never had; the
            // one-of-two probe holds two pauses side by side as the
            // two-conversations probe does, so a desk with one pause slot
            // fails both; an action run before the answer, or an answer
            // heard only as "somebody answered", leaves a person's
            // amendment out as well. A control turn after one
            // demonstration is a control turn too, so a count of the
            // episodes the cycle read fails both control probes. The
            // MCP fixture's probe sees every call the desk makes, so each
            // extension twin a self-reported probe catches fails it too
            // (the Python desk, which binds no fixture, has the twins those
            // probes catch alone). A token never checked redeems the
            // conversation's latest pause whatever is presented, so its
            // twin fails the one-of-two probe's earlier token beside the
            // forgery.
            let first = Flaw::ALL
                .iter()
                .filter(|f| f.pack() == pack && f.expected_catch().scenario == name)
                .count();
            assert!(first >= 1, "no twin is caught first by {name}");
            if name != seed {
                let alone = Flaw::ALL
                    .iter()
                    .any(|f| f.pack() == pack && f.failing_scenarios() == [name]);
                let shared = [
                    "procedural/enforcement-without-restart",
                    "procedural/identity-bound",
                    "procedural/control-promotes-nothing",
                    "approval/restart-between-pause-and-resume",
                    "approval/restart-before-replay",
                    "approval/forged-token",
                    "approval/two-conversations",
                    "approval/gated-action",
                    "approval/deny-answer",
                    "extension/repeated-and-fresh-conversation",
                    "extension/result-reaches-model",
                    "extension/witnessed",
                    "extension/fresh-result",
                ];
                assert!(
                    alone || shared.contains(&name),
                    "no twin fails {name} alone"
                );
            }
        }
    }
}

#[test]
fn an_unguarded_token_also_loses_the_race() {
    // The concurrent property the reference keeps, broken: without the
    // `consumed = 0` guard every racer redeems and the cancellation repeats.
    const RACERS: usize = 4;
    let ctx = TargetContext::fresh(0).expect("context");
    let paused = Helpdesk::open_with(&ctx, Some(Flaw::TokenRedeemableTwice))
        .run_turn(&PromptRequest::new(
            "approval",
            "cancel the subscription of customer 42",
        ))
        .expect("pause");
    let pause = paused.pause().expect("paused").clone();
    let start = Barrier::new(RACERS);
    let winners = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..RACERS)
            .map(|_| {
                scope.spawn(|| {
                    let mut desk = Helpdesk::open_with(&ctx, Some(Flaw::TokenRedeemableTwice));
                    start.wait();
                    desk.resume(&ResumeRequest {
                        conversation: "approval".into(),
                        question_id: pause.question_id.clone(),
                        token: pause.token.clone(),
                        answer: json!({ "approved": true }),
                    })
                    .is_ok()
                })
            })
            .collect();
        racers
            .into_iter()
            .map(|r| r.join().expect("racer"))
            .filter(|won| *won)
            .count()
    });
    assert_eq!(winners, RACERS);
    assert_eq!(ctx.ledger().counts().duplicates, (RACERS - 1) as u64);
}

/// The procedural pack with the seed enforcing in the same process, so the
/// probe that restarts is `enforcement-after-restart`.
fn procedural_without_restart() -> symfonic_evals::PackDefinition {
    let symfonic_evals::PackDefinition::Procedural(mut pack) =
        definition(helpdesk::Pack::Procedural)
    else {
        unreachable!("the desk's procedural definition")
    };
    pack.restart_before_enforcement = false;
    symfonic_evals::PackDefinition::Procedural(pack)
}

#[test]
fn with_the_seed_not_restarting_its_probes_swap_places() {
    // An approval held only in memory now passes the seed; the probe that
    // restarts before enforcing catches it, and so do the probes whose
    // other instances or restarts cannot see it, and the relearn probe,
    // whose cycle reinforces the draft the store still holds.
    let run = run_pack(
        "helpdesk_twins::no-restart::approval-only-in-memory",
        &procedural_without_restart(),
        &run_options(),
        |ctx| Helpdesk::open_with(ctx, Some(Flaw::ApprovalOnlyInMemory)),
    );
    assert_eq!(
        run.failed_scenarios(),
        [
            "procedural/enforcement-after-restart",
            "procedural/amend",
            "procedural/revoke",
            "procedural/relearn-after-approval",
            "procedural/replicas"
        ],
        "{}",
        run.render()
    );
    let failure = run.first_failure().expect("a failure");
    assert_eq!(
        (failure.step_label.as_str(), failure.assertion.as_str()),
        ("satisfied", "AttributeEquals"),
        "{}",
        run.render()
    );
    // A policy cached at start-up is now the seed's to catch, and the
    // probe that enforces without a restart is not run twice.
    let run = run_pack(
        "helpdesk_twins::no-restart::policy-cached-at-startup",
        &procedural_without_restart(),
        &run_options(),
        |ctx| Helpdesk::open_with(ctx, Some(Flaw::PolicyCachedAtStartup)),
    );
    let failed = run.failed_scenarios();
    assert_eq!(
        failed.first().copied(),
        Some("procedural-review-and-enforcement"),
        "{}",
        run.render()
    );
    assert!(
        !failed.contains(&"procedural/enforcement-after-restart"),
        "{failed:?}"
    );
    // The reference passes both placements.
    let run = run_pack(
        "helpdesk_twins::no-restart::reference",
        &procedural_without_restart(),
        &run_options(),
        |ctx| Helpdesk::open_with(ctx, None),
    );
    run.assert_passed();
    assert!(run
        .scenarios()
        .iter()
        .any(|s| s.name == "procedural/enforcement-after-restart"));
}

/// The approval pack with only its required arguments: the denial and the
/// unfit answer are derived from `answer`, and nothing names the gated
/// action.
fn approval_with_defaults() -> symfonic_evals::PackDefinition {
    helpdesk::packs::as_a_newcomer_writes(definition(helpdesk::Pack::ApprovalResume))
}

#[test]
fn with_default_arguments_the_derived_answers_still_catch_their_twins() {
    let run = |name: &str, flaw: Option<Flaw>| {
        run_pack(
            &format!("helpdesk_twins::defaults::{name}"),
            &approval_with_defaults(),
            &run_options(),
            move |ctx| Helpdesk::open_with(ctx, flaw),
        )
    };
    let reference = run("reference", None);
    reference.assert_passed();
    // What a newcomer's arguments cannot give: the gated action's name,
    // an answer from someone not entitled, an amended answer; and an edit,
    // which needs a held call the reference (asking through `ask_user`)
    // does not declare editable.
    let underived = [
        "approval/gated-action",
        "approval/foreign-answer",
        "approval/amended-answer",
        "approval/edited-call",
    ];
    assert!(reference
        .probes_not_run()
        .iter()
        .all(|p| underived.contains(&p.probe.as_str())));
    for (flaw, scenario, step, assertion) in [
        (
            Flaw::DenialReadAsApproval,
            "approval/deny-answer",
            "deny",
            "EffectsWithheld",
        ),
        // Cancelled at the pause: the denial leaves the approval's effect.
        (
            Flaw::GatedActionBeforeAnswer,
            "approval/deny-answer",
            "deny",
            "EffectsWithheld",
        ),
        (
            Flaw::NoticeRepostedOnResume,
            "approval/restart-between-pause-and-resume",
            "resume",
            "EffectNotRepeated",
        ),
        (
            Flaw::UnfitAnswerAccepted,
            "approval/unfit-answer",
            "unfit answer",
            "ExpectedError",
        ),
    ] {
        let run = run(flaw.name(), Some(flaw));
        let failure = run
            .failures()
            .into_iter()
            .find(|f| f.scenario == scenario)
            .unwrap_or_else(|| panic!("{flaw:?}: {scenario} passed\n{}", run.render()));
        assert_eq!(
            (failure.step_label.as_str(), failure.assertion.as_str()),
            (step, assertion),
            "{flaw:?}\n{}",
            run.render()
        );
        assert!(
            !run.failed_scenarios()
                .contains(&"approval-pause-resume-and-replay-refusal"),
            "{flaw:?} passes the seed"
        );
    }
}
