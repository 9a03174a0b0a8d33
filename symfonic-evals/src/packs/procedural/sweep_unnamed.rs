//! Gate-sweep states that vary the leaves no published predicate names.
//!
//! The contract's verdict depends only on the paths the published
//! predicates name. A gate with a second door on another field (an
//! "urgent" flag that admits whatever the rule says, an allow-listed
//! account, a test customer) agrees with the contract on every state the
//! named-path candidates make, because they all carry that field as the
//! satisfied state has it. These candidates take each declared state and
//! replace the value of one leaf no predicate names with a value seen
//! elsewhere in the pack's declared states: the contract's verdict stays
//! the declared state's own, and the gate's must too. The sweep guesses no
//! backdoor value; it asks only whether the gate's verdict moves with a
//! field the reviewed rule never mentions, using values the adopter wrote.
//!
//! Precision, so that an honest deployment is never failed:
//! - a gate reading only the named paths passes by construction: a leaf
//!   counts as named when its path, in any casing, is a predicate's path,
//!   lies under one or above one, and named leaves are never varied, so
//!   the contract's verdict is always the declared state's own;
//! - no key is added or removed, only one leaf's value replaced, so a desk
//!   whose tools need another field present finds it present;
//! - where the contract admits, the tool must run, so the replacement is
//!   only a value the same path holds in a declared state the pack already
//!   runs the tool under (the draft state, whose call runs before any
//!   approval), never one borrowed from another field or from a state
//!   whose call is refused;
//! - where the contract refuses, the tool never runs, so the value another
//!   declared state holds at the same path is tried first, then values of
//!   the same JSON type other unnamed leaves hold.
//!
//! What it cannot excuse: a desk that refuses, at the precondition stage
//! or at another stage before the tool, on a field outside the published
//! rule whose value the draft state carries. Such a desk enforces a rule
//! nobody reviewed, which is what the sweep exists to report.

use serde_json::Value;

use super::sweep_states::Candidate;
use crate::contracts::{skill_applies, state_predicates_in};

/// A state the pack declares, as these candidates read it.
pub(super) struct Declared<'a> {
    /// How labels name it (`blocked`).
    pub(super) name: &'static str,
    pub(super) state: &'a Value,
    /// Whether the pack already requires the tool to run under this state,
    /// so its values are ones the tool accepts.
    pub(super) tool_runs: bool,
}

/// The candidates, refused and admitted, with how many distinct unnamed
/// leaves the declared states hold (what the default budget grows with).
pub(super) struct Unnamed {
    /// Each with whether the contract admits it, most telling first.
    pub(super) candidates: Vec<(Candidate, bool)>,
    pub(super) leaves: usize,
}

/// A leaf: the keys that reach it, as written, and its value.
type Leaf = (Vec<String>, Value);

