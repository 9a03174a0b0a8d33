//! The pack attributes end to end: each one against a faithful in-test
//! deployment (which must pass) and a broken twin (which must fail with the
//! assertion that catches its flaw), plus the registry the expansions fill.
//!
//! The file denies every warning and clippy's pedantic group, so the
//! generated code is held to the strictest lint level an adopter might use.
#![deny(warnings, clippy::pedantic)]

#[path = "macros_e2e/approval.rs"]
mod approval;
#[path = "macros_e2e/extension.rs"]
mod extension;
#[path = "macros_e2e/procedural.rs"]
mod procedural;

use symfonic_evals::{
    approval_resume_pack, check_capability_coverage, extension_tool_pack, procedural_pack,
    registered_packs, CapabilityEvidence, PackDefinition, PackKind, RegisteredPack, Target,
    TargetContext,
};

use approval::{Approvals, Tokens};
use extension::{AsyncWeather, Binding, Weather};
use procedural::{Gate, Refunds};

#[procedural_pack(
    demonstrations = ["refund order 1", "refund order 2"],
    draft_prompt = "refund order 3", draft_state = { "region": "EU" },
    review_prompt = "approve the refund procedure: governs issue_refund when region eq US",
    satisfied_prompt = "refund order 4", satisfied_state = { "region": "US", tier: 2 },
    blocked_prompt = "refund order 5", blocked_state = { region: "EU", tier: 2 },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    retries = "same_key",
)]
fn refund_rule(ctx: &TargetContext) -> Refunds {
    Refunds::open(ctx, Gate::Enforcing)
}

#[procedural_pack(
    demonstrations = ["refund order 1", "refund order 2"],
    draft_prompt = "refund order 3", draft_state = { "region": "EU" },
    review_prompt = "approve the refund procedure: governs issue_refund when region eq US",
    satisfied_prompt = "refund order 4", satisfied_state = file("macros_e2e/fixtures/satisfied.json"),
    blocked_prompt = "refund order 5", blocked_state = file("macros_e2e/fixtures/blocked.json"),
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    restart_before_enforcement = true,
    trials = 2, require = 2, step_timeout_ms = 10_000,
)]
fn refund_rule_from_fixtures(ctx: &TargetContext) -> Refunds {
    Refunds::open(ctx, Gate::Enforcing)
}

#[procedural_pack(
    demonstrations = ["refund order 1", "refund order 2"],
    draft_prompt = "refund order 3", draft_state = { "region": "EU" },
    review_prompt = "approve the refund procedure: governs issue_refund when region eq US",
    satisfied_prompt = "refund order 4", satisfied_state = { "region": "US" },
    blocked_prompt = "refund order 5", blocked_state = { "region": "EU" },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
)]
#[should_panic(expected = "ToolSucceeded(issue_refund, times=0)")]
fn refund_rule_refusal_that_ran_anyway(ctx: &TargetContext) -> Refunds {
    Refunds::open(ctx, Gate::RunsRefusedCalls)
}

#[approval_resume_pack(
    pause_prompt = "refund order 9, which needs a manager",
    answer = { approved: true, note: "ok", limits: { max: 10 }, tags: ["a", null, 1.5] },
    interaction_tool = "approve_refund",
)]
fn refund_approval(ctx: &TargetContext) -> Approvals {
    Approvals::open(ctx, Tokens::SingleUse)
}

#[approval_resume_pack(
    pause_prompt = "refund order 9, which needs a manager",
    answer = { "approved": true },
    interaction_tool = "approve_refund",
    resumable = true,
    replay_error = "PauseTokenReplayedError",
    conversation = "approval-after-restart",
    retries = "same_key",
)]
fn refund_approval_across_restart(ctx: &TargetContext) -> Approvals {
    Approvals::open(ctx, Tokens::SingleUse)
}

#[approval_resume_pack(
    pause_prompt = "refund order 9, which needs a manager",
    answer = { "approved": true },
    interaction_tool = "approve_refund",
)]
#[should_panic(expected = "ExpectedError")]
fn refund_approval_replayable(ctx: &TargetContext) -> Approvals {
    Approvals::open(ctx, Tokens::Reusable)
}

#[extension_tool_pack(
    prompt = "what is the weather in Oslo?",
    tool_name = "weather_lookup",
    arguments = { city: "Oslo" },
    expected_fragments = ["Oslo", "degrees"],
)]
fn weather(ctx: &TargetContext) -> Weather {
    Weather::open(ctx, Binding::Implemented)
}

#[extension_tool_pack(
    prompt = "what is the weather in Oslo?",
    tool_name = "weather_lookup",
    arguments = { "city": "Oslo" },
    expected_fragments = ["Oslo", "degrees"],
)]
async fn weather_async(ctx: &TargetContext) -> AsyncWeather {
    AsyncWeather::connect(ctx).await
}

#[extension_tool_pack(prompt = "what is the weather in Oslo?", tool_name = "weather_lookup")]
#[should_panic(expected = "ToolSucceeded(weather_lookup, times=1)")]
fn weather_declared_only(ctx: &TargetContext) -> Weather {
    Weather::open(ctx, Binding::DeclaredOnly)
}

#[extension_tool_pack(
    prompt = "what is the weather in Oslo?",
    tool_name = "weather_lookup",
    accept_not_applicable = true
)]
fn weather_without_extensions_accepted(_: &TargetContext) -> impl Target {
    Weather::without_extensions()
}

