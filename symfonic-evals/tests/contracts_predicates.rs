//! State predicates: every operator, every fail-closed case, the no-leak
//! property of reasons, and a fuzz of the evaluator and path resolver.

/// Named so that `cargo test contracts` selects these tests.
mod contracts {

    use proptest::prelude::*;
    use serde::Serialize;
    use serde_json::{json, Value};
    use symfonic_evals::contracts::{
        evaluate_state_predicate, resolve_path, skill_applies, state_predicates_in,
    };

    fn pred(path: &str, op: &str, value: Value) -> Value {
        json!({"path": path, "op": op, "value": value})
    }

    #[test]
    fn eq_and_neq_compare_by_value() {
        let state = json!({"region": "US", "tier": 3});
        assert!(evaluate_state_predicate(&state, &pred("region", "eq", json!("US"))).matched);
        assert!(!evaluate_state_predicate(&state, &pred("region", "eq", json!("EU"))).matched);
        assert!(evaluate_state_predicate(&state, &pred("region", "neq", json!("EU"))).matched);
        assert!(!evaluate_state_predicate(&state, &pred("region", "neq", json!("US"))).matched);
        assert!(evaluate_state_predicate(&state, &pred("tier", "eq", json!(3.0))).matched);
        assert!(!evaluate_state_predicate(&state, &pred("tier", "eq", json!("3"))).matched);
    }

    #[test]
    fn in_tests_membership_of_a_list() {
        let state = json!({"region": "US"});
        assert!(
            evaluate_state_predicate(&state, &pred("region", "in", json!(["EU", "US"]))).matched
        );
        assert!(!evaluate_state_predicate(&state, &pred("region", "in", json!(["EU"]))).matched);
        assert!(!evaluate_state_predicate(&state, &pred("region", "in", json!([]))).matched);
    }

    #[test]
    fn in_with_a_non_array_value_fails_closed_and_never_substring_matches() {
        let state = json!({"region": "U", "n": 1});
        for value in [json!("US"), json!({"U": 1}), json!(1), json!(null)] {
            let outcome = evaluate_state_predicate(&state, &pred("region", "in", value));
            assert!(!outcome.matched);
            assert!(
                outcome.reason.contains("requires an array"),
                "{}",
                outcome.reason
            );
        }
    }

    #[test]
    fn exists_tells_explicit_null_from_missing() {
        let state = json!({"note": null, "account": {"id": null}});
        let exists = |path: &str| json!({"path": path, "op": "exists"});
        assert!(evaluate_state_predicate(&state, &exists("note")).matched);
        assert!(evaluate_state_predicate(&state, &exists("account.id")).matched);
        assert!(!evaluate_state_predicate(&state, &exists("missing")).matched);
        assert!(!evaluate_state_predicate(&state, &exists("note.deeper")).matched);
        // exists needs no value, and ignores one if given.
        assert!(evaluate_state_predicate(&state, &pred("note", "exists", json!(false))).matched);
        // A null in state is a value like any other for eq.
        assert!(evaluate_state_predicate(&state, &pred("note", "eq", json!(null))).matched);
    }

    #[test]
    fn an_absent_key_fails_every_value_taking_operator() {
        let state = json!({"region": "US"});
        for (op, value) in [
            ("eq", json!("US")),
            ("neq", json!("US")),
            ("in", json!(["US"])),
        ] {
            let outcome = evaluate_state_predicate(&state, &pred("country", op, value));
            assert!(!outcome.matched, "{op}");
            assert!(outcome.reason.contains("absent"), "{}", outcome.reason);
        }
    }

    #[test]
    fn paths_try_upper_then_lower_case_per_segment() {
        let state = json!({"ACCOUNT": {"region": "US"}});
        assert!(
            evaluate_state_predicate(&state, &pred("account.REGION", "eq", json!("US"))).matched
        );
        for path in [".account.region", "account.region.", "account..region"] {
            assert!(!evaluate_state_predicate(&state, &pred(path, "eq", json!("US"))).matched);
            assert!(
                !evaluate_state_predicate(&state, &json!({"path": path, "op": "exists"})).matched
            );
        }
    }

