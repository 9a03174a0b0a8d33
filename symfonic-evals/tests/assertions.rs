//! Every assertion holds on the right evidence and fails on each kind of
//! wrong evidence, and what it reports never quotes a deployment's values.

use serde_json::{json, Value};
use symfonic_evals::{
    Assertion, Check, Evidence, LedgerCounts, Pause, StageOutcome, StageRecord, ToolCall,
    TurnRecord,
};

const NO_LEDGER: LedgerCounts = LedgerCounts {
    attempts: 0,
    effects: 0,
    duplicates: 0,
};

fn check(assertion: &Assertion, record: &TurnRecord) -> Check {
    assertion.check(&Evidence::of(record, NO_LEDGER))
}

fn holds(assertion: &Assertion, record: &TurnRecord) -> bool {
    check(assertion, record).passed
}

fn with_attribute(name: &str, value: Value) -> TurnRecord {
    TurnRecord::builder().attribute(name, value).build()
}

#[test]
fn attribute_equals_needs_the_same_json_value() {
    let rows = json!([["approved", "issue_refund"]]);
    let equals = Assertion::attribute_equals("review", rows.clone());
    assert!(holds(&equals, &with_attribute("review", rows)));

    let absent = check(&equals, &with_attribute("other", json!(1)));
    assert!(!absent.passed);
    assert_eq!(absent.observed, "review absent");

    let wrong = check(&equals, &with_attribute("review", json!([["draft", ""]])));
    assert!(!wrong.passed);
    assert!(!wrong.observed.contains("draft"), "{}", wrong.observed);

    let same_text_other_type = Assertion::attribute_equals("n", json!(1));
    assert!(!holds(
        &same_text_other_type,
        &with_attribute("n", json!("1"))
    ));
    let flag = Assertion::attribute_equals("flag", json!(true));
    assert!(!holds(&flag, &with_attribute("flag", json!("true"))));
    assert!(!holds(&flag, &with_attribute("flag", json!(1))));
    // Order inside an array matters; a row set published unsorted is different evidence.
    let pair = Assertion::attribute_equals("rows", json!([["a", ""], ["b", ""]]));
    assert!(!holds(
        &pair,
        &with_attribute("rows", json!([["b", ""], ["a", ""]]))
    ));
}

#[test]
fn pause_facts_come_from_the_terminal_event_not_from_attributes() {
    let paused = Assertion::attribute_equals("paused", json!(true));
    let name = Assertion::attribute_equals("pause_name", json!("ask_user"));
    let resumable = Assertion::attribute_equals("pause_resumable", json!(true));

    let faked = TurnRecord::builder()
        .attribute("paused", true)
        .attribute("pause_name", "ask_user")
        .attribute("pause_resumable", true)
        .build();
    assert!(!holds(&paused, &faked));
    assert_eq!(check(&name, &faked).observed, "pause_name absent");
    assert!(!holds(&resumable, &faked));

    let real = TurnRecord::builder()
        .paused(Pause::new("ask_user", true, "tok-1"))
        .attribute("paused", false)
        .attribute("pause_name", "something_else")
        .attribute("pause_resumable", false)
        .build();
    assert!(holds(&paused, &real));
    assert!(holds(&name, &real));
    assert!(holds(&resumable, &real));

    let unresumable = TurnRecord::builder()
        .paused(Pause::new("ask_user", false, "tok-2"))
        .build();
    assert!(!holds(&resumable, &unresumable));
    let other = Assertion::attribute_equals("pause_name", json!("approve_refund"));
    assert!(!holds(&other, &unresumable));
}

#[test]
fn attribute_count_reads_counts_and_collection_sizes() {
    let at_least_two = Assertion::AttributeCount {
        name: "promoted".into(),
        minimum: 2,
    };
    for value in [json!(2), json!(7), json!([1, 2]), json!({"a": 1, "b": 2})] {
        assert!(holds(&at_least_two, &with_attribute("promoted", value)));
    }
    for value in [json!(1), json!(0), json!([1]), json!({}), json!(-3)] {
        let low = check(&at_least_two, &with_attribute("promoted", value));
        assert!(!low.passed, "{}", low.observed);
    }
    let absent = check(&at_least_two, &TurnRecord::builder().build());
    assert_eq!(
        (absent.passed, absent.observed.as_str()),
        (false, "promoted absent")
    );
    // Neither a flag, nothing, nor text is a count: "0" is one character long.
    for value in [json!(true), Value::Null, json!("0"), json!("12")] {
        let wrong = check(&at_least_two, &with_attribute("promoted", value));
        assert!(!wrong.passed);
        assert_eq!(wrong.observed, "promoted is not a count or collection");
    }
}

