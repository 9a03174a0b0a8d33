//! The states a gate sweep tries, generated from the preconditions a
//! deployment published, and the smaller states a shrink tries.
//!
//! Generation is deterministic and exhaustive over named edge classes (key
//! casing, a missing key, null, a wrong type, the declared value and its
//! neighbours, list members and non-members, a string where a list is
//! declared, nested paths), not random: the classes are where gates go
//! wrong, and a sweep that finds a disagreement on one run must find it on
//! the next.

use serde_json::{Map, Value};

use crate::contracts::state_predicates_in;
use crate::redact::short_digest;

/// One state to try, with a report-safe description of how it was made.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Candidate {
    pub(super) state: Value,
    /// The path and the edge class, never a value.
    pub(super) shape: String,
}

/// A predicate as the sweep reads it.
struct Rule<'a> {
    path: &'a str,
    op: &'a str,
    value: Option<&'a Value>,
}

fn rules(preconditions: &[&Value]) -> Vec<(String, String, Option<Value>)> {
    let mut out = Vec::new();
    for precondition in preconditions {
        for predicate in state_predicates_in(precondition) {
            let (Some(path), Some(op)) = (
                predicate.get("path").and_then(Value::as_str),
                predicate.get("op").and_then(Value::as_str),
            ) else {
                continue;
            };
            out.push((
                path.to_owned(),
                op.to_owned(),
                predicate.get("value").cloned(),
            ));
        }
    }
    out
}

/// How many priority tiers candidates fall into; see [`Tiered`].
const TIERS: u8 = 3;

/// A candidate with its priority: tier 0 holds what every gate must get
/// right (the declared value, the key missing), tier 1 the commonest slips
/// (null, key casing, value casing, another type, a non-member), tier 2 the
/// rest. A sweep cut short by its budget still tries every rule's tier 0.
struct Tiered {
    tier: u8,
    state: Value,
    shape: String,
}

/// Every candidate state around `bases` for the predicates in
/// `preconditions`, without repeats: the declared states first, then tier
/// by tier, taking one candidate from each rule in turn, so a second or
/// third predicate is swept as early as the first. `bases` are the pack's
/// satisfied and blocked states, in that order; the first is what every
/// generated state changes one path of.
pub(super) fn candidates(preconditions: &[&Value], bases: &[&Value]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut push = |state: Value, shape: String| {
        if state.is_object() && !out.iter().any(|c| c.state == state) {
            out.push(Candidate { state, shape });
        }
    };
    for (i, base) in bases.iter().enumerate() {
        let shape = match i {
            0 => "the satisfied state the pack declares".to_owned(),
            1 => "the blocked state the pack declares".to_owned(),
            n => format!("state {} the pack declares", n + 1),
        };
        push((*base).clone(), shape);
    }
    let base = bases
        .first()
        .copied()
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let per_rule: Vec<Vec<Tiered>> = rules(preconditions)
        .iter()
        .map(|(path, op, value)| {
            let rule = Rule {
                path,
                op,
                value: value.as_ref(),
            };
            rule_candidates(&rule, &base)
        })
        .collect();
    for tier in 0..TIERS {
        let lists: Vec<Vec<&Tiered>> = per_rule
            .iter()
            .map(|list| list.iter().filter(|c| c.tier == tier).collect())
            .collect();
        let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..longest {
            for list in &lists {
                if let Some(candidate) = list.get(i) {
                    push(candidate.state.clone(), candidate.shape.clone());
                }
            }
        }
    }
    out
}

