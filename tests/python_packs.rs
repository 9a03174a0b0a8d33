//! All three packs, every probe enabled, against the help desk written in
//! Python, driven as a child process over the protocol, with the restarts
//! real process restarts and an effect oracle reading the desk's own SQLite
//! store. Then every broken twin, each caught where it must be and failing
//! exactly the scenarios that can see its flaw; then the asyncio desk,
//! every probe again, through the companion package installed into a
//! virtualenv.
#![cfg(unix)]

use std::collections::BTreeSet;
use std::process::Command;

use helpdesk::python::{self, all_twins, spec, start, PythonTwin};
use helpdesk::Pack;
use serde_json::json;
use symfonic_evals::{
    procedure_identity, registered_packs, run_pack, PackRun, ProcessTarget, PromptRequest,
    ReviewAction, ReviewRequest, Target, TargetContext,
};
use symfonic_evals_e2e::{side_by_side, venv_python};

// The faithful deployment, through the attribute macros exactly as an adopter
// writes them: the annotated function returns the process target. Every
// optional argument is given, so every probe runs.

#[symfonic_evals::procedural_pack(
    demonstrations = [
        "walk me through refunding order 1: verify the account region, then issue the refund",
        "walk me through refunding order 2: verify the account region, then issue the refund",
    ],
    draft_prompt = "refund order 3", draft_state = { "region": "EU", "priority": "urgent" },
    review_prompt = "approve the refund procedure: governs issue_refund when region neq EU and verified eq true",
    satisfied_prompt = "refund order 4", satisfied_state = { "region": "US", "priority": "normal", "verified": true },
    blocked_prompt = "refund order 5", blocked_state = { "region": "EU", "priority": "normal", "verified": true },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    decoy_demonstrations = [
        "walk me through closing ticket 11: confirm the customer's identity, then close the ticket",
        "walk me through closing ticket 12: confirm the customer's identity, then close the ticket",
    ],
    decoy_fragment = "confirm the customer's identity",
    control_demonstrations = ["thanks, that is all for today", "what are your opening hours?"],
    multi_call_prompt = "refund orders 6 and 7",
    approval_prompt = "refund order 8 in full",
    approval_answer = { "approved": true },
    interleaved_prompt = "what is the weather in Oslo",
    gate_sweep = 32,
    restart_before_enforcement = true,
    effects_probe = helpdesk::python::effects,
)]
fn python_helpdesk_procedures(ctx: &TargetContext) -> ProcessTarget {
    start(ctx, &spec(None))
}

#[symfonic_evals::approval_resume_pack(
    pause_prompt = "escalate ticket 7 to a supervisor",
    answer = { "approved": true },
    interaction_tool = "ask_user",
    resumable = true,
    replay_error = ["PauseTokenReplayedError", "pause.replayed"],
    gated_tool = "escalate_ticket",
    deny_answer = { "approved": false },
    unfit_answer = { "approved": "maybe" },
    amended_answer = { "approved": true, "priority": "urgent" },
    amended_call = { "priority": "urgent" },
    second_prompt = "escalate ticket 8 to a supervisor",
    effects_probe = helpdesk::python::effects,
)]
fn python_helpdesk_approvals(ctx: &TargetContext) -> ProcessTarget {
    start(ctx, &spec(None))
}

#[symfonic_evals::extension_tool_pack(
    prompt = "what is the weather in Lisbon",
    tool_name = "weather_lookup",
    arguments = { "city": "Lisbon" },
    argument_match = "exact",
    expected_fragments = ["Lisbon", "sunny"],
    witnessed = true,
    second_prompt = "what is the weather in Oslo",
    second_arguments = { "city": "Oslo" },
    fixture_result = { "city": "Lisbon", "forecast": "sunny, 21 C" },
    effects_probe = helpdesk::python::effects,
)]
fn python_helpdesk_weather(ctx: &TargetContext) -> ProcessTarget {
    start(ctx, &spec(None))
}