#[extension_tool_pack(prompt = "what is the weather in Oslo?", tool_name = "weather_lookup")]
#[should_panic(expected = "capability `extensions` is not declared")]
fn weather_without_extensions(_: &symfonic_evals::TargetContext) -> Weather {
    Weather::without_extensions()
}

fn registered(name: &str) -> &'static RegisteredPack {
    registered_packs()
        .into_iter()
        .find(|pack| pack.name() == name)
        .unwrap_or_else(|| panic!("`{name}` is registered"))
}

#[test]
fn every_pack_in_this_binary_is_registered_with_its_path_and_kind() {
    let packs = registered_packs();
    assert_eq!(packs.len(), 11);
    let paths: Vec<String> = packs.iter().map(|pack| pack.path()).collect();
    assert!(paths.contains(&"refund_rule".to_owned()), "{paths:?}");
    // Each path selects exactly its own test under `--exact`.
    for pack in &packs {
        let listed = std::process::Command::new(std::env::current_exe().unwrap())
            .args([pack.path().as_str(), "--exact", "--list"])
            .output()
            .expect("the test binary lists its tests");
        let listed = String::from_utf8_lossy(&listed.stdout);
        let tests: Vec<&str> = listed
            .lines()
            .filter_map(|l| l.strip_suffix(": test"))
            .collect();
        assert_eq!(tests, [pack.path()], "{listed}");
    }
    assert_eq!(registered("refund_rule").kind(), PackKind::Procedural);
    assert_eq!(
        registered("refund_approval").kind(),
        PackKind::ApprovalResume
    );
    assert_eq!(registered("weather_async").kind(), PackKind::ExtensionTool);
    let (file, line) = registered("refund_rule").location();
    assert!(file.ends_with("macros_e2e.rs"), "{file}");
    let source = include_str!("macros_e2e.rs");
    let function = source
        .lines()
        .position(|l| l.starts_with("fn refund_rule(ctx"))
        .expect("the function in this file");
    let attribute = source.lines().take(function).collect::<Vec<_>>();
    let attribute = attribute
        .iter()
        .rposition(|l| l.starts_with("#[procedural_pack("))
        .expect("its attribute");
    assert_eq!(line as usize, attribute + 1, "the line of the attribute");
}

#[test]
fn fingerprints_follow_the_definition_not_its_spelling() {
    // Same definition, written with bare and quoted keys, sync and async.
    assert_eq!(
        registered("weather").fingerprint(),
        registered("weather_async").fingerprint()
    );
    assert_ne!(
        registered("weather").fingerprint(),
        registered("weather_declared_only").fingerprint()
    );
    // The fixture's contents are fingerprinted, not its path: the same pack
    // written with the contents inline fingerprints alike.
    let inline = PackDefinition::from_arguments(
        PackKind::Procedural,
        &serde_json::json!({
            "demonstrations": ["refund order 1", "refund order 2"],
            "draft_prompt": "refund order 3", "draft_state": { "region": "EU" },
            "review_prompt": "approve the refund procedure: governs issue_refund when region eq US",
            "satisfied_prompt": "refund order 4", "satisfied_state": { "region": "US", "tier": 2 },
            "blocked_prompt": "refund order 5", "blocked_state": { "region": "EU", "tier": 2 },
            "action_tool": "issue_refund",
            "procedure_fragment": "verify the account region",
            "policy": { "trials": 2, "required": 2, "step_timeout_ms": 10_000 },
        })
        .to_string(),
    )
    .unwrap();
    assert_eq!(
        registered("refund_rule_from_fixtures").fingerprint(),
        inline.fingerprint()
    );
    assert_ne!(
        registered("refund_rule").fingerprint(),
        inline.fingerprint(),
        "the policy is part of the definition"
    );
    assert_eq!(registered("refund_rule").fingerprint().len(), 64);
}

#[test]
fn the_registry_runs_a_pack_outside_the_test_harness() {
    let failure = registered("refund_approval_replayable")
        .run()
        .first_failure()
        .unwrap();
    assert_eq!(
        (failure.step_label.as_str(), failure.assertion.as_str()),
        ("replay", "ExpectedError")
    );
    let failure = registered("refund_rule_refusal_that_ran_anyway")
        .run()
        .first_failure()
        .unwrap();
    assert_eq!(failure.step_label, "blocked");
    assert_eq!(failure.description, "ToolSucceeded(issue_refund, times=0)");
    let failure = registered("weather_declared_only")
        .run()
        .first_failure()
        .unwrap();
    assert_eq!(failure.assertion, "ToolSucceeded");
    assert!(registered("refund_rule_from_fixtures").run().passed());
}

#[test]
fn coverage_names_a_declared_capability_no_pack_exercises() {
    let declared = CapabilityEvidence::new()
        .capability("tools")
        .capability("human")
        .contributes("extensions", "weather_lookup");
    assert!(check_capability_coverage(&declared).is_ok());
    // Broken twins (`#[should_panic]`) are registered but exercise nothing.
    assert!(registered("weather").expected_to_pass());
    assert!(!registered("weather_declared_only").expected_to_pass());
    let error = check_capability_coverage(&declared.capability("memory")).unwrap_err();
    assert_eq!(error.capabilities, ["memory"]);
    assert!(error
        .to_string()
        .contains("capability `memory` is declared"));
}
