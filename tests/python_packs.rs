//! All three packs against a deployment written in Python, driven as a child
//! process over the protocol, with the restarts real process restarts. Needs
//! only `python3` (standard library).
#![cfg(unix)]

use helpdesk::python::{approval, extension, procedural, spec, start};
use symfonic_evals::{run_pack, PackDefinition, PackRun, ProcessTarget, RunOptions, TargetContext};
use symfonic_evals_e2e::fails_at;

// The faithful deployment, through the attribute macros exactly as an adopter
// writes them: the annotated function returns the process target.

#[symfonic_evals::procedural_pack(
    demonstrations = [
        "walk me through refunding order 1: verify the account region, then issue the refund",
        "walk me through refunding order 2: verify the account region, then issue the refund",
    ],
    draft_prompt = "refund order 3", draft_state = { "region": "EU" },
    review_prompt = "approve the refund procedure: governs issue_refund when region eq US",
    satisfied_prompt = "refund order 4", satisfied_state = { "region": "US" },
    blocked_prompt = "refund order 5", blocked_state = { "region": "EU" },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    trials = 2,
)]
fn python_helpdesk_procedures(ctx: &TargetContext) -> ProcessTarget {
    start(ctx, &spec(None))
}

#[symfonic_evals::approval_resume_pack(
    pause_prompt = "escalate ticket 7 to a supervisor",
    answer = { "approved": true },
    interaction_tool = "ask_user",
)]
fn python_helpdesk_approvals(ctx: &TargetContext) -> ProcessTarget {
    start(ctx, &spec(None))
}

#[symfonic_evals::extension_tool_pack(
    prompt = "what is the weather in Lisbon",
    tool_name = "weather_lookup",
    arguments = { "city": "Lisbon" },
    expected_fragments = ["Lisbon", "sunny"],
)]
fn python_helpdesk_weather(ctx: &TargetContext) -> ProcessTarget {
    start(ctx, &spec(None))
}

// The broken twins, through `run_pack`, each failing on the assertion that
// names its flaw.

fn run(name: &str, pack: &PackDefinition, twin: Option<&'static str>) -> PackRun {
    let spec = spec(twin);
    run_pack(name, pack, &RunOptions::default(), move |ctx| {
        start(ctx, &spec)
    })
}

#[test]
fn tokens_spent_only_in_memory_are_replayable_after_a_restart() {
    let run = run(
        "python.twin.tokens_in_memory",
        &approval(),
        Some("tokens-in-memory"),
    );
    let failure = fails_at(&run, "replay", "ExpectedError");
    // Why the placement probe exists: the seed scenario alone cannot tell.
    assert_eq!(failure.scenario, "approval/restart-before-replay");
    assert!(
        run.seed().is_some_and(|seed| seed.passed()),
        "{}",
        run.render()
    );
}

#[test]
fn an_approval_that_never_reached_the_store_is_lost_across_the_restart() {
    let run = run(
        "python.twin.review_in_memory",
        &procedural(),
        Some("review-in-memory"),
    );
    let failure = fails_at(&run, "satisfied", "AttributeEquals");
    assert_eq!(failure.description, "AttributeEquals(procedural_review)");
}

#[test]
fn a_gate_that_ignores_state_does_not_refuse_the_blocked_turn() {
    let run = run(
        "python.twin.gate_ignores_state",
        &procedural(),
        Some("gate-ignores-state"),
    );
    fails_at(&run, "blocked", "StageObserved");
    let kinds: Vec<String> = run.failures().into_iter().map(|f| f.assertion).collect();
    assert!(kinds.contains(&"SideEffectCount".to_owned()), "{kinds:?}");
}

#[test]
fn a_draft_shown_to_the_model_fails_the_draft_probe() {
    let run = run(
        "python.twin.draft_in_recall",
        &procedural(),
        Some("draft-in-recall"),
    );
    fails_at(&run, "draft probe", "PromptRecallExcludes");
}

#[test]
fn a_declared_extension_with_nothing_bound_fails_to_run() {
    let run = run(
        "python.twin.extension_unbound",
        &extension(),
        Some("extension-unbound"),
    );
    fails_at(&run, "extension call", "ToolSucceeded");
}