#[symfonic_evals::exactly_once_pack(
    prompt = "escalate ticket 7 to a supervisor",
    answer = { "approved": true },
    effects_probe = helpdesk::python::effects,
)]
fn python_helpdesk_escalation(ctx: &TargetContext) -> ProcessTarget {
    start(ctx, &spec(None))
}

/// The attributes above judge the desk with exactly the definitions the main
/// job and the twins use, so the two cannot drift apart.
#[test]
fn the_attribute_packs_are_the_shared_definitions() {
    let packs = registered_packs();
    for (name, pack) in [
        ("python_helpdesk_procedures", Pack::Procedural),
        ("python_helpdesk_approvals", Pack::ApprovalResume),
        ("python_helpdesk_weather", Pack::ExtensionTool),
        ("python_helpdesk_escalation", Pack::ExactlyOnce),
    ] {
        let registered = packs
            .iter()
            .find(|p| p.name() == name)
            .unwrap_or_else(|| panic!("{name} is registered"));
        assert_eq!(
            registered.fingerprint(),
            python::definition(pack).fingerprint(),
            "{name}"
        );
    }
}

// The broken twins: each run with the effect oracle, failing first at its
// catch, and failing nowhere but where its flaw is visible.

fn run_twin(twin: &PythonTwin) -> PackRun {
    let spec = spec(Some(twin.name));
    run_pack(
        &format!("python.twin.{}", twin.name),
        &twin.definition(),
        &python::run_options(),
        move |ctx| start(ctx, &spec),
    )
}

fn assert_caught(name: &str) {
    let twin = all_twins()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no twin {name} in python::TWINS or python::ORACLE_TWINS"));
    let run = run_twin(&twin);
    symfonic_evals_e2e::assert_caught_only(&run, name, &twin.catch, twin.also_fails);
}

/// One test per twin, and the list the desk itself declares.
macro_rules! twins {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                assert_caught($name);
            }
        )*

        const TESTED: &[&str] = &[$($name),*];
    };
}

