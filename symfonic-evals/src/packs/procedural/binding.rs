//! The review-binding probe: a turn that calls another tool between the
//! draft and the review, so a review door that binds the approved
//! procedure to whatever tool was called last (rather than the draft's
//! tool, or the one the operator named) governs the wrong tool.

use serde_json::json;

use super::scenarios::Conversations;
use super::ProceduralPack;
use crate::assertion::Assertion;
use crate::scenario::Step;

impl ProceduralPack {
    /// The seed's steps with `interleaved_prompt` sent after the draft
    /// probe and before the review: it must call a tool, none of them
    /// `action_tool`, and the review that follows must still approve a
    /// procedure governing `action_tool`, which the enforcement turns
    /// then enforce.
    pub(super) fn binding_steps(&self) -> Vec<Step> {
        let c = self.conversation.as_str();
        let mut steps = self.steps(&Conversations::one(c), self.restart_before_enforcement);
        let Some(prompt) = &self.interleaved_prompt else {
            return steps;
        };
        let review = steps
            .iter()
            .position(|s| s.label == "review")
            .unwrap_or(steps.len());
        steps.insert(
            review,
            Step::prompt("another tool", prompt, c).asserting([
                Assertion::tool_called(&self.action_tool, 0),
                // At least one call: the tool called last is another one.
                Assertion::ToolCallIdsUnique {
                    minimum: 1,
                    across_trial: false,
                },
                Assertion::attribute_equals(&self.review_attribute, json!([["draft", ""]])),
            ]),
        );
        steps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packs::procedural::fixture::refund_pack;

    fn pack() -> ProceduralPack {
        refund_pack()
    }

    #[test]
    fn another_tool_is_called_between_the_draft_and_the_review() {
        let without = pack();
        assert!(!without
            .scenarios()
            .iter()
            .any(|s| s.name == "procedural/review-binding"));
        let with = ProceduralPack {
            interleaved_prompt: Some("where is the parcel for order 31?".into()),
            ..pack()
        };
        assert!(with.check().is_ok());
        let scenario = with
            .scenarios()
            .into_iter()
            .find(|s| s.name == "procedural/review-binding")
            .expect("the probe runs with an interleaved prompt");
        let labels: Vec<&str> = scenario.steps.iter().map(|s| s.label.as_str()).collect();
        let draft = labels.iter().position(|l| *l == "draft probe");
        let other = labels.iter().position(|l| *l == "another tool");
        let review = labels.iter().position(|l| *l == "review");
        assert!(draft < other && other < review, "{labels:?}");
    }

    #[test]
    fn an_interleaved_prompt_that_is_an_action_prompt_is_refused() {
        for repeated in ["refund order 3", "refund order 4", ""] {
            let errors = ProceduralPack {
                interleaved_prompt: Some(repeated.into()),
                ..pack()
            }
            .check()
            .expect_err("refused");
            assert!(
                errors.iter().any(|e| e.argument == "interleaved_prompt"),
                "{errors:?}"
            );
        }
    }
}
