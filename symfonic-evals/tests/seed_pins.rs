//! Each pack's seed scenario, pinned step by step against the source
//! documents that fix it: labels, inputs, conversations, states, restarts,
//! expected errors and every assertion with its parameters. Probes may vary
//! the seed's shape; the seed itself is the contract and must not drift.

use crate::common;

use std::collections::BTreeMap;

use serde_json::json;
use symfonic_evals::{
    Assertion, ErrorMatch, Expect, PackDefinition, Restart, Role, ScenarioKind, StageOutcome, Step,
    StepInput,
};

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

fn prompt_of(step: &Step) -> &str {
    match &step.input {
        StepInput::Prompt(text) => text,
        StepInput::Resume { .. } => panic!("{} is a resume", step.label),
        StepInput::Review(_) => panic!("{} is a review", step.label),
        StepInput::Reset => panic!("{} is a reset", step.label),
    }
}

#[test]
fn the_procedural_seed_is_the_documented_six_steps() {
    let pack = common::procedural_pack();
    let scenario = PackDefinition::Procedural(pack.clone()).seed_scenario();
    assert_eq!(scenario.name, "procedural-review-and-enforcement");
    assert_eq!(scenario.kind, ScenarioKind::Seed);
    assert!(scenario.tail.is_none());
    let labels: Vec<&str> = scenario.steps.iter().map(|s| s.label.as_str()).collect();
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
    for step in &scenario.steps {
        assert_eq!(step.conversation, "procedural", "{}", step.label);
        assert_eq!(step.expect, Expect::Record, "{}", step.label);
        assert_eq!(step.crash_at_effect, None);
    }
    let [d1, d2, draft, review, satisfied, blocked] = &scenario.steps[..] else {
        unreachable!()
    };
    assert_eq!(prompt_of(d1), pack.demonstrations[0]);
    assert!(
        d1.assertions.is_empty(),
        "only the last demonstration asserts"
    );
    assert_eq!(prompt_of(d2), pack.demonstrations[1]);
    assert_eq!(
        d2.assertions,
        [Assertion::AttributeCount {
            name: "procedural_promoted".into(),
            minimum: 1
        }]
    );

    assert_eq!(prompt_of(draft), pack.draft_prompt);
    assert_eq!(draft.state.as_ref(), Some(&pack.draft_state));
    assert_eq!(
        draft.assertions,
        [
            Assertion::attribute_equals("procedural_review", json!([["draft", ""]])),
            Assertion::attribute_equals("procedural_enforcement_ids", json!([])),
            Assertion::PromptRecallExcludes(pack.procedure_fragment.clone()),
            Assertion::tool_succeeded("issue_refund", 1),
            Assertion::ledger(1, 1, 0),
        ]
    );

    let approved = json!([["approved", "issue_refund"]]);
    assert_eq!(prompt_of(review), pack.review_prompt);
    assert_eq!(
        review.role,
        Role::Operator,
        "the seed calls it the operator turn"
    );
    assert_eq!(review.state, None);
    assert_eq!(
        review.assertions,
        [Assertion::attribute_equals(
            "procedural_review",
            approved.clone()
        )]
    );

    let same_ids = Assertion::same_non_empty("procedural_review_ids", "procedural_enforcement_ids");
    assert_eq!(prompt_of(satisfied), pack.satisfied_prompt);
    assert_eq!(satisfied.state.as_ref(), Some(&pack.satisfied_state));
    assert_eq!(
        satisfied.restart,
        Restart::KillBefore,
        "restart_before_enforcement defaults on, and a restart is a kill"
    );
    assert_eq!(
        satisfied.assertions,
        [
            Assertion::attribute_equals("procedural_review", approved),
            same_ids.clone(),
            Assertion::PromptRecallContains(pack.procedure_fragment.clone()),
            Assertion::StageObserved {
                stage: "procedural_precondition".into(),
                outcome: None,
                minimum_counts: counts(&[("checked", 1)]),
            },
            Assertion::tool_succeeded("issue_refund", 1),
            Assertion::ledger(2, 2, 0),
        ]
    );

    assert_eq!(prompt_of(blocked), pack.blocked_prompt);
    assert_eq!(blocked.state.as_ref(), Some(&pack.blocked_state));
    assert_eq!(blocked.restart, Restart::No);
    assert_eq!(
        blocked.assertions,
        [
            same_ids,
            Assertion::StageObserved {
                stage: "procedural_precondition".into(),
                outcome: Some(StageOutcome::Rejected),
                minimum_counts: counts(&[("refused", 1)]),
            },
            Assertion::tool_called("issue_refund", 1),
            Assertion::tool_succeeded("issue_refund", 0),
            // The refused call performed nothing, and no route reached the
            // governed effect; the ledger's totals are not read, so a log
            // of the request under its own tool and key is allowed.
            Assertion::GovernedEffectWithheld {
                tool: "issue_refund".into(),
                stage: "procedural_precondition".into(),
            },
        ]
    );
}

