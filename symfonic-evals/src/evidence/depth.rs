//! A bound on how deep the JSON in a turn's evidence may nest.
//!
//! Everything the harness does with evidence (comparing, digesting,
//! serialising a report, dropping) walks JSON recursively, and a value ten
//! thousand levels deep would overflow the stack inside the harness's own
//! code. So evidence is measured once, at the door, without recursion; a
//! value deeper than [`MAX_JSON_DEPTH`] ends the step with a named error,
//! and the record is taken apart without recursion too.

use serde_json::Value;

use super::record::TurnRecord;
use super::tool_call::ToolOutcome;

/// The deepest JSON nesting a turn's evidence may hold: as deep as the
/// protocol's own parser accepts from a child process.
pub const MAX_JSON_DEPTH: usize = 128;

/// Whether `value` nests deeper than [`MAX_JSON_DEPTH`], walked with an
/// explicit stack.
pub(crate) fn too_deep(value: &Value) -> bool {
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        if depth > MAX_JSON_DEPTH {
            return true;
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    false
}

/// Drops `value` without recursing: children are moved onto a heap stack
/// before their parent is freed.
pub(crate) fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

impl TurnRecord {
    /// Where this record's JSON nests too deep, if anywhere: report-safe
    /// (names an attribute, a call id or a field, never a value).
    pub(crate) fn too_deep_at(&self) -> Option<String> {
        if let Some(name) = self
            .attributes()
            .iter()
            .find(|(_, v)| too_deep(v))
            .map(|(n, _)| n)
        {
            return Some(format!("attribute `{name}`"));
        }
        for call in self.tool_calls() {
            let result = match &call.outcome {
                ToolOutcome::Succeeded { result } => too_deep(result),
                _ => false,
            };
            if too_deep(&call.arguments) || result {
                return Some("a tool call".into());
            }
        }
        for resolved in self.resolved() {
            let result =
                matches!(&resolved.outcome, ToolOutcome::Succeeded { result } if too_deep(result));
            if result || resolved.arguments.as_ref().is_some_and(too_deep) {
                return Some("a resolved call".into());
            }
        }
        if self
            .pause()
            .and_then(|p| p.question.as_ref())
            .is_some_and(too_deep)
        {
            return Some("the pause's question".into());
        }
        None
    }

    /// Why this record breaks the evidence contract, if it does: a call
    /// left pending by a turn that did not pause, or a question id no
    /// redemption could hand back. Report-safe.
    pub(crate) fn contract_problem(&self) -> Option<String> {
        let paused = self.pause().is_some();
        if !paused && self.tool_calls().iter().any(super::ToolCall::is_pending) {
            return Some("a completed turn reports a pending tool call".into());
        }
        if self
            .resolved()
            .iter()
            .any(|r| matches!(r.outcome, ToolOutcome::Pending))
        {
            return Some("a resolved call is reported still pending".into());
        }
        let pending: Vec<&str> = self
            .tool_calls()
            .iter()
            .filter(|call| call.is_pending())
            .map(|call| call.id.as_str())
            .collect();
        if let Some(pause) = self.pause() {
            if pause
                .editable
                .iter()
                .any(|id| !pending.contains(&id.as_str()))
            {
                return Some(
                    "the pause declares a call editable that it does not report pending".into(),
                );
            }
        }
        if let Some(id) = self.pause().and_then(|p| p.question_id.as_deref()) {
            if id.is_empty() || id.chars().count() > 256 {
                return Some(
                    "the pause's question id is empty or longer than 256 characters".into(),
                );
            }
        }
        None
    }

    /// Takes the record apart without recursing (see [`dismantle`]).
    pub(crate) fn dismantle(self) {
        for value in self.into_values() {
            dismantle(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> Value {
        let mut value = Value::Null;
        for _ in 0..levels {
            value = Value::Array(vec![value]);
        }
        value
    }

    #[test]
    fn depth_is_measured_and_values_dropped_without_recursion() {
        assert!(!too_deep(&nested(MAX_JSON_DEPTH - 1)));
        assert!(too_deep(&nested(MAX_JSON_DEPTH + 1)));
        // Deep enough to overflow any thread's stack if either recursed.
        let value = nested(1_000_000);
        assert!(too_deep(&value));
        dismantle(value);
    }

    #[test]
    fn an_editable_call_must_be_one_the_pause_holds_pending() {
        use crate::{Pause, ToolCall, TurnRecord};
        let held = ToolCall::pending("c1", "cancel", serde_json::json!({"customer": 42}));
        let paused = |editable: &str| {
            TurnRecord::builder()
                .tool_call(held.clone())
                .paused(Pause::new("cancel", true, "t").editing([editable]))
                .build()
        };
        assert_eq!(paused("c1").contract_problem(), None);
        assert!(paused("c2").contract_problem().is_some());
    }
}
