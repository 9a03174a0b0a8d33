//! The reference help desk earns all three packs, applied the way an
//! adopter applies them: with the attribute macros, restarts on. Plus the
//! pause/resume properties a pack run alone does not stress: a restart
//! between pause and resume, concurrent redemption of one token, and an
//! answer that does not fit the question.

use std::sync::Barrier;

use helpdesk::Helpdesk;
use serde_json::json;
use symfonic_evals::{
    approval_resume_pack, extension_tool_pack, procedural_pack, PromptRequest, ResumeRequest,
    Target, TargetContext, ToolOutcome, TurnRecord,
};

#[procedural_pack(
    demonstrations = ["refund order 1", "refund order 2"],
    draft_prompt = "refund order 3", draft_state = { "region": "EU" },
    review_prompt = "approve the refund procedure: governs issue_refund when region eq US",
    satisfied_prompt = "refund order 4", satisfied_state = { "region": "US" },
    blocked_prompt = "refund order 5", blocked_state = { "region": "EU" },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    restart_before_enforcement = true,
)]
fn helpdesk_refund_procedure(ctx: &TargetContext) -> Helpdesk {
    Helpdesk::open(ctx)
}

#[procedural_pack(
    demonstrations = ["refund order 11", "refund order 12", "refund order 13"],
    draft_prompt = "please refund order 14", draft_state = { "REGION": "CA" },
    review_prompt = "approve the refund procedure: governs issue_refund when region in US, CA",
    satisfied_prompt = "refund order 15", satisfied_state = { "region": "CA" },
    blocked_prompt = "refund order 16", blocked_state = { "region": "MX" },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    trials = 2, require = 2,
)]
fn helpdesk_refund_procedure_with_a_list_predicate(ctx: &TargetContext) -> Helpdesk {
    Helpdesk::open(ctx)
}

#[approval_resume_pack(
    pause_prompt = "cancel the subscription of customer 42",
    answer = { "approved": true },
    interaction_tool = "ask_user",
    resumable = true,
)]
fn helpdesk_cancellation_approval(ctx: &TargetContext) -> Helpdesk {
    Helpdesk::open(ctx)
}

#[extension_tool_pack(
    prompt = "where is the parcel for order 7?",
    tool_name = "track_shipment",
    arguments = { "order": 7 },
    expected_fragments = ["Order 7", "in transit"],
)]
fn helpdesk_shipping_extension(ctx: &TargetContext) -> Helpdesk {
    Helpdesk::open(ctx)
}

const CONVERSATION: &str = "approval";

fn pause(desk: &mut Helpdesk) -> String {
    let record = desk
        .run_turn(&PromptRequest::new(
            CONVERSATION,
            "cancel the subscription of customer 42",
        ))
        .expect("the pause turn runs");
    record.pause().expect("the turn paused").token.clone()
}

fn redeem(
    desk: &mut Helpdesk,
    token: &str,
    answer: serde_json::Value,
) -> Result<TurnRecord, symfonic_evals::TurnError> {
    desk.resume(&ResumeRequest {
        conversation: CONVERSATION.into(),
        question_id: None,
        token: token.to_owned(),
        answer,
    })
}

fn cancelled(record: &TurnRecord) -> bool {
    record.tool_calls().iter().any(|c| {
        c.name == "cancel_subscription" && matches!(c.outcome, ToolOutcome::Succeeded { .. })
    })
}

#[test]
fn a_restart_between_pause_and_resume_loses_nothing() {
    let ctx = TargetContext::fresh(0).expect("context");
    let token = pause(&mut Helpdesk::open(&ctx));
    // The desk that paused is gone; a new process redeems.
    let mut desk = Helpdesk::open(&ctx);
    let record = redeem(&mut desk, &token, json!({ "approved": true })).expect("redeemed");
    assert_eq!(record.fact("resume_checkpoint"), Some(json!(true)));
    assert_eq!(record.fact("resume_continued"), Some(json!(true)));
    assert!(
        cancelled(&record),
        "the paused turn carried on to the cancellation"
    );
    assert_eq!(ctx.ledger().counts().effects, 1);
    let replay = redeem(
        &mut Helpdesk::open(&ctx),
        &token,
        json!({ "approved": true }),
    );
    assert_eq!(replay.unwrap_err().kind, "PauseTokenReplayedError");
}