    #[test]
    fn malformed_predicates_fail_closed_with_a_reason() {
        let state = json!({"region": "US", "": "US"});
        let cases = [
            (json!("region eq US"), "object"),
            (json!(["region", "eq", "US"]), "object"),
            (json!(null), "object"),
            (json!({"op": "eq", "value": "US"}), "path"),
            (json!({"path": "", "op": "eq", "value": "US"}), "path"),
            (json!({"path": 7, "op": "eq", "value": "US"}), "path"),
            (json!({"path": "region", "value": "US"}), "unknown operator"),
            (
                json!({"path": "region", "op": "EQ", "value": "US"}),
                "unknown operator",
            ),
            (
                json!({"path": "region", "op": "like", "value": "US"}),
                "unknown operator",
            ),
            (
                json!({"path": "region", "op": ["eq"], "value": "US"}),
                "unknown operator",
            ),
            (json!({"path": "region", "op": "eq"}), "requires `value`"),
            (json!({"path": "region", "op": "neq"}), "requires `value`"),
            (json!({"path": "region", "op": "in"}), "requires `value`"),
        ];
        for (predicate, why) in cases {
            let outcome = evaluate_state_predicate(&state, &predicate);
            assert!(!outcome.matched, "{predicate}");
            assert!(
                outcome.reason.contains(why),
                "{predicate}: {}",
                outcome.reason
            );
        }
    }

    #[test]
    fn any_serialize_type_is_usable_as_state() {
        #[derive(Serialize)]
        struct Account {
            region: String,
            tier: u8,
        }
        #[derive(Serialize)]
        struct Turn {
            account: Account,
        }
        let turn = Turn {
            account: Account {
                region: "US".into(),
                tier: 2,
            },
        };
        assert!(
            evaluate_state_predicate(&turn, &pred("account.region", "eq", json!("US"))).matched
        );
        assert!(
            evaluate_state_predicate(&turn, &pred("account.tier", "in", json!([1, 2]))).matched
        );
        let map: std::collections::BTreeMap<&str, &str> = [("region", "EU")].into();
        assert!(!evaluate_state_predicate(&map, &pred("region", "eq", json!("US"))).matched);
    }

    #[test]
    fn state_that_cannot_serialize_fails_closed() {
        let mut bad = std::collections::HashMap::new();
        bad.insert(vec![1u8], "x"); // non-string keys cannot become a JSON object
        let outcome = evaluate_state_predicate(&bad, &json!({"path": "x", "op": "exists"}));
        assert!(!outcome.matched);
        let precondition = json!([{"state": {"path": "x", "op": "exists"}}]);
        assert!(!skill_applies(&bad, &precondition));
    }