twins! {
    checkpoint_in_memory_is_lost_across_a_restart => "checkpoint-in-memory",
    a_spent_mark_in_memory_lets_a_replay_through_after_a_restart => "tokens-in-memory",
    spent_marks_written_at_close_are_lost_to_a_kill => "spent-marks-written-at-close",
    an_unchecked_token_lets_a_forgery_redeem => "token-unchecked",
    a_token_redeemed_from_any_conversation_is_refused => "any-conversation-redeems",
    one_pending_pause_loses_the_first_conversation => "one-pending-pause",
    a_parked_call_reported_as_success_is_not_pending => "pending-as-success",
    an_ignored_question_id_accepts_a_forgery => "question-id-ignored",
    a_gated_action_before_the_answer_is_seen_at_the_pause => "gated-before-answer",
    a_denial_read_as_approval_performs_the_action => "denial-approves",
    a_notice_posted_again_on_resume_is_a_repeated_effect => "notice-reposted-on-resume",
    tokens_numbered_in_order_are_predicted => "tokens-numbered-in-order",
    an_approval_reused_for_a_second_request_is_caught => "approval-reused-in-conversation",
    an_approval_granting_every_pending_request_is_caught => "approval-grants-every-pending",
    an_approval_for_the_conversation_queue_is_caught => "approval-grants-conversation-queue",
    a_checkpoint_kept_per_conversation_is_caught => "checkpoint-per-conversation",
    pauses_answered_last_first_are_caught => "pauses-answered-last-first",
    an_approval_from_anyone_is_caught => "any-approver-accepted",
    an_amendment_heard_only_as_a_decision_is_caught => "amendment-ignored",
    an_edit_heard_only_as_an_approval_is_caught => "edited-call-ignored",
    an_unfit_answer_accepted_is_caught => "unfit-answer-accepted",
    a_look_alike_answer_coerced_is_caught => "answer-coerced",
    a_replay_refused_under_another_kind_and_no_code_fails => "replay-wrong-kind",
    a_draft_shown_to_the_model_fails_the_draft_probe => "draft-in-recall",
    an_approval_that_never_reached_the_store_is_lost_across_the_restart => "review-in-memory",
    a_gate_that_ignores_state_does_not_refuse_the_blocked_turn => "gate-ignores-state",
    a_policy_cached_at_start_up_is_not_enforced_until_a_restart => "policy-cached-at-start",
    an_approval_bound_to_a_conversation_fails_from_another => "approval-per-conversation",
    a_review_on_a_user_turn_is_caught => "reviews-user-turns",
    operator_rights_by_conversation_name_are_caught => "operator-rights-by-conversation-name",
    constant_identity_labels_are_not_bound_to_content => "identity-labels",
    a_gate_folding_key_case_disagrees_with_the_contract => "gate-folds-case",
    a_gate_reading_missing_as_null_disagrees_with_the_contract => "gate-missing-is-null",
    a_gate_with_an_urgent_fast_lane_disagrees_with_the_contract => "gate-urgent-fast-lane",
    a_gate_comparing_values_as_text_disagrees_with_the_contract => "gate-compares-as-strings",
    a_review_approving_every_draft_approves_the_decoy => "approves-every-draft",
    a_promoted_count_of_episodes_fails_the_control_turns => "promoted-counts-episodes",
    a_refused_call_written_to_the_store_shows_in_the_oracle => "refusal-hits-store",
    a_review_door_that_drops_a_conjunct_is_caught_by_rule_fidelity => "review-door-drops-conjunct",
    a_gate_caching_rules_by_row_misses_an_amendment => "gate-caches-rules-by-row",
    a_revoked_procedure_that_still_governs_is_caught => "revoked-still-governs",
    a_gate_judging_one_of_two_procedures_is_caught => "gate-judges-first-procedure-only",
    a_gate_judging_the_first_call_only_is_caught => "gate-judges-first-call-only",
    an_approved_call_skipping_the_gate_is_caught => "approved-call-skips-gate",
    a_gate_overruling_the_managers_denial_is_caught => "gate-overrides-denial",
    promotion_counted_over_turns_since_first_seen_is_caught => "promotion-counts-turns-since-first-seen",
    relearning_that_redrafts_an_approved_procedure_is_caught => "relearn-redrafts-approved",
    a_revoked_procedure_left_in_recall_is_caught => "revoked-in-recall",
    a_revoked_procedure_restored_by_relearning_is_caught => "relearn-restores-revoked",
    a_revocation_written_at_close_is_lost_to_a_kill => "revocation-written-at-shutdown",
    learning_from_rejected_demonstrations_is_caught => "rejected-demonstrations-learned",
    rejected_episodes_kept_for_the_next_cycle_are_caught => "rejected-episodes-kept",
    a_door_rejected_draft_approved_after_all_is_caught => "rejected-draft-approvable",
    a_door_rejected_draft_drafted_again_is_caught => "rejected-draft-redrafted",
    an_alias_tool_the_gate_does_not_judge_is_caught => "alias-tool",
    a_review_binding_the_last_tool_called_is_caught => "review-binds-last-tool",
    a_policy_cache_per_instance_misses_a_replicas_approval => "policy-cache-per-instance",
    spent_tokens_loaded_at_start_let_a_replica_redeem_again => "spent-tokens-loaded-at-start",
    a_reset_that_keeps_the_pause_is_caught => "reset-keeps-pause",
    a_ledger_entry_with_no_store_effect_shows_in_the_oracle => "ledger-without-effect",
    a_declared_extension_with_nothing_bound_fails_to_run => "extension-unbound",
    call_ids_restarting_each_turn_repeat_across_the_trial => "call-ids-per-turn",
    a_bridge_dropping_arguments_is_seen_by_the_witness => "bridge-drops-arguments",
    an_upstream_error_reported_as_success_is_seen_by_the_witness => "upstream-error-as-success",
    a_result_never_shown_to_the_model_is_caught => "result-hidden-from-model",
    an_earlier_result_shown_in_place_of_this_one_is_caught => "previous-result-shown",
    a_result_served_from_a_cache_has_no_witness => "result-served-from-cache",
    a_key_naming_the_process_applies_the_retried_effect_twice => "key-per-process",
    two_effects_sharing_a_key_fail_the_learn_step => "brief-shares-escalation-key",
    a_second_effect_of_the_same_tool_under_one_key_fails_the_learn_step => "notice-shares-escalation-key",
    a_key_from_the_clock_hour_applies_again_an_hour_later => "key-from-clock-hour",
    a_token_spent_before_the_continuation_strands_the_retry => "resume-not-retriable",
    a_row_written_only_when_applied_is_lost_to_a_crash => "row-only-when-applied",
}

