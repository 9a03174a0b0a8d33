//! A pack refuses arguments that could not discriminate, naming each one, and
//! a pack that does not apply says exactly what the deployment lacks and never
//! passes silently.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::approval::ManagerDesk;
use common::extension::WeatherDesk;
use common::procedural::RefundDesk;
use serde_json::{json, Value};
use symfonic_evals::{
    run_pack, CapabilityEvidence, Missing, PackDefinition, PromptRequest, RunOptions, Target,
    TrialPolicy, TurnError, TurnRecord, Verdict, PROCEDURAL_PRECONDITION, PROCEDURAL_REVIEW,
};

/// A deployment that declares `evidence` and must never be asked to run a turn.
struct Declares(CapabilityEvidence);

impl Target for Declares {
    fn capabilities(&self) -> CapabilityEvidence {
        self.0.clone()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        panic!("a pack that does not apply must not run a turn")
    }
}

/// One way to spoil a pack's arguments.
type Spoil<P> = Box<dyn Fn(&mut P)>;

/// Runs `definition` and returns the invalid arguments it named; the factory
/// must not even be called.
fn invalid_arguments(definition: &PackDefinition) -> Vec<String> {
    let built = Arc::new(AtomicUsize::new(0));
    let counter = built.clone();
    let run = run_pack(
        "arguments.invalid",
        definition,
        &RunOptions::default(),
        move |ctx| {
            counter.fetch_add(1, Ordering::SeqCst);
            RefundDesk::open(ctx, None)
        },
    );
    assert_eq!(
        built.load(Ordering::SeqCst),
        0,
        "built despite bad arguments"
    );
    assert!(!run.passed());
    let rendered = run.render();
    assert!(rendered.contains("INVALID ARGUMENTS"), "{rendered}");
    match run.verdict() {
        Verdict::InvalidArguments(errors) => errors.clone(),
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

/// Asserts that the only argument named is `argument`.
fn names_only(definition: PackDefinition, argument: &str) {
    let errors = invalid_arguments(&definition);
    let prefix = format!("`{argument}`:");
    assert!(
        !errors.is_empty() && errors.iter().all(|e| e.starts_with(&prefix)),
        "expected only {argument}, got {errors:?}"
    );
}

#[test]
fn each_bad_procedural_argument_is_named() {
    let pack = common::procedural_pack;
    let cases: Vec<(&str, Spoil<symfonic_evals::ProceduralPack>)> = vec![
        ("demonstrations", Box::new(|p| p.demonstrations.clear())),
        (
            "demonstrations",
            Box::new(|p| p.demonstrations.push(String::new())),
        ),
        ("action_tool", Box::new(|p| p.action_tool.clear())),
        ("draft_prompt", Box::new(|p| p.draft_prompt.clear())),
        ("draft_state", Box::new(|p| p.draft_state = json!({}))),
        ("draft_state", Box::new(|p| p.draft_state = Value::Null)),
        ("draft_state", Box::new(|p| p.draft_state = json!(["US"]))),
        (
            "blocked_state",
            Box::new(|p| p.blocked_state = p.satisfied_state.clone()),
        ),
        (
            "procedure_fragment",
            Box::new(|p| p.procedure_fragment.clear()),
        ),
        ("review_prompt", Box::new(|p| p.review_prompt.clear())),
        (
            "precondition_stage",
            Box::new(|p| p.precondition_stage.clear()),
        ),
        ("policy", Box::new(|p| p.policy.trials = 0)),
    ];
    for (argument, spoil) in cases {
        let mut definition = pack();
        spoil(&mut definition);
        names_only(common::procedural(definition), argument);
    }
}

#[test]
fn an_empty_enforcement_state_is_named_with_the_sameness_it_causes() {
    // Emptying one state both empties it and (with the other emptied too)
    // makes the two equal; every fault is reported at once.
    let mut pack = common::procedural_pack();
    pack.satisfied_state = json!({});
    pack.blocked_state = json!({});
    let errors = invalid_arguments(&common::procedural(pack));
    let named: Vec<&str> = errors
        .iter()
        .map(|e| e.split('`').nth(1).unwrap_or(""))
        .collect();
    assert_eq!(named, ["satisfied_state", "blocked_state", "blocked_state"]);
    assert!(errors[2].contains("equals satisfied_state"), "{errors:?}");
}

#[test]
fn each_bad_approval_argument_is_named() {
    let cases: Vec<(&str, Spoil<symfonic_evals::ApprovalResumePack>)> = vec![
        ("interaction_tool", Box::new(|p| p.interaction_tool.clear())),
        ("answer", Box::new(|p| p.answer = Value::Null)),
        ("answer", Box::new(|p| p.answer = json!({}))),
        ("answer", Box::new(|p| p.answer = json!(""))),
        ("pause_prompt", Box::new(|p| p.pause_prompt.clear())),
        ("replay_error", Box::new(|p| p.replay_error.clear())),
        ("policy", Box::new(|p| p.policy.required = 2)),
    ];
    for (argument, spoil) in cases {
        let mut definition = common::approval_pack();
        spoil(&mut definition);
        names_only(common::approval(definition), argument);
    }
}

#[test]
fn each_bad_extension_argument_is_named() {
    let cases: Vec<(&str, Spoil<symfonic_evals::ExtensionToolPack>)> = vec![
        ("tool_name", Box::new(|p| p.tool_name.clear())),
        ("prompt", Box::new(|p| p.prompt.clear())),
        (
            "expected_fragments",
            Box::new(|p| p.expected_fragments.push(String::new())),
        ),
        (
            "policy",
            Box::new(|p| p.policy.step_timeout = std::time::Duration::ZERO),
        ),
        (
            "second_prompt",
            Box::new(|p| p.second_prompt = Some(p.prompt.clone())),
        ),
        (
            "second_prompt",
            Box::new(|p| p.second_prompt = Some(String::new())),
        ),
        (
            "second_arguments",
            Box::new(|p| p.second_arguments = Some(serde_json::json!({ "city": "Bergen" }))),
        ),
        (
            "second_arguments",
            Box::new(|p| {
                p.second_prompt = Some("and in Bergen?".into());
                p.second_arguments.clone_from(&p.arguments);
            }),
        ),
        (
            "second_arguments",
            Box::new(|p| {
                p.second_prompt = Some("and in Bergen?".into());
                p.second_arguments = Some(serde_json::json!(["Bergen"]));
            }),
        ),
    ];
    for (argument, spoil) in cases {
        let mut definition = common::extension_pack();
        spoil(&mut definition);
        names_only(common::extension(definition), argument);
    }
}

#[test]
fn the_default_policy_is_one_trial_of_thirty_seconds() {
    assert_eq!(
        TrialPolicy::default(),
        TrialPolicy {
            trials: 1,
            required: 1,
            step_timeout: std::time::Duration::from_secs(30),
            concurrency: 0,
        }
    );
}

fn not_applicable(definition: &PackDefinition, evidence: CapabilityEvidence) -> Vec<Missing> {
    let run = run_pack(
        "arguments.not_applicable",
        definition,
        &RunOptions::default(),
        move |_| Declares(evidence.clone()),
    );
    assert!(!run.passed());
    let rendered = run.render();
    let refused = catch_unwind(AssertUnwindSafe(|| run.assert_passed()));
    assert!(refused.is_err(), "not applicable must fail by default");
    assert!(rendered.contains("NOT APPLICABLE"), "{rendered}");
    match run.verdict() {
        Verdict::NotApplicable(missing) => {
            for reason in missing {
                assert!(rendered.contains(&reason.to_string()), "{rendered}");
            }
            missing.clone()
        }
        other => panic!("expected not applicable, got {other:?}"),
    }
}

#[test]
fn procedural_pack_names_the_missing_capability_and_traits() {
    let definition = common::procedural(common::procedural_pack());
    assert_eq!(
        not_applicable(&definition, CapabilityEvidence::new().capability("memory")),
        [
            Missing::Capability("tools".into()),
            Missing::Trait(PROCEDURAL_PRECONDITION.into()),
            Missing::Trait(PROCEDURAL_REVIEW.into()),
        ]
    );
    let tools_and_review = CapabilityEvidence::new()
        .capability("tools")
        .with_trait(PROCEDURAL_REVIEW);
    assert_eq!(
        not_applicable(&definition, tools_and_review),
        [Missing::Trait(PROCEDURAL_PRECONDITION.into())]
    );
}

#[test]
fn approval_pack_names_the_missing_operation() {
    let definition = common::approval(common::approval_pack());
    assert_eq!(
        not_applicable(&definition, CapabilityEvidence::new().capability("human")),
        [Missing::Operation("resume".into())]
    );
    assert_eq!(
        not_applicable(&definition, CapabilityEvidence::new().operation("resume")),
        [Missing::Capability("human".into())]
    );
}

#[test]
fn extension_pack_names_the_tool_that_is_not_contributed() {
    let definition = common::extension(common::extension_pack());
    let missing_tool = [Missing::ContributedTool {
        capability: "extensions".into(),
        tool: common::extension::TOOL.into(),
    }];
    // The umbrella capability alone is not enough...
    assert_eq!(
        not_applicable(
            &definition,
            CapabilityEvidence::new().capability("extensions")
        ),
        missing_tool
    );
    // ...nor is a bundle contributing some other tool, or the tool under another capability.
    let other = CapabilityEvidence::new()
        .contributes("extensions", "stock_lookup")
        .contributes("tools", common::extension::TOOL);
    assert_eq!(not_applicable(&definition, other), missing_tool);
}

#[test]
fn accepting_not_applicable_passes_assert_without_a_pass_verdict() {
    let options = RunOptions {
        accept_not_applicable: true,
        ..RunOptions::default()
    };
    let run = run_pack(
        "arguments.accepted",
        &common::approval(common::approval_pack()),
        &options,
        |_| Declares(CapabilityEvidence::new()),
    );
    run.assert_passed();
    assert!(!run.passed(), "accepted is still not a pass");
    assert!(run.render().contains("NOT APPLICABLE (accepted)"));
}

#[test]
fn invalid_arguments_are_not_excused_by_accepting_not_applicable() {
    let mut pack = common::extension_pack();
    pack.tool_name.clear();
    let options = RunOptions {
        accept_not_applicable: true,
        ..RunOptions::default()
    };
    let run = run_pack(
        "arguments.not_excused",
        &common::extension(pack),
        &options,
        |_| WeatherDesk::with(None),
    );
    assert!(catch_unwind(AssertUnwindSafe(|| run.assert_passed())).is_err());
}

#[test]
fn faithful_desks_are_applicable_to_their_own_pack_only() {
    // The manager desk declares no tools: the procedural pack must not apply.
    let run = run_pack(
        "arguments.cross",
        &common::procedural(common::procedural_pack()),
        &RunOptions::default(),
        |ctx| ManagerDesk::open(ctx, None),
    );
    assert!(matches!(run.verdict(), Verdict::NotApplicable(_)));
}
