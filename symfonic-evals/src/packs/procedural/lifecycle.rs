//! The lifecycle probes: the harness acts as the operator through the
//! structured review door (the `review` operation) and holds the
//! deployment to exactly what it approved, amended and revoked.
//!
//! The seed reviews once, in the adopter's words, and enforces once. Here
//! the harness composes rules from the pack's states (see `rules`), so a
//! door that stores less than was approved, a gate that caches the first
//! approval, a revoked procedure that still governs, a gate that reads one
//! of two procedures, and re-learning that rewrites an approved procedure
//! each fail a step of their own.

use serde_json::{json, Value};

use super::rules::{holds, without, ComposedRules};
use super::sweep::GateSweep;
use super::{ProceduralPack, APPROVED};
use crate::assertion::{Assertion, GateVerdict};
use crate::evidence::ReviewAction;
use crate::scenario::{Scenario, Step};

/// The labels later steps compare identities with.
const APPROVE: &str = "approve";

impl ProceduralPack {
    /// The rules the lifecycle probes send, composed from the pack's states.
    pub(super) fn composed_rules(&self) -> Option<ComposedRules> {
        ComposedRules::of(&self.satisfied_state, &self.blocked_state)
    }

    /// Why a lifecycle probe cannot run on these arguments, if it cannot.
    pub(super) fn lifecycle_gap(&self, probe: &str) -> Option<String> {
        let Some(rules) = self.composed_rules() else {
            return Some(
                "no path of satisfied_state holds a value blocked_state lacks, so the harness \
                 cannot compose a rule to approve"
                    .into(),
            );
        };
        (probe == "procedural/amend" && rules.reversed.is_none()).then(|| {
            "no path of blocked_state holds a value satisfied_state lacks, so the harness cannot \
             compose the amended rule"
                .into()
        })
    }

    /// The name the operator gives the procedure it approves.
    pub(super) fn procedure_name(&self, second: bool) -> String {
        let suffix = if second { "-second" } else { "" };
        format!("{}-procedure{suffix}", self.action_tool)
    }

    pub(super) fn approve(&self, label: &str, draft: &str, rule: Vec<Value>, second: bool) -> Step {
        Step::review(
            label,
            ReviewAction::Approve {
                procedure: self.procedure_name(second),
                draft: draft.to_owned(),
                tool: self.action_tool.clone(),
                precondition: rule,
            },
            self.operator_conversation(),
        )
    }

    pub(super) fn operator_conversation(&self) -> String {
        format!("{}-operator", self.conversation)
    }

    pub(super) fn published(&self, rules: Vec<Vec<Value>>) -> Assertion {
        Assertion::PublishedRules {
            procedures: self.procedures_attribute.clone(),
            tool: self.action_tool.clone(),
            rules,
        }
    }

    fn bound(&self, enforced: bool) -> Assertion {
        Assertion::ProceduresBound {
            procedures: self.procedures_attribute.clone(),
            review_ids: self.review_identity_attribute.clone(),
            enforcement_ids: self.enforcement_identity_attribute.clone(),
            tool: self.action_tool.clone(),
            enforced,
        }
    }

    fn since_approval(&self, name: &str, unchanged: bool) -> Assertion {
        Assertion::AttributeSinceStep {
            name: name.to_owned(),
            step: APPROVE.into(),
            unchanged,
        }
    }

    /// An enforcement turn under `state`: the gate must admit or refuse as
    /// `rules` (every procedure governing the tool) say, with the published
    /// procedures bound to the identities when one governs.
    pub(super) fn enforce(
        &self,
        label: &str,
        state: &Value,
        rules: &[Vec<Value>],
        restart: bool,
    ) -> Step {
        let admit = rules.iter().all(|rule| holds(state, rule));
        let prompt = if admit {
            &self.satisfied_prompt
        } else {
            &self.blocked_prompt
        };
        let verdict = if admit {
            GateVerdict::Admit
        } else {
            GateVerdict::Refuse
        };
        let step = Step::prompt(label, prompt, &self.conversation)
            .with_state(state.clone())
            .restarting(restart)
            .asserting([
                Assertion::GateAgrees {
                    tool: self.action_tool.clone(),
                    stage: self.precondition_stage.clone(),
                    verdict,
                },
                self.published(rules.to_vec()),
            ]);
        let step = if verdict == GateVerdict::Refuse {
            step.asserting([self.governed_effect_withheld()])
        } else {
            step
        };
        if rules.is_empty() {
            // Nothing governs: the gate read no procedure.
            step.asserting([Assertion::attribute_equals(
                &self.enforcement_identity_attribute,
                json!([]),
            )])
        } else {
            step.asserting([self.bound(true)])
        }
    }

