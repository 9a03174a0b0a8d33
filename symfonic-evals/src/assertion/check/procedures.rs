//! Checks that bind the procedural evidence to content: identities the
//! harness recomputes from the procedures a deployment published, its
//! preconditions judged by the library's own evaluator, and the gate's
//! verdict compared with that evaluator's.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Check;
use crate::assertion::{Evidence, GateVerdict};
use crate::contracts::{precondition_problem, skill_applies};
use crate::evidence::{StageOutcome, TurnRecord};
use crate::packs::procedure_identity;

/// One procedure as a review door publishes it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Published {
    pub(crate) tool: String,
    pub(crate) precondition: Value,
    pub(crate) text: String,
}

impl Published {
    pub(crate) fn identity(&self) -> String {
        procedure_identity(&self.tool, &self.precondition, &self.text)
    }
}

/// Why published procedures could not be read.
pub(crate) enum Unreadable {
    /// The attribute is not there.
    Absent,
    /// It is there in another shape than the contract's.
    Malformed(String),
}

/// Reads `{"tool", "precondition", "text"}` objects from the attribute.
pub(crate) fn published(record: &TurnRecord, name: &str) -> Result<Vec<Published>, Unreadable> {
    let value = record.fact(name).ok_or(Unreadable::Absent)?;
    let Value::Array(items) = value else {
        return Err(Unreadable::Malformed(format!("{name} is not a list")));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let n = index + 1;
            let Value::Object(mut fields) = item else {
                return Err(Unreadable::Malformed(format!(
                    "published procedure {n} is not an object"
                )));
            };
            let mut text_field = |key: &str| match fields.remove(key) {
                Some(Value::String(text)) => Ok(text),
                _ => Err(Unreadable::Malformed(format!(
                    "published procedure {n} has no string `{key}`"
                ))),
            };
            let tool = text_field("tool")?;
            let text = text_field("text")?;
            let precondition = fields.remove("precondition").ok_or_else(|| {
                Unreadable::Malformed(format!("published procedure {n} has no `precondition`"))
            })?;
            Ok(Published {
                tool,
                precondition,
                text,
            })
        })
        .collect()
}

/// A list of id strings, or why not.
fn ids(record: &TurnRecord, name: &str) -> Result<Vec<String>, String> {
    match record.fact(name) {
        None => Err(format!("{name} absent")),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|item| match item {
                Value::String(id) => Ok(id),
                _ => Err(format!("{name} holds something other than id strings")),
            })
            .collect(),
        Some(_) => Err(format!("{name} is not a list of ids")),
    }
}

/// The attribute names [`bound`] reads.
pub(super) struct Names<'a> {
    pub(super) procedures: &'a str,
    pub(super) review_ids: &'a str,
    pub(super) enforcement_ids: &'a str,
}

pub(super) fn bound(record: &TurnRecord, names: Names<'_>, tool: &str, enforced: bool) -> Check {
    let mut expected = format!(
        "{} are exactly the identities recomputed from {}, one of which governs {tool}",
        names.review_ids, names.procedures
    );
    if enforced {
        expected.push_str(&format!(
            "; {} is non-empty and names only those",
            names.enforcement_ids
        ));
    }
    let procedures = match published(record, names.procedures) {
        Ok(procedures) => procedures,
        Err(Unreadable::Absent) => {
            return Check::new(false, expected, format!("{} absent", names.procedures))
        }
        Err(Unreadable::Malformed(why)) => return Check::malformed(expected, why),
    };
    let recomputed: BTreeSet<String> = procedures.iter().map(Published::identity).collect();
    let governing = procedures.iter().filter(|p| p.tool == tool).count();
    let mut problems = Vec::new();
    let mut review = match ids(record, names.review_ids) {
        Ok(review) => review,
        Err(why) => return Check::new(false, expected, why),
    };
    review.sort();
    let unknown_review = review.iter().filter(|id| !recomputed.contains(*id)).count();
    let unlisted = recomputed.iter().filter(|id| !review.contains(id)).count();
    if unknown_review > 0 || unlisted > 0 || review.len() != recomputed.len() {
        problems.push(format!(
            "{unknown_review} review id(s) match no published procedure, {unlisted} published \
             procedure(s) missing from the review ids"
        ));
    }
    if governing == 0 {
        problems.push(format!("no published procedure governs {tool}"));
    }
    if enforced {
        match ids(record, names.enforcement_ids) {
            Err(why) => problems.push(why),
            Ok(enforcement) if enforcement.is_empty() => {
                problems.push(format!("{} is empty", names.enforcement_ids));
            }
            Ok(enforcement) => {
                let unknown = enforcement
                    .iter()
                    .filter(|id| !recomputed.contains(*id))
                    .count();
                if unknown > 0 {
                    problems.push(format!(
                        "{unknown} of {} enforcement id(s) name no published procedure",
                        enforcement.len()
                    ));
                }
            }
        }
    }
    let summary = format!(
        "{} published procedure(s), {governing} governing {tool}",
        procedures.len()
    );
    let observed = if problems.is_empty() {
        summary
    } else {
        format!("{summary}; {}", problems.join("; "))
    };
    Check::new(problems.is_empty(), expected, observed)
}

