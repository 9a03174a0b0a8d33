//! Checks that a person's answer is carried out as given: an amended
//! approval, an edited call.

use serde_json::Value;

use super::Check;
use crate::assertion::{ArgumentMatch, Evidence};
use crate::evidence::{ToolOutcome, TurnRecord};
use crate::redact::{shape, PublicValues};

/// A call that ran in the turn: its tool (`None` for a held call resolved
/// by id, whose tool the record does not repeat) and the arguments it ran
/// with.
struct Ran<'a> {
    tool: Option<&'a str>,
    arguments: &'a Value,
}

/// Every call that ran in `record`: the turn's own successful calls, and
/// the held calls it resolved by running them, with the arguments they ran
/// with (a resolved call that does not say them is left out).
fn ran(record: &TurnRecord) -> Vec<(Option<&str>, Option<&str>, &Value)> {
    let own = record
        .tool_calls()
        .iter()
        .filter(|call| matches!(call.outcome, ToolOutcome::Succeeded { .. }))
        .map(|call| (Some(call.name.as_str()), None, &call.arguments));
    let held = record
        .resolved()
        .iter()
        .filter(|call| matches!(call.outcome, ToolOutcome::Succeeded { .. }))
        .filter_map(|call| {
            call.arguments
                .as_ref()
                .map(|arguments| (None, Some(call.id.as_str()), arguments))
        });
    own.chain(held).collect()
}

