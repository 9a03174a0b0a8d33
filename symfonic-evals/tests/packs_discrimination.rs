//! Each pack passes a faithful deployment and fails every broken twin on the
//! step and assertion that name what is broken.

use crate::common;

use common::approval::{ApprovalFlaw, ManagerDesk, TokenCheck};
use common::extension::{ExtensionFlaw, WeatherDesk};
use common::procedural::{ProceduralFlaw, RefundDesk};
use common::{assert_fails_at, first_failure};
use symfonic_evals::{run_pack, PackRun, RunOptions, StageOutcome};

fn procedural_run(name: &str, flaw: Option<ProceduralFlaw>) -> PackRun {
    let pack = common::procedural(common::procedural_pack());
    run_pack(name, &pack, &RunOptions::default(), move |ctx| {
        RefundDesk::open(ctx, flaw)
    })
}

fn approval_run(name: &str, flaw: Option<ApprovalFlaw>) -> PackRun {
    let pack = common::approval(common::approval_pack());
    run_pack(name, &pack, &RunOptions::default(), move |ctx| {
        ManagerDesk::open(ctx, flaw)
    })
}

fn extension_run(name: &str, flaw: Option<ExtensionFlaw>) -> PackRun {
    let pack = common::extension(common::extension_pack());
    run_pack(name, &pack, &RunOptions::default(), move |_| {
        WeatherDesk::with(flaw)
    })
}

#[test]
fn faithful_procedural_desk_passes_across_the_restart() {
    let run = procedural_run("discrimination.procedural.faithful", None);
    run.assert_passed();
    let steps = &run.seed().expect("the seed ran").trials[0].steps;
    let labels: Vec<&str> = steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "demonstration 1",
            "demonstration 2",
            "draft probe",
            "review",
            "satisfied",
            "blocked"
        ]
    );
    assert!(steps[4].restarted, "the satisfied turn follows a restart");
}

#[test]
fn tool_that_ran_anyway_fails_the_blocked_turn() {
    let run = procedural_run(
        "discrimination.procedural.ran_anyway",
        Some(ProceduralFlaw::ToolRanAnyway),
    );
    let failure = assert_fails_at(&run, "blocked", "ToolSucceeded");
    assert_eq!(failure.description, "ToolSucceeded(issue_refund, times=0)");
    // The governed effect was reached too, and the pack says so as well.
    let all: Vec<_> = common::seed_failures(&run)
        .into_iter()
        .map(|f| f.assertion)
        .collect();
    assert_eq!(all, ["ToolSucceeded", "GovernedEffectWithheld"]);
}

#[test]
fn ledger_moved_on_refusal_fails_the_blocked_turn() {
    let run = procedural_run(
        "discrimination.procedural.ledger_moved",
        Some(ProceduralFlaw::LedgerMovedOnRefusal),
    );
    // The desk names no tool for its effects, so nothing tells the
    // refused call's write from the governed effect: it counts.
    let failure = assert_fails_at(&run, "blocked", "GovernedEffectWithheld");
    assert!(
        failure.observed.contains("named no tool"),
        "{}",
        failure.observed
    );
    assert_eq!(common::seed_failures(&run).len(), 1, "{}", run.render());
}

#[test]
fn draft_in_recall_fails_the_draft_probe() {
    let run = procedural_run(
        "discrimination.procedural.draft_in_recall",
        Some(ProceduralFlaw::DraftInRecall),
    );
    assert_fails_at(&run, "draft probe", "PromptRecallExcludes");
    assert_eq!(common::seed_failures(&run).len(), 1, "{}", run.render());
}

#[test]
fn draft_that_governs_fails_the_draft_probe() {
    let run = procedural_run(
        "discrimination.procedural.draft_governs",
        Some(ProceduralFlaw::DraftGoverns),
    );
    let failure = assert_fails_at(&run, "draft probe", "AttributeEquals");
    assert_eq!(
        failure.description,
        "AttributeEquals(procedural_enforcement_ids)"
    );
}

