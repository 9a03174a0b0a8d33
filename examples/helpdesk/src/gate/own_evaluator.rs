//! A precondition stage with the desk's own evaluator, as some twins carry
//! instead of the library's.
//!
//! It reads the approved procedures through the review door and names each
//! by its identity, exactly as the library's stage does, so everything a
//! reviewer and the seed scenario see agrees. Only the judging differs: a
//! hand-rolled key lookup in front of the library's comparison, or a
//! hand-written copy of the rule, or a fast lane on a field the rule does
//! not name, or values compared by their text. Each agrees with the library
//! on the two states the seed tries and disagrees on some state a gate
//! sweep generates, which is the point of carrying one.

use serde_json::{json, Map, Value};
use symfonic_evals::contracts::{
    evaluate_state_predicate, precondition_problem, resolve_path, skill_applies,
    state_predicates_in, FailureMode, GovernanceStage, Payload, Phase, StageError, StageVerdict,
    Subject, PRECONDITION_STAGE,
};

use crate::review::ReviewDoor;

/// How the hand-rolled lookup finds a path's value in the turn state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// Any casing of each key matches (`Region` finds `region`).
    CaseInsensitive,
    /// Only the lower-case spelling of each key is looked up.
    LowerCaseOnly,
    /// The library's lookup, but a missing key reads as `null`.
    MissingAsNull,
}

/// How the stage judges a procedure.
#[derive(Debug, Clone, PartialEq)]
pub enum Judge {
    /// The stored precondition, values found by a hand-rolled lookup.
    Looking(Lookup),
    /// A precondition compiled into the desk, whatever the review approved.
    Compiled(Value),
    /// The stored precondition's first predicate alone, by the library.
    FirstPredicateOnly,
    /// The stored precondition by the library, except that an urgent
    /// request (`"priority": "urgent"` in the turn state) skips it.
    UrgentFastLane,
    /// The stored precondition by the library, each value the state holds
    /// and each value a predicate declares read as text first, as a
    /// form-handling layer hands fields over: `"true"` is taken for `true`.
    AsText,
}

/// The stage; see the module documentation.
#[derive(Debug)]
pub struct OwnPrecondition {
    door: ReviewDoor,
    judge: Judge,
}

impl OwnPrecondition {
    /// A stage over `door` judging with `judge`.
    pub fn new(door: ReviewDoor, judge: Judge) -> Self {
        Self { door, judge }
    }
}

fn find<'a>(state: &'a Value, path: &str, lookup: Lookup) -> Option<&'a Value> {
    let mut cursor = state;
    for segment in path.split('.') {
        let object = cursor.as_object()?;
        cursor = match lookup {
            Lookup::CaseInsensitive => object
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(segment))
                .map(|(_, value)| value)?,
            Lookup::LowerCaseOnly => object.get(&segment.to_lowercase())?,
            Lookup::MissingAsNull => object
                .get(&segment.to_uppercase())
                .or_else(|| object.get(&segment.to_lowercase()))?,
        };
    }
    Some(cursor)
}

/// One predicate: the value found by `lookup`, compared by the library.
fn holds(state: &Value, predicate: &Value, lookup: Lookup) -> bool {
    let path = predicate.get("path").and_then(Value::as_str).unwrap_or("");
    let found = match (find(state, path, lookup), lookup) {
        (None, Lookup::MissingAsNull) => Some(Value::Null),
        (found, _) => found.cloned(),
    };
    let mut single = Map::new();
    if let Some(value) = found {
        single.insert("v".to_owned(), value);
    }
    let mut rule = predicate.clone();
    rule["path"] = json!("v");
    evaluate_state_predicate(&Value::Object(single), &rule).matched
}

/// A value as a form field carries it: a string as it is, anything else
/// as its JSON text (`true`, `1`, `null`); lists item by item.
fn as_text(value: &Value) -> Value {
    match value {
        Value::String(_) | Value::Object(_) => value.clone(),
        Value::Array(items) => Value::Array(items.iter().map(as_text).collect()),
        other => Value::String(other.to_string()),
    }
}

