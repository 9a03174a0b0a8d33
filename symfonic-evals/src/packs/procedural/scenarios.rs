//! The procedural pack's scenarios: the seed's steps, and each probe as
//! those steps varied (other conversations, the other restart placement,
//! binding assertions, a continuation sweeping the gate).

use serde_json::{json, Value};

use super::sweep::GateSweep;
use super::{ProceduralPack, APPROVED, PROBES};
use crate::assertion::{Assertion, Retries};
use crate::evidence::{Role, StageOutcome};
use crate::packs::probes::Selection;
use crate::scenario::{Scenario, Step};

/// The name of the seed scenario, as the pack's contract gives it.
pub const SEED: &str = "procedural-review-and-enforcement";

/// The probe that rejects a draft at the review door: declared like the
/// lifecycle probes, but it composes no rule it needs.
const REJECT_DRAFT: &str = "procedural/reject-draft";

/// Whether `probe` is one the harness drives through the review door under
/// a rule it composes.
fn probe_is_lifecycle(probe: &str) -> bool {
    probe != REJECT_DRAFT
        && PROBES
            .iter()
            .any(|p| p.name == probe && p.declared == Some(super::REVIEW))
}

/// Where each step of a procedural scenario runs.
pub(super) struct Conversations {
    learn: String,
    review: String,
    satisfied: String,
    blocked: String,
}

impl Conversations {
    /// Every step in one conversation, as the seed runs them.
    pub(super) fn one(conversation: &str) -> Self {
        Self {
            learn: conversation.to_owned(),
            review: conversation.to_owned(),
            satisfied: conversation.to_owned(),
            blocked: conversation.to_owned(),
        }
    }
}

impl ProceduralPack {
    fn approved_rows(&self) -> Value {
        json!([[APPROVED, self.action_tool]])
    }

    pub(super) fn same_ids(&self) -> Assertion {
        Assertion::same_non_empty(
            &self.review_identity_attribute,
            &self.enforcement_identity_attribute,
        )
    }

    /// The demonstration turns; the last must show the cycle's own promoted
    /// count.
    pub(super) fn demonstrations(
        &self,
        prompts: &[String],
        label: &str,
        conversation: &str,
    ) -> Vec<Step> {
        let last = prompts.len().saturating_sub(1);
        prompts
            .iter()
            .enumerate()
            .map(|(i, prompt)| {
                let step = Step::prompt(format!("{label} {}", i + 1), prompt, conversation);
                if i == last {
                    step.asserting([Assertion::AttributeCount {
                        name: self.promotion_attribute.clone(),
                        minimum: 1,
                    }])
                } else {
                    step
                }
            })
            .collect()
    }

    /// Before review: the draft is on file, absent from the model input and
    /// inert at the gate, and the tool runs once.
    fn draft_probe(&self, conversation: &str, rows: Value) -> Step {
        Step::prompt("draft probe", &self.draft_prompt, conversation)
            .with_state(self.draft_state.clone())
            .asserting([
                Assertion::attribute_equals(&self.review_attribute, rows),
                Assertion::attribute_equals(&self.enforcement_identity_attribute, json!([])),
                Assertion::PromptRecallExcludes(self.procedure_fragment.clone()),
                Assertion::tool_succeeded(&self.action_tool, 1),
                self.ledger_after(1),
            ])
    }

    /// The ledger after `effects` admitted calls: exact counts, or under
    /// `retries = same_key` the applied effects alone.
    fn ledger_after(&self, effects: u64) -> Assertion {
        match self.retries {
            Retries::Exact => Assertion::ledger(effects, effects, 0),
            Retries::SameKey => Assertion::EffectsApplied { effects },
        }
    }

    /// The operator's review turn; the evidence is the review door's listing.
    fn review(&self, conversation: &str, rows: Value) -> Step {
        Step::prompt("review", &self.review_prompt, conversation)
            .by(Role::Operator)
            .asserting([Assertion::attribute_equals(&self.review_attribute, rows)])
    }

    /// The admitted enforcement turn, after the restart when it restarts.
    fn satisfied(&self, conversation: &str, restart: bool, rows: Value) -> Step {
        Step::prompt("satisfied", &self.satisfied_prompt, conversation)
            .with_state(self.satisfied_state.clone())
            .restarting(restart)
            .asserting([
                // Re-read after the restart: the row has to still be there.
                Assertion::attribute_equals(&self.review_attribute, rows),
                self.same_ids(),
                Assertion::PromptRecallContains(self.procedure_fragment.clone()),
                Assertion::stage_observed(&self.precondition_stage, None, [("checked", 1)]),
                Assertion::tool_succeeded(&self.action_tool, 1),
                self.ledger_after(2),
            ])
    }

    /// The refused enforcement turn: the call reached the gate, was
    /// rejected, and performed nothing.
    fn blocked(&self, conversation: &str) -> Step {
        Step::prompt("blocked", &self.blocked_prompt, conversation)
            .with_state(self.blocked_state.clone())
            .asserting([
                self.same_ids(),
                Assertion::stage_observed(
                    &self.precondition_stage,
                    Some(StageOutcome::Rejected),
                    [("refused", 1)],
                ),
                Assertion::tool_called(&self.action_tool, 1),
                Assertion::tool_succeeded(&self.action_tool, 0),
                // The refused call performed nothing, and no other tool
                // reached the governed effect; an effect of the
                // deployment's own beside it (a notice, a log of the
                // request) is not the governed one.
                self.governed_effect_withheld(),
            ])
    }