#[test]
fn approval_lost_across_restart_fails_the_satisfied_turn() {
    let run = procedural_run(
        "discrimination.procedural.approval_lost",
        Some(ProceduralFlaw::ApprovalNotPersisted),
    );
    let failure = assert_fails_at(&run, "satisfied", "AttributeEquals");
    assert_eq!(failure.description, "AttributeEquals(procedural_review)");
    // The review step itself passed: the loss shows only after the restart.
    assert!(run.seed().expect("the seed ran").trials[0].steps[3].passed());
}

#[test]
fn approval_kept_in_memory_is_caught_by_the_placement_probe_when_the_seed_skips_the_restart() {
    // The restart is what catches the flaw above: without it in the seed
    // scenario, only the probe that places it elsewhere fails.
    let mut pack = common::procedural_pack();
    pack.restart_before_enforcement = false;
    let run = run_pack(
        "discrimination.procedural.no_restart",
        &common::procedural(pack),
        &RunOptions::default(),
        |ctx| RefundDesk::open(ctx, Some(ProceduralFlaw::ApprovalNotPersisted)),
    );
    assert!(run.seed().is_some_and(|s| s.passed()), "{}", run.render());
    let failure = assert_fails_at(&run, "satisfied", "AttributeEquals");
    assert_eq!(failure.scenario, "procedural/enforcement-after-restart");
}

#[test]
fn differing_review_and_enforcement_ids_fail_the_satisfied_turn() {
    let run = procedural_run(
        "discrimination.procedural.ids_differ",
        Some(ProceduralFlaw::IdsDiffer),
    );
    let failure = assert_fails_at(&run, "satisfied", "AttributesSameNonEmpty");
    assert_eq!(
        failure.description,
        "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)"
    );
}

#[test]
fn no_promotion_fails_the_last_demonstration() {
    let run = procedural_run(
        "discrimination.procedural.no_promotion",
        Some(ProceduralFlaw::NeverPromotes),
    );
    let failure = assert_fails_at(&run, "demonstration 2", "AttributeCount");
    assert_eq!(failure.observed, "procedural_promoted counts 0");
}

#[test]
fn blocked_turn_requires_a_rejected_stage() {
    // Sanity of the scenario itself: the blocked step really asks for a rejection.
    let scenario = common::procedural_pack().seed();
    let blocked = scenario.steps.last().expect("a blocked step");
    assert!(blocked.assertions.iter().any(|a| matches!(
        a,
        symfonic_evals::Assertion::StageObserved {
            outcome: Some(StageOutcome::Rejected),
            ..
        }
    )));
}

#[test]
fn faithful_manager_desk_passes() {
    let run = approval_run("discrimination.approval.faithful", None);
    run.assert_passed();
    let labels: Vec<&str> = run.seed().expect("the seed ran").trials[0]
        .steps
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(labels, ["pause", "resume", "replay"]);
}

#[test]
fn pause_described_but_completed_fails_the_pause_step() {
    let run = approval_run(
        "discrimination.approval.described_only",
        Some(ApprovalFlaw::PauseDescribedOnly),
    );
    let failure = assert_fails_at(&run, "pause", "AttributeEquals");
    assert_eq!(failure.description, "AttributeEquals(paused)");
    // Read off the terminal event, whatever the hand-set attribute says; a
    // boolean is shown as it is (a digest of `false` would hide nothing).
    assert_eq!(
        failure.observed,
        "paused = false; $: expected true, found false"
    );
}

#[test]
fn token_redeemed_twice_fails_the_replay() {
    let run = approval_run(
        "discrimination.approval.redeemed_twice",
        Some(ApprovalFlaw::TokenRedeemedTwice),
    );
    let failure = assert_fails_at(&run, "replay", "ExpectedError");
    assert_eq!(failure.expected, "error PauseTokenReplayedError");
    assert_eq!(failure.observed, "the turn succeeded");
}

#[test]
fn resume_not_bound_to_a_checkpoint_fails_the_resume() {
    let run = approval_run(
        "discrimination.approval.unbound",
        Some(ApprovalFlaw::NotBoundToCheckpoint),
    );
    let failure = assert_fails_at(&run, "resume", "AttributeEquals");
    assert_eq!(failure.description, "AttributeEquals(resume_checkpoint)");
}