#[test]
fn attributes_same_non_empty_needs_both_present_equal_and_non_empty() {
    let same = Assertion::same_non_empty("review_ids", "enforcement_ids");
    let both = |l: Value, r: Value| {
        TurnRecord::builder()
            .attribute("review_ids", l)
            .attribute("enforcement_ids", r)
            .build()
    };
    assert!(holds(&same, &both(json!(["id-1"]), json!(["id-1"]))));
    assert!(holds(&same, &both(json!("id-1"), json!("id-1"))));

    let empty_lists = check(&same, &both(json!([]), json!([])));
    assert!(!empty_lists.passed);
    assert_eq!(
        empty_lists.observed,
        "review_ids empty; enforcement_ids empty"
    );
    for empty in [json!({}), json!(""), Value::Null] {
        assert!(!holds(&same, &both(empty.clone(), empty)));
    }
    let differing = check(&same, &both(json!(["id-1"]), json!(["id-2"])));
    assert!(!differing.passed);
    assert!(
        !differing.observed.contains("id-"),
        "{}",
        differing.observed
    );
    assert!(!holds(
        &same,
        &both(json!(["id-1"]), json!(["id-1", "id-2"]))
    ));

    let right_absent = with_attribute("review_ids", json!(["id-1"]));
    assert!(check(&same, &right_absent)
        .observed
        .ends_with("enforcement_ids absent"));
    let left_absent = with_attribute("enforcement_ids", json!(["id-1"]));
    assert!(check(&same, &left_absent)
        .observed
        .starts_with("review_ids absent"));
    assert!(!holds(&same, &TurnRecord::builder().build()));
}

#[test]
fn prompt_recall_reads_the_model_input_not_the_answer() {
    let contains = Assertion::PromptRecallContains("verify the region".into());
    let excludes = Assertion::PromptRecallExcludes("verify the region".into());
    let recalled = TurnRecord::builder()
        .model_input("recall: verify the region first")
        .build();
    let only_answered = TurnRecord::builder()
        .answer("I will verify the region")
        .model_input("recall: nothing")
        .build();
    assert!(holds(&contains, &recalled));
    assert!(!holds(&excludes, &recalled));
    assert!(!holds(&contains, &only_answered));
    assert!(holds(&excludes, &only_answered));
    let missing = check(&contains, &only_answered);
    assert!(
        !missing.observed.contains("nothing"),
        "{}",
        missing.observed
    );
}

fn calls(calls: impl IntoIterator<Item = ToolCall>) -> TurnRecord {
    TurnRecord::builder().tool_calls(calls).build()
}

fn ok(id: &str, tool: &str, arguments: Value) -> ToolCall {
    ToolCall::succeeded(id, tool, arguments, json!("ok"))
}

#[test]
fn tool_called_counts_exactly_and_matches_arguments() {
    let once = Assertion::tool_called("refund", 1);
    assert!(holds(&once, &calls([ok("c1", "refund", json!({}))])));
    assert!(holds(
        &once,
        &calls([ok("c1", "refund", json!({})), ok("c2", "lookup", json!({}))])
    ));
    assert!(!holds(&once, &calls([])));
    assert!(!holds(&once, &calls([ok("c1", "lookup", json!({}))])));
    let twice = calls([ok("c1", "refund", json!({})), ok("c2", "refund", json!({}))]);
    assert!(!holds(&once, &twice));
    // A refused or failed call still counts as a call.
    let refused = calls([ToolCall::refused("c1", "refund", json!({}), "gate")]);
    assert!(holds(&once, &refused));
    assert!(holds(&Assertion::tool_called("refund", 0), &calls([])));

    let with_args = Assertion::ToolCalled {
        tool: "weather".into(),
        times: 1,
        arguments: Some(json!({"city": "Oslo"})),
        matching: symfonic_evals::ArgumentMatch::Exact,
    };
    assert!(holds(
        &with_args,
        &calls([ok("c1", "weather", json!({"city": "Oslo"}))])
    ));
    let mismatch = check(
        &with_args,
        &calls([ok("c1", "weather", json!({"city": "Bergen"}))]),
    );
    assert!(!mismatch.passed);
    assert!(mismatch.observed.starts_with("0 matching of 1 call(s)"));
    assert!(
        !mismatch.observed.contains("Bergen"),
        "{}",
        mismatch.observed
    );
    let extra_key = calls([ok("c1", "weather", json!({"city": "Oslo", "days": 3}))]);
    assert!(!holds(&with_args, &extra_key));
    // One matching call beside another with other arguments is two calls.
    let extra_call = calls([
        ok("c1", "weather", json!({"city": "Oslo"})),
        ToolCall::failed("c2", "weather", json!({"city": "Bergen"}), "no such city"),
    ]);
    assert!(!holds(&with_args, &extra_call));
}

#[test]
fn tool_succeeded_counts_only_calls_that_ran_and_returned() {
    let once = Assertion::tool_succeeded("refund", 1);
    assert!(holds(&once, &calls([ok("c1", "refund", json!({}))])));
    let failed = calls([ToolCall::failed("c1", "refund", json!({}), "boom")]);
    let refused = calls([ToolCall::refused("c1", "refund", json!({}), "gate")]);
    assert!(!holds(&once, &failed));
    assert_eq!(check(&once, &failed).observed, "0 of 1 call(s) succeeded");
    assert!(!holds(&once, &refused));
    assert!(!holds(&once, &calls([ok("c1", "other", json!({}))])));

    let never = Assertion::tool_succeeded("refund", 0);
    assert!(holds(&never, &refused));
    assert!(!holds(&never, &calls([ok("c1", "refund", json!({}))])));
}

