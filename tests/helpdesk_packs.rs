//! The reference help desk earns every pack, applied the way an
//! adopter applies them: with the attribute macros, every optional argument
//! that turns a probe on, and the desk's effect oracle. Plus the pause and
//! resume properties a pack run alone does not stress: a restart between
//! pause and resume, concurrent redemption of one token, an answer that
//! does not fit the question, a question id that is not the one asked, and
//! call ids across a restart.

use std::sync::Barrier;

use helpdesk::{Helpdesk, Pack};
use serde_json::json;
use symfonic_evals::{
    approval_resume_pack, exactly_once_pack, extension_tool_pack, procedural_pack, Pause,
    PromptRequest, ResumeRequest, Target, TargetContext, ToolOutcome, TurnRecord,
};

#[procedural_pack(
    demonstrations = ["refund order 1", "refund order 2"],
    draft_prompt = "refund order 3", draft_state = { "region": "EU", "priority": "urgent" },
    review_prompt = "approve the refund procedure: governs issue_refund when region eq US and receipt exists and verified eq true",
    satisfied_prompt = "refund order 4", satisfied_state = { "region": "US", "receipt": "r-104", "priority": "normal", "verified": true },
    blocked_prompt = "refund order 5", blocked_state = { "region": "EU", "receipt": "r-105", "priority": "normal", "verified": true },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    restart_before_enforcement = true,
    decoy_demonstrations = ["track order 21", "track order 22", "track order 23", "track order 24"],
    decoy_fragment = "call track_shipment",
    control_demonstrations = ["where is the parcel for order 31?", "what can you help me with?"],
    interleaved_prompt = "where is the parcel for order 32?",
    multi_call_prompt = "refund orders 6 and 7",
    approval_prompt = "refund order 8 in full",
    approval_answer = { "approved": true },
    gate_sweep = 32,
    effects_probe = helpdesk::store::effects_in_store,
)]
fn helpdesk_refund_procedure(ctx: &TargetContext) -> Helpdesk {
    Helpdesk::open(ctx)
}

#[procedural_pack(
    demonstrations = ["refund order 11", "refund order 12", "refund order 13"],
    draft_prompt = "please refund order 14", draft_state = { "region": "MX" },
    review_prompt = "approve the refund procedure: governs issue_refund when region in US, CA",
    satisfied_prompt = "refund order 15", satisfied_state = { "region": "CA" },
    blocked_prompt = "refund order 16", blocked_state = { "region": "MX" },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    restart_before_enforcement = false,
    trials = 2, require = 2,
    effects_probe = helpdesk::store::effects_in_store,
)]
fn helpdesk_refund_procedure_with_a_list_predicate(ctx: &TargetContext) -> Helpdesk {
    Helpdesk::open(ctx)
}

#[approval_resume_pack(
    pause_prompt = "cancel the subscription of customer 42",
    answer = { "approved": true },
    interaction_tool = "ask_user",
    resumable = true,
    gated_tool = "cancel_subscription",
    deny_answer = { "approved": false },
    unfit_answer = { "approved": "maybe" },
    amended_answer = { "approved": true, "effective": "end_of_term" },
    amended_call = { "effective": "end_of_term" },
    second_prompt = "cancel the subscription of customer 43",
    effects_probe = helpdesk::store::effects_in_store,
)]
fn helpdesk_cancellation_approval(ctx: &TargetContext) -> Helpdesk {
    Helpdesk::open(ctx)
}

// The packs below name the desk's own constructor as their builder.
#[extension_tool_pack(
    builder = Helpdesk::open,
    prompt = "where is the parcel for order 7?",
    tool_name = "track_shipment",
    arguments = { "order": 7, "include_eta": true },
    expected_fragments = ["Order 7", "in transit"],
    witnessed = true,
    second_prompt = "where is the parcel for order 8?",
    second_arguments = { "order": 8, "include_eta": true },
    fixture_result = { "status": "in transit", "carrier": "Northpost", "eta_days": 2 },
    effects_probe = helpdesk::store::effects_in_store,
)]
fn helpdesk_shipping_extension() {}

#[exactly_once_pack(
    builder = Helpdesk::open,
    prompt = "cancel the subscription of customer 42",
    answer = { "approved": true },
    second_prompt = "cancel the subscription of customer 43",
    effects_probe = helpdesk::store::effects_in_store,
)]
fn helpdesk_cancellation_exactly_once() {}

