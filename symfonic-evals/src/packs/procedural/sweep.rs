//! The gate sweep: after approval, the action prompt runs under states
//! generated from the procedures the deployment published, and the gate
//! must admit exactly the states for which the contract's own evaluator
//! says the precondition holds.
//!
//! The states are not drawn at random: each names an edge class a gate can
//! get wrong (see `sweep_states`), so a disagreement found once is found on
//! every run. After them, within the budget, come the declared states with
//! one leaf no predicate names set to a value seen in another of them (see
//! `sweep_unnamed`): the contract's verdict does not move, and a gate with
//! a second door on that field does. On the first disagreement the sweep shrinks the state, a
//! greedy search that removes keys and cuts lists while the gate still
//! disagrees with the contract, each try a real turn under a fixed budget,
//! and reports the smallest disagreeing state as its shape (keys, types and
//! digests, never values). A generic property-testing shrinker was not used:
//! it would re-run a whole test per candidate, and here each candidate is a
//! turn against a live deployment whose store moves with every admitted
//! call, so the search is kept small, ordered and bounded by hand.

use serde_json::Value;

use super::sweep_states::{candidates, shape, size, smaller, Candidate};
use super::sweep_unnamed::{unnamed, Declared};
use super::ProceduralPack;
use crate::assertion::check::procedures::{published, Unreadable};
use crate::assertion::{Assertion, GateVerdict};
use crate::contracts::{precondition_problem, skill_applies};
use crate::runner::{Session, StepErrorKind};
use crate::scenario::{Continuation, Step};

/// How many extra turns a shrink may take.
const SHRINK_BUDGET: usize = 12;

/// The sweep, carrying the pack arguments it reads.
pub(super) struct GateSweep {
    prompt: String,
    conversation: String,
    tool: String,
    stage: String,
    procedures: String,
    bases: [Value; 2],
    /// The draft state: the third state the pack declares, read for the
    /// values of leaves no predicate names.
    draft: Value,
    /// The budget argument (the default follows the predicates).
    states: u32,
}

impl GateSweep {
    pub(super) fn of(pack: &ProceduralPack) -> Self {
        Self {
            prompt: pack.satisfied_prompt.clone(),
            conversation: pack.conversation.clone(),
            tool: pack.action_tool.clone(),
            stage: pack.precondition_stage.clone(),
            procedures: pack.procedures_attribute.clone(),
            bases: [pack.satisfied_state.clone(), pack.blocked_state.clone()],
            draft: pack.draft_state.clone(),
            states: pack.gate_sweep,
        }
    }

    /// The contract's verdict on `state`: admitted when every published
    /// precondition governing the tool holds.
    fn verdict(preconditions: &[Value], state: &Value) -> GateVerdict {
        if preconditions.iter().all(|p| skill_applies(state, p)) {
            GateVerdict::Admit
        } else {
            GateVerdict::Refuse
        }
    }

    fn step(
        &self,
        label: String,
        conversation: String,
        state: &Value,
        verdict: GateVerdict,
    ) -> Step {
        let step = Step::prompt(label, &self.prompt, conversation)
            .with_state(state.clone())
            .asserting([Assertion::GateAgrees {
                tool: self.tool.clone(),
                stage: self.stage.clone(),
                verdict,
            }]);
        match verdict {
            // No other tool reaches the effect the gate refused either.
            GateVerdict::Refuse => step.asserting([Assertion::GovernedEffectWithheld {
                tool: self.tool.clone(),
                stage: self.stage.clone(),
            }]),
            GateVerdict::Admit => step,
        }
    }

    /// The published preconditions governing the tool, or why there are none
    /// to sweep (reported as a broken step).
    fn preconditions(&self, session: &mut Session<'_>) -> Option<Vec<Value>> {
        let expected = "published procedures governing the tool, with readable preconditions";
        let Some(record) = session.last_record() else {
            session.fail(
                "sweep",
                StepErrorKind::MalformedEvidence,
                expected,
                "no earlier step returned a record".into(),
            );
            return None;
        };
        let governing: Result<Vec<Value>, String> = match published(record, &self.procedures) {
            Ok(all) => Ok(all
                .into_iter()
                .filter(|p| p.tool == self.tool)
                .map(|p| p.precondition)
                .collect()),
            Err(Unreadable::Absent) => Err(format!("{} absent", self.procedures)),
            Err(Unreadable::Malformed(why)) => Err(why),
        };
        let problem = match &governing {
            Ok(list) if list.is_empty() => {
                Some(format!("no published procedure governs {}", self.tool))
            }
            Ok(list) => list
                .iter()
                .find_map(precondition_problem)
                .map(|why| format!("the evaluator cannot read a published precondition ({why})")),
            Err(why) => Some(why.clone()),
        };
        match problem {
            Some(why) => {
                session.fail("sweep", StepErrorKind::MalformedEvidence, expected, why);
                None
            }
            None => governing.ok(),
        }
    }

