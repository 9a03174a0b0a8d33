//! Rules the harness composes from the pack's own states, for the probes
//! in which it acts as the operator through the structured review door.
//!
//! The pack declares a state the approved rule admits and one it refuses,
//! never a rule: the seed's operator turn says the rule in the adopter's
//! words. To amend, revoke or approve two procedures the harness needs rules
//! of its own, so it derives them from the states: an `eq` on a path where
//! one state holds a value the other does not. Every rule is checked with
//! the contract's evaluator before it is used, so a rule that would not
//! mean what the probe needs (a key in a casing paths cannot reach) is never
//! sent.

use serde_json::{json, Map, Value};

use crate::contracts::{resolve_path, skill_applies};

/// The rules the lifecycle probes send.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ComposedRules {
    /// One predicate: admits the satisfied state, refuses the blocked one.
    pub(super) first: Value,
    /// A second predicate the satisfied state meets, on another path when
    /// there is one (so neither predicate implies the other).
    pub(super) second: Value,
    /// One predicate admitting the blocked state and refusing the
    /// satisfied one, when the states allow it: the amended rule.
    pub(super) reversed: Option<Value>,
}

impl ComposedRules {
    /// The rules for these states, or `None` when no path tells them apart
    /// (the argument checks make that rare: the states differ).
    pub(super) fn of(satisfied: &Value, blocked: &Value) -> Option<Self> {
        let first = distinguishing(satisfied, blocked)?;
        let first_path = first["path"].as_str().unwrap_or_default().to_owned();
        let second = leaves(satisfied)
            .into_iter()
            .filter(|(path, _)| *path != first_path)
            .map(|(path, value)| json!({"path": path, "op": "eq", "value": value}))
            .find(|predicate| holds(satisfied, std::slice::from_ref(predicate)))
            .unwrap_or_else(|| json!({"path": first_path, "op": "exists"}));
        Some(Self {
            first,
            second,
            reversed: distinguishing(blocked, satisfied),
        })
    }

    /// The two-predicate rule: both must hold.
    pub(super) fn both(&self) -> Vec<Value> {
        vec![self.first.clone(), self.second.clone()]
    }
}

/// Whether every predicate holds on `state`, by the contract's evaluator.
pub(super) fn holds(state: &Value, predicates: &[Value]) -> bool {
    let precondition: Vec<Value> = predicates.iter().map(|p| json!({"state": p})).collect();
    skill_applies(state, &Value::Array(precondition))
}

/// An `eq` predicate that holds on `admit` and not on `refuse`.
fn distinguishing(admit: &Value, refuse: &Value) -> Option<Value> {
    leaves(admit)
        .into_iter()
        .map(|(path, value)| json!({"path": path, "op": "eq", "value": value}))
        .find(|predicate| {
            let one = std::slice::from_ref(predicate);
            holds(admit, one) && !holds(refuse, one)
        })
}

/// Every leaf of `state` (a value that is not an object) with its dotted
/// path, in key order, skipping keys a dotted path cannot name.
fn leaves(state: &Value) -> Vec<(String, Value)> {
    let mut found = Vec::new();
    if let Value::Object(object) = state {
        collect(object, "", &mut found);
    }
    found
        .into_iter()
        .filter(|(path, value)| resolve_path(state, path) == Some(value))
        .collect()
}

fn collect(object: &Map<String, Value>, prefix: &str, found: &mut Vec<(String, Value)>) {
    for (key, value) in object {
        if key.is_empty() || key.contains('.') {
            continue;
        }
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Object(inner) if !inner.is_empty() => collect(inner, &path, found),
            _ => found.push((path, value.clone())),
        }
    }
}

/// `state` without the leaf at `path` (a state the predicates on that path
/// no longer reach), or `None` when the path is not a key of `state` as
/// written.
pub(super) fn without(state: &Value, path: &str) -> Option<Value> {
    let mut state = state.clone();
    let mut cursor = &mut state;
    let mut segments: Vec<&str> = path.split('.').collect();
    let last = segments.pop()?;
    for segment in segments {
        cursor = cursor.as_object_mut()?.get_mut(segment)?;
    }
    cursor.as_object_mut()?.remove(last)?;
    Some(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composes_rules_that_mean_what_the_probes_need() {
        let satisfied = json!({"region": "US", "receipt": "r-104"});
        let blocked = json!({"region": "EU", "receipt": "r-105"});
        let rules = ComposedRules::of(&satisfied, &blocked).unwrap();
        assert!(holds(&satisfied, &rules.both()));
        assert!(!holds(&blocked, &rules.both()));
        assert_ne!(rules.first["path"], rules.second["path"]);
        let reversed = rules.reversed.clone().unwrap();
        assert!(holds(&blocked, std::slice::from_ref(&reversed)));
        assert!(!holds(&satisfied, &[reversed]));
    }

    #[test]
    fn a_subset_state_has_no_reversed_rule_and_a_lone_key_falls_back_to_exists() {
        let satisfied = json!({"tier": {"level": 2}});
        let blocked = json!({});
        let rules = ComposedRules::of(&satisfied, &blocked).unwrap();
        assert_eq!(
            rules.first,
            json!({"path": "tier.level", "op": "eq", "value": 2})
        );
        assert_eq!(rules.second["op"], "exists");
        assert_eq!(rules.reversed, None);
    }

    #[test]
    fn keys_no_path_can_reach_are_never_used() {
        // Paths are looked up in upper then lower case: "Region" is neither.
        let satisfied = json!({"Region": "US", "plan": "pro"});
        let blocked = json!({"Region": "EU", "plan": "free"});
        let rules = ComposedRules::of(&satisfied, &blocked).unwrap();
        assert_eq!(rules.first["path"], "plan");
        assert_eq!(rules.second, json!({"path": "plan", "op": "exists"}));
    }

    #[test]
    fn removes_a_nested_leaf() {
        let state = json!({"a": {"b": 1, "c": 2}});
        assert_eq!(without(&state, "a.b"), Some(json!({"a": {"c": 2}})));
        assert_eq!(without(&state, "a.x"), None);
    }
}
