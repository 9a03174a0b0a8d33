//! State predicates: `{"path": ..., "op": ..., "value": ...}` judged against
//! a turn's state.
//!
//! This is the one interpreter of the predicate contract: a deployment's
//! tool gate calls it (the procedural pack then judges that gate's outcome in
//! the governance trace), and nobody carries a second copy that could drift
//! from it while both keep answering.
//!
//! Two rules shape every answer:
//! - **fail closed**: a predicate nobody can evaluate does not match, because
//!   a filter that widens whenever someone mistypes it is no filter;
//! - **no state in the reason**: the reason names the path, the operator and
//!   the value the rule declared, and says how the state compared (absent,
//!   matches, differs), never what the state held. Reasons end up in logs.

use serde::Serialize;
use serde_json::Value;

use super::path::{json_eq, resolve_path};

/// The operators a predicate may use:
///
/// | `op` | matches when the state at `path` | `value` |
/// |---|---|---|
/// | `eq` | is present and equals `value` (numbers by value) | any JSON |
/// | `neq` | is present and differs from `value`; a missing key does not match | any JSON |
/// | `in` | is present and equals one of `value`'s items | a JSON array |
/// | `exists` | is present (any value, `null` included) | none |
///
/// `path` is dotted (`account.region`); each segment is looked up as
/// written in UPPER case first, then in lower case (see [`resolve_path`]).
/// Any other operator, or a predicate that is not such an object, does not
/// match (fail closed).
pub const PREDICATE_OPERATORS: [&str; 4] = ["eq", "neq", "in", "exists"];

/// Whether one predicate matched, and a line saying why.
///
/// The reason never contains a value the state held, so it is safe to log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PredicateOutcome {
    /// Whether the predicate holds for the state.
    pub matched: bool,
    /// Why, in terms of the rule and of how the state compared.
    pub reason: String,
}

impl PredicateOutcome {
    fn closed(reason: impl Into<String>) -> Self {
        Self {
            matched: false,
            reason: reason.into(),
        }
    }
}

/// Answers one predicate against `state`.
///
/// `state` is anything that serializes to JSON (a `serde_json::Value`, a
/// struct deriving `Serialize`, a map); state that cannot be serialized does
/// not match. Numbers compare by value, so `5` equals `5.0`.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::evaluate_state_predicate;
///
/// #[derive(serde::Serialize)]
/// struct Turn { region: &'static str }
///
/// let rule = json!({"path": "region", "op": "eq", "value": "US"});
/// assert!(evaluate_state_predicate(&Turn { region: "US" }, &rule).matched);
///
/// let outcome = evaluate_state_predicate(&json!({"region": "EU"}), &rule);
/// assert!(!outcome.matched);
/// assert!(outcome.reason.contains("differs"));
/// assert!(!outcome.reason.contains("EU"));
///
/// // A string is never a list: `in` refuses rather than substring-matching.
/// let sloppy = json!({"path": "region", "op": "in", "value": "US"});
/// assert!(!evaluate_state_predicate(&json!({"region": "U"}), &sloppy).matched);
/// ```
pub fn evaluate_state_predicate<S>(state: &S, predicate: &Value) -> PredicateOutcome
where
    S: Serialize + ?Sized,
{
    match serde_json::to_value(state) {
        Ok(state) => evaluate_on_value(&state, predicate),
        Err(_) => PredicateOutcome::closed("state is not representable as JSON"),
    }
}

/// The evaluator proper, over state already in JSON form.
pub(crate) fn evaluate_on_value(state: &Value, predicate: &Value) -> PredicateOutcome {
    let Some(rule) = predicate.as_object() else {
        return PredicateOutcome::closed(format!(
            "predicate must be an object, got {}",
            kind_of(predicate)
        ));
    };
    let path = match rule.get("path") {
        Some(Value::String(path)) if !path.is_empty() => path.as_str(),
        _ => return PredicateOutcome::closed("missing or empty `path`"),
    };
    let op = match rule.get("op") {
        Some(Value::String(op)) if PREDICATE_OPERATORS.contains(&op.as_str()) => op.as_str(),
        other => {
            let shown = other.map_or_else(|| "none".to_owned(), Value::to_string);
            return PredicateOutcome::closed(format!(
                "unknown operator {shown} (allowed: {})",
                PREDICATE_OPERATORS.join(", ")
            ));
        }
    };
    let resolved = resolve_path(state, path);
    if op == "exists" {
        let matched = resolved.is_some();
        let seen = if matched { "present" } else { "absent" };
        return PredicateOutcome {
            matched,
            reason: format!("`{path}` exists -> {matched} (state: {seen})"),
        };
    }
    let Some(declared) = rule.get("value") else {
        return PredicateOutcome::closed(format!("operator `{op}` requires `value`"));
    };
    if op == "in" && !declared.is_array() {
        return PredicateOutcome::closed(format!(
            "`in` requires an array value, got {}",
            kind_of(declared)
        ));
    }
    let Some(actual) = resolved else {
        // An absent key fails every value-taking operator, `neq` included:
        // "absent or different" is two predicates, written as two.
        return PredicateOutcome::closed(format!(
            "`{path}` {op} {declared} -> false (state: absent)"
        ));
    };
    let same = match op {
        "in" => declared
            .as_array()
            .is_some_and(|members| members.iter().any(|m| json_eq(m, actual))),
        _ => json_eq(actual, declared),
    };
    let matched = if op == "neq" { !same } else { same };
    let compared = if same { "matches" } else { "differs" };
    PredicateOutcome {
        matched,
        reason: format!("`{path}` {op} {declared} -> {matched} (state: {compared})"),
    }
}