/// The write-behind twin keeps a revocation in memory, honoured at once,
/// and writes it to its store when the desk closes: a kill loses it and
/// the procedure governs again, an orderly shutdown keeps it. Only the
/// first shows in the packs, whose restarts are kills.
#[test]
fn a_revocation_written_at_close_survives_an_orderly_shutdown_only() {
    const TWIN: &str = "revocation-written-at-shutdown";
    const PROCEDURE: &str = "issue_refund-procedure";
    let ctx = TargetContext::fresh(0).expect("context");
    let published = |record: &symfonic_evals::TurnRecord| {
        record.attributes()["procedural_review_procedures"]
            .as_array()
            .map_or(0, Vec::len)
    };
    let review = |action| ReviewRequest {
        conversation: "procedural-operator".into(),
        action,
    };
    let revoke = || {
        review(ReviewAction::Revoke {
            procedure: PROCEDURE.into(),
        })
    };
    let listed = |desk: &mut symfonic_evals::ProcessTarget| {
        let turn = PromptRequest::new("procedural", "thanks, that is all for today");
        published(&desk.run_turn(&turn).expect("a turn"))
    };
    let mut desk = start(&ctx, &spec(Some(TWIN)));
    for order in [1, 2] {
        let prompt = format!(
            "walk me through refunding order {order}: verify the account region, then issue the \
             refund"
        );
        desk.run_turn(&PromptRequest::new("procedural", prompt))
            .expect("a demonstration");
    }
    let approval = review(ReviewAction::Approve {
        procedure: PROCEDURE.into(),
        draft: "verify the account region".into(),
        tool: "issue_refund".into(),
        precondition: vec![json!({"path": "region", "op": "neq", "value": "EU"})],
    });
    assert_eq!(
        published(&desk.review_procedure(&approval).expect("approved")),
        1
    );
    assert_eq!(
        published(&desk.review_procedure(&revoke()).expect("revoked")),
        0
    );
    assert_eq!(listed(&mut desk), 0, "the revocation holds at once");
    assert!(desk.kill(), "the desk is killed");
    let mut desk = start(&ctx, &spec(Some(TWIN)));
    assert_eq!(listed(&mut desk), 1, "a kill loses the revocation");
    assert_eq!(
        published(&desk.review_procedure(&revoke()).expect("revoked")),
        0
    );
    desk.shutdown();
    let mut desk = start(&ctx, &spec(Some(TWIN)));
    assert_eq!(listed(&mut desk), 0, "an orderly shutdown writes it");
}

#[test]
fn every_twin_the_desk_offers_is_listed_and_tested() {
    let output = Command::new("python3")
        .arg(python::desk_dir().join("helpdesk.py"))
        .arg("--list-twins")
        .output()
        .expect("python3 runs the desk");
    assert!(output.status.success(), "{output:?}");
    let offered: BTreeSet<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let listed: BTreeSet<String> = all_twins().map(|t| t.name.to_owned()).collect();
    let tested: BTreeSet<String> = TESTED.iter().map(|&n| n.to_owned()).collect();
    assert_eq!(offered, listed, "helpdesk.py TWINS against python.rs");
    assert_eq!(listed, tested, "python.rs against the tests above");
}

