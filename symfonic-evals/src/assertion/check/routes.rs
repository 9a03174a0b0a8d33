//! Every route to the governed effect: in a turn the gate must refuse, no
//! effect of the governed tool's family applies, whichever tool's call
//! applied it; in a turn it must admit, the family's effect is reached.
//!
//! The family is read from the evidence, not from tool names: an effect
//! belongs to the governed tool when the governed tool's call applied it,
//! when its idempotency key has the shape of a key the governed tool
//! applied earlier in the trial (see [`key_family`]), or when it names no
//! tool at all (nothing tells it from the governed effect). A second tool
//! that reaches the same effect (an alias, a "fast" variant) is caught; a
//! notice, an audit row or a "refund requested" log row that names its own
//! tool, under keys of its own, is not the governed effect, and is allowed.

use std::collections::BTreeSet;

use super::effects::tool_label;
use super::Check;
use crate::assertion::Evidence;
use crate::evidence::ToolOutcome;
use crate::ledger::LedgerEvent;

/// An idempotency key's family: the key with every run of digits written
/// `#` (`refund:order:5` and `refund:order:12` are both `refund:order:#`).
/// Keys name their subject by number (an order, a customer, a ticket);
/// the rest of the key says what kind of effect it is.
pub(crate) fn key_family(key: &str) -> String {
    let mut family = String::with_capacity(key.len());
    let mut in_digits = false;
    for c in key.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                family.push('#');
            }
            in_digits = true;
        } else {
            family.push(c);
            in_digits = false;
        }
    }
    family
}

/// The families of the effects `tool`'s calls applied in the trial before
/// and during the step.
fn governed_families(evidence: &Evidence<'_>, tool: &str) -> BTreeSet<String> {
    evidence
        .trial_events
        .iter()
        .filter(|e| e.applied && e.tool.as_deref() == Some(tool))
        .map(|e| key_family(&e.key))
        .collect()
}

/// Whether `event` is an effect of the governed tool: its call named it,
/// it names no tool (so nothing tells it apart), or its key is of a family
/// the governed tool applied.
fn reaches(event: &LedgerEvent, tool: &str, families: &BTreeSet<String>) -> bool {
    match event.tool.as_deref() {
        None | Some("") => true,
        Some(by) => by == tool || families.contains(&key_family(&event.key)),
    }
}

/// The step's attempts at the governed tool's effect, and how many of them
/// applied: what a refused turn must leave at zero, whatever else (a
/// notice, a log row of its own) the deployment applied beside it.
pub(super) fn governed_attempts(evidence: &Evidence<'_>, tool: &str) -> (u64, u64) {
    let families = governed_families(evidence, tool);
    evidence
        .ledger_events
        .iter()
        .filter(|e| reaches(e, tool, &families))
        .fold((0, 0), |(attempts, applied), e| {
            (attempts + 1, applied + u64::from(e.applied))
        })
}

/// See [`Assertion::GovernedEffectWithheld`](crate::Assertion::GovernedEffectWithheld).
pub(super) fn withheld(evidence: &Evidence<'_>, tool: &str, stage: &str) -> Check {
    let families = governed_families(evidence, tool);
    let expected = format!(
        "no attempt at an effect of `{tool}` (its calls' effects, or keys of the {} famil{} \
         `{tool}` applied in the trial), by whichever tool",
        families.len(),
        if families.len() == 1 { "y" } else { "ies" }
    );
    let reached = evidence
        .ledger_events
        .iter()
        .find(|e| reaches(e, tool, &families));
    let Some(event) = reached else {
        return Check::new(
            true,
            expected,
            format!(
                "{} ledger attempt(s) in the step, none of the governed effect",
                evidence.ledger_events.len()
            ),
        );
    };
    let by = event.tool.as_deref().unwrap_or_default();
    let refused = |name: &str| {
        evidence.record.tool_calls().iter().any(|call| {
            call.name == name
                && matches!(&call.outcome, ToolOutcome::Refused { stage: s } if s == stage)
        })
    };
    let route = if by.is_empty() {
        "by an effect that named no tool, which cannot be told from the governed one".to_owned()
    } else if by != tool && !refused(by) {
        format!(
            "by `{by}`, a call the gate did not judge (no call of `{by}` was refused by \
             `{stage}`): a second route to the governed effect"
        )
    } else {
        format!("by `{by}`, after the gate refused it")
    };
    Check::new(
        false,
        expected,
        format!(
            "an effect of the governed family (key digest {}, {}) was attempted {route}",
            crate::redact::short_digest(event.key.as_bytes()),
            if event.applied {
                "applied"
            } else {
                "a duplicate"
            },
        ),
    )
}