    /// The demonstrations, then the approval of their draft under `rule`.
    fn learned_and_approved(&self, rule: &[Value]) -> Vec<Step> {
        let mut steps =
            self.demonstrations(&self.demonstrations, "demonstration", &self.conversation);
        steps.push(
            self.approve(APPROVE, &self.procedure_fragment, rule.to_vec(), false)
                .asserting([
                    Assertion::attribute_equals(
                        &self.review_attribute,
                        json!([[APPROVED, self.action_tool]]),
                    ),
                    self.published(vec![rule.to_vec()]),
                    self.bound(false),
                ]),
        );
        steps
    }

    pub(super) fn lifecycle_probe(&self, name: &'static str) -> Scenario {
        let rules = self
            .composed_rules()
            .expect("a lifecycle probe runs only when its rules compose");
        let steps = match name {
            "procedural/rule-fidelity" => self.fidelity_steps(&rules),
            "procedural/amend" => self.amend_steps(&rules),
            "procedural/revoke" => self.revoke_steps(&rules),
            "procedural/two-procedures" => {
                return Scenario::probe(name, self.two_procedure_steps(&rules), self.policy)
                    .continued(GateSweep::of(self));
            }
            "procedural/relearn-after-approval" => self.relearn_steps(&rules),
            other => unreachable!("no lifecycle probe {other}"),
        };
        Scenario::probe(name, steps, self.policy)
    }

    /// A two-predicate rule, published predicate for predicate and enforced
    /// whole: a state meeting only the first predicate is refused.
    fn fidelity_steps(&self, rules: &ComposedRules) -> Vec<Step> {
        let rule = rules.both();
        let approved = [rule.clone()];
        let mut steps = self.learned_and_approved(&rule);
        steps.push(self.enforce("satisfied", &self.satisfied_state, &approved, false));
        steps.push(self.enforce("blocked", &self.blocked_state, &approved, false));
        let path = rules.second["path"].as_str().unwrap_or_default();
        if let Some(first_only) = without(&self.satisfied_state, path) {
            steps.push(self.enforce("second predicate unmet", &first_only, &approved, false));
        }
        steps
    }

    /// A rule, then its reverse: the gate follows the amendment at once and
    /// after a restart, and the identities change with the rule.
    fn amend_steps(&self, rules: &ComposedRules) -> Vec<Step> {
        let before = vec![vec![rules.first.clone()]];
        let reversed = rules.reversed.clone().expect("checked by lifecycle_gap");
        let after = vec![vec![reversed.clone()]];
        let mut steps = self.learned_and_approved(&before[0]);
        steps.push(self.enforce("satisfied", &self.satisfied_state, &before, false));
        steps.push(self.enforce("blocked", &self.blocked_state, &before, false));
        steps.push(
            Step::review(
                "amend",
                ReviewAction::Amend {
                    procedure: self.procedure_name(false),
                    precondition: vec![reversed],
                },
                self.operator_conversation(),
            )
            .asserting([
                self.published(after.clone()),
                self.bound(false),
                self.since_approval(&self.review_identity_attribute, false),
            ]),
        );
        steps.push(self.enforce("blocked after amend", &self.blocked_state, &after, false));
        steps.push(self.enforce(
            "satisfied after amend",
            &self.satisfied_state,
            &after,
            false,
        ));
        steps.push(self.enforce("blocked after restart", &self.blocked_state, &after, true));
        steps.push(self.enforce(
            "satisfied after restart",
            &self.satisfied_state,
            &after,
            false,
        ));
        steps
    }

