//! The multi-call probe: one request naming several subjects, for which
//! the model makes several governed calls at once. A gate that judges
//! only the first call of a model message passes every single-call turn
//! and lets the second refund of a batch through unjudged.

use super::scenarios::Conversations;
use super::ProceduralPack;
use crate::assertion::Assertion;
use crate::packs::arguments::ArgumentChecks;
use crate::scenario::Step;

impl ProceduralPack {
    /// `multi_call_prompt`, when given, is a prompt of its own.
    pub(super) fn check_multi_call(&self, checks: &mut ArgumentChecks) {
        let Some(prompt) = &self.multi_call_prompt else {
            return;
        };
        checks.text("multi_call_prompt", prompt);
        checks.require(
            prompt != &self.satisfied_prompt && prompt != &self.blocked_prompt,
            "multi_call_prompt",
            "repeats an enforcement prompt, which names one subject; the probe needs a \
             request that makes several governed calls at once",
        );
    }

    /// The seed's steps, then the multi-call prompt under the blocked state
    /// (every call refused, nothing applied) and under the satisfied state
    /// (every call admitted), each call judged in the gate's trace.
    pub(super) fn multi_call_steps(&self) -> Vec<Step> {
        let c = self.conversation.as_str();
        let prompt = self.multi_call_prompt.clone().unwrap_or_default();
        let judged = |admitted| Assertion::EveryCallJudged {
            tool: self.action_tool.clone(),
            stage: self.precondition_stage.clone(),
            admitted,
        };
        let mut steps = self.steps(&Conversations::one(c), self.restart_before_enforcement);
        steps.push(
            Step::prompt("several calls, blocked", &prompt, c)
                .with_state(self.blocked_state.clone())
                .asserting([
                    self.same_ids(),
                    judged(false),
                    Assertion::tool_succeeded(&self.action_tool, 0),
                    // The refused calls reached nothing of the governed
                    // effect, by whichever tool.
                    self.governed_effect_withheld(),
                ]),
        );
        steps.push(
            Step::prompt("several calls, satisfied", &prompt, c)
                .with_state(self.satisfied_state.clone())
                .asserting([self.same_ids(), judged(true)]),
        );
        steps
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::packs::procedural::fixture::refund_pack;
    use crate::packs::procedural::MULTI_CALL;

    fn pack(multi_call_prompt: Option<&str>) -> ProceduralPack {
        ProceduralPack {
            multi_call_prompt: multi_call_prompt.map(str::to_owned),
            ..refund_pack()
        }
    }

    fn runs(pack: &ProceduralPack) -> bool {
        pack.scenarios().iter().any(|s| s.name == MULTI_CALL)
    }

    #[test]
    fn runs_only_with_a_multi_call_prompt() {
        assert!(!runs(&pack(None)));
        let with = pack(Some("refund orders 6 and 7"));
        assert!(with.check().is_ok());
        assert!(runs(&with));
        let steps = with.multi_call_steps();
        let labels: Vec<&str> = steps
            .iter()
            .rev()
            .take(2)
            .map(|s| s.label.as_str())
            .collect();
        assert_eq!(
            labels,
            ["several calls, satisfied", "several calls, blocked"]
        );
        let refused = &steps[steps.len() - 2];
        assert_eq!(refused.state, Some(json!({"region": "EU"})));
        assert!(refused.assertions.iter().any(|a| matches!(
            a,
            Assertion::EveryCallJudged {
                admitted: false,
                ..
            }
        )));
    }

    #[test]
    fn an_enforcement_prompt_is_refused_as_the_multi_call_prompt() {
        let errors = pack(Some("refund order 5")).check().unwrap_err();
        assert!(errors.iter().any(|e| e.argument == "multi_call_prompt"));
        assert!(pack(Some("")).check().is_err());
    }
}
