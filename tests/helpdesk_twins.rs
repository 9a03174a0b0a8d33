//! Every broken twin of the help desk fails its pack, and on the assertion
//! that names its flaw: the step label, the assertion kind and the
//! assertion's own description are pinned here, independently of the table
//! the main job reads (which is checked against these at the end).

use std::sync::Barrier;
use symfonic_evals_e2e::fails_at;

use helpdesk::packs::definition;
use helpdesk::{Flaw, Helpdesk};
use serde_json::json;
use symfonic_evals::{
    run_pack, PromptRequest, ResumeRequest, RunOptions, Target, TargetContext, Verdict,
};

/// Runs the flaw's pack against its twin and checks where it was caught.
fn caught(flaw: Flaw, step: &str, assertion: &str, detail: &str) {
    let run = run_pack(
        &format!("helpdesk_twins::{}", flaw.name()),
        &definition(flaw.pack()),
        &RunOptions::default(),
        move |ctx| Helpdesk::open_with(ctx, Some(flaw)),
    );
    assert!(matches!(run.verdict(), Verdict::Failed), "{}", run.render());
    let failure = fails_at(&run, step, assertion);
    assert!(
        failure.description.contains(detail) || failure.expected.contains(detail),
        "{failure:?}"
    );
    // The main job's table agrees with what is pinned here.
    let table = flaw.expected_catch();
    assert_eq!(
        (table.step, table.assertion, table.detail),
        (step, assertion, detail)
    );
    assert!(table.matches(&failure));
}

#[test]
fn promoted_count_faked_as_a_turn_counter() {
    // The count looks fine; the review door shows there is nothing behind it.
    caught(
        Flaw::PromotedCountIsTurnCounter,
        "draft probe",
        "AttributeEquals",
        "AttributeEquals(procedural_review)",
    );
}

#[test]
fn draft_governs_before_review() {
    caught(
        Flaw::DraftGovernsBeforeReview,
        "draft probe",
        "AttributeEquals",
        "AttributeEquals(procedural_enforcement_ids)",
    );
}

#[test]
fn draft_leaks_into_the_model_input() {
    caught(
        Flaw::DraftLeaksIntoPrompt,
        "draft probe",
        "PromptRecallExcludes",
        "PromptRecallExcludes(fragment)",
    );
}

#[test]
fn approval_kept_only_in_memory() {
    caught(
        Flaw::ApprovalOnlyInMemory,
        "satisfied",
        "AttributeEquals",
        "AttributeEquals(procedural_review)",
    );
}

#[test]
fn enforcement_reads_a_different_procedure_than_the_review_door_shows() {
    caught(
        Flaw::EnforcementReadsShadowProcedure,
        "satisfied",
        "AttributesSameNonEmpty",
        "AttributesSameNonEmpty(procedural_review_ids, procedural_enforcement_ids)",
    );
}

#[test]
fn gate_ignores_state() {
    caught(
        Flaw::GateIgnoresState,
        "blocked",
        "StageObserved",
        "StageObserved(procedural_precondition, outcome=rejected",
    );
}

#[test]
fn tool_runs_despite_refusal() {
    caught(
        Flaw::ToolRunsDespiteRefusal,
        "blocked",
        "SideEffectCount",
        "SideEffectCount(attempts=2, effects=2, duplicates=0)",
    );
}

#[test]
fn pause_reported_as_an_attribute_while_the_turn_completes() {
    caught(
        Flaw::PauseReportedAsAttribute,
        "pause",
        "AttributeEquals",
        "AttributeEquals(paused)",
    );
}

#[test]
fn resume_without_checkpoint() {
    caught(
        Flaw::ResumeWithoutCheckpoint,
        "resume",
        "AttributeEquals",
        "AttributeEquals(resume_checkpoint)",
    );
}

#[test]
fn resume_that_does_not_continue_the_turn() {
    caught(
        Flaw::ResumeWithoutContinuation,
        "resume",
        "AttributeEquals",
        "AttributeEquals(resume_continued)",
    );
}

#[test]
fn resume_that_restarts_the_turn_asks_again() {
    caught(
        Flaw::ResumeRestartsTurn,
        "resume",
        "ToolCalled",
        "ToolCalled(ask_user, times=0)",
    );
}

#[test]
fn token_redeemable_twice() {
    caught(
        Flaw::TokenRedeemableTwice,
        "replay",
        "ExpectedError",
        "PauseTokenReplayedError",
    );
}

#[test]
fn extension_declared_but_not_bound() {
    caught(
        Flaw::ExtensionDeclaredNotBound,
        "extension call",
        "ToolSucceeded",
        "ToolSucceeded(track_shipment, times=1)",
    );
}

#[test]
fn every_flaw_is_caught_where_its_table_says() {
    // Flaw::ALL is declared from the same list as the enum, so this covers a
    // flaw added without a pinned test above.
    for &flaw in Flaw::ALL {
        let catch = flaw.expected_catch();
        caught(flaw, catch.step, catch.assertion, catch.detail);
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
    let token = paused.pause().expect("paused").token.clone();
    let start = Barrier::new(RACERS);
    let winners = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..RACERS)
            .map(|_| {
                scope.spawn(|| {
                    let mut desk = Helpdesk::open_with(&ctx, Some(Flaw::TokenRedeemableTwice));
                    start.wait();
                    desk.resume(&ResumeRequest {
                        conversation: "approval".into(),
                        question_id: None,
                        token: token.clone(),
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