    #[test]
    fn reasons_describe_the_comparison() {
        let state = json!({"region": "EU"});
        let differs = evaluate_state_predicate(&state, &pred("region", "eq", json!("US")));
        assert_eq!(
            differs.reason,
            r#"`region` eq "US" -> false (state: differs)"#
        );
        let neq = evaluate_state_predicate(&state, &pred("region", "neq", json!("US")));
        assert_eq!(neq.reason, r#"`region` neq "US" -> true (state: differs)"#);
        let member = evaluate_state_predicate(&state, &pred("region", "in", json!(["EU"])));
        assert_eq!(
            member.reason,
            r#"`region` in ["EU"] -> true (state: matches)"#
        );
    }

    #[test]
    fn state_predicates_are_partitioned_from_tool_identifiers() {
        let precondition = json!([
            "lookup_account",
            {"state": {"path": "region", "op": "eq", "value": "US"}},
            {"tool": "other"},
            {"state": {"path": "tier", "op": "exists"}},
        ]);
        let found = state_predicates_in(&precondition);
        assert_eq!(found.len(), 2);
        assert_eq!(found[1], &json!({"path": "tier", "op": "exists"}));
        assert!(state_predicates_in(&json!("lookup_account")).is_empty());
        assert!(state_predicates_in(&json!(null)).is_empty());
        let single = json!({"state": {"path": "tier", "op": "exists"}});
        assert_eq!(state_predicates_in(&single).len(), 1);
    }

    #[test]
    fn skill_applies_needs_every_predicate_and_none_applies_everywhere() {
        let both = json!([
            {"state": {"path": "region", "op": "eq", "value": "US"}},
            {"state": {"path": "tier", "op": "in", "value": [1, 2]}},
        ]);
        assert!(skill_applies(&json!({"region": "US", "tier": 1}), &both));
        assert!(!skill_applies(&json!({"region": "US", "tier": 3}), &both));
        assert!(!skill_applies(&json!({"region": "US"}), &both));
        assert!(skill_applies(&json!({}), &json!([])));
        assert!(skill_applies(&json!(null), &json!(["lookup_account"])));
        assert!(skill_applies(&json!({}), &json!(null)));
    }

    #[test]
    fn a_malformed_state_entry_does_not_widen_the_skill() {
        let precondition = json!([{"state": "region eq US"}]);
        assert!(!skill_applies(&json!({"region": "US"}), &precondition));
    }

    #[test]
    fn an_entry_that_is_not_a_rule_applies_nowhere() {
        let eu = json!({"region": "EU"});
        let rule = json!({"path": "region", "op": "eq", "value": "US"});
        for unreadable in [
            json!([rule]),                // predicate without its `state` wrapper
            rule.clone(),                 // the same, as the whole precondition
            json!([{"State": rule}]),     // misspelled key
            json!(["lookup_account", 7]), // a number among tool identifiers
            json!(true),
        ] {
            assert!(!skill_applies(&eu, &unreadable), "{unreadable}");
            assert!(
                !skill_applies(&json!({"region": "US"}), &unreadable),
                "{unreadable}"
            );
        }
    }

    #[test]
    fn integers_and_floats_compare_exactly() {
        let state = json!({"big": 9_007_199_254_740_993_u64, "max": u64::MAX});
        let big_float = json!(9_007_199_254_740_992.0);
        assert!(!evaluate_state_predicate(&state, &pred("big", "eq", big_float.clone())).matched);
        assert!(evaluate_state_predicate(&state, &pred("big", "neq", big_float.clone())).matched);
        assert!(!evaluate_state_predicate(&state, &pred("big", "in", json!([big_float]))).matched);
        assert!(
            !evaluate_state_predicate(
                &state,
                &pred("max", "eq", json!(1.844_674_407_370_955_2e19))
            )
            .matched
        );
        assert!(evaluate_state_predicate(&json!({"n": 2}), &pred("n", "eq", json!(2.0))).matched);
        assert!(!evaluate_state_predicate(&json!({"n": 2}), &pred("n", "eq", json!(2.5))).matched);
    }

    // ---- properties -----------------------------------------------------------

    /// Scalar values that cannot occur in the evaluator's own wording: tokens
    /// from a small pool (so predicates often declare what the state holds) and
    /// from a large one (so most state values are private to the state).
    fn marker() -> impl Strategy<Value = Value> {
        prop_oneof![
            "V[A-C]{2}".prop_map(Value::from),
            "W[A-Z0-9]{8}".prop_map(Value::from),
            (100_000i64..100_004).prop_map(Value::from),
            (1_000_000i64..9_000_000).prop_map(Value::from),
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
        ]
    }

    fn key() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["region", "REGION", "tier", "account", "id"])
            .prop_map(String::from)
    }

    fn state() -> impl Strategy<Value = Value> {
        let leaf = marker();
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::btree_map(key(), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn predicate() -> impl Strategy<Value = Value> {
        let path = prop::collection::vec(key(), 1..4).prop_map(|segments| segments.join("."));
        let op = prop::sample::select(vec!["eq", "neq", "in", "exists", "like"]);
        let value = prop_oneof![
            marker(),
            prop::collection::vec(marker(), 0..3).prop_map(Value::from),
        ];
        (path, op, prop::option::of(value)).prop_map(|(path, op, value)| {
            let mut predicate = json!({"path": path, "op": op});
            if let Some(value) = value {
                predicate["value"] = value;
            }
            predicate
        })
    }

    fn scalars(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Number(n) => out.push(n.to_string()),
            Value::Array(items) => items.iter().for_each(|v| scalars(v, out)),
            Value::Object(fields) => fields.values().for_each(|v| scalars(v, out)),
            Value::Null | Value::Bool(_) => {}
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn reasons_never_leak_state_values(state in state(), predicate in predicate()) {
            let outcome = evaluate_state_predicate(&state, &predicate);
            let declared = predicate.to_string();
            let mut held = Vec::new();
            scalars(&state, &mut held);
            for value in held {
                prop_assert!(
                    !outcome.reason.contains(&value) || declared.contains(&value),
                    "reason {:?} leaks a state value", outcome.reason
                );
            }
        }
    }

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            ".{0,6}".prop_map(Value::from),
            prop::sample::select(vec!["path", "op", "value", "eq", "in", "exists", "a", "A"])
                .prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(
                    prop_oneof![
                        ".{0,4}",
                        prop::sample::select(vec!["path", "op", "value", "a", "A", "state"])
                            .prop_map(String::from)
                    ],
                    inner,
                    0..5,
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn any_path() -> impl Strategy<Value = String> {
        prop_oneof![".{0,16}", "[aAß.]{0,8}", "(a|A|\\.|ǅ|İ){0,6}"]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(10_000))]

        #[test]
        fn the_resolver_and_evaluator_never_panic(
            state in any_json(),
            path in any_path(),
            raw in any_json(),
            op in prop_oneof![Just(Value::Null), "(eq|neq|in|exists|.{0,3})".prop_map(Value::from), any_json()],
            value in prop::option::of(any_json()),
        ) {
            let resolved = resolve_path(&state, &path);
            if path.is_empty() || path.split('.').any(str::is_empty) {
                prop_assert!(resolved.is_none());
            }
            let _ = evaluate_state_predicate(&state, &raw);
            let mut predicate = json!({"path": path, "op": op});
            if let Some(value) = value.clone() {
                predicate["value"] = value;
            }
            let outcome = evaluate_state_predicate(&state, &predicate);
            if predicate["op"] == json!("in") && !value.as_ref().is_some_and(Value::is_array) {
                prop_assert!(!outcome.matched);
            }
            if predicate["op"] == json!("exists") {
                prop_assert_eq!(outcome.matched, resolved.is_some());
            }
            let _ = skill_applies(&state, &raw);
            let _ = skill_applies(&state, &json!([{"state": predicate}, raw]));
        }
    }
}

/// The cases in `protocol/predicate-cases.json`, which the Python companion's
/// evaluator is tested against too: the two agree on every one.
#[test]
fn the_shared_predicate_cases_hold() {
    use symfonic_evals::contracts::evaluate_state_predicate;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../protocol/predicate-cases.json"
    );
    let text = std::fs::read_to_string(path).expect("the shared cases");
    let cases: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let cases = cases["cases"].as_array().expect("a list of cases");
    assert!(cases.len() >= 40);
    let wrong: Vec<String> = cases
        .iter()
        .filter(|case| {
            evaluate_state_predicate(&case["state"], &case["predicate"]).matched
                != case["matched"].as_bool().expect("matched is a boolean")
        })
        .map(|case| format!("{} against {}", case["predicate"], case["state"]))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}