/// The companion's procedure identity is the harness's, on preconditions
/// with nesting, key order, non-ASCII text, control characters and numbers.
#[test]
fn the_companion_hashes_procedures_as_the_harness_does() {
    let cases = [
        (
            "issue_refund",
            json!([{"state": {"path": "region", "op": "neq", "value": "EU"}}]),
            "verify the account region, then issue the refund",
        ),
        (
            "tool \u{e9}",
            json!({"z": [1, 2.5, 0.000_001, 1e16, -0.0, null, true], "a": "\u{e9}\n\u{1f}\""}),
            "na\u{ef}ve \u{2713}",
        ),
        ("", json!(null), ""),
    ];
    let script = "import json, sys\n\
                  from symfonic_evals_protocol import procedure_identity\n\
                  for line in sys.stdin:\n    \
                  tool, precondition, text = json.loads(line)\n    \
                  print(procedure_identity(tool, precondition, text))\n";
    let input: String = cases
        .iter()
        .map(|(tool, pre, text)| format!("{}\n", json!([tool, pre, text])))
        .collect();
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../python");
    let mut child = Command::new("python3")
        .args(["-c", script])
        .env("PYTHONPATH", python)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), input.as_bytes())
        .expect("the cases are written");
    let output = child.wait_with_output().expect("python3 answers");
    assert!(output.status.success(), "{output:?}");
    let digests: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let expected: Vec<String> = cases
        .iter()
        .map(|(tool, pre, text)| procedure_identity(tool, pre, text))
        .collect();
    assert_eq!(digests, expected);
}

// The asyncio desk, run by the interpreter of a virtualenv the companion
// package was pip-installed into.

fn run_async_desk(pack: Pack) -> PackRun {
    let python = venv_python(&["./python"]);
    // The desk's own directory is on its path, the checkout's package is not.
    let imported = Command::new(&python)
        .args([
            "-c",
            "import symfonic_evals_protocol as p; print(p.__file__)",
        ])
        .current_dir(python::desk_dir())
        .output()
        .expect("the virtualenv's interpreter runs");
    let location = String::from_utf8_lossy(&imported.stdout);
    assert!(
        location.contains("site-packages"),
        "the companion package is imported from {location}"
    );
    let spec = python::async_spec(&python);
    run_pack(
        &format!("python.async.{}", python::definition(pack).kind().name()),
        &python::definition(pack),
        &python::run_options(),
        move |ctx| start(ctx, &spec),
    )
}

#[test]
fn the_asyncio_desk_passes_the_procedural_pack() {
    run_async_desk(Pack::Procedural).assert_passed();
}

#[test]
fn the_asyncio_desk_passes_the_approval_pack() {
    run_async_desk(Pack::ApprovalResume).assert_passed();
}

#[test]
fn the_asyncio_desk_passes_the_extension_pack() {
    run_async_desk(Pack::ExtensionTool).assert_passed();
}

/// The exactly-once twins keep the procedural and extension packs green:
/// without a crash nothing tells them from the reference. The approval
/// pack crashes inside its resume, and that probe alone catches them;
/// two effects sharing a key show in its every approved run, the seed's
/// first, where the effect oracle counts both rows against one applied
/// effect; a notice of the escalation's own tool under its key, where the
/// escalation's attempts are counted.
#[test]
fn exactly_once_twins_pass_every_other_pack() {
    let runs = all_twins()
        .filter(|t| t.pack == Pack::ExactlyOnce)
        .flat_map(|twin| {
            [Pack::Procedural, Pack::ApprovalResume, Pack::ExtensionTool].map(|pack| (twin, pack))
        });
    side_by_side(runs, |(twin, pack)| {
        let spec = spec(Some(twin.name));
        let run = run_pack(
            &format!("python.twin.{}-vs-{pack:?}", twin.name),
            &python::definition(pack),
            &python::run_options(),
            move |ctx| start(ctx, &spec),
        );
        // No other pack moves the clock, so a key from the clock's
        // hour passes them all.
        if pack == Pack::ApprovalResume && twin.name == "brief-shares-escalation-key" {
            assert!(
                run.failed_scenarios()
                    .contains(&"approval-pause-resume-and-replay-refusal"),
                "{}:\n{}",
                twin.name,
                run.render()
            );
        } else if pack == Pack::ApprovalResume && twin.name == "notice-shares-escalation-key" {
            // The notice refused under the escalation's key is one more
            // attempt of the escalation than one approval makes, which
            // every probe counting its attempts under exact retries sees.
            assert_eq!(
                run.failed_scenarios(),
                [
                    "approval/restart-between-pause-and-resume",
                    "approval/one-of-two",
                    "approval/foreign-answer",
                    "approval/gated-action",
                ],
                "{}:\n{}",
                twin.name,
                run.render()
            );
        } else if pack == Pack::ApprovalResume && twin.name != "key-from-clock-hour" {
            assert_eq!(
                run.failed_scenarios(),
                ["approval/crash-inside-resume"],
                "{}:\n{}",
                twin.name,
                run.render()
            );
        } else {
            assert!(
                run.passed(),
                "{} under {pack:?}:\n{}",
                twin.name,
                run.render()
            );
        }
    });
}