// A turn whose effect comes from the prompt itself: the crash lands inside
// the first turn, with nothing paused.
#[exactly_once_pack(
    builder = Helpdesk::open,
    prompt = "refund order 4",
    state = { "region": "US", "receipt": "r-104" },
    effects_probe = helpdesk::store::effects_in_store,
)]
fn helpdesk_refund_exactly_once() {}

#[test]
fn the_attributes_spell_the_main_jobs_definitions() {
    // The packs above and the ones the main job runs are one definition
    // each, written twice: the fingerprints say they have not drifted.
    let registered = symfonic_evals::registered_packs();
    for (name, pack) in [
        ("helpdesk_refund_procedure", Pack::Procedural),
        ("helpdesk_cancellation_approval", Pack::ApprovalResume),
        ("helpdesk_shipping_extension", Pack::ExtensionTool),
        ("helpdesk_cancellation_exactly_once", Pack::ExactlyOnce),
    ] {
        let registered = registered
            .iter()
            .find(|p| p.name() == name)
            .unwrap_or_else(|| panic!("{name} is registered"));
        assert_eq!(
            registered.fingerprint(),
            helpdesk::packs::definition(pack).fingerprint(),
            "{name}"
        );
    }
}

const CONVERSATION: &str = "approval";

fn pause(desk: &mut Helpdesk) -> Pause {
    let record = desk
        .run_turn(&PromptRequest::new(
            CONVERSATION,
            "cancel the subscription of customer 42",
        ))
        .expect("the pause turn runs");
    record.pause().expect("the turn paused").clone()
}