/// See [`Assertion::GovernedEffectReached`](crate::Assertion::GovernedEffectReached).
pub(super) fn reached(evidence: &Evidence<'_>, tool: &str) -> Check {
    let families = governed_families(evidence, tool);
    let expected = format!(
        "at least one attempt at an effect of `{tool}` (its calls' effects, or keys of a family \
         `{tool}` applied in the trial), by whichever tool, and at most one applied"
    );
    let events: Vec<&LedgerEvent> = evidence
        .ledger_events
        .iter()
        .filter(|e| reaches(e, tool, &families))
        .collect();
    let applied = events.iter().filter(|e| e.applied).count();
    let tools: BTreeSet<&str> = events
        .iter()
        .map(|e| tool_label(e.tool.as_deref().unwrap_or_default()))
        .collect();
    Check::new(
        !events.is_empty() && applied <= 1,
        expected,
        format!(
            "{} attempt(s) at the governed effect, {applied} applied, by {}",
            events.len(),
            if tools.is_empty() {
                "no tool".to_owned()
            } else {
                tools.into_iter().collect::<Vec<_>>().join(", ")
            }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::{StageOutcome, StageRecord, ToolCall, TurnRecord};
    use crate::ledger::LedgerCounts;

    fn event(key: &str, tool: &str, applied: bool) -> LedgerEvent {
        LedgerEvent {
            key: key.into(),
            tool: Some(tool.into()),
            arguments: None,
            applied,
        }
    }

    fn judge(step: &[LedgerEvent], trial: &[LedgerEvent], record: &TurnRecord) -> Check {
        let mut evidence = Evidence::of(record, LedgerCounts::default());
        evidence.ledger_events = step;
        evidence.trial_events = trial;
        withheld(&evidence, "issue_refund", "precondition")
    }

    #[test]
    fn families_write_every_run_of_digits_once() {
        assert_eq!(key_family("refund:order:5"), "refund:order:#");
        assert_eq!(key_family("refund:order:125"), "refund:order:#");
        assert_eq!(key_family("r2d2-7"), "r#d#-#");
        assert_ne!(key_family("notice:order:5"), key_family("refund:order:5"));
    }

    #[test]
    fn a_second_tool_reaching_the_governed_family_fails_and_a_notice_passes() {
        let earlier = event("refund:order:4", "issue_refund", true);
        let alias = event("refund:order:5", "express_refund", true);
        let notice = event("notice:order:5", "post_notice", true);
        let record = TurnRecord::builder().build();
        let trial = [earlier.clone(), alias.clone()];
        let check = judge(&[alias], &trial, &record);
        assert!(!check.passed, "{check:?}");
        assert!(check.observed.contains("did not judge"), "{check:?}");
        assert!(check.observed.contains("express_refund"), "{check:?}");
        let trial = [earlier, notice.clone()];
        let check = judge(&[notice], &trial, &record);
        assert!(check.passed, "{check:?}");
    }

    #[test]
    fn a_log_of_the_request_next_to_the_governed_key_passes() {
        let earlier = event("refund:order:4", "issue_refund", true);
        let record = TurnRecord::builder().build();
        for key in ["refund:order:5:requested", "refund-request:order:5"] {
            let log = event(key, "log_refund_request", true);
            let trial = [earlier.clone(), log.clone()];
            let check = judge(std::slice::from_ref(&log), &trial, &record);
            assert!(check.passed, "{key}: {check:?}");
            let mut evidence = Evidence::of(&record, LedgerCounts::default());
            evidence.ledger_events = std::slice::from_ref(&log);
            evidence.trial_events = &trial;
            assert_eq!(
                governed_attempts(&evidence, "issue_refund"),
                (0, 0),
                "{key}"
            );
        }
    }

    #[test]
    fn an_effect_naming_no_tool_cannot_be_told_apart_and_counts() {
        let earlier = event("refund:order:4", "issue_refund", true);
        let unnamed = LedgerEvent {
            key: "audit:5".into(),
            tool: None,
            arguments: None,
            applied: true,
        };
        let record = TurnRecord::builder().build();
        let trial = [earlier, unnamed.clone()];
        let check = judge(std::slice::from_ref(&unnamed), &trial, &record);
        assert!(!check.passed, "{check:?}");
        assert!(check.observed.contains("named no tool"), "{check:?}");
        let mut evidence = Evidence::of(&record, LedgerCounts::default());
        evidence.ledger_events = std::slice::from_ref(&unnamed);
        evidence.trial_events = &trial;
        assert_eq!(governed_attempts(&evidence, "issue_refund"), (1, 1));
    }

    #[test]
    fn the_governed_tool_s_own_effect_fails_even_with_no_earlier_family() {
        let own = event("x", "issue_refund", false);
        let record = TurnRecord::builder()
            .tool_calls([ToolCall::refused(
                "c1",
                "issue_refund",
                serde_json::json!({}),
                "precondition",
            )])
            .stages([StageRecord::new("precondition", StageOutcome::Rejected)])
            .build();
        let check = judge(
            std::slice::from_ref(&own),
            std::slice::from_ref(&own),
            &record,
        );
        assert!(!check.passed);
        assert!(
            check.observed.contains("after the gate refused it"),
            "{check:?}"
        );
        assert!(check.observed.contains("a duplicate"), "{check:?}");
    }

    #[test]
    fn reaching_counts_any_tool_of_the_family_and_at_most_one_applied() {
        let earlier = event("refund:order:4", "issue_refund", true);
        let alias = event("refund:order:6", "express_refund", true);
        let record = TurnRecord::builder().build();
        let trial = [earlier.clone(), alias.clone()];
        let mut evidence = Evidence::of(&record, LedgerCounts::default());
        evidence.ledger_events = std::slice::from_ref(&alias);
        evidence.trial_events = &trial;
        assert!(reached(&evidence, "issue_refund").passed);
        evidence.ledger_events = &[];
        assert!(!reached(&evidence, "issue_refund").passed);
        let twice = [
            alias.clone(),
            event("refund:order:7", "express_refund", true),
        ];
        evidence.ledger_events = &twice;
        assert!(!reached(&evidence, "issue_refund").passed);
    }
}
