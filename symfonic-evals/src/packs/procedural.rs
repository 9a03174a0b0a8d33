//! The procedural skills pack: demonstrate, promote, review, persist, enforce.

use serde_json::{json, Value};

use super::definition::ArgumentChecks;
use super::{ArgumentError, PackKind};
use crate::assertion::Assertion;
use crate::capability::{Requirements, PROCEDURAL_PRECONDITION, PROCEDURAL_REVIEW};
use crate::contracts::PRECONDITION_STAGE;
use crate::evidence::StageOutcome;
use crate::scenario::{Scenario, Step, TrialPolicy};

/// The review status of an approved procedure.
pub const APPROVED: &str = "approved";

/// Arguments of the procedural skills pack. `Default` fills the optional
/// arguments with their documented defaults and leaves the required ones
/// empty, which [`check`](Self::check) refuses.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProceduralPack {
    /// Turns that give consolidation something to generalise; the last must
    /// show the promoted count the cycle reported.
    pub demonstrations: Vec<String>,
    /// The operator turn under which the draft is approved.
    pub review_prompt: String,
    /// A tool-calling turn before review: the draft must be inert and unseen.
    pub draft_prompt: String,
    /// The enforcement turn whose state satisfies the precondition.
    pub satisfied_prompt: String,
    /// The enforcement turn whose state does not.
    pub blocked_prompt: String,
    /// State under which the approved precondition holds.
    pub satisfied_state: Value,
    /// State under which it does not; must differ from `satisfied_state`.
    pub blocked_state: Value,
    /// State for the pre-approval tool call.
    pub draft_state: Value,
    /// The tool the procedure governs and the review row must name.
    pub action_tool: String,
    /// Text the recall block must show once, and only once, approved.
    pub procedure_fragment: String,
    /// Where the deployment publishes the promoted count.
    pub promotion_attribute: String,
    /// Where it publishes the review rows.
    pub review_attribute: String,
    /// Identity digests of approved procedures read through the review door.
    pub review_identity_attribute: String,
    /// Identity digests of the procedures the precondition stage read.
    pub enforcement_identity_attribute: String,
    /// The precondition stage's name in the governance trace.
    pub precondition_stage: String,
    /// Rebuild the deployment before the satisfied turn.
    pub restart_before_enforcement: bool,
    /// The conversation every step runs in.
    pub conversation: String,
    /// Trials and passes required (not read from JSON: a policy holds a
    /// duration, which the attribute spells as `step_timeout_ms`).
    #[serde(skip)]
    pub policy: TrialPolicy,
}

impl Default for ProceduralPack {
    fn default() -> Self {
        Self {
            demonstrations: Vec::new(),
            review_prompt: String::new(),
            draft_prompt: String::new(),
            satisfied_prompt: String::new(),
            blocked_prompt: String::new(),
            satisfied_state: Value::Null,
            blocked_state: Value::Null,
            draft_state: Value::Null,
            action_tool: String::new(),
            procedure_fragment: String::new(),
            promotion_attribute: "procedural_promoted".into(),
            review_attribute: "procedural_review".into(),
            review_identity_attribute: "procedural_review_ids".into(),
            enforcement_identity_attribute: "procedural_enforcement_ids".into(),
            precondition_stage: PRECONDITION_STAGE.into(),
            restart_before_enforcement: true,
            conversation: "procedural".into(),
            policy: TrialPolicy::default(),
        }
    }
}