#[test]
fn tool_call_ids_must_be_unique_and_numerous_enough() {
    let unique = Assertion::ToolCallIdsUnique {
        minimum: 2,
        across_trial: false,
    };
    let distinct = calls([ok("c1", "a", json!({})), ok("c2", "b", json!({}))]);
    assert!(holds(&unique, &distinct));
    let repeated = calls([ok("c1", "a", json!({})), ok("c1", "b", json!({}))]);
    let result = check(&unique, &repeated);
    assert!(!result.passed);
    assert_eq!(result.observed, "2 call(s), 1 repeated id(s)");
    let too_few = check(&unique, &calls([ok("c1", "a", json!({}))]));
    assert!(!too_few.passed);
    assert_eq!(too_few.observed, "1 call(s), 0 repeated id(s)");
    assert!(!holds(
        &Assertion::ToolCallIdsUnique {
            minimum: 1,
            across_trial: false,
        },
        &calls([])
    ));
}

#[test]
fn side_effect_count_is_exact_on_each_count() {
    let want = Assertion::SideEffectCount {
        attempts: 2,
        effects: 2,
        duplicates: 0,
    };
    let record = TurnRecord::builder().build();
    let at = |attempts, effects, duplicates| {
        want.check(&Evidence::of(
            &record,
            LedgerCounts {
                attempts,
                effects,
                duplicates,
            },
        ))
    };
    assert!(at(2, 2, 0).passed);
    for (a, e, d) in [(3, 2, 0), (1, 2, 0), (2, 3, 0), (2, 1, 0), (2, 2, 1)] {
        let off = at(a, e, d);
        assert!(!off.passed, "{a}/{e}/{d}");
        assert_eq!(
            off.observed,
            format!("attempts={a} effects={e} duplicates={d}")
        );
    }
}

#[test]
fn stage_observed_needs_the_stage_its_outcome_and_its_counts() {
    let rejected = Assertion::stage_observed(
        "precondition",
        Some(StageOutcome::Rejected),
        [("refused", 1)],
    );
    let trace = |stages: Vec<StageRecord>| TurnRecord::builder().stages(stages).build();
    let refusal = StageRecord::new("precondition", StageOutcome::Rejected).count("refused", 1);
    assert!(holds(&rejected, &trace(vec![refusal.clone()])));

    let absent = check(
        &rejected,
        &trace(vec![
            StageRecord::new("budget", StageOutcome::Rejected).count("refused", 1)
        ]),
    );
    assert_eq!(
        (absent.passed, absent.observed.as_str()),
        (false, "stage precondition absent from trace")
    );
    let passed = StageRecord::new("precondition", StageOutcome::Passed).count("refused", 1);
    let wrong_outcome = check(&rejected, &trace(vec![passed.clone()]));
    assert_eq!(
        (wrong_outcome.passed, wrong_outcome.observed.as_str()),
        (false, "stage precondition outcomes [passed]")
    );
    for downgraded in [
        StageOutcome::Downgraded,
        StageOutcome::Abstained,
        StageOutcome::Broken,
    ] {
        let stage = StageRecord::new("precondition", downgraded).count("refused", 1);
        assert!(!holds(&rejected, &trace(vec![stage])));
    }
    let uncounted = StageRecord::new("precondition", StageOutcome::Rejected);
    assert!(!holds(&rejected, &trace(vec![uncounted])));
    let low = StageRecord::new("precondition", StageOutcome::Rejected).count("checked", 3);
    assert!(!holds(&rejected, &trace(vec![low])));
    // Counts on a record with another outcome do not make up the shortfall.
    let split = vec![
        StageRecord::new("precondition", StageOutcome::Rejected),
        passed,
    ];
    assert!(!holds(&rejected, &trace(split)));

    let any_outcome = Assertion::stage_observed("precondition", None, [("checked", 2)]);
    let two_rounds = vec![
        StageRecord::new("precondition", StageOutcome::Passed).count("checked", 1),
        StageRecord::new("precondition", StageOutcome::Rejected).count("checked", 1),
    ];
    assert!(holds(&any_outcome, &trace(two_rounds)));
    assert!(!holds(&any_outcome, &trace(vec![refusal])));
}

#[test]
fn response_contains_needs_every_fragment() {
    let both = Assertion::ResponseContains(vec!["Oslo".into(), "12".into()]);
    let answered = |text: &str| TurnRecord::builder().answer(text).build();
    assert!(holds(&both, &answered("Oslo: 12 degrees")));
    let one_missing = check(&both, &answered("Oslo: cloudy"));
    assert!(!one_missing.passed);
    assert!(one_missing.observed.starts_with("1 fragment(s) missing"));
    assert!(
        !one_missing.observed.contains("cloudy"),
        "{}",
        one_missing.observed
    );
    // The model input is not the answer.
    let in_input = TurnRecord::builder().model_input("Oslo 12").build();
    assert!(!holds(&both, &in_input));
}