pub(super) fn verdict(
    record: &TurnRecord,
    procedures: &str,
    tool: &str,
    state: &Value,
    holds: bool,
) -> Check {
    let expected = if holds {
        format!("every published precondition governing {tool} holds on the pack's state")
    } else {
        format!("a published precondition governing {tool} fails on the pack's state")
    };
    let published = match published(record, procedures) {
        Ok(published) => published,
        Err(Unreadable::Absent) => {
            return Check::new(false, expected, format!("{procedures} absent"))
        }
        Err(Unreadable::Malformed(why)) => return Check::malformed(expected, why),
    };
    let governing: Vec<&Published> = published.iter().filter(|p| p.tool == tool).collect();
    if governing.is_empty() {
        return Check::new(
            false,
            expected,
            format!("no published procedure governs {tool}"),
        );
    }
    if let Some(why) = governing
        .iter()
        .find_map(|p| precondition_problem(&p.precondition))
    {
        return Check::malformed(
            expected,
            format!("the evaluator cannot read a published precondition ({why})"),
        );
    }
    let holding = governing
        .iter()
        .filter(|p| skill_applies(state, &p.precondition))
        .count();
    let passed = if holds {
        holding == governing.len()
    } else {
        holding < governing.len()
    };
    Check::new(
        passed,
        expected,
        format!(
            "{holding} of {} governing precondition(s) hold",
            governing.len()
        ),
    )
}

pub(super) fn gate_agrees(
    evidence: &Evidence<'_>,
    tool: &str,
    stage: &str,
    verdict: GateVerdict,
) -> Check {
    let record = evidence.record;
    let outcomes: Vec<StageOutcome> = record
        .governance()
        .iter()
        .filter(|r| r.stage == stage)
        .map(|r| r.outcome)
        .collect();
    let rejected = outcomes.contains(&StageOutcome::Rejected);
    let calls = record.tool_calls().iter().filter(|c| c.name == tool);
    let (mut total, mut succeeded) = (0, 0);
    for call in calls {
        total += 1;
        succeeded += usize::from(call.is_success());
    }
    // Admitted, the call moved the ledger; refused, nothing of the
    // governed effect moved it (a notice or log row of the deployment's
    // own, under its own tool and keys, may: see `routes`).
    let (attempts, effects) = match verdict {
        GateVerdict::Admit => (
            evidence
                .ledger
                .attempts
                .saturating_sub(evidence.ledger_before.attempts),
            evidence
                .ledger
                .effects
                .saturating_sub(evidence.ledger_before.effects),
        ),
        GateVerdict::Refuse => super::routes::governed_attempts(evidence, tool),
    };
    let (passed, expected) = match verdict {
        GateVerdict::Admit => (
            !rejected && succeeded >= 1 && attempts >= 1,
            format!("the contract admits: {stage} not rejected, {tool} succeeds, a ledger attempt"),
        ),
        GateVerdict::Refuse => (
            rejected && total >= 1 && succeeded == 0 && attempts == 0 && effects == 0,
            format!(
                "the contract refuses: {tool} called, {stage} rejected, no success, no attempt at \
                 the governed effect"
            ),
        ),
    };
    let shown: Vec<&str> = outcomes.iter().map(|o| o.as_str()).collect();
    Check::new(
        passed,
        expected,
        format!(
            "{stage} [{}]; {succeeded} of {total} call(s) of {tool} succeeded; ledger attempts+{attempts} effects+{effects}",
            shown.join(",")
        ),
    )
}

/// Whether two predicates mean the same: the same path and operator, and
/// for every operator but `exists` (which reads no value) values equal by
/// value (`2` is `2.0`). Keys the evaluator does not read, and a `null`
/// value written beside `exists` (as a serialized struct writes it), are
/// not part of the meaning.
fn same_predicate(published: &Value, approved: &Value) -> bool {
    let field = |p: &Value, key: &str| p.get(key).cloned().unwrap_or(Value::Null);
    let op = field(approved, "op");
    field(published, "path") == field(approved, "path")
        && field(published, "op") == op
        && (op == "exists"
            || crate::contracts::path::json_eq(
                &field(published, "value"),
                &field(approved, "value"),
            ))
}

/// Whether a published rule is the approved one, predicate for predicate
/// in any order.
fn same_rule(published: &[&Value], approved: &[Value]) -> bool {
    let mut unmatched: Vec<&Value> = approved.iter().collect();
    published.len() == approved.len()
        && published.iter().all(
            |p| match unmatched.iter().position(|a| same_predicate(p, a)) {
                Some(at) => {
                    unmatched.swap_remove(at);
                    true
                }
                None => false,
            },
        )
}