/// Every scenario the Python desk runs (seed and each probe) is where some
/// twin is caught: no probe goes unshown over the protocol.
#[test]
fn every_scenario_the_python_desk_runs_catches_a_twin() {
    for pack in [
        Pack::Procedural,
        Pack::ApprovalResume,
        Pack::ExtensionTool,
        Pack::ExactlyOnce,
    ] {
        // The Python desk binds no MCP fixture (it declares no
        // `mcp-fixture`), so the fixture's probe never runs against it; nor
        // does it hold a call a person may edit (it asks through
        // `ask_user`, and declares no `editable-calls`), so neither does
        // the edited-call probe, which the Pydantic AI desk's twin shows
        // over the protocol.
        let scenarios = python::definition(pack).scenarios();
        for scenario in scenarios.iter().filter(|s| {
            !["extension/mcp-fixture", "approval/edited-call"].contains(&s.name.as_str())
        }) {
            let caught = all_twins()
                .filter(|t| t.pack == pack && t.catch.scenario == scenario.name)
                .count();
            assert!(caught >= 1, "no Python twin is caught by {}", scenario.name);
        }
    }
}

/// Quoting the child's stderr in errors changes nothing about crashes: the
/// approval pack's crash inside the resume and every crash of the
/// exactly-once pack are injected, the desk rebuilt and the request sent
/// again, with a desk that writes to stderr before it starts (a fresh
/// interpreter behind a shell), and with the desk forked by the fork
/// server.
#[test]
fn every_crash_probe_runs_with_the_stderr_tail_quoted() {
    let script = python::desk_dir().join("helpdesk.py");
    let talkative = symfonic_evals::process::ProcessSpec::new("sh")
        .arg("-c")
        .arg("echo 'desk starting' >&2; exec python3 \"$0\" \"$@\"")
        .arg(script)
        .include_stderr_tail(true);
    let forked = python::spec(None).include_stderr_tail(true);
    assert!(forked.forks());
    let runs = [talkative, forked]
        .into_iter()
        .zip(["spawned", "forked"])
        .flat_map(|(spec, how)| {
            [
                (Pack::ApprovalResume, "approval/crash-inside-resume"),
                (Pack::ExactlyOnce, "exactly-once-effects"),
            ]
            .map(|pair| (spec.clone(), how, pair))
        });
    side_by_side(runs, |(spec, how, (pack, crashes))| {
        let run = run_pack(
            &format!("python.stderr-tail.{how}.{pack:?}"),
            &python::definition(pack),
            &python::run_options(),
            move |ctx| start(ctx, &spec),
        );
        run.assert_passed();
        let crashed = run
            .scenario(crashes)
            .unwrap_or_else(|| panic!("{crashes} ran:\n{}", run.render()));
        let labels: Vec<&str> = crashed.trials[0]
            .steps
            .iter()
            .map(|step| step.label.as_str())
            .filter(|label| label.contains("killed") || label.contains("crash at"))
            .collect();
        assert!(!labels.is_empty(), "{crashes} crashed:\n{}", run.render());
    });
}