    fn choose(&self, preconditions: &[Value]) -> Vec<(Candidate, GateVerdict)> {
        let bases: Vec<&Value> = self.bases.iter().collect();
        let predicates: usize = preconditions
            .iter()
            .map(|p| crate::contracts::state_predicates_in(p).len())
            .sum();
        let [satisfied, blocked] = &self.bases;
        // Blocked first: a second door that admits is the likelier flaw.
        let declared = [
            Declared {
                name: "blocked",
                state: blocked,
                tool_runs: false,
            },
            Declared {
                name: "satisfied",
                state: satisfied,
                tool_runs: true,
            },
            Declared {
                name: "draft",
                state: &self.draft,
                tool_runs: true,
            },
        ];
        let others = unnamed(preconditions, &declared);
        let (named, share) = super::gate_sweep_split(
            self.states,
            predicates,
            others.leaves,
            others.candidates.len(),
        );
        let mut chosen = choose(preconditions, &bases, named);
        let others = others.candidates.into_iter().map(|(candidate, admitted)| {
            let verdict = if admitted {
                GateVerdict::Admit
            } else {
                GateVerdict::Refuse
            };
            (candidate, verdict)
        });
        let others: Vec<_> = others
            .filter(|(c, _)| !chosen.iter().any(|(d, _)| d.state == c.state))
            .collect();
        chosen.extend(alternate(others, share, GateVerdict::Refuse));
        chosen
    }

    /// Shrinks a disagreeing state while the gate keeps disagreeing.
    fn shrink(&self, session: &mut Session<'_>, preconditions: &[Value], mut state: Value) {
        let mut turns = 0;
        'search: while turns < SHRINK_BUDGET {
            let mut tries = smaller(&state);
            tries.sort_by_key(size);
            for candidate in tries {
                if turns >= SHRINK_BUDGET {
                    break 'search;
                }
                turns += 1;
                let verdict = Self::verdict(preconditions, &candidate);
                let conversation = format!("{}-shrink-{turns}", self.conversation);
                let step = self.step(format!("shrink {turns}"), conversation, &candidate, verdict);
                match session.try_step(&step) {
                    None => return,
                    Some(run) if !run.passed() && run.error.is_none() => {
                        state = candidate;
                        continue 'search;
                    }
                    Some(_) => {}
                }
            }
            break;
        }
        let verdict = match Self::verdict(preconditions, &state) {
            GateVerdict::Admit => "the contract admits it and the gate did not",
            GateVerdict::Refuse => "the contract refuses it and the gate did not",
        };
        session.note(format!(
            "smallest disagreeing state after {turns} shrink turn(s): {} ({verdict})",
            shape(&state)
        ));
    }
}

/// Up to `n` candidates around `bases`, alternating states the contract
/// admits and refuses so both verdicts are tried whatever `n` is, each
/// side in generation order.
fn choose(preconditions: &[Value], bases: &[&Value], n: usize) -> Vec<(Candidate, GateVerdict)> {
    let rules: Vec<&Value> = preconditions.iter().collect();
    let judged = candidates(&rules, bases).into_iter().map(|c| {
        let verdict = GateSweep::verdict(preconditions, &c.state);
        (c, verdict)
    });
    alternate(judged.collect(), n, GateVerdict::Admit)
}

/// Up to `n` of `judged`, alternating verdicts starting with `first` (the
/// other side fills in when one runs out), each side in its given order.
fn alternate(
    judged: Vec<(Candidate, GateVerdict)>,
    n: usize,
    first: GateVerdict,
) -> Vec<(Candidate, GateVerdict)> {
    let (mut leading, mut trailing): (Vec<_>, Vec<_>) =
        judged.into_iter().partition(|(_, v)| *v == first);
    leading.reverse();
    trailing.reverse();
    let mut out = Vec::new();
    while out.len() < n {
        let pick = if out.len() % 2 == 0 {
            leading.pop().or_else(|| trailing.pop())
        } else {
            trailing.pop().or_else(|| leading.pop())
        };
        match pick {
            Some(pick) => out.push(pick),
            None => break,
        }
    }
    out
}