pub(super) fn rules(
    record: &TurnRecord,
    procedures: &str,
    tool: &str,
    rules: &[Vec<Value>],
) -> Check {
    let expected = if rules.is_empty() {
        format!("no published procedure governs {tool}")
    } else {
        let sizes: Vec<String> = rules.iter().map(|r| r.len().to_string()).collect();
        format!(
            "{} published procedure(s) govern {tool}, with exactly the approved state predicates              ([{}] predicate(s))",
            rules.len(),
            sizes.join(", ")
        )
    };
    let published = match published(record, procedures) {
        Ok(published) => published,
        Err(Unreadable::Absent) => {
            return Check::new(false, expected, format!("{procedures} absent"))
        }
        Err(Unreadable::Malformed(why)) => return Check::malformed(expected, why),
    };
    let mut wanted: Vec<&Vec<Value>> = rules.iter().collect();
    let mut unmatched = Vec::new();
    let governing: Vec<&Published> = published.iter().filter(|p| p.tool == tool).collect();
    for procedure in &governing {
        let rule = crate::contracts::state_predicates_in(&procedure.precondition);
        match wanted.iter().position(|w| same_rule(&rule, w)) {
            Some(at) => {
                wanted.remove(at);
            }
            None => unmatched.push(rule.len()),
        }
    }
    let passed = wanted.is_empty() && unmatched.is_empty();
    let mut observed = format!("{} published procedure(s) govern {tool}", governing.len());
    if !unmatched.is_empty() {
        let sizes: Vec<String> = unmatched.iter().map(ToString::to_string).collect();
        observed.push_str(&format!(
            "; {} carry a rule no approval gave ([{}] predicate(s))",
            unmatched.len(),
            sizes.join(", ")
        ));
    }
    if !wanted.is_empty() {
        observed.push_str(&format!(
            "; {} approved rule(s) published by none",
            wanted.len()
        ));
    }
    Check::new(passed, expected, observed)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn published(procedures: Value) -> TurnRecord {
        TurnRecord::builder()
            .attribute("procedures", procedures)
            .build()
    }

    fn procedure(tool: &str, predicates: &[Value]) -> Value {
        let mut precondition = vec![json!("lookup_account")];
        precondition.extend(predicates.iter().map(|p| json!({ "state": p })));
        json!({"tool": tool, "precondition": precondition, "text": "verify first"})
    }

    #[test]
    fn published_rules_match_predicate_for_predicate_in_any_order() {
        let region = json!({"path": "region", "op": "eq", "value": "US"});
        let receipt = json!({"path": "receipt", "op": "exists"});
        let both = [region.clone(), receipt.clone()];
        let rules_check = |record: &TurnRecord, wanted: &[Vec<Value>]| {
            rules(record, "procedures", "issue_refund", wanted).passed
        };
        // Order of predicates and of keys is not part of the rule.
        let reordered = json!({"value": "US", "op": "eq", "path": "region"});
        let record = published(json!([procedure(
            "issue_refund",
            &[receipt.clone(), reordered]
        )]));
        assert!(rules_check(&record, &[both.to_vec()]));
        // A dropped conjunct, an added one, a second procedure: all differ.
        let dropped = published(json!([procedure(
            "issue_refund",
            std::slice::from_ref(&region)
        )]));
        assert!(!rules_check(&dropped, &[both.to_vec()]));
        let extra = published(json!([procedure(
            "issue_refund",
            &[
                region.clone(),
                receipt.clone(),
                json!({"path": "tier", "op": "exists"})
            ]
        )]));
        assert!(!rules_check(&extra, &[both.to_vec()]));
        let two = published(json!([
            procedure("issue_refund", &both),
            procedure("issue_refund", std::slice::from_ref(&region))
        ]));
        assert!(!rules_check(&two, &[both.to_vec()]));
        assert!(rules_check(&two, &[vec![region.clone()], both.to_vec()]));
        // What a serializer or a store writes differently is the same rule:
        // `null` beside `exists`, a number as a float, keys it adds.
        let stored = published(json!([procedure(
            "issue_refund",
            &[
                json!({"path": "receipt", "op": "exists", "value": null}),
                json!({"path": "region", "op": "eq", "value": "US", "note": "operator"}),
            ]
        )]));
        assert!(rules_check(&stored, &[both.to_vec()]));
        let tier = |value: Value| json!({"path": "tier", "op": "eq", "value": value});
        let float = published(json!([procedure("issue_refund", &[tier(json!(2.0))])]));
        assert!(rules_check(&float, &[vec![tier(json!(2))]]));
        assert!(!rules_check(&float, &[vec![tier(json!(3))]]));
        assert!(!rules_check(&float, &[vec![tier(json!("2"))]]));
        // Another path or operator is another rule.
        let neq = json!({"path": "region", "op": "neq", "value": "US"});
        let other_op = published(json!([procedure("issue_refund", &[neq, receipt.clone()])]));
        assert!(!rules_check(&other_op, &[both.to_vec()]));
        // No rule: nothing may govern the tool; another tool's may stay.
        let other = published(json!([procedure("escalate", &[region])]));
        assert!(rules_check(&other, &[]));
        assert!(!rules_check(&two, &[]));
        // Absent or malformed evidence never passes.
        assert!(!rules_check(&TurnRecord::default(), &[]));
        assert!(!rules_check(&published(json!("none")), &[]));
    }
}