#[test]
fn concurrent_redemptions_of_one_token_admit_exactly_one() {
    const RACERS: usize = 8;
    let ctx = TargetContext::fresh(0).expect("context");
    let token = pause(&mut Helpdesk::open(&ctx));
    let start = Barrier::new(RACERS);
    let outcomes: Vec<_> = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..RACERS)
            .map(|_| {
                scope.spawn(|| {
                    let mut desk = Helpdesk::open(&ctx);
                    start.wait();
                    redeem(&mut desk, &token, json!({ "approved": true }))
                })
            })
            .collect();
        racers
            .into_iter()
            .map(|r| r.join().expect("racer"))
            .collect()
    });
    let winners: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    assert_eq!(winners.len(), 1, "exactly one redemption succeeds");
    assert!(cancelled(winners[0]));
    for loser in outcomes.iter().filter_map(|o| o.as_ref().err()) {
        assert_eq!(loser.kind, "PauseTokenReplayedError");
    }
    let counts = ctx.ledger().counts();
    assert_eq!(
        (counts.attempts, counts.effects),
        (1, 1),
        "the continuation ran once"
    );
}

#[test]
fn an_answer_that_does_not_fit_is_refused_and_the_token_kept() {
    let ctx = TargetContext::fresh(0).expect("context");
    let mut desk = Helpdesk::open(&ctx);
    let token = pause(&mut desk);
    let refused = redeem(&mut desk, &token, json!({ "approved": "yes" }));
    assert_eq!(refused.unwrap_err().kind, "AnswerRejectedError");
    assert_eq!(ctx.ledger().counts().attempts, 0);
    let declined =
        redeem(&mut desk, &token, json!({ "approved": false })).expect("still redeemable");
    assert!(!cancelled(&declined));
    assert_eq!(declined.fact("resume_continued"), Some(json!(true)));
}

#[test]
fn an_unknown_token_is_not_a_replay() {
    let ctx = TargetContext::fresh(0).expect("context");
    let error = redeem(
        &mut Helpdesk::open(&ctx),
        "pt_forged",
        json!({ "approved": true }),
    )
    .unwrap_err();
    assert_eq!(error.kind, "PauseTokenUnknownError");
}

/// Looks up accounts `before` times, asks a person, then keeps looking up
/// accounts until the desk refuses one, and answers.
struct Greedy {
    before: usize,
    calls: usize,
}

impl helpdesk::model::Model for Greedy {
    fn next_step(&mut self, shown: &str) -> helpdesk::model::ModelStep {
        use helpdesk::model::ModelStep;
        if shown.contains("refused") {
            return ModelStep::Answer("stopped at the budget".into());
        }
        self.calls += 1;
        if self.calls == self.before + 1 {
            return ModelStep::Call {
                tool: "ask_user".into(),
                arguments: json!({"question": "go on?", "schema": {"approved": "boolean"}}),
            };
        }
        ModelStep::Call {
            tool: "lookup_account".into(),
            arguments: json!({"order": self.calls}),
        }
    }
}

#[test]
fn a_pause_does_not_reset_the_tool_budget() {
    let ctx = TargetContext::fresh(0).unwrap();
    let mut desk = Helpdesk::open(&ctx).with_model(Box::new(Greedy {
        before: 4,
        calls: 0,
    }));
    let token = pause(&mut desk);
    let resumed = redeem(&mut desk, &token, json!({"approved": true})).expect("resumes");
    let after: Vec<_> = resumed
        .tool_calls()
        .iter()
        .filter(|c| c.name == "lookup_account")
        .collect();
    // Four lookups and the question spent five of the six calls a turn may
    // make, so the first lookup after the pause is the last one admitted.
    assert!(!matches!(after[0].outcome, ToolOutcome::Refused { .. }));
    assert!(
        matches!(&after[1].outcome, ToolOutcome::Refused { stage } if stage == "budget_ceiling"),
        "{after:?}"
    );
}
