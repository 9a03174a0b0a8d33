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

/// Every candidate state around `bases` for the predicates in
/// `preconditions`, in generation order, without repeats.
pub(super) fn candidates(preconditions: &[&Value], bases: &[&Value]) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut push = |state: Value, shape: String| {
        if state.is_object() && !out.iter().any(|c| c.state == state) {
            out.push(Candidate { state, shape });
        }
    };
    for base in bases {
        push((*base).clone(), "a state the pack declares".into());
    }
    let base = bases
        .first()
        .copied()
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    for (path, op, value) in rules(preconditions) {
        let rule = Rule {
            path: &path,
            op: &op,
            value: value.as_ref(),
        };
        for (value, class) in values_for(&rule, &base) {
            push(
                with_path(&base, &path, Casing::AsWritten, Some(value.clone())),
                format!("`{path}` {op}: {class}"),
            );
            if class == "a value the rule admits" {
                for casing in [Casing::Upper, Casing::Lower, Casing::Capitalised] {
                    push(
                        with_path(&base, &path, casing, Some(value.clone())),
                        format!("`{path}` {op}: key in {} case", casing.name()),
                    );
                }
            }
        }
        push(
            with_path(&base, &path, Casing::AsWritten, None),
            format!("`{path}` {op}: key missing"),
        );
        push(
            with_path(&base, &path, Casing::AsWritten, Some(Value::Null)),
            format!("`{path}` {op}: null"),
        );
        if let Some((parent, _)) = path.rsplit_once('.') {
            push(
                with_path(&base, parent, Casing::AsWritten, None),
                format!("`{path}` {op}: parent `{parent}` missing"),
            );
            push(
                with_path(
                    &base,
                    parent,
                    Casing::AsWritten,
                    Some(Value::String("x".into())),
                ),
                format!("`{path}` {op}: parent `{parent}` not an object"),
            );
        }
    }
    out
}

/// Values at a rule's path worth trying, each with its edge class.
fn values_for(rule: &Rule<'_>, base: &Value) -> Vec<(Value, &'static str)> {
    let admitted = "a value the rule admits";
    let mut out = Vec::new();
    match (rule.op, rule.value) {
        ("eq", Some(declared)) => {
            out.push((declared.clone(), admitted));
            out.extend(neighbours(declared));
            out.push((wrong_type(declared), "a value of another type"));
        }
        ("neq", Some(declared)) => {
            out.push((declared.clone(), "the declared value"));
            for (value, _) in neighbours(declared) {
                out.push((value, admitted));
            }
            out.push((wrong_type(declared), "a value of another type"));
        }
        ("in", Some(Value::Array(members))) => {
            for member in members.iter().take(3) {
                out.push((member.clone(), admitted));
            }
            if let Some(first) = members.first() {
                out.extend(
                    neighbours(first)
                        .into_iter()
                        .map(|(v, _)| (v, "a non-member")),
                );
                out.push((
                    Value::Array(vec![first.clone()]),
                    "a list where a member is expected",
                ));
                out.push((wrong_type(first), "a value of another type"));
            }
            let joined: String = members.iter().filter_map(Value::as_str).collect();
            if !joined.is_empty() {
                out.push((Value::String(joined), "a string containing the members"));
            }
        }
        ("exists", _) => {
            let present = crate::contracts::resolve_path(base, rule.path)
                .cloned()
                .unwrap_or(Value::Bool(true));
            out.push((present, admitted));
            out.push((Value::String(String::new()), "an empty string"));
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
