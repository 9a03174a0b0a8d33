//! The edit answer: how a person's decisions on the calls a pause holds
//! are spelled when the deployment lets them edit a call.
//!
//! The shape is the one LangChain's human-in-the-loop middleware takes
//! (`{"decisions": [{"type": "edit", "edited_action": {"name": ..., "args":
//! ...}}]}`), the form the field's most used middleware settled on, so a
//! graph built on it takes the harness's answer as it is. One decision per
//! call the pause holds pending, in the order the paused record reports
//! them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A person's decision on one held call.
///
/// ```
/// use serde_json::json;
/// use symfonic_evals::{EditDecision, EditedAction};
/// let answer = EditDecision::answer(vec![EditDecision::Edit {
///     edited_action: EditedAction { name: "refund".into(), args: json!({"amount": 180}) },
/// }]);
/// assert_eq!(answer["decisions"][0]["type"], "edit");
/// assert_eq!(EditDecision::read(&answer).unwrap().len(), 1);
/// assert_eq!(EditDecision::read(&json!({"approved": true})), None);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EditDecision {
    /// Run the call as it was asked for.
    Approve,
    /// Run the call as the person edited it.
    Edit {
        /// The call to run instead: the same tool, other arguments.
        edited_action: EditedAction,
    },
    /// Do not run the call: a denial (reported refused, not failed), with
    /// the person's reason when they gave one.
    Reject {
        /// Why, in the person's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

/// The call an `edit` decision runs instead of the held one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditedAction {
    /// The tool; an edit never changes it.
    pub name: String,
    /// The arguments the call must run with.
    pub args: Value,
}

impl EditDecision {
    /// The answer carrying `decisions`, one per held call.
    pub fn answer(decisions: Vec<Self>) -> Value {
        serde_json::json!({ "decisions": decisions })
    }

    /// The decisions `answer` carries, when it is an edit answer (an
    /// object whose only field is `decisions`, each a decision above).
    pub fn read(answer: &Value) -> Option<Vec<Self>> {
        let fields = answer.as_object()?;
        if fields.len() != 1 {
            return None;
        }
        serde_json::from_value(fields.get("decisions")?.clone()).ok()
    }
}