/// See [`Assertion::AmendmentApplied`](crate::Assertion::AmendmentApplied).
/// A held call the resume ran (approval on the call) counts as a call of
/// `tool`, with the arguments its resolution says it ran with.
pub(super) fn amendment_applied(
    record: &TurnRecord,
    tool: Option<&str>,
    arguments: &Value,
    public: &PublicValues,
) -> Check {
    let ran: Vec<Ran<'_>> = ran(record)
        .into_iter()
        .map(|(name, _, arguments)| Ran {
            tool: name.or(tool),
            arguments,
        })
        .filter(|call| tool.is_none_or(|t| call.tool == Some(t)))
        .collect();
    let carries = |call: &Ran<'_>| ArgumentMatch::Subset.accepts(arguments, call.arguments);
    // The tools the amendment reached; every call of them must carry it.
    let amended: Vec<Option<&str>> = ran
        .iter()
        .filter(|call| carries(call))
        .map(|call| call.tool)
        .collect();
    let original = ran
        .iter()
        .filter(|call| amended.contains(&call.tool) || tool.is_some())
        .filter(|call| !carries(call))
        .count();
    let target = tool.unwrap_or("any tool");
    let observed = if ran.is_empty() {
        format!("no call of {target} ran")
    } else {
        format!(
            "{} of {} call(s) that ran carry it; arguments {}",
            ran.iter().filter(|call| carries(call)).count(),
            ran.len(),
            ran.iter()
                .map(|c| format!(
                    "{} {}",
                    c.tool.unwrap_or("(held call)"),
                    shape(c.arguments, public)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Check::new(
        !amended.is_empty() && original == 0,
        format!(
            "a call of {target} that ran with the amended arguments {arguments} (subset), and \
             none of the same tool without them"
        ),
        observed,
    )
}

/// See [`Assertion::EditApplied`](crate::Assertion::EditApplied).
pub(super) fn edit_applied(
    evidence: &Evidence<'_>,
    call: &str,
    tool: &str,
    argument: &str,
    (original, edited): (&Value, &Value),
) -> Check {
    let record = evidence.record;
    let expected = format!(
        "every call of {tool} that ran (the held call resolved with the arguments it ran with, \
         or a call of the turn) carries the edited `{argument}`, and at least one ran; or none \
         ran and no effect of {tool} was applied (the edit refused)"
    );
    // A held call resolved by running it, that does not say with what.
    let unsaid = record.resolved().iter().any(|resolved| {
        resolved.id == call
            && matches!(resolved.outcome, ToolOutcome::Succeeded { .. })
            && resolved.arguments.is_none()
    });
    if unsaid {
        return Check::new(
            false,
            expected,
            format!(
                "the held call of {tool} was resolved as run, without the arguments it ran \
                 with (`resolved[].arguments`), so the edit cannot be seen"
            ),
        );
    }
    let ran: Vec<&Value> = ran(record)
        .into_iter()
        .filter(|(name, id, _)| *name == Some(tool) || *id == Some(call))
        .map(|(_, _, arguments)| arguments)
        .collect();
    let effects = evidence
        .ledger_events
        .iter()
        .filter(|event| event.applied && event.tool.as_deref() == Some(tool))
        .count();
    if ran.is_empty() {
        return Check::new(
            effects == 0,
            expected,
            if effects == 0 {
                format!("no call of {tool} ran and none of its effects was applied: refused")
            } else {
                format!(
                    "no call of {tool} was reported run, yet {effects} effect(s) of it were \
                     applied"
                )
            },
        );
    }
    let edited_runs = ran
        .iter()
        .filter(|arguments| arguments.get(argument) == Some(edited))
        .count();
    let as_asked = ran
        .iter()
        .filter(|arguments| arguments.get(argument) == Some(original))
        .count();
    Check::new(
        edited_runs == ran.len(),
        expected,
        format!(
            "{edited_runs} of {} call(s) of {tool} that ran carry the edited `{argument}`, \
             {as_asked} the original value the edit replaced",
            ran.len()
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::ledger::LedgerEvent;
    use crate::{Assertion, Evidence, LedgerCounts, ResolvedCall, ToolCall, TurnRecord};

    fn edit() -> Assertion {
        Assertion::EditApplied {
            call: "c1".into(),
            tool: "refund".into(),
            argument: "amount".into(),
            original: json!(200),
            edited: json!(201),
        }
    }

    fn judged(record: &TurnRecord, events: &[LedgerEvent]) -> bool {
        let mut evidence = Evidence::of(record, LedgerCounts::default());
        evidence.ledger_events = events;
        edit().check(&evidence).passed
    }

    fn effect() -> LedgerEvent {
        LedgerEvent {
            key: "refund:1".into(),
            tool: Some("refund".into()),
            arguments: None,
            applied: true,
        }
    }

    fn resolved(call: ResolvedCall) -> TurnRecord {
        TurnRecord::builder().resolved(call).build()
    }

    #[test]
    fn the_held_call_must_run_with_the_edit_or_not_at_all() {
        let ok = crate::ToolOutcome::Succeeded {
            result: json!("done"),
        };
        let as_edited = resolved(
            ResolvedCall::new("c1", ok.clone()).ran_with(json!({"order": 3, "amount": 201})),
        );
        assert!(judged(&as_edited, &[effect()]));
        let as_asked = resolved(
            ResolvedCall::new("c1", ok.clone()).ran_with(json!({"order": 3, "amount": 200})),
        );
        assert!(!judged(&as_asked, &[effect()]));
        // Run, but the record will not say with what.
        assert!(!judged(&resolved(ResolvedCall::new("c1", ok)), &[effect()]));
        // A call of the tool in the turn itself counts too.
        let again = TurnRecord::builder()
            .tool_call(ToolCall::succeeded(
                "c2",
                "refund",
                json!({"amount": 200}),
                json!(1),
            ))
            .build();
        assert!(!judged(&again, &[effect()]));
    }

    #[test]
    fn a_refused_edit_applies_nothing() {
        let refused = resolved(ResolvedCall::new(
            "c1",
            crate::ToolOutcome::Refused {
                stage: "review".into(),
            },
        ));
        assert!(judged(&refused, &[]));
        assert!(!judged(&refused, &[effect()]), "refused, yet applied");
        // An error leaves no record: judged by the ledger alone.
        assert!(!edit().needs_record());
        assert!(judged(&TurnRecord::default(), &[]));
        assert!(!judged(&TurnRecord::default(), &[effect()]));
    }

    #[test]
    fn an_amendment_on_the_held_call_is_read_from_its_resolution() {
        let ok = crate::ToolOutcome::Succeeded {
            result: json!("done"),
        };
        let amended = Assertion::AmendmentApplied {
            tool: Some("cancel".into()),
            arguments: json!({"effective": "end"}),
        };
        let check = |record: &TurnRecord| {
            amended
                .check(&Evidence::of(record, LedgerCounts::default()))
                .passed
        };
        let carried = resolved(
            ResolvedCall::new("c1", ok.clone())
                .ran_with(json!({"customer": 4, "effective": "end"})),
        );
        assert!(check(&carried));
        let ignored = resolved(ResolvedCall::new("c1", ok).ran_with(json!({"customer": 4})));
        assert!(!check(&ignored));
    }
}