/// Every candidate for `preconditions` around `declared`, without repeats
/// (one may equal another declared state: the draft state, which the
/// sweep does not otherwise try after the approval). Ordered by priority: the value
/// another declared state holds at the same path before values of other
/// leaves, each value's first alternative on every base before any
/// second, bases in `declared` order.
pub(super) fn unnamed(preconditions: &[Value], declared: &[Declared<'_>]) -> Unnamed {
    let named: Vec<Vec<String>> = preconditions
        .iter()
        .flat_map(state_predicates_in)
        .filter_map(|p| p.get("path").and_then(Value::as_str))
        .map(|path| path.split('.').map(str::to_lowercase).collect())
        .collect();
    let leaves_of: Vec<Vec<Leaf>> = declared
        .iter()
        .map(|d| {
            let mut found = Vec::new();
            collect(d.state, &mut Vec::new(), &mut found);
            found.retain(|(keys, _)| !is_named(keys, &named));
            found
        })
        .collect();
    let mut distinct: Vec<&Vec<String>> = leaves_of.iter().flatten().map(|(k, _)| k).collect();
    distinct.sort();
    distinct.dedup();
    let admits = |state: &Value| preconditions.iter().all(|p| skill_applies(state, p));
    // (tier, rank, candidate, admitted), sorted stably by tier then rank.
    let mut ranked: Vec<(u8, usize, Candidate, bool)> = Vec::new();
    for (b, base) in declared.iter().enumerate() {
        let admitted = admits(base.state);
        for (keys, value) in &leaves_of[b] {
            let path = keys.join(".");
            let on = |class: String| {
                format!(
                    "`{path}` named by no predicate, on the {} state: {class}",
                    base.name
                )
            };
            let mut rank = 0;
            for other in declared.iter().filter(|d| d.name != base.name) {
                if admitted && !other.tool_runs {
                    continue;
                }
                let Some(seen) = at(other.state, keys) else {
                    continue;
                };
                if seen != value {
                    let state = replaced(base.state, keys, seen.clone());
                    let shape = on(format!("the value the {} state holds", other.name));
                    ranked.push((0, rank, Candidate { state, shape }, admitted));
                    rank += 1;
                }
            }
            if admitted {
                continue;
            }
            let mut rank = 0;
            for (other, leaves) in declared.iter().zip(&leaves_of) {
                for (elsewhere, seen) in leaves {
                    if elsewhere == keys || seen == value || !same_type(seen, value) {
                        continue;
                    }
                    let state = replaced(base.state, keys, seen.clone());
                    let class = format!(
                        "the value `{}` holds in the {} state",
                        elsewhere.join("."),
                        other.name
                    );
                    ranked.push((
                        1,
                        rank,
                        Candidate {
                            state,
                            shape: on(class),
                        },
                        admitted,
                    ));
                    rank += 1;
                }
            }
        }
    }
    ranked.sort_by_key(|(tier, rank, ..)| (*tier, *rank));
    let mut candidates: Vec<(Candidate, bool)> = Vec::new();
    for (_, _, candidate, admitted) in ranked {
        if !candidates.iter().any(|(c, _)| c.state == candidate.state) {
            candidates.push((candidate, admitted));
        }
    }
    Unnamed {
        candidates,
        leaves: distinct.len(),
    }
}

/// Whether a leaf at `keys` is reached by, holds or lies under a named
/// path, comparing keys in any casing (wider than the evaluator's lookup,
/// so no leaf a gate might read as named is varied).
fn is_named(keys: &[String], named: &[Vec<String>]) -> bool {
    let lower: Vec<String> = keys.iter().map(|k| k.to_lowercase()).collect();
    named.iter().any(|path| {
        let common = path.len().min(lower.len());
        path[..common] == lower[..common]
    })
}

/// Every leaf of `value` (anything but a non-empty object) under `prefix`.
fn collect(value: &Value, prefix: &mut Vec<String>, found: &mut Vec<Leaf>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, child) in map {
                prefix.push(key.clone());
                collect(child, prefix, found);
                prefix.pop();
            }
        }
        // The state itself is never a leaf: only what it holds.
        _ if !prefix.is_empty() => found.push((prefix.clone(), value.clone())),
        _ => {}
    }
}

/// The value at `keys`, each key as written.
fn at<'a>(state: &'a Value, keys: &[String]) -> Option<&'a Value> {
    keys.iter()
        .try_fold(state, |cursor, key| cursor.as_object()?.get(key))
}

/// `state` with the leaf at `keys` (which it holds) set to `value`.
fn replaced(state: &Value, keys: &[String], value: Value) -> Value {
    let mut out = state.clone();
    let slot = keys
        .iter()
        .try_fold(&mut out, |cursor, key| cursor.as_object_mut()?.get_mut(key));
    if let Some(slot) = slot {
        *slot = value;
    }
    out
}

fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn refund() -> (Vec<Value>, Value, Value, Value) {
        let pre = vec![json!([
            {"state": {"path": "region", "op": "eq", "value": "US"}},
            {"state": {"path": "receipt", "op": "exists"}},
        ])];
        let satisfied = json!({"region": "US", "receipt": "r-104", "priority": "normal"});
        let blocked = json!({"region": "EU", "receipt": "r-105", "priority": "normal"});
        let draft = json!({"region": "EU", "priority": "urgent"});
        (pre, satisfied, blocked, draft)
    }

    fn declared<'a>(s: &'a Value, b: &'a Value, d: &'a Value) -> [Declared<'a>; 3] {
        [
            Declared {
                name: "blocked",
                state: b,
                tool_runs: false,
            },
            Declared {
                name: "satisfied",
                state: s,
                tool_runs: true,
            },
            Declared {
                name: "draft",
                state: d,
                tool_runs: true,
            },
        ]
    }

    #[test]
    fn an_unnamed_leaf_takes_the_value_another_declared_state_holds() {
        let (pre, satisfied, blocked, draft) = refund();
        let found = unnamed(&pre, &declared(&satisfied, &blocked, &draft));
        assert_eq!(found.leaves, 1);
        let first = &found.candidates[0];
        assert_eq!(
            first.0.state,
            json!({"region": "EU", "receipt": "r-105", "priority": "urgent"})
        );
        assert_eq!(
            first.0.shape,
            "`priority` named by no predicate, on the blocked state: the value the draft state holds"
        );
        assert!(!first.1, "the blocked state's verdict");
        assert!(found.candidates.iter().any(|(c, admitted)| *admitted
            && c.state == json!({"region": "US", "receipt": "r-104", "priority": "urgent"})));
    }

    #[test]
    fn the_verdict_is_the_base_states_and_no_key_comes_or_goes() {
        let (pre, satisfied, blocked, draft) = refund();
        let states = declared(&satisfied, &blocked, &draft);
        let found = unnamed(&pre, &states);
        assert!(found.candidates.len() >= 3, "{:#?}", found.candidates);
        let admits = |s: &Value| pre.iter().all(|p| skill_applies(s, p));
        let keys = |s: &Value| {
            let mut out = Vec::new();
            collect(s, &mut Vec::new(), &mut out);
            out.into_iter().map(|(k, _)| k).collect::<Vec<_>>()
        };
        for (candidate, admitted) in &found.candidates {
            assert_eq!(admits(&candidate.state), *admitted, "{}", candidate.shape);
            let base = states
                .iter()
                .find(|d| {
                    candidate
                        .shape
                        .contains(&format!("on the {} state", d.name))
                })
                .unwrap_or_else(|| panic!("{} names no base", candidate.shape));
            assert_eq!(
                keys(base.state),
                keys(&candidate.state),
                "{}",
                candidate.shape
            );
            assert_eq!(admits(base.state), *admitted, "{}", candidate.shape);
            for named in ["region", "receipt"] {
                assert_eq!(candidate.state.get(named), base.state.get(named));
            }
            assert!(!candidate.shape.contains("urgent") && !candidate.shape.contains("normal"));
        }
    }

    #[test]
    fn admitted_states_only_take_values_the_tool_already_ran_under() {
        let pre = vec![json!([{"state": {"path": "region", "op": "eq", "value": "US"}}])];
        let satisfied = json!({"region": "US", "account": "a-1", "channel": "web"});
        let blocked = json!({"region": "EU", "account": "a-9", "channel": "web"});
        let draft = json!({"region": "MX", "account": "a-2", "channel": "web"});
        let found = unnamed(&pre, &declared(&satisfied, &blocked, &draft));
        let admitted: Vec<&Value> = found
            .candidates
            .iter()
            .filter(|(_, a)| *a)
            .map(|(c, _)| &c.state)
            .collect();
        assert_eq!(
            admitted,
            [&json!({"region": "US", "account": "a-2", "channel": "web"})]
        );
        // Refused bases also try other leaves' values of the same type.
        assert!(found
            .candidates
            .iter()
            .any(|(c, _)| c.state == json!({"region": "EU", "account": "web", "channel": "web"})));
        assert_eq!(found.leaves, 2);
    }

    #[test]
    fn leaves_on_under_or_above_a_named_path_in_any_casing_stay_as_they_are() {
        let pre = vec![json!([
            {"state": {"path": "account.tier", "op": "eq", "value": "gold"}},
            {"state": {"path": "ticket", "op": "exists"}},
        ])];
        let satisfied = json!({"ACCOUNT": {"Tier": "gold", "owner": "o-1"},
                               "ticket": {"id": 1}, "flags": [1]});
        let blocked = json!({"ACCOUNT": {"Tier": "iron", "owner": "o-2"},
                             "ticket": {"id": 2}, "flags": [2]});
        let draft = json!({"account": {"tier": "iron"}});
        let found = unnamed(&pre, &declared(&satisfied, &blocked, &draft));
        let varied: Vec<&str> = found
            .candidates
            .iter()
            .map(|(c, _)| c.shape.split('`').nth(1).unwrap_or_default())
            .collect();
        assert!(
            varied
                .iter()
                .all(|p| ["ACCOUNT.owner", "flags"].contains(p)),
            "{varied:?}"
        );
        assert!(varied.contains(&"ACCOUNT.owner") && varied.contains(&"flags"));
        assert_eq!(found.leaves, 2);
    }

    #[test]
    fn the_draft_state_itself_is_tried_when_a_leaf_makes_the_blocked_state_it() {
        let pre = vec![json!([{"state": {"path": "region", "op": "neq", "value": "EU"}}])];
        let satisfied = json!({"region": "US", "priority": "normal"});
        let blocked = json!({"region": "EU", "priority": "normal"});
        let draft = json!({"region": "EU", "priority": "urgent"});
        let found = unnamed(&pre, &declared(&satisfied, &blocked, &draft));
        assert_eq!(found.candidates[0].0.state, draft);
        assert!(!found.candidates[0].1);
    }

    #[test]
    fn states_with_nothing_unnamed_give_nothing() {
        let pre = vec![json!([{"state": {"path": "region", "op": "eq", "value": "US"}}])];
        let (s, b, d) = (json!({"region": "US"}), json!({"region": "EU"}), json!({}));
        let found = unnamed(&pre, &declared(&s, &b, &d));
        assert!(found.candidates.is_empty());
        assert_eq!(found.leaves, 0);
    }
}