/// One rule's candidates, each a change at the rule's path alone.
fn rule_candidates(rule: &Rule<'_>, base: &Value) -> Vec<Tiered> {
    let (path, op) = (rule.path, rule.op);
    let mut out = Vec::new();
    let mut add = |tier: u8, casing: Casing, value: Option<Value>, class: String| {
        out.push(Tiered {
            tier,
            state: with_path(base, path, casing, value),
            shape: format!("`{path}` {op}: {class}"),
        });
    };
    let values = values_for(rule, base);
    // Within a tier the order below is the order tried: key casing before
    // null before the value variations, since gates that fold or ignore
    // key case are the commonest slip after a missing key.
    for (tier, value, class) in values.iter().filter(|(tier, ..)| *tier == 0) {
        add(*tier, Casing::AsWritten, Some(value.clone()), class.clone());
    }
    add(0, Casing::AsWritten, None, "key missing".into());
    // Key casing, around the first value the rule admits: a gate that
    // folds keys admits these, one that ignores them refuses the rest.
    let admitted = values
        .iter()
        .find(|(_, _, class)| class.starts_with(ADMITS))
        .map(|(_, value, _)| value.clone());
    let cased = |casing: Casing| {
        let class = format!("key in {} case", casing.name());
        admitted.clone().map(|value| (casing, Some(value), class))
    };
    if let Some((casing, value, class)) = cased(Casing::Capitalised) {
        add(1, casing, value, class);
    }
    add(1, Casing::AsWritten, Some(Value::Null), "null".into());
    for (tier, value, class) in values.iter().filter(|(tier, ..)| *tier > 0) {
        add(*tier, Casing::AsWritten, Some(value.clone()), class.clone());
    }
    for (casing, value, class) in cased(Casing::Upper).into_iter().chain(cased(Casing::Lower)) {
        add(2, casing, value, class);
    }
    if let Some((parent, _)) = path.rsplit_once('.') {
        out.push(Tiered {
            tier: 2,
            state: with_path(base, parent, Casing::AsWritten, None),
            shape: format!("`{path}` {op}: parent `{parent}` missing"),
        });
        out.push(Tiered {
            tier: 2,
            state: with_path(
                base,
                parent,
                Casing::AsWritten,
                Some(Value::String("x".into())),
            ),
            shape: format!("`{path}` {op}: parent `{parent}` not an object"),
        });
    }
    out
}

/// How the label of a value a rule admits begins.
const ADMITS: &str = "admitted";

/// Values at a rule's path worth trying, each with its tier and its edge
/// class (distinct within the rule, so no two sweep labels read alike).
fn values_for(rule: &Rule<'_>, base: &Value) -> Vec<(u8, Value, String)> {
    let mut out: Vec<(u8, Value, String)> = Vec::new();
    // The neighbours a sloppy comparison confuses with a value; the first
    // two (value casing) are common slips, the rest rarer.
    let tiered = |i: usize| if i < 2 { 1 } else { 2 };
    match (rule.op, rule.value) {
        ("eq", Some(Value::Bool(b))) => {
            // A gate that compares text admits a boolean's spellings, the
            // commonest slip on a boolean rule: its JSON text and Python's
            // (`str(True)`) come first, so a default budget shared with
            // other rules still reaches both; a digit is rarer.
            let (python, digit) = if *b { ("True", "1") } else { ("False", "0") };
            out.push((0, Value::Bool(*b), format!("{ADMITS}: the declared value")));
            out.push((
                1,
                Value::String(b.to_string()),
                "the boolean as a string".into(),
            ));
            out.push((
                1,
                Value::from(python),
                "the boolean as Python writes it".into(),
            ));
            out.push((1, Value::Bool(!b), "the other boolean".into()));
            out.push((
                1,
                wrong_type(&Value::Bool(*b)),
                "a value of another type".into(),
            ));
            out.push((2, Value::from(digit), "the boolean as a digit".into()));
        }
        ("eq", Some(declared)) => {
            out.push((0, declared.clone(), format!("{ADMITS}: the declared value")));
            for (i, (value, class)) in neighbours(declared).into_iter().enumerate() {
                out.push((tiered(i), value, class.to_owned()));
            }
            out.push((1, wrong_type(declared), "a value of another type".into()));
        }
        ("neq", Some(declared)) => {
            out.push((0, declared.clone(), "the declared value".into()));
            for (i, (value, class)) in neighbours(declared).into_iter().enumerate() {
                out.push((tiered(i), value, format!("{ADMITS}: {class}")));
            }
            out.push((1, wrong_type(declared), "a value of another type".into()));
        }
        ("in", Some(Value::Array(members))) => {
            for (i, member) in members.iter().take(3).enumerate() {
                let tier = if i == 0 { 0 } else { 1 };
                out.push((tier, member.clone(), format!("{ADMITS}: member {}", i + 1)));
            }
            if let Some(first) = members.first() {
                for (i, (value, class)) in neighbours(first).into_iter().enumerate() {
                    let class = format!("a non-member ({class} of member 1)");
                    out.push((tiered(i), value, class));
                }
                out.push((
                    2,
                    Value::Array(vec![first.clone()]),
                    "a list where a member is expected".into(),
                ));
                out.push((1, wrong_type(first), "a value of another type".into()));
            }
            let joined: String = members.iter().filter_map(Value::as_str).collect();
            if !joined.is_empty() {
                out.push((
                    2,
                    Value::String(joined),
                    "a string containing the members".into(),
                ));
            }
        }
        ("exists", _) => {
            let present = crate::contracts::resolve_path(base, rule.path)
                .cloned()
                .unwrap_or(Value::Bool(true));
            out.push((0, present, format!("{ADMITS}: a value present")));
            out.push((1, Value::String(String::new()), "an empty string".into()));
            out.push((2, Value::Bool(false), "the value false".into()));
        }
        _ => {}
    }
    out
}

