//! The through-approval probe: the procedural pack composed with human
//! approval on the governed tool. A deployment that asks a person before
//! the call runs and enforces procedures at a gate has two doors on one
//! tool; a graph that routes an approved request straight to the tool
//! skips the second. After the seed approved the procedure, the request
//! that pauses is approved under the blocked state (the gate must still
//! refuse, with no governed effect) and under the satisfied state (the
//! approved call is carried out, once); then, with the procedure in force,
//! the approval holds as the approval pack requires: its replay is
//! refused, and a denial under the satisfied state carries nothing out
//! (a gate that would admit the call does not overrule the person).

use serde_json::Value;

use super::scenarios::Conversations;
use super::ProceduralPack;
use crate::assertion::Assertion;
use crate::evidence::{StageOutcome, PAUSED};
use crate::packs::approval::denial_of;
use crate::packs::arguments::ArgumentChecks;
use crate::scenario::{ErrorMatch, Step};

impl ProceduralPack {
    /// `approval_prompt` and `approval_answer` come together, the prompt is
    /// a request of its own and the answer says something.
    pub(super) fn check_through_approval(&self, checks: &mut ArgumentChecks) {
        match (&self.approval_prompt, &self.approval_answer) {
            (None, None) => {}
            (Some(_), None) => checks.require(
                false,
                "approval_answer",
                "is needed with `approval_prompt`: it is the person's answer that approves \
                 the paused request",
            ),
            (None, Some(_)) => checks.require(
                false,
                "approval_prompt",
                "is needed with `approval_answer`: it is the request the person's answer \
                 approves",
            ),
            (Some(prompt), Some(answer)) => {
                checks.text("approval_prompt", prompt);
                checks.require(
                    ![
                        &self.draft_prompt,
                        &self.satisfied_prompt,
                        &self.blocked_prompt,
                    ]
                    .contains(&prompt),
                    "approval_prompt",
                    "repeats a seed prompt, which the seed runs without a pause; the request \
                     the person must approve is another one",
                );
                checks.state("approval_answer", answer);
            }
        }
    }

    /// The seed's steps, then the request that pauses, approved under the
    /// blocked state (refused by the gate after the approval) and under
    /// the satisfied state (carried out once), each in a conversation of
    /// its own so each pause has its own token.
    pub(super) fn through_approval_steps(&self) -> Vec<Step> {
        let c = self.conversation.as_str();
        let prompt = self.approval_prompt.clone().unwrap_or_default();
        let answer = self.approval_answer.clone().unwrap_or(Value::Null);
        let mut steps = self.steps(&Conversations::one(c), self.restart_before_enforcement);
        let paused = |label: &str, conversation: &str, state: &Value| {
            Step::prompt(label, &prompt, conversation)
                .with_state(state.clone())
                .asserting([
                    Assertion::attribute_equals(PAUSED, Value::Bool(true)),
                    // Nothing happens before the person answers.
                    Assertion::ledger_moved(0, 0, 0),
                ])
        };
        let blocked = format!("{c}-approval-blocked");
        steps.push(paused(
            "approval asked, blocked",
            &blocked,
            &self.blocked_state,
        ));
        steps.push(
            Step::resume("approved, blocked", answer.clone(), &blocked).asserting([
                Assertion::stage_observed(
                    &self.precondition_stage,
                    Some(StageOutcome::Rejected),
                    [("refused", 1)],
                ),
                Assertion::ledger_moved(0, 0, 0),
                self.governed_effect_withheld(),
                self.same_ids(),
            ]),
        );
        let satisfied = format!("{c}-approval-satisfied");
        steps.push(paused(
            "approval asked, satisfied",
            &satisfied,
            &self.satisfied_state,
        ));
        steps.push(
            Step::resume("approved, satisfied", answer.clone(), &satisfied).asserting([
                self.same_ids(),
                Assertion::stage_observed(&self.precondition_stage, None, [("checked", 1)]),
                Assertion::tool_effects(&self.action_tool, 1, self.retries),
            ]),
        );
        // The person's decision holds with the procedure in force: the
        // spent approval is not redeemed again, and a denial is not
        // overruled by a gate that would admit the call.
        steps.push(
            Step::resume("replayed, satisfied", answer.clone(), &satisfied)
                .expecting(ErrorMatch::any())
                .asserting([Assertion::ledger_moved(0, 0, 0)]),
        );
        if let Some(denial) = denial_of(&answer) {
            let denied = format!("{c}-approval-denied");
            steps.push(paused(
                "approval asked, denied",
                &denied,
                &self.satisfied_state,
            ));
            steps.push(
                Step::resume("denied, satisfied", denial, &denied)
                    .record_or_any_error()
                    .asserting([self.governed_effect_withheld()]),
            );
        }
        steps
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::packs::procedural::fixture::refund_pack;
    use crate::packs::procedural::THROUGH_APPROVAL;

    fn pack(prompt: Option<&str>, answer: Option<Value>) -> ProceduralPack {
        ProceduralPack {
            approval_prompt: prompt.map(str::to_owned),
            approval_answer: answer,
            ..refund_pack()
        }
    }

    fn runs(pack: &ProceduralPack) -> bool {
        pack.scenarios().iter().any(|s| s.name == THROUGH_APPROVAL)
    }

    #[test]
    fn runs_with_a_prompt_and_its_answer() {
        assert!(!runs(&pack(None, None)));
        let with = pack(
            Some("refund order 8 in full"),
            Some(json!({"approved": true})),
        );
        assert!(with.check().is_ok());
        assert!(runs(&with));
        let steps = with.through_approval_steps();
        let first = steps
            .iter()
            .position(|s| s.label == "approval asked, blocked")
            .expect("the composed steps follow the seed's");
        let labels: Vec<&str> = steps[first..].iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "approval asked, blocked",
                "approved, blocked",
                "approval asked, satisfied",
                "approved, satisfied",
                "replayed, satisfied",
                "approval asked, denied",
                "denied, satisfied"
            ]
        );
        let refused = &steps[first + 1];
        assert!(refused.assertions.iter().any(|a| matches!(
            a,
            Assertion::StageObserved {
                outcome: Some(StageOutcome::Rejected),
                ..
            }
        )));
        assert_eq!(steps[first].state, Some(json!({"region": "EU"})));
        // The denial is the answer's one boolean flipped; an answer that
        // holds none leaves the denial out.
        assert_eq!(
            steps.last().map(|s| &s.input),
            Some(&crate::scenario::StepInput::Resume {
                answer: json!({"approved": false}),
                token: crate::scenario::TokenSource::Own,
                question: crate::scenario::QuestionSource::Genuine,
            })
        );
        let unflippable = pack(Some("refund order 8 in full"), Some(json!({"ok": "yes"})));
        assert!(!unflippable
            .through_approval_steps()
            .iter()
            .any(|s| s.label == "denied, satisfied"));
    }

    #[test]
    fn the_prompt_and_the_answer_come_together() {
        let alone = pack(Some("refund order 8 in full"), None)
            .check()
            .unwrap_err();
        assert!(alone.iter().any(|e| e.argument == "approval_answer"));
        let answer_alone = pack(None, Some(json!({"approved": true})))
            .check()
            .unwrap_err();
        assert!(answer_alone.iter().any(|e| e.argument == "approval_prompt"));
        let seed = pack(Some("refund order 5"), Some(json!({"approved": true})));
        assert!(seed
            .check()
            .unwrap_err()
            .iter()
            .any(|e| e.argument == "approval_prompt"));
        assert!(pack(Some("refund order 8"), Some(json!({})))
            .check()
            .is_err());
    }
}