impl Continuation for GateSweep {
    fn describe(&self) -> String {
        let budget = if self.states == super::DEFAULT_GATE_SWEEP {
            format!(
                "{} (or {} per published predicate and 2, at most {}; then {} per state leaf no \
                 predicate names, at most {} more)",
                super::DEFAULT_GATE_SWEEP,
                super::GATE_SWEEP_PER_PREDICATE,
                super::MAX_DEFAULT_GATE_SWEEP,
                super::GATE_SWEEP_PER_UNNAMED_LEAF,
                super::MAX_UNNAMED_GATE_SWEEP
            )
        } else {
            self.states.to_string()
        };
        format!(
            "up to {budget} turns of the satisfied prompt, each in a fresh conversation, under states \
             generated from the preconditions published in `{}` (key casing, missing keys, null, \
             wrong types, neighbouring values, list membership), then the declared states with one \
             leaf no predicate names set to a value seen elsewhere in them: each GateAgrees with the \
             contract's evaluator (admitted: `{}` not rejected, `{}` succeeds, a ledger attempt; \
             refused: rejected, no success, the ledger unmoved); the first disagreement is shrunk \
             in up to {SHRINK_BUDGET} more turns",
            self.procedures, self.stage, self.tool
        )
    }

    fn run(&self, session: &mut Session<'_>) {
        let Some(preconditions) = self.preconditions(session) else {
            return;
        };
        let mut first_disagreement = None;
        for (i, (candidate, verdict)) in self.choose(&preconditions).into_iter().enumerate() {
            let n = i + 1;
            let conversation = format!("{}-sweep-{n}", self.conversation);
            let label = format!("sweep {n}: {}", candidate.shape);
            let step = self.step(label, conversation, &candidate.state, verdict);
            match session.run(&step) {
                None => return,
                Some(run) if !run.passed() && first_disagreement.is_none() => {
                    first_disagreement = Some(candidate.state);
                }
                Some(_) => {}
            }
        }
        if let Some(state) = first_disagreement {
            self.shrink(session, &preconditions, state);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_default_budget_reaches_every_predicate_and_the_first_key_casing() {
        // Two predicates, the second a `neq` on a nested path: a budget of
        // 16 must try the second's declared value and missing key, and the
        // first's key in another case, whatever order the rules are in.
        let rules = [
            json!({"state": {"path": "change.window", "op": "eq", "value": "open"}}),
            json!({"state": {"path": "incident.severity", "op": "neq", "value": "sev1"}}),
        ];
        let satisfied = json!({"change": {"window": "open"}, "incident": {"severity": "sev3"}});
        let blocked = json!({"change": {"window": "closed"}, "incident": {"severity": "sev3"}});
        for order in [[0, 1], [1, 0]] {
            let pre = json!([rules[order[0]].clone(), rules[order[1]].clone()]);
            let chosen = choose(&[pre], &[&satisfied, &blocked], 16);
            let labels: Vec<&str> = chosen.iter().map(|(c, _)| c.shape.as_str()).collect();
            for wanted in [
                "`incident.severity` neq: the declared value",
                "`incident.severity` neq: key missing",
                "`change.window` eq: key missing",
                "`change.window` eq: key in capitalised case",
                "`incident.severity` neq: key in capitalised case",
            ] {
                assert!(labels.contains(&wanted), "{wanted} not in {labels:#?}");
            }
            let admitted = chosen
                .iter()
                .filter(|(_, v)| *v == GateVerdict::Admit)
                .count();
            assert!(admitted >= 4 && chosen.len() - admitted >= 4, "{labels:#?}");
        }
    }

    #[test]
    fn the_default_budget_reaches_a_booleans_text_spellings_beside_other_rules() {
        // A boolean rule beside one and two others, as the reference
        // desks' refund rules are: the default budget for that many
        // predicates must try the boolean as JSON text and as Python
        // spells it, which a gate comparing text admits.
        let region = json!({"state": {"path": "region", "op": "eq", "value": "US"}});
        let receipt = json!({"state": {"path": "receipt", "op": "exists"}});
        let verified = json!({"state": {"path": "verified", "op": "eq", "value": true}});
        let satisfied = json!({"region": "US", "receipt": "r-1", "verified": true});
        let blocked = json!({"region": "EU", "receipt": "r-2", "verified": true});
        for rules in [
            vec![region.clone(), verified.clone()],
            vec![region, receipt, verified],
        ] {
            let default = super::super::DEFAULT_GATE_SWEEP;
            let budget = super::super::gate_sweep_budget(default, rules.len());
            let chosen = choose(&[Value::Array(rules)], &[&satisfied, &blocked], budget);
            let labels: Vec<&str> = chosen.iter().map(|(c, _)| c.shape.as_str()).collect();
            for wanted in [
                "`verified` eq: the boolean as a string",
                "`verified` eq: the boolean as Python writes it",
            ] {
                assert!(labels.contains(&wanted), "{wanted} not in {labels:#?}");
            }
        }
    }

    fn refund_sweep(gate_sweep: u32) -> (GateSweep, Vec<Value>) {
        let mut pack = super::super::fixture::refund_pack();
        pack.satisfied_state = json!({"region": "US", "receipt": "r-104", "priority": "normal"});
        pack.blocked_state = json!({"region": "EU", "receipt": "r-105", "priority": "normal"});
        pack.draft_state = json!({"region": "EU", "priority": "urgent"});
        pack.gate_sweep = gate_sweep;
        let pre = vec![json!([
            {"state": {"path": "region", "op": "eq", "value": "US"}},
            {"state": {"path": "receipt", "op": "exists"}},
        ])];
        (GateSweep::of(&pack), pre)
    }

    #[test]
    fn unnamed_leaves_come_after_the_named_budget_refused_first() {
        let (sweep, pre) = refund_sweep(super::super::DEFAULT_GATE_SWEEP);
        let chosen = sweep.choose(&pre);
        // The named budget is untouched (2 predicates: 16), and one unnamed
        // leaf adds two states: the blocked state carrying the draft's
        // value, refused, then the satisfied one carrying it, admitted.
        assert_eq!(chosen.len(), 18);
        let (blocked, verdict) = &chosen[16];
        assert_eq!(*verdict, GateVerdict::Refuse);
        assert_eq!(
            blocked.state,
            json!({"region": "EU", "receipt": "r-105", "priority": "urgent"})
        );
        assert_eq!(chosen[17].1, GateVerdict::Admit);
        assert!(chosen[..16]
            .iter()
            .all(|(c, _)| !c.shape.contains("named by no predicate")));
        // Without the leaf the named candidates are those of before.
        let mut bare = super::super::fixture::refund_pack();
        bare.satisfied_state = json!({"region": "US", "receipt": "r-104"});
        bare.blocked_state = json!({"region": "EU", "receipt": "r-105"});
        let before: Vec<String> = GateSweep::of(&bare)
            .choose(&pre)
            .into_iter()
            .map(|(c, _)| c.shape)
            .collect();
        let now: Vec<String> = chosen[..16].iter().map(|(c, _)| c.shape.clone()).collect();
        assert_eq!(before, now);
    }

    #[test]
    fn a_budget_given_is_the_total_a_quarter_of_it_for_unnamed_leaves() {
        let (sweep, pre) = refund_sweep(8);
        let chosen = sweep.choose(&pre);
        assert_eq!(chosen.len(), 8);
        let unnamed: Vec<&str> = chosen
            .iter()
            .filter(|(c, _)| c.shape.contains("named by no predicate"))
            .map(|(c, _)| c.shape.as_str())
            .collect();
        assert_eq!(unnamed.len(), 2, "{unnamed:#?}");
        assert_eq!(super::super::gate_sweep_split(3, 1, 4, 9), (3, 0));
        assert_eq!(super::super::gate_sweep_split(16, 1, 9, 30), (16, 8));
        assert_eq!(super::super::gate_sweep_split(16, 1, 9, 3), (16, 3));
    }

    #[test]
    fn the_default_budget_grows_with_the_predicates_so_value_casing_is_reached() {
        let default = super::super::DEFAULT_GATE_SWEEP;
        assert_eq!(super::super::gate_sweep_budget(default, 1), 16);
        assert_eq!(super::super::gate_sweep_budget(default, 2), 16);
        assert_eq!(super::super::gate_sweep_budget(default, 4), 26);
        assert_eq!(super::super::gate_sweep_budget(default, 20), 48);
        assert_eq!(super::super::gate_sweep_budget(5, 20), 5);
        assert_eq!(super::super::gate_sweep_budget(64, 1), 64);
        // Four predicates: the default budget still reaches a value in
        // another case for the list, which 16 states do not.
        let pre = json!([
            {"state": {"path": "env", "op": "in", "value": ["staging", "dev"]}},
            {"state": {"path": "change.window", "op": "eq", "value": "open"}},
            {"state": {"path": "freeze", "op": "neq", "value": true}},
            {"state": {"path": "ticket", "op": "exists"}},
        ]);
        let satisfied = json!({"env": "staging", "change": {"window": "open"},
                               "freeze": false, "ticket": "T-1"});
        let blocked = json!({"env": "prod", "change": {"window": "open"},
                             "freeze": false, "ticket": "T-1"});
        let casing = "`env` in: a non-member (the declared value in upper case of member 1)";
        let labels = |n| {
            choose(std::slice::from_ref(&pre), &[&satisfied, &blocked], n)
                .into_iter()
                .map(|(c, _)| c.shape)
                .collect::<Vec<_>>()
        };
        assert!(!labels(16).iter().any(|l| l == casing));
        let budget = super::super::gate_sweep_budget(default, 4);
        assert!(
            labels(budget).iter().any(|l| l == casing),
            "{:#?}",
            labels(budget)
        );
    }
}