    /// The seed's steps, with each step's conversation and the restart
    /// placement given.
    pub(super) fn steps(&self, at: &Conversations, restart: bool) -> Vec<Step> {
        let mut steps = self.demonstrations(&self.demonstrations, "demonstration", &at.learn);
        steps.push(self.draft_probe(&at.learn, json!([["draft", ""]])));
        steps.push(self.review(&at.review, self.approved_rows()));
        steps.push(self.satisfied(&at.satisfied, restart, self.approved_rows()));
        steps.push(self.blocked(&at.blocked));
        steps
    }

    /// The seed scenario, exactly as the pack's contract fixes it.
    pub fn seed(&self) -> Scenario {
        let steps = self.steps(
            &Conversations::one(&self.conversation),
            self.restart_before_enforcement,
        );
        Scenario::new(SEED, steps, self.policy)
    }

    /// The seed scenario and every enabled probe.
    pub fn scenarios(&self) -> Vec<Scenario> {
        let selection = Selection::new(&self.skip_probes);
        let mut scenarios = vec![self.seed()];
        for probe in PROBES {
            let given = match probe.name {
                "procedural/enforcement-without-restart" => self.restart_before_enforcement,
                "procedural/enforcement-after-restart" => !self.restart_before_enforcement,
                "procedural/decoy-stays-draft" => !self.decoy_demonstrations.is_empty(),
                "procedural/control-promotes-nothing" => !self.control_demonstrations.is_empty(),
                "procedural/paraphrases" => !self.paraphrases.is_empty(),
                "procedural/review-binding" => self.interleaved_prompt.is_some(),
                super::MULTI_CALL => self.multi_call_prompt.is_some(),
                super::THROUGH_APPROVAL => self.approval_prompt.is_some(),
                super::ONE_DEMONSTRATION => self.one_demonstration_runs(),
                "procedural/two-procedures" => {
                    !self.decoy_demonstrations.is_empty()
                        && self.lifecycle_gap(probe.name).is_none()
                }
                name if probe_is_lifecycle(name) => self.lifecycle_gap(name).is_none(),
                _ => probe.needs.is_none(),
            };
            if selection.runs(probe, given) {
                scenarios.push(self.probe(probe.name));
            }
        }
        scenarios
    }

    /// Why `probe`, on by default, is left out of these arguments' run, when
    /// the seed already does what it would: the two enforcement probes
    /// take the placement the seed's `restart_before_enforcement` does not.
    pub(crate) fn placement(&self, probe: &str) -> Option<String> {
        if let Some(gap) = self
            .lifecycle_gap(probe)
            .filter(|_| probe_is_lifecycle(probe))
        {
            return Some(gap);
        }
        let seed = match (probe, self.restart_before_enforcement) {
            ("procedural/enforcement-without-restart", false) => "without",
            ("procedural/enforcement-after-restart", true) => "after",
            _ => return None,
        };
        Some(format!(
            "restart_before_enforcement = {}: the seed already enforces {seed} a restart",
            self.restart_before_enforcement
        ))
    }

    fn probe(&self, name: &'static str) -> Scenario {
        let c = self.conversation.as_str();
        let probe = |steps: Vec<Step>| Scenario::probe(name, steps, self.policy);
        let seed_at = Conversations::one(c);
        match name {
            "procedural/enforcement-without-restart" | "procedural/enforcement-after-restart" => {
                probe(self.steps(&seed_at, !self.restart_before_enforcement))
            }
            "procedural/separate-conversations" => {
                let at = Conversations {
                    learn: c.to_owned(),
                    review: format!("{c}-operator"),
                    satisfied: format!("{c}-enforce-1"),
                    blocked: format!("{c}-enforce-2"),
                };
                probe(self.steps(&at, self.restart_before_enforcement))
            }
            "procedural/review-needs-operator" => {
                let mut steps = self.demonstrations(&self.demonstrations, "demonstration", c);
                steps.push(self.draft_probe(c, json!([["draft", ""]])));
                // A user's review, in the conversation and then in the
                // operator's own: the role decides, not the channel.
                let operators = self.operator_conversation();
                for (label, conversation) in [
                    ("review as a user", c),
                    (
                        "review as a user in the operator's conversation",
                        operators.as_str(),
                    ),
                ] {
                    steps.push(
                        Step::prompt(label, &self.review_prompt, conversation).asserting([
                            Assertion::attribute_equals(
                                &self.review_attribute,
                                json!([["draft", ""]]),
                            ),
                        ]),
                    );
                }
                steps.push(self.review(c, self.approved_rows()));
                probe(steps)
            }
            "procedural/identity-bound" => probe(self.bound_steps()),
            "procedural/gate-sweep" => probe(self.steps(&seed_at, self.restart_before_enforcement))
                .continued(GateSweep::of(self)),
            "procedural/decoy-stays-draft" => probe(self.decoy_steps()),
            "procedural/control-promotes-nothing" => probe(self.control_steps()),
            "procedural/rejected-demonstrations" => probe(self.rejected_steps()),
            "procedural/paraphrases" => probe(self.paraphrase_steps()),
            "procedural/review-binding" => probe(self.binding_steps()),
            REJECT_DRAFT => probe(self.reject_draft_steps()),
            super::MULTI_CALL => probe(self.multi_call_steps()),
            super::THROUGH_APPROVAL => probe(self.through_approval_steps()),
            super::ONE_DEMONSTRATION => probe(self.one_demonstration_steps()),
            "procedural/replicas" => {
                // The second instance runs from the start; it enforces
                // what the first approved, without a restart.
                let mut steps = self.steps(&seed_at, false);
                let n = steps.len();
                for step in &mut steps[n - 2..] {
                    step.instance = 1;
                }
                probe(steps)
            }
            lifecycle if probe_is_lifecycle(lifecycle) => self.lifecycle_probe(lifecycle),
            other => unreachable!("the procedural pack has no probe {other}"),
        }
    }

