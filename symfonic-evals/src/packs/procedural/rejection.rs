//! Rejection: demonstrations a reviewer marked wrong, and a draft the
//! operator rejected at the review door. Nothing may be learned from the
//! first; the second never governs and does not come back.
//!
//! Both are sound by default. Every probe starts from fresh fixtures, so in
//! the rejected-demonstrations probe the demonstrations marked rejected are
//! the only turns the deployment has seen, and the pack's own
//! demonstrations are on-topic by the seed's proof (they promote a draft);
//! any draft on file after them was learned from rejected handling. The
//! reject-draft probe drives the door the deployment declared, on a draft
//! the pack's own demonstrations promote.

use serde_json::json;

use super::ProceduralPack;
use crate::assertion::Assertion;
use crate::evidence::ReviewAction;
use crate::scenario::{ErrorMatch, Step};

impl ProceduralPack {
    /// The demonstrations the rejected-demonstrations probe sends: the
    /// adopter's, or the pack's own.
    fn rejected_prompts(&self) -> &[String] {
        if self.rejected_demonstrations.is_empty() {
            &self.demonstrations
        } else {
            &self.rejected_demonstrations
        }
    }

    fn rows_inert(&self) -> Assertion {
        Assertion::ReviewRowsInert {
            name: self.review_attribute.clone(),
        }
    }

    fn forgotten(&self) -> Assertion {
        Assertion::PromptRecallExcludes(self.procedure_fragment.clone())
    }

    /// The blocked turn where nothing governs: admitted, no identity
    /// enforced, the procedure absent from the model input, the rows inert.
    fn ungoverned(&self, label: &str, restart: bool) -> Step {
        self.enforce(label, &self.blocked_state, &[], restart)
            .asserting([self.forgotten(), self.rows_inert()])
    }

    /// Demonstrations marked rejected, each promoting nothing (when it
    /// publishes a count), with nothing live on file after them; then the
    /// blocked turn, which nothing governs.
    pub(super) fn rejected_steps(&self) -> Vec<Step> {
        let c = self.conversation.as_str();
        let prompts = self.rejected_prompts();
        let last = prompts.len().saturating_sub(1);
        let mut steps: Vec<Step> = prompts
            .iter()
            .enumerate()
            .map(|(i, prompt)| {
                let step = Step::prompt(format!("rejected {}", i + 1), prompt, c)
                    .rejected()
                    .asserting([Assertion::AttributeEqualsIfPresent {
                        name: self.promotion_attribute.clone(),
                        expected: json!(0),
                    }]);
                if i == last {
                    step.asserting([self.rows_inert(), self.published(Vec::new())])
                } else {
                    step
                }
            })
            .collect();
        steps.push(self.ungoverned("blocked", false));
        steps
    }

    /// The demonstrations promote their draft; the operator rejects it at
    /// the door; approving it afterwards is refused; it governs nothing at
    /// once and after a restart; the demonstrations again bring nothing
    /// back.
    pub(super) fn reject_draft_steps(&self) -> Vec<Step> {
        let c = self.conversation.as_str();
        let mut steps = self.demonstrations(&self.demonstrations, "demonstration", c);
        steps.push(
            Step::review(
                "reject",
                ReviewAction::Reject {
                    draft: self.procedure_fragment.clone(),
                },
                self.operator_conversation(),
            )
            .asserting([self.rows_inert(), self.published(Vec::new())]),
        );
        // A rejected draft is no draft: the door finds nothing to approve.
        let rule = self
            .composed_rules()
            .map_or_else(Vec::new, |rules| vec![rules.first]);
        steps.push(
            self.approve(
                "approve after reject",
                &self.procedure_fragment,
                rule,
                false,
            )
            .expecting(ErrorMatch::any()),
        );
        steps.push(self.ungoverned("blocked after reject", false));
        steps.push(self.ungoverned("blocked after restart", true));
        let again = self.demonstrations.iter().enumerate().map(|(i, prompt)| {
            Step::prompt(format!("demonstration again {}", i + 1), prompt, c)
                .asserting([self.rows_inert()])
        });
        steps.extend(again);
        steps.push(self.ungoverned("blocked after teaching again", false));
        steps
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::assertion::GateVerdict;
    use crate::evidence::Feedback;

    fn pack() -> ProceduralPack {
        ProceduralPack {
            demonstrations: vec!["refund order 1".into(), "refund order 2".into()],
            satisfied_state: json!({"region": "US"}),
            blocked_state: json!({"region": "EU"}),
            action_tool: "issue_refund".into(),
            procedure_fragment: "verify the account region".into(),
            ..ProceduralPack::default()
        }
    }

    #[test]
    fn the_pack_s_own_demonstrations_are_sent_rejected_by_default() {
        let steps = pack().rejected_steps();
        let rejected: Vec<_> = steps.iter().filter(|s| s.feedback.is_some()).collect();
        assert_eq!(rejected.len(), 2);
        assert!(rejected
            .iter()
            .all(|s| s.feedback == Some(Feedback::Rejected)));
        let blocked = steps.last().expect("a blocked turn");
        assert_eq!(blocked.feedback, None);
        assert!(blocked.assertions.iter().any(|a| matches!(
            a,
            Assertion::GateAgrees {
                verdict: GateVerdict::Admit,
                ..
            }
        )));
    }

    #[test]
    fn the_adopter_s_rejected_demonstrations_replace_the_pack_s() {
        let pack = ProceduralPack {
            rejected_demonstrations: vec!["refund order 9".into()],
            ..pack()
        };
        let steps = pack.rejected_steps();
        assert_eq!(steps.iter().filter(|s| s.feedback.is_some()).count(), 1);
    }

    #[test]
    fn a_door_rejected_draft_is_refused_approval_and_governs_nothing() {
        let steps = pack().reject_draft_steps();
        let labels: Vec<&str> = steps.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "demonstration 1",
                "demonstration 2",
                "reject",
                "approve after reject",
                "blocked after reject",
                "blocked after restart",
                "demonstration again 1",
                "demonstration again 2",
                "blocked after teaching again",
            ]
        );
        assert!(steps[3].expected_error().is_some());
        assert!(steps[5].restart.rebuilds());
    }
}