/// The state predicates in a precondition, unwrapped from their `state` key.
///
/// A precondition list mixes bare tool identifiers ("call this first") with
/// `{"state": {...}}` entries. Only the latter are state predicates; the
/// former answer a different question and are left alone. A single
/// `{"state": ...}` object not wrapped in a list counts as a one-entry list.
/// An entry whose `state` is not an object is still returned, so that it
/// fails closed when evaluated instead of being silently dropped.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::state_predicates_in;
///
/// let precondition = json!([
///     "lookup_account",
///     {"state": {"path": "region", "op": "eq", "value": "US"}},
/// ]);
/// let predicates = state_predicates_in(&precondition);
/// assert_eq!(predicates, vec![&json!({"path": "region", "op": "eq", "value": "US"})]);
/// ```
pub fn state_predicates_in(precondition: &Value) -> Vec<&Value> {
    entries(precondition)
        .unwrap_or_default()
        .iter()
        .filter_map(|entry| entry.as_object()?.get("state"))
        .collect()
}

/// Whether every state predicate in `precondition` matches `state`.
///
/// A precondition with no state predicates applies everywhere: that is what
/// writing none means. A precondition holding an entry that is neither a bare
/// tool identifier nor a `{"state": ...}` rule (an unwrapped predicate, a
/// misspelled key, a number) applies nowhere: a rule nobody can read must
/// not quietly become no rule at all.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::skill_applies;
///
/// let only_us = json!([{"state": {"path": "region", "op": "eq", "value": "US"}}]);
/// assert!(skill_applies(&json!({"region": "US"}), &only_us));
/// assert!(!skill_applies(&json!({"region": "EU"}), &only_us));
/// assert!(skill_applies(&json!({}), &json!(["lookup_account"])));
/// let unwrapped = json!([{"path": "region", "op": "eq", "value": "US"}]);
/// assert!(!skill_applies(&json!({"region": "EU"}), &unwrapped));
/// ```
pub fn skill_applies<S>(state: &S, precondition: &Value) -> bool
where
    S: Serialize + ?Sized,
{
    match serde_json::to_value(state) {
        Ok(state) => applies_on_value(&state, precondition),
        Err(_) => false,
    }
}

/// [`skill_applies`] for state that is already JSON, so a gate judging
/// several procedures converts the turn state once.
pub(crate) fn applies_on_value(state: &Value, precondition: &Value) -> bool {
    let readable = entries(precondition).is_some_and(|entries| {
        entries.iter().all(|entry| {
            entry.is_string()
                || entry
                    .as_object()
                    .is_some_and(|rule| rule.contains_key("state"))
        })
    });
    readable
        && state_predicates_in(precondition)
            .iter()
            .all(|predicate| evaluate_on_value(state, predicate).matched)
}

/// Why `precondition` cannot be read, if it cannot: an entry that is
/// neither a tool identifier nor a `{"state": ...}` rule, or a predicate
/// with no path, an unknown operator, a missing value, or `in` without a
/// list. Such a precondition fails closed everywhere, so a harness
/// comparing a gate with this evaluator must say it could not read the
/// rule rather than report agreement about a rule that says nothing.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::contracts::precondition_problem;
///
/// assert_eq!(precondition_problem(&json!([{"state": {"path": "region", "op": "eq", "value": "US"}}])), None);
/// let typo = precondition_problem(&json!([{"state": {"path": "region", "op": "equals", "value": "US"}}]));
/// assert!(typo.unwrap().contains("entry 1"));
/// ```
pub fn precondition_problem(precondition: &Value) -> Option<String> {
    let Some(entries) = entries(precondition) else {
        return Some(format!(
            "a precondition is none, one entry or a list, not {}",
            kind_of(precondition)
        ));
    };
    for (index, entry) in entries.iter().enumerate() {
        let n = index + 1;
        if entry.is_string() {
            continue;
        }
        let Some(predicate) = entry.as_object().and_then(|rule| rule.get("state")) else {
            return Some(format!(
                "entry {n} is neither a tool name nor a {{\"state\": ...}} rule"
            ));
        };
        if let Some(problem) = predicate_problem(predicate) {
            return Some(format!("entry {n}: {problem}"));
        }
    }
    None
}

/// Why one predicate cannot be evaluated, if it cannot.
fn predicate_problem(predicate: &Value) -> Option<String> {
    let Some(rule) = predicate.as_object() else {
        return Some(format!(
            "predicate is {}, not an object",
            kind_of(predicate)
        ));
    };
    if !matches!(rule.get("path"), Some(Value::String(path)) if !path.is_empty()) {
        return Some("missing or empty `path`".into());
    }
    let op = match rule.get("op") {
        Some(Value::String(op)) if PREDICATE_OPERATORS.contains(&op.as_str()) => op.as_str(),
        _ => return Some("unknown operator".into()),
    };
    match (op, rule.get("value")) {
        ("exists", _) => None,
        (_, None) => Some(format!("operator `{op}` requires `value`")),
        ("in", Some(value)) if !value.is_array() => Some("`in` requires an array value".into()),
        _ => None,
    }
}

/// The entries of a precondition written as none (`null`), one entry, or an
/// ordered list; `None` for a shape that is none of these.
fn entries(precondition: &Value) -> Option<&[Value]> {
    match precondition {
        Value::Null => Some(&[]),
        Value::Array(items) => Some(items),
        Value::Object(_) | Value::String(_) => Some(std::slice::from_ref(precondition)),
        Value::Bool(_) | Value::Number(_) => None,
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