fn redeem(
    desk: &mut Helpdesk,
    pause: &Pause,
    answer: serde_json::Value,
) -> Result<TurnRecord, symfonic_evals::TurnError> {
    desk.resume(&ResumeRequest {
        conversation: CONVERSATION.into(),
        question_id: pause.question_id.clone(),
        token: pause.token.clone(),
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
    let paused = pause(&mut Helpdesk::open(&ctx));
    // The desk that paused is gone; a new process redeems.
    let mut desk = Helpdesk::open(&ctx);
    let record = redeem(&mut desk, &paused, json!({ "approved": true })).expect("redeemed");
    assert_eq!(record.fact("resume_checkpoint"), Some(json!(true)));
    assert_eq!(record.fact("resume_continued"), Some(json!(true)));
    assert!(
        cancelled(&record),
        "the paused turn carried on to the cancellation"
    );
    assert_eq!(ctx.ledger().counts().effects, 1);
    let replay = redeem(
        &mut Helpdesk::open(&ctx),
        &paused,
        json!({ "approved": true }),
    );
    assert_eq!(replay.unwrap_err().kind, "PauseTokenReplayedError");
}

#[test]
fn concurrent_redemptions_of_one_token_admit_exactly_one() {
    const RACERS: usize = 8;
    let ctx = TargetContext::fresh(0).expect("context");
    let paused = pause(&mut Helpdesk::open(&ctx));
    let start = Barrier::new(RACERS);
    let outcomes: Vec<_> = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..RACERS)
            .map(|_| {
                scope.spawn(|| {
                    let mut desk = Helpdesk::open(&ctx);
                    start.wait();
                    redeem(&mut desk, &paused, json!({ "approved": true }))
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
    let paused = pause(&mut desk);
    let refused = redeem(&mut desk, &paused, json!({ "approved": "yes" }));
    assert_eq!(refused.unwrap_err().kind, "AnswerRejectedError");
    assert_eq!(ctx.ledger().counts().attempts, 0);
    let declined =
        redeem(&mut desk, &paused, json!({ "approved": false })).expect("still redeemable");
    assert!(!cancelled(&declined));
    assert_eq!(declined.fact("resume_continued"), Some(json!(true)));
}

#[test]
fn an_unknown_token_is_not_a_replay() {
    let ctx = TargetContext::fresh(0).expect("context");
    let mut desk = Helpdesk::open(&ctx);
    let mut forged = pause(&mut desk);
    forged.token = "pt_forged".into();
    let error = redeem(&mut desk, &forged, json!({ "approved": true })).unwrap_err();
    assert_eq!(error.kind, "PauseTokenUnknownError");
}

#[test]
fn a_resume_naming_another_question_is_refused_and_the_token_kept() {
    let ctx = TargetContext::fresh(0).expect("context");
    let mut desk = Helpdesk::open(&ctx);
    let paused = pause(&mut desk);
    assert!(
        paused.question.is_some(),
        "the pause publishes its question"
    );
    for question_id in [None, Some("q-999".to_owned())] {
        let other = Pause {
            question_id,
            ..paused.clone()
        };
        let refused = redeem(&mut desk, &other, json!({ "approved": true })).unwrap_err();
        assert_eq!(refused.kind, "PauseQuestionMismatchError");
    }
    let record = redeem(&mut desk, &paused, json!({ "approved": true })).expect("still redeemable");
    assert!(cancelled(&record));
}

#[test]
fn the_parked_call_is_pending_then_resolved_with_the_answer() {
    let ctx = TargetContext::fresh(0).expect("context");
    let mut desk = Helpdesk::open(&ctx);
    let record = desk
        .run_turn(&PromptRequest::new(
            CONVERSATION,
            "cancel the subscription of customer 42",
        ))
        .expect("pauses");
    let parked = record
        .tool_calls()
        .last()
        .expect("the ask_user call")
        .clone();
    assert_eq!(parked.name, "ask_user");
    assert!(parked.is_pending());
    let paused = record.pause().expect("paused").clone();
    let resumed = redeem(&mut desk, &paused, json!({ "approved": false })).expect("resumes");
    assert_eq!(resumed.resolved().len(), 1);
    assert_eq!(resumed.resolved()[0].id, parked.id);
    assert!(!cancelled(&resumed), "a denial cancels nothing");
    assert_eq!(ctx.ledger().counts().attempts, 0);
}

#[test]
fn call_ids_never_repeat_across_turns_conversations_or_restarts() {
    let ctx = TargetContext::fresh(0).expect("context");
    let mut ids = std::collections::BTreeSet::new();
    for conversation in ["one", "one", "two"] {
        // A fresh desk each time: the ids come from the store, not the process.
        let record = Helpdesk::open(&ctx)
            .run_turn(&PromptRequest::new(
                conversation,
                "where is the parcel for order 7?",
            ))
            .expect("tracks");
        for call in record.tool_calls() {
            assert!(ids.insert(call.id.clone()), "{} repeated", call.id);
        }
    }
    assert_eq!(ids.len(), 3);
}

#[test]
fn the_effect_oracle_counts_what_the_ledger_applied() {
    let ctx = TargetContext::fresh(0).expect("context");
    let mut desk = Helpdesk::open(&ctx);
    let oracle = || helpdesk::store::effects_in_store(ctx.durable_dir()).expect("readable");
    assert_eq!(oracle(), 0);
    let paused = pause(&mut desk);
    redeem(&mut desk, &paused, json!({ "approved": true })).expect("resumes");
    assert_eq!((oracle(), ctx.ledger().counts().effects), (1, 1));
    // A directory the desk never opened has no store to count.
    let elsewhere = TargetContext::fresh(1).expect("context");
    assert!(helpdesk::store::effects_in_store(elsewhere.durable_dir()).is_err());
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
    let paused = pause(&mut desk);
    let resumed = redeem(&mut desk, &paused, json!({"approved": true})).expect("resumes");
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

#[test]
fn the_report_shows_what_the_mcp_fixture_received_beside_the_desks_record() {
    let run = symfonic_evals::run_pack(
        "helpdesk_packs::extension_over_mcp",
        &helpdesk::packs::definition(Pack::ExtensionTool),
        &helpdesk::packs::run_options(),
        Helpdesk::open,
    );
    run.assert_passed();
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(run.report_path().expect("a report")).expect("readable"),
    )
    .expect("JSON");
    assert_eq!(report["extension_evidence"], "mcp-fixture");
    let fixture = report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .find(|s| s["name"] == "extension/mcp-fixture")
        .expect("the fixture's probe ran");
    let steps = fixture["trials"][0]["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 5);
    for step in steps {
        let calls = step["fixture_calls"].as_array().expect("fixture calls");
        assert_eq!(calls.len(), 1, "{step}");
        assert_eq!(calls[0]["tool"], "track_shipment");
        assert_eq!(
            calls[0]["failed"],
            json!(step["label"] == "upstream error"),
            "{step}"
        );
        for digest in ["arguments_digest", "nonce_digest"] {
            assert!(calls[0][digest].as_str().is_some_and(|d| !d.is_empty()));
        }
    }
    // Nonces appear by digest only, never in clear.
    let text = serde_json::to_string(&report).expect("text");
    assert!(!text.contains("mcp-nonce-"), "a nonce in clear");
    let page = std::fs::read_to_string(run.viewer_path().expect("a page")).expect("page");
    assert!(page.contains("MCP fixture received"));
    assert!(page.contains("judged by what the harness's MCP fixture"));
}