/// Values next to `declared` that a sloppy comparison confuses with it.
fn neighbours(declared: &Value) -> Vec<(Value, &'static str)> {
    match declared {
        Value::String(text) => {
            let mut out = vec![
                (
                    Value::String(text.to_lowercase()),
                    "the declared value in lower case",
                ),
                (
                    Value::String(text.to_uppercase()),
                    "the declared value in upper case",
                ),
                (
                    Value::String(format!("{text}X")),
                    "the declared value with a suffix",
                ),
                (
                    Value::String(format!(" {text}")),
                    "the declared value with a leading space",
                ),
            ];
            if text.chars().count() > 1 {
                let prefix: String = text.chars().take(text.chars().count() - 1).collect();
                out.push((Value::String(prefix), "a prefix of the declared value"));
            }
            out.retain(|(value, _)| value != declared);
            out
        }
        Value::Number(n) => {
            let mut out = Vec::new();
            if let Some(i) = n.as_i64() {
                out.push((Value::from(i + 1), "the declared number plus one"));
                out.push((Value::from(i - 1), "the declared number minus one"));
                out.push((Value::from(i as f64), "the declared number as a float"));
            } else if let Some(f) = n.as_f64() {
                out.push((Value::from(f + 1.0), "the declared number plus one"));
            }
            out.push((
                Value::String(n.to_string()),
                "the declared number as a string",
            ));
            out
        }
        Value::Bool(b) => vec![
            (Value::Bool(!b), "the other boolean"),
            (Value::String(b.to_string()), "the boolean as a string"),
        ],
        Value::Null => vec![(Value::String("null".into()), "the word null")],
        other => vec![(
            Value::String(other.to_string()),
            "the declared value as text",
        )],
    }
}

fn wrong_type(value: &Value) -> Value {
    match value {
        Value::String(_) => Value::from(0),
        Value::Number(n) => Value::String(format!("n{n}")),
        Value::Bool(_) => Value::from(1),
        _ => Value::Bool(true),
    }
}

/// How a generated state spells the keys on a rule's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Casing {
    AsWritten,
    Upper,
    Lower,
    Capitalised,
}