#[test]
fn paused_turn_not_continued_fails_the_resume() {
    let run = approval_run(
        "discrimination.approval.not_continued",
        Some(ApprovalFlaw::NotContinued),
    );
    let failure = assert_fails_at(&run, "resume", "AttributeEquals");
    assert_eq!(failure.description, "AttributeEquals(resume_continued)");
    assert_eq!(common::seed_failures(&run).len(), 1, "{}", run.render());
}

#[test]
fn spent_token_forgotten_on_restart_fails_only_the_restart_before_replay_probe() {
    let flaw = Some(ApprovalFlaw::SpentOnlyInMemory);
    let run = approval_run("discrimination.approval.in_memory", flaw);
    let failure = assert_fails_at(&run, "replay", "ExpectedError");
    assert_eq!(failure.scenario, "approval/restart-before-replay");
    let failed: Vec<&str> = run.failed_scenarios();
    assert_eq!(
        failed,
        ["approval/restart-before-replay"],
        "{}",
        run.render()
    );
}

fn approval_checking(name: &str, tokens: TokenCheck) -> PackRun {
    let pack = common::approval(common::approval_pack());
    run_pack(name, &pack, &RunOptions::default(), move |ctx| {
        ManagerDesk::open(ctx, None).checking(tokens)
    })
}

#[test]
fn base64url_tokens_decoded_before_lookup_pass_every_forgery() {
    // The last of 22 base64url characters carries four unused bits: a
    // forgery that changes only those decodes to the genuine token, and
    // this correct desk would accept it.
    let run = approval_checking("discrimination.approval.decoded", TokenCheck::Decoded);
    run.assert_passed();
    let forged = run
        .scenario("approval/forged-token")
        .expect("the probe ran");
    let labels: Vec<&str> = forged.trials[0]
        .steps
        .iter()
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "pause",
            "forged token",
            "forged token (letter case)",
            "forged token (truncated)",
            "forged token (extended)",
            "resume",
            "replay"
        ]
    );
}

#[test]
fn tokens_compared_loosely_fail_the_forgery_that_slips_past() {
    for (tokens, step) in [
        (TokenCheck::Prefix, "forged token (truncated)"),
        (TokenCheck::CaseInsensitive, "forged token (letter case)"),
        (TokenCheck::LengthBounded, "forged token (extended)"),
    ] {
        let run = approval_checking(&format!("discrimination.approval.{tokens:?}"), tokens);
        // The forgery that slipped past spent the genuine token too, so
        // the resume after it fails as well; the first failure names it.
        let first = run
            .failures()
            .into_iter()
            .find(|f| f.scenario == "approval/forged-token")
            .map(|f| (f.step_label, f.assertion));
        assert_eq!(
            first,
            Some((step.to_owned(), "ExpectedError".to_owned())),
            "{tokens:?}:\n{}",
            run.render()
        );
    }
}

#[test]
fn faithful_weather_desk_passes() {
    extension_run("discrimination.extension.faithful", None).assert_passed();
}

#[test]
fn extension_tool_called_but_failed_fails_on_success() {
    let run = extension_run(
        "discrimination.extension.failed",
        Some(ExtensionFlaw::CalledButFailed),
    );
    let failure = assert_fails_at(&run, "extension call", "ToolSucceeded");
    assert_eq!(
        failure.description,
        "ToolSucceeded(weather_lookup, times=1)"
    );
    assert_eq!(failure.observed, "0 of 1 call(s) succeeded");
}

#[test]
fn extension_tool_never_called_fails_on_the_call() {
    let run = extension_run(
        "discrimination.extension.never_called",
        Some(ExtensionFlaw::NeverCalled),
    );
    let failure = assert_fails_at(&run, "extension call", "ToolCalled");
    assert_eq!(
        failure.description,
        "ToolCalled(weather_lookup, times=1, with arguments, exact)"
    );
    // An answer that describes the tool does not rescue it.
    assert!(!run
        .failures()
        .iter()
        .any(|f| f.assertion == "ResponseContains"));
}

#[test]
fn extension_tool_with_other_arguments_fails_on_the_call() {
    let run = extension_run(
        "discrimination.extension.wrong_arguments",
        Some(ExtensionFlaw::WrongArguments),
    );
    let failure = first_failure(&run);
    assert_eq!(failure.assertion, "ToolCalled");
    assert!(failure.observed.starts_with("0 matching of 1 call(s)"));
}