#[test]
fn the_approval_seed_is_pause_resume_replay_with_no_restart() {
    let pack = common::approval_pack();
    let tool = pack.interaction_tool.clone();
    let scenario = PackDefinition::ApprovalResume(pack.clone()).seed_scenario();
    assert_eq!(scenario.name, "approval-pause-resume-and-replay-refusal");
    let [pause, resume, replay] = &scenario.steps[..] else {
        panic!("three steps")
    };
    for step in [pause, resume, replay] {
        assert_eq!(step.conversation, "approval");
        assert_eq!(step.restart, Restart::No, "the seed places no restart");
        assert_eq!(step.state, None);
    }
    assert_eq!(prompt_of(pause), pack.pause_prompt);
    assert_eq!(
        pause.assertions,
        [
            Assertion::attribute_equals("paused", json!(true)),
            Assertion::attribute_equals("pause_name", json!(tool)),
            Assertion::attribute_equals("pause_resumable", json!(true)),
        ]
    );
    let StepInput::Resume { answer, .. } = &resume.input else {
        panic!("the middle step resumes")
    };
    assert_eq!(answer, &pack.answer);
    assert_eq!(
        resume.assertions,
        [
            Assertion::attribute_equals("resume_outcome", json!("resumed")),
            Assertion::attribute_equals("resume_name", json!(tool)),
            Assertion::attribute_equals("resume_checkpoint", json!(true)),
            Assertion::attribute_equals("resume_continued", json!(true)),
            Assertion::tool_called(&tool, 0),
        ]
    );
    assert!(matches!(replay.input, StepInput::Resume { .. }));
    assert!(replay.assertions.is_empty());
    assert_eq!(
        replay.expect,
        Expect::Error(ErrorMatch::one_of(["PauseTokenReplayedError"]))
    );
}

#[test]
fn the_extension_seed_is_one_turn() {
    let pack = common::extension_pack();
    let scenario = PackDefinition::ExtensionTool(pack.clone()).seed_scenario();
    assert_eq!(scenario.name, "extension-tool-execution");
    let [call] = &scenario.steps[..] else {
        panic!("one step")
    };
    assert_eq!(call.conversation, "extensions");
    assert_eq!(prompt_of(call), pack.prompt);
    assert_eq!(
        call.assertions,
        [
            Assertion::ToolCalled {
                tool: "weather_lookup".into(),
                times: 1,
                arguments: pack.arguments.clone(),
                matching: symfonic_evals::ArgumentMatch::Exact,
            },
            Assertion::tool_succeeded("weather_lookup", 1),
            Assertion::ToolCallIdsUnique {
                minimum: 1,
                across_trial: false
            },
            Assertion::ResponseContains(pack.expected_fragments.clone()),
        ]
    );
}

#[test]
fn a_pack_runs_its_seed_first_then_each_default_probe_once() {
    for definition in [
        common::procedural(common::procedural_pack()),
        common::approval(common::approval_pack()),
        common::extension(common::extension_pack()),
    ] {
        let kind = definition.kind();
        let scenarios = definition.scenarios();
        assert_eq!(scenarios[0], definition.seed_scenario());
        let probes: Vec<&str> = scenarios[1..].iter().map(|s| s.name.as_str()).collect();
        let defaults: Vec<&str> = kind
            .probes()
            .iter()
            .filter(|p| p.needs.is_none())
            .map(|p| p.name)
            // One of the procedural pack's two placement probes runs: the one
            // the seed's own placement leaves out.
            .filter(|name| *name != "procedural/enforcement-after-restart")
            .collect();
        assert_eq!(probes, defaults, "{}", kind.name());
        assert!(scenarios[1..].iter().all(|s| s.kind == ScenarioKind::Probe));
    }
}

#[test]
fn a_skipped_probe_does_not_run_and_an_unknown_one_is_refused() {
    let mut pack = common::approval_pack();
    pack.skip_probes = vec!["approval/forged-token".into()];
    let definition = common::approval(pack.clone());
    assert!(definition.check().is_ok());
    assert!(!definition
        .scenarios()
        .iter()
        .any(|s| s.name == "approval/forged-token"));
    pack.skip_probes = vec!["approval/forged-tokens".into()];
    let errors = common::approval(pack).check().unwrap_err();
    assert_eq!(errors[0].argument, "skip_probes");
    assert!(
        errors[0].message.contains("approval/forged-token,"),
        "{}",
        errors[0]
    );
}