impl Casing {
    fn name(self) -> &'static str {
        match self {
            Self::AsWritten => "written",
            Self::Upper => "upper",
            Self::Lower => "lower",
            Self::Capitalised => "capitalised",
        }
    }

    fn apply(self, segment: &str) -> String {
        match self {
            Self::AsWritten => segment.to_owned(),
            Self::Upper => segment.to_uppercase(),
            Self::Lower => segment.to_lowercase(),
            Self::Capitalised => {
                let mut chars = segment.chars();
                chars.next().map_or_else(String::new, |first| {
                    first
                        .to_uppercase()
                        .chain(chars.flat_map(char::to_lowercase))
                        .collect()
                })
            }
        }
    }
}

/// `base` with the value at `path` replaced (`None` removes it). Keys the
/// base spells in another casing along the path are removed first, so the
/// generated casing is the only one present.
fn with_path(base: &Value, path: &str, casing: Casing, value: Option<Value>) -> Value {
    let mut state = base.clone();
    let segments: Vec<&str> = path.split('.').collect();
    let mut cursor = &mut state;
    for (i, segment) in segments.iter().enumerate() {
        if !cursor.is_object() {
            *cursor = Value::Object(Map::new());
        }
        let Value::Object(map) = cursor else {
            unreachable!("made an object above")
        };
        let existing = [
            segment.to_uppercase(),
            segment.to_lowercase(),
            (*segment).to_owned(),
        ]
        .into_iter()
        .find_map(|key| map.remove(&key));
        let key = casing.apply(segment);
        if i + 1 == segments.len() {
            if let Some(value) = value {
                map.insert(key, value);
            }
            return state;
        }
        let child = existing.unwrap_or_else(|| Value::Object(Map::new()));
        cursor = map.entry(key).or_insert(child);
    }
    state
}

/// States one step smaller than `state`: each key removed in turn (at any
/// depth), and each list cut to its first item.
pub(super) fn smaller(state: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    shrink_into(state, &mut |replacement| out.push(replacement), &mut |v| v);
    out
}

fn shrink_into(
    value: &Value,
    emit: &mut dyn FnMut(Value),
    rebuild: &mut dyn FnMut(Value) -> Value,
) {
    match value {
        Value::Object(map) => {
            for key in map.keys() {
                let mut without = map.clone();
                without.remove(key);
                emit(rebuild(Value::Object(without)));
            }
            for (key, child) in map {
                let mut wrap = |inner: Value| {
                    let mut with = map.clone();
                    with.insert(key.clone(), inner);
                    rebuild(Value::Object(with))
                };
                shrink_into(child, emit, &mut wrap);
            }
        }
        Value::Array(items) if items.len() > 1 => {
            emit(rebuild(Value::Array(vec![items[0].clone()])));
        }
        _ => {}
    }
}

/// How many JSON nodes `value` has: the size a shrink makes smaller.
pub(super) fn size(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(size).sum::<usize>(),
        Value::Array(items) => 1 + items.iter().map(size).sum::<usize>(),
        _ => 1,
    }
}