impl ProceduralPack {
    /// Refuses arguments that would make a pack unable to discriminate.
    ///
    /// # Errors
    ///
    /// Every offending argument.
    pub fn check(&self) -> Result<(), Vec<ArgumentError>> {
        let mut checks = ArgumentChecks::default();
        checks.require(
            !self.demonstrations.is_empty(),
            "demonstrations",
            "needs at least one demonstration turn",
        );
        checks.require(
            self.demonstrations.iter().all(|d| !d.is_empty()),
            "demonstrations",
            "a demonstration must not be an empty prompt",
        );
        checks.text("review_prompt", &self.review_prompt);
        checks.text("draft_prompt", &self.draft_prompt);
        checks.text("satisfied_prompt", &self.satisfied_prompt);
        checks.text("blocked_prompt", &self.blocked_prompt);
        checks.text("action_tool", &self.action_tool);
        checks.text("procedure_fragment", &self.procedure_fragment);
        checks.state("satisfied_state", &self.satisfied_state);
        checks.state("blocked_state", &self.blocked_state);
        checks.state("draft_state", &self.draft_state);
        checks.require(
            self.satisfied_state != self.blocked_state,
            "blocked_state",
            "equals satisfied_state, so the refusal turn would repeat the admitted one \
             and prove no precondition was read",
        );
        for (argument, value) in [
            ("promotion_attribute", &self.promotion_attribute),
            ("review_attribute", &self.review_attribute),
            ("review_identity_attribute", &self.review_identity_attribute),
            (
                "enforcement_identity_attribute",
                &self.enforcement_identity_attribute,
            ),
            ("precondition_stage", &self.precondition_stage),
            ("conversation", &self.conversation),
        ] {
            checks.text(argument, value);
        }
        checks.policy(&self.policy);
        checks.finish()
    }

    /// Tools plus the two procedural traits.
    pub fn requirements(&self) -> Requirements {
        Requirements {
            capabilities: vec![PackKind::Procedural.capability().into()],
            traits: vec![PROCEDURAL_PRECONDITION.into(), PROCEDURAL_REVIEW.into()],
            ..Requirements::default()
        }
    }

    /// The pack's one scenario.
    pub fn scenario(&self) -> Scenario {
        let conversation = self.conversation.as_str();
        let tool = self.action_tool.as_str();
        let approved = json!([[APPROVED, tool]]);
        let ledger = |n| Assertion::SideEffectCount {
            attempts: n,
            effects: n,
            duplicates: 0,
        };
        let same_ids = || {
            Assertion::same_non_empty(
                &self.review_identity_attribute,
                &self.enforcement_identity_attribute,
            )
        };
        let last = self.demonstrations.len().saturating_sub(1);
        let mut steps: Vec<Step> = self
            .demonstrations
            .iter()
            .enumerate()
            .map(|(i, prompt)| {
                let step = Step::prompt(format!("demonstration {}", i + 1), prompt, conversation);
                if i == last {
                    step.asserting([Assertion::AttributeCount {
                        name: self.promotion_attribute.clone(),
                        minimum: 1,
                    }])
                } else {
                    step
                }
            })
            .collect();
        steps.push(
            Step::prompt("draft probe", &self.draft_prompt, conversation)
                .with_state(self.draft_state.clone())
                .asserting([
                    Assertion::attribute_equals(&self.review_attribute, json!([["draft", ""]])),
                    Assertion::attribute_equals(&self.enforcement_identity_attribute, json!([])),
                    Assertion::PromptRecallExcludes(self.procedure_fragment.clone()),
                    Assertion::tool_succeeded(tool, 1),
                    ledger(1),
                ]),
        );
        steps.push(
            Step::prompt("review", &self.review_prompt, conversation).asserting([
                Assertion::attribute_equals(&self.review_attribute, approved.clone()),
            ]),
        );
        steps.push(
            Step::prompt("satisfied", &self.satisfied_prompt, conversation)
                .with_state(self.satisfied_state.clone())
                .restarting(self.restart_before_enforcement)
                .asserting([
                    Assertion::attribute_equals(&self.review_attribute, approved),
                    same_ids(),
                    Assertion::PromptRecallContains(self.procedure_fragment.clone()),
                    Assertion::stage_observed(&self.precondition_stage, None, [("checked", 1)]),
                    Assertion::tool_succeeded(tool, 1),
                    ledger(2),
                ]),
        );
        steps.push(
            Step::prompt("blocked", &self.blocked_prompt, conversation)
                .with_state(self.blocked_state.clone())
                .asserting([
                    same_ids(),
                    Assertion::stage_observed(
                        &self.precondition_stage,
                        Some(StageOutcome::Rejected),
                        [("refused", 1)],
                    ),
                    Assertion::tool_called(tool, 1),
                    Assertion::tool_succeeded(tool, 0),
                    ledger(2),
                ]),
        );
        Scenario {
            name: "procedural-review-and-enforcement".into(),
            steps,
            policy: self.policy,
        }
    }
}
