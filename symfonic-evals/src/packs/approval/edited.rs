//! The `approval/edited-call` probe: a person edits the call a pause holds,
//! and the call that runs is the edited one, or the edit is refused; never
//! the call as the model asked for it.
//!
//! The edit is derived from the pause itself, so the probe needs no
//! argument: the first call the pause declares editable, one of its
//! arguments changed to another value of the same type, sent as the edit
//! answer ([`EditDecision`]) with every other held call approved as asked.

use serde_json::{Map, Value};

use super::kept::kept;
use super::ApprovalResumePack;
use crate::assertion::Assertion;
use crate::evidence::{EditDecision, EditedAction, ToolCall};
use crate::runner::Session;
use crate::scenario::{Continuation, Step};

/// The argument the edit changes and the value it gives it: the first
/// number (moved on by one), else the first string (with `-edited` after
/// it), else the first boolean (flipped), in the order the arguments are
/// listed. `None` when the call has no such argument (only objects,
/// arrays or nulls, or no arguments at all). The tool's name is never
/// touched: an edit changes what a call does, not which tool it is.
pub(crate) fn derive_edit(arguments: &Value) -> Option<(String, Value)> {
    let fields = arguments.as_object()?;
    let first = |kind: fn(&Value) -> bool| fields.iter().find(|(_, value)| kind(value));
    let (name, value) = first(Value::is_number)
        .or_else(|| first(Value::is_string))
        .or_else(|| first(Value::is_boolean))?;
    let edited = match value {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::from(i.checked_add(1).unwrap_or(i - 1)),
            (None, Some(u), _) => Value::from(u - 1),
            (None, None, Some(f)) => Value::from(f + 1.0),
            _ => return None,
        },
        Value::String(text) => Value::String(format!("{text}-edited")),
        Value::Bool(flag) => Value::Bool(!flag),
        _ => return None,
    };
    Some((name.clone(), edited))
}

/// After the pause (in `<conversation>-edited`): when it declares a held
/// call editable, the edit answer for it, which may return a record or
/// fail with any error; either way the call of that tool that runs carries
/// the edit, or none runs and none of its effects is applied
/// ([`Assertion::EditApplied`]). A pause that declares nothing editable is
/// noted, not failed: the deployment declared the trait, not that every
/// call may be edited.
pub(super) struct EditedCall {
    pub(super) pack: ApprovalResumePack,
}

impl EditedCall {
    /// Where the probe pauses and edits.
    pub(super) fn conversation(pack: &ApprovalResumePack) -> String {
        format!("{}-edited", pack.conversation)
    }
}

impl Continuation for EditedCall {
    fn describe(&self) -> String {
        "when the pause names a held call editable: `edited resume`, the edit answer \
         (`{\"decisions\": [...]}`, that call's first number moved on by one, else its first \
         string with `-edited` after it, else its first boolean flipped; every other held call \
         approved), which may return a record or fail with any error; the call that runs \
         carries the edit, or none runs and none of its tool's effects is applied \
         (EditApplied). A pause naming no editable call gets a note instead"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        let conversation = Self::conversation(&self.pack);
        let Some(record) = session.last_record() else {
            return;
        };
        let Some(pause) = record.pause() else {
            return;
        };
        let held: Vec<&ToolCall> = record
            .tool_calls()
            .iter()
            .filter(|call| call.is_pending())
            .collect();
        let Some(call) = pause
            .editable
            .first()
            .and_then(|id| held.iter().find(|call| &call.id == id))
        else {
            session.unproven(
                "the pause named no held call editable (`editable`), so there was no edit to \
                 make; the probe ran the pause only",
            );
            return;
        };
        let Some((argument, edited)) = derive_edit(&call.arguments) else {
            session.unproven(
                "the editable call has no number, string or boolean argument to change, so \
                 there was no edit to make; the probe ran the pause only",
            );
            return;
        };
        let mut arguments: Map<String, Value> =
            call.arguments.as_object().cloned().unwrap_or_default();
        let original = arguments
            .insert(argument.clone(), edited.clone())
            .unwrap_or(Value::Null);
        let decisions = held
            .iter()
            .map(|other| {
                if other.id == call.id {
                    EditDecision::Edit {
                        edited_action: EditedAction {
                            name: call.name.clone(),
                            args: Value::Object(arguments.clone()),
                        },
                    }
                } else {
                    EditDecision::Approve
                }
            })
            .collect();
        let step = Step::resume(
            "edited resume",
            EditDecision::answer(decisions),
            conversation,
        )
        .record_or_any_error()
        .asserting([Assertion::EditApplied {
            call: call.id.clone(),
            tool: call.name.clone(),
            argument,
            original,
            edited,
        }]);
        session.run(&kept(step));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::derive_edit;

    #[test]
    fn an_edit_changes_one_plain_argument_keeping_its_type() {
        assert_eq!(
            derive_edit(&json!({"note": "x", "amount": 200, "rush": true})),
            Some(("amount".into(), json!(201)))
        );
        assert_eq!(
            derive_edit(&json!({"note": "x", "rush": true})),
            Some(("note".into(), json!("x-edited")))
        );
        assert_eq!(
            derive_edit(&json!({"rush": false, "items": [1]})),
            Some(("rush".into(), json!(true)))
        );
        assert_eq!(
            derive_edit(&json!({"rate": 0.5})),
            Some(("rate".into(), json!(1.5)))
        );
        assert_eq!(
            derive_edit(&json!({"big": u64::MAX})),
            Some(("big".into(), json!(u64::MAX - 1)))
        );
        for nothing in [json!({}), json!({"items": [1], "x": null}), json!("text")] {
            assert_eq!(derive_edit(&nothing), None, "{nothing}");
        }
    }
}