    /// The seed's steps with the published procedures bound to the ids on
    /// the review and both enforcement turns, and the pack's states judged
    /// by the contract's evaluator.
    fn bound_steps(&self) -> Vec<Step> {
        let bound = |enforced| Assertion::ProceduresBound {
            procedures: self.procedures_attribute.clone(),
            review_ids: self.review_identity_attribute.clone(),
            enforcement_ids: self.enforcement_identity_attribute.clone(),
            tool: self.action_tool.clone(),
            enforced,
        };
        let verdict = |state: &Value, holds| Assertion::PreconditionVerdict {
            procedures: self.procedures_attribute.clone(),
            tool: self.action_tool.clone(),
            state: state.clone(),
            holds,
        };
        let mut steps = self.steps(
            &Conversations::one(&self.conversation),
            self.restart_before_enforcement,
        );
        let n = steps.len();
        // The draft probe is a turn after the promotion with nothing new
        // to learn: the cycle's own count is zero, a count of what is on
        // file (or of the episodes read) is not.
        for step in steps.iter_mut().filter(|s| s.label == "draft probe") {
            step.assertions.push(Assertion::AttributeEqualsIfPresent {
                name: self.promotion_attribute.clone(),
                expected: json!(0),
            });
        }
        steps[n - 3].assertions.push(bound(false));
        steps[n - 2]
            .assertions
            .extend([bound(true), verdict(&self.satisfied_state, true)]);
        steps[n - 1]
            .assertions
            .extend([bound(true), verdict(&self.blocked_state, false)]);
        steps
    }

    /// Demonstrations, then decoys promoting a second draft, which the
    /// review must leave a draft: absent from the model input, inert at
    /// the gate.
    fn decoy_steps(&self) -> Vec<Step> {
        let c = self.conversation.as_str();
        let decoy = self.decoy_fragment.clone().unwrap_or_default();
        let reviewed = json!([[APPROVED, self.action_tool], ["draft", ""]]);
        let mut steps = self.demonstrations(&self.demonstrations, "demonstration", c);
        steps.extend(self.demonstrations(&self.decoy_demonstrations, "decoy", c));
        steps.push(
            self.draft_probe(c, json!([["draft", ""], ["draft", ""]]))
                .asserting([Assertion::PromptRecallExcludes(decoy.clone())]),
        );
        steps.push(self.review(c, reviewed.clone()));
        steps.push(
            self.satisfied(c, self.restart_before_enforcement, reviewed)
                .asserting([Assertion::PromptRecallExcludes(decoy.clone())]),
        );
        steps.push(
            self.blocked(c)
                .asserting([Assertion::PromptRecallExcludes(decoy)]),
        );
        steps
    }

    /// Turns with nothing to learn, each promoting nothing, and nothing on
    /// file at the end; then the demonstrations promote their draft, and
    /// the same turns again must promote nothing, so a count of what is on
    /// file (zero on an empty store) is told from the cycle's own.
    fn control_steps(&self) -> Vec<Step> {
        let c = self.conversation.as_str();
        let promotes_nothing = |label: &str, empty_at_end: bool| {
            let last = self.control_demonstrations.len().saturating_sub(1);
            self.control_demonstrations
                .iter()
                .enumerate()
                .map(move |(i, prompt)| {
                    let step = Step::prompt(format!("{label} {}", i + 1), prompt, c).asserting([
                        Assertion::attribute_equals(&self.promotion_attribute, json!(0)),
                    ]);
                    if empty_at_end && i == last {
                        step.asserting([Assertion::attribute_equals(
                            &self.review_attribute,
                            json!([]),
                        )])
                    } else {
                        step
                    }
                })
                .collect::<Vec<_>>()
        };
        let mut steps = promotes_nothing("control", true);
        steps.extend(self.demonstrations(&self.demonstrations, "demonstration", c));
        steps.extend(promotes_nothing("control after promotion", false));
        steps
    }
}