/// One predicate, the value found and the value declared both as text,
/// compared by the library.
fn holds_as_text(state: &Value, predicate: &Value) -> bool {
    let path = predicate.get("path").and_then(Value::as_str).unwrap_or("");
    let mut single = Map::new();
    if let Some(value) = resolve_path(state, path) {
        single.insert("v".to_owned(), as_text(value));
    }
    let mut rule = predicate.clone();
    rule["path"] = json!("v");
    if let Some(declared) = predicate.get("value") {
        rule["value"] = as_text(declared);
    }
    evaluate_state_predicate(&Value::Object(single), &rule).matched
}

impl Judge {
    fn applies(&self, state: &Value, precondition: &Value) -> bool {
        match self {
            Self::Looking(lookup) => {
                precondition_problem(precondition).is_none()
                    && state_predicates_in(precondition)
                        .iter()
                        .all(|predicate| holds(state, predicate, *lookup))
            }
            Self::Compiled(rule) => skill_applies(state, rule),
            Self::UrgentFastLane => {
                state.get("priority") == Some(&json!("urgent"))
                    || skill_applies(state, precondition)
            }
            Self::AsText => {
                precondition_problem(precondition).is_none()
                    && state_predicates_in(precondition)
                        .iter()
                        .all(|predicate| holds_as_text(state, predicate))
            }
            Self::FirstPredicateOnly => {
                precondition_problem(precondition).is_none()
                    && state_predicates_in(precondition)
                        .first()
                        .is_none_or(|predicate| evaluate_state_predicate(state, predicate).matched)
            }
        }
    }
}

impl GovernanceStage for OwnPrecondition {
    fn name(&self) -> &str {
        PRECONDITION_STAGE
    }

    fn phase(&self) -> Phase {
        Phase::ToolCall
    }

    fn failure_mode(&self) -> FailureMode {
        FailureMode::FailClosed
    }

    fn judge(&self, subject: &mut Subject) -> Result<StageVerdict, StageError> {
        let Payload::ToolCall { tool, .. } = &subject.payload else {
            return Ok(StageVerdict::abstain());
        };
        let governing = self
            .door
            .approved_for(tool)
            .map_err(|_| StageError::new("the procedure store could not be read"))?;
        let (mut checked, mut refused) = (0u64, 0u64);
        for procedure in &governing {
            subject.consult(procedure.identity());
            checked += 1;
            if !self.judge.applies(&subject.state, &procedure.precondition) {
                refused += 1;
            }
        }
        let verdict = match (checked, refused) {
            (0, _) => StageVerdict::abstain(),
            (_, 0) => StageVerdict::pass(),
            _ => StageVerdict::reject(format!(
                "{refused} of {checked} approved procedures do not hold for the turn state"
            )),
        };
        Ok(verdict.count("checked", checked).count("refused", refused))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_lookup_is_wrong_in_its_own_way() {
        let eq = json!({"path": "region", "op": "eq", "value": "US"});
        let exists = json!({"path": "receipt", "op": "exists"});
        let capitalised = json!({"Region": "US"});
        assert!(holds(&capitalised, &eq, Lookup::CaseInsensitive));
        assert!(!holds(&capitalised, &eq, Lookup::LowerCaseOnly));
        let upper = json!({"REGION": "US"});
        assert!(!holds(&upper, &eq, Lookup::LowerCaseOnly));
        assert!(holds(&upper, &eq, Lookup::MissingAsNull));
        assert!(holds(&json!({}), &exists, Lookup::MissingAsNull));
        assert!(!holds(&json!({}), &exists, Lookup::CaseInsensitive));
    }

    #[test]
    fn text_comparison_takes_a_boolean_for_its_text() {
        let verified = json!({"path": "verified", "op": "eq", "value": true});
        assert!(holds_as_text(&json!({"verified": true}), &verified));
        assert!(holds_as_text(&json!({"verified": "true"}), &verified));
        assert!(!evaluate_state_predicate(&json!({"verified": "true"}), &verified).matched);
        assert!(!holds_as_text(&json!({"verified": "True"}), &verified));
        assert!(!holds_as_text(&json!({}), &verified));
        let region = json!({"path": "region", "op": "eq", "value": "US"});
        assert!(holds_as_text(&json!({"region": "US"}), &region));
        assert!(!holds_as_text(&json!({"region": null}), &region));
    }
}