    /// After revocation nothing governs the tool and the model is no
    /// longer shown the procedure, at once and after a restart, and no
    /// identity reaches enforcement; the demonstrations taught again bring
    /// nothing back (at most a new draft, which needs a review of its own).
    fn revoke_steps(&self, rules: &ComposedRules) -> Vec<Step> {
        let approved = vec![vec![rules.first.clone()]];
        let mut steps = self.learned_and_approved(&approved[0]);
        steps.push(self.enforce("blocked", &self.blocked_state, &approved, false));
        steps.push(
            Step::review(
                "revoke",
                ReviewAction::Revoke {
                    procedure: self.procedure_name(false),
                },
                self.operator_conversation(),
            )
            .asserting([self.published(Vec::new())]),
        );
        let forgotten = || Assertion::PromptRecallExcludes(self.procedure_fragment.clone());
        steps.push(
            self.enforce("blocked after revoke", &self.blocked_state, &[], false)
                .asserting([forgotten()]),
        );
        steps.push(
            self.enforce("blocked after restart", &self.blocked_state, &[], true)
                .asserting([forgotten()]),
        );
        // Taught again: a desk that remembers approvals by their text
        // would bring the revoked procedure back approved, unreviewed.
        steps.extend(self.demonstrations.iter().enumerate().map(|(i, prompt)| {
            Step::prompt(
                format!("demonstration again {}", i + 1),
                prompt,
                &self.conversation,
            )
        }));
        steps.push(
            self.enforce(
                "blocked after teaching again",
                &self.blocked_state,
                &[],
                false,
            )
            .asserting([forgotten()]),
        );
        steps
    }

    /// Two approved procedures on the tool, each with its own predicate:
    /// both must hold (the gate fails closed on any procedure that does
    /// not), on the pack's states, on states meeting only one, and across
    /// the gate sweep. The first approval gets the weaker rule when one
    /// implies the other, so a gate reading only the first stored procedure
    /// admits what the second refuses.
    fn two_procedure_steps(&self, rules: &ComposedRules) -> Vec<Step> {
        let decoy = self.decoy_fragment.clone().unwrap_or_default();
        let (first, second) = (vec![rules.second.clone()], vec![rules.first.clone()]);
        let both = vec![first.clone(), second.clone()];
        let mut steps =
            self.demonstrations(&self.demonstrations, "demonstration", &self.conversation);
        steps.extend(self.demonstrations(&self.decoy_demonstrations, "decoy", &self.conversation));
        steps.push(self.approve(APPROVE, &self.procedure_fragment, first.clone(), false));
        steps.push(
            self.approve("approve second", &decoy, second.clone(), true)
                .asserting([self.published(both.clone()), self.bound(false)]),
        );
        steps.push(self.enforce("satisfied", &self.satisfied_state, &both, false));
        steps.push(self.enforce("blocked", &self.blocked_state, &both, false));
        for path in [&rules.first["path"], &rules.second["path"]] {
            let Some(state) = without(&self.satisfied_state, path.as_str().unwrap_or_default())
            else {
                continue;
            };
            let label = match (holds(&state, &first), holds(&state, &second)) {
                (true, false) => "only the first approval holds",
                (false, true) => "only the second approval holds",
                _ => continue,
            };
            steps.push(self.enforce(label, &state, &both, false));
        }
        steps
    }

    /// The demonstrations again after approval: the approved procedure
    /// (rule, text, identity) is unchanged and still enforced, and nothing
    /// is promoted. (Where the recall block shows it is the
    /// separate-conversations probe's question, not this one's.)
    fn relearn_steps(&self, rules: &ComposedRules) -> Vec<Step> {
        let approved = vec![vec![rules.first.clone()]];
        let mut steps = self.learned_and_approved(&approved[0]);
        // Every lesson they teach is on file already, approved: the
        // cycle's own count is zero (as at the identity-bound probe's
        // draft probe, when the record has one). A count of what is on
        // file, or a cycle that promotes the approved lesson again, is
        // not.
        steps.extend(self.demonstrations.iter().enumerate().map(|(i, prompt)| {
            Step::prompt(format!("relearn {}", i + 1), prompt, &self.conversation).asserting([
                Assertion::AttributeEqualsIfPresent {
                    name: self.promotion_attribute.clone(),
                    expected: json!(0),
                },
            ])
        }));
        if let Some(last) = steps.last_mut() {
            // The identities are digests of tool, rule and text (bound to the
            // published procedures here), so an unchanged identity is an
            // unchanged procedure; the published objects themselves may
            // carry fields re-learning rightly moves (a support count).
            // The review rows are those the approval left: no second draft
            // of the same lesson waits for a review that could approve it
            // in the approved one's place.
            last.assertions.extend([
                Assertion::attribute_equals(
                    &self.review_attribute,
                    json!([[APPROVED, self.action_tool]]),
                ),
                self.published(approved.clone()),
                self.bound(false),
                self.since_approval(&self.review_identity_attribute, true),
            ]);
        }
        steps.push(self.enforce("blocked", &self.blocked_state, &approved, false));
        steps.push(self.enforce("satisfied", &self.satisfied_state, &approved, false));
        steps
    }
}