/// A state as a report may show it: keys as they are (paths are the rule's
/// own vocabulary), each leaf as its type and a digest, never its value.
pub(super) fn shape(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(key, child)| format!("{key:?}: {}", shape(child)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(shape).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Null => "null".to_owned(),
        Value::Bool(_) => format!("boolean {}", short_digest(value.to_string().as_bytes())),
        Value::Number(_) => format!("number {}", short_digest(value.to_string().as_bytes())),
        Value::String(_) => format!("string {}", short_digest(value.to_string().as_bytes())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn eq_rules_get_casing_missing_null_and_neighbours() {
        let pre = json!([{"state": {"path": "region", "op": "eq", "value": "US"}}]);
        let base = json!({"region": "US", "tier": 1});
        let states: Vec<Value> = candidates(&[&pre], &[&base])
            .into_iter()
            .map(|c| c.state)
            .collect();
        for expected in [
            json!({"REGION": "US", "tier": 1}),
            json!({"Region": "US", "tier": 1}),
            json!({"tier": 1}),
            json!({"region": null, "tier": 1}),
            json!({"region": "us", "tier": 1}),
            json!({"region": "USX", "tier": 1}),
            json!({"region": 0, "tier": 1}),
        ] {
            assert!(
                states.contains(&expected),
                "{expected} missing from {states:?}"
            );
        }
        let unique: std::collections::HashSet<String> =
            states.iter().map(Value::to_string).collect();
        assert_eq!(unique.len(), states.len(), "no repeats");
    }

    #[test]
    fn booleans_are_tried_in_every_spelling_a_text_comparison_admits() {
        let pre = json!([{"state": {"path": "verified", "op": "eq", "value": true}}]);
        let base = json!({"verified": true});
        let tried: Vec<Value> = candidates(&[&pre], &[&base])
            .into_iter()
            .map(|c| c.state["verified"].clone())
            .collect();
        for spelling in [
            json!(false),
            json!("true"),
            json!("True"),
            json!("1"),
            json!(1),
        ] {
            assert!(tried.contains(&spelling), "{spelling} in {tried:?}");
        }
    }

    #[test]
    fn nested_paths_and_lists() {
        let pre =
            json!([{"state": {"path": "account.tier", "op": "in", "value": ["gold", "silver"]}}]);
        let base = json!({"account": {"tier": "gold"}});
        let states: Vec<Value> = candidates(&[&pre], &[&base])
            .into_iter()
            .map(|c| c.state)
            .collect();
        for expected in [
            json!({"account": {"tier": "silver"}}),
            json!({"ACCOUNT": {"TIER": "gold"}}),
            json!({}),
            json!({"account": "x"}),
            json!({"account": {"tier": "goldsilver"}}),
            json!({"account": {"tier": ["gold"]}}),
        ] {
            assert!(
                states.contains(&expected),
                "{expected} missing from {states:?}"
            );
        }
    }

    #[test]
    fn every_rule_is_swept_early_and_no_two_labels_read_alike() {
        let pre = json!([
            {"state": {"path": "window", "op": "eq", "value": "open"}},
            {"state": {"path": "severity", "op": "neq", "value": "sev1"}},
            {"state": {"path": "team", "op": "in", "value": ["ops", "sre"]}},
        ]);
        let satisfied = json!({"window": "open", "severity": "sev2", "team": "ops"});
        let blocked = json!({"window": "shut", "severity": "sev2", "team": "ops"});
        let all = candidates(&[&pre], &[&satisfied, &blocked]);
        let position = |label: &str| {
            all.iter()
                .position(|c| c.shape == label)
                .unwrap_or_else(|| panic!("{label} not generated"))
        };
        // Tier 0 of every rule comes before any rule's tier 1: the declared
        // value of the last rule and each rule's missing key are among the
        // first few states, whatever the rules' order.
        for label in [
            "`severity` neq: the declared value",
            "`window` eq: key missing",
            "`severity` neq: key missing",
            "`team` in: key missing",
        ] {
            assert!(
                position(label) < 2 + 3 * 3,
                "{label} at {}",
                position(label)
            );
        }
        assert!(position("`team` in: key missing") < position("`window` eq: null"));
        let labels: std::collections::HashSet<&str> =
            all.iter().map(|c| c.shape.as_str()).collect();
        assert_eq!(labels.len(), all.len(), "a label repeats");
    }

    #[test]
    fn shrinking_removes_keys_at_every_depth_and_shape_hides_values() {
        let state = json!({"a": {"b": 1, "c": [1, 2]}, "d": "secret"});
        let smaller = smaller(&state);
        assert!(smaller.contains(&json!({"a": {"b": 1, "c": [1, 2]}})));
        assert!(smaller.contains(&json!({"a": {"c": [1, 2]}, "d": "secret"})));
        assert!(smaller.contains(&json!({"a": {"b": 1, "c": [1]}, "d": "secret"})));
        assert!(smaller.iter().all(|s| size(s) < size(&state)));
        let shown = shape(&state);
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("\"d\": string sha256:"), "{shown}");
    }
}
