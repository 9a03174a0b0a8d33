//! Which request a resume carried out: two requests pending in one
//! conversation, each answered with its own token, must each have their
//! own effects carried out, told apart by the digests of the arguments the
//! effects were applied with (never the values).

use super::effects::tool_label;
use super::Check;
use crate::assertion::Evidence;
use crate::ledger::{arguments_by_tool, ArgumentsByTool};

/// See [`Assertion::RequestsNotCrossed`](crate::Assertion::RequestsNotCrossed).
pub(super) fn not_crossed(
    evidence: &Evidence<'_>,
    request: &ArgumentsByTool,
    earlier: &ArgumentsByTool,
) -> Check {
    let here = arguments_by_tool(evidence.ledger_events);
    let none = std::collections::BTreeSet::new();
    let mut crossed = Vec::new();
    for (tool, own) in request {
        let (before, now) = (
            earlier.get(tool).unwrap_or(&none),
            here.get(tool).unwrap_or(&none),
        );
        if own.is_subset(before) {
            continue;
        }
        let label = tool_label(tool);
        if own.is_subset(now) {
            crossed.push(format!(
                "{label}: the earlier request's effect was carried out by this resume, not by \
                 its own (the approvals were taken for each other's requests)"
            ));
        } else if before.intersection(now).next().is_some() {
            crossed.push(format!(
                "{label}: both resumes attempted one same effect, and the earlier request's own \
                 never ran (both tokens continued one request)"
            ));
        }
    }
    let observed = if crossed.is_empty() {
        "each resume's effects are its own request's (or differ from every other run's, and \
         were not judged)"
            .to_owned()
    } else {
        crossed.join("; ")
    };
    Check::new(
        crossed.is_empty(),
        "the earlier request's effects (the arguments it is carried out with in every other \
         conversation) carried out by the earlier request's own resume, not by this one, and no \
         effect attempted by both resumes",
        observed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::TurnRecord;
    use crate::ledger::{LedgerCounts, LedgerEvent};

    fn effect(tool: &str, arguments: &str) -> LedgerEvent {
        LedgerEvent {
            key: format!("{tool}:{arguments}"),
            tool: Some(tool.into()),
            arguments: Some(arguments.into()),
            applied: true,
        }
    }

    fn judged(first: &[LedgerEvent], second: &[LedgerEvent]) -> bool {
        let request = arguments_by_tool(&[effect("cancel", "a")]);
        let record = TurnRecord::default();
        let evidence = Evidence {
            ledger_events: second,
            ..Evidence::of(&record, LedgerCounts::default())
        };
        not_crossed(&evidence, &request, &arguments_by_tool(first)).passed
    }

    #[test]
    fn each_resume_carrying_out_its_own_request_passes() {
        assert!(judged(&[effect("cancel", "a")], &[effect("cancel", "b")]));
        // A notice of the desk's own beside the request's effect changes
        // nothing: only the request's tools are judged.
        assert!(judged(
            &[effect("cancel", "a"), effect("notice", "n1")],
            &[effect("cancel", "b"), effect("notice", "n1")]
        ));
    }

    #[test]
    fn approvals_taken_for_each_other_fail() {
        assert!(!judged(&[effect("cancel", "b")], &[effect("cancel", "a")]));
    }

    #[test]
    fn both_tokens_continuing_one_request_fail() {
        let mut again = effect("cancel", "b");
        again.applied = false;
        assert!(!judged(&[effect("cancel", "b")], &[again]));
    }

    #[test]
    fn arguments_unlike_every_other_run_are_not_judged() {
        // A desk whose effect names what is pending beside it carries
        // other arguments here than elsewhere: nothing crossed is seen.
        assert!(judged(&[effect("cancel", "a2")], &[effect("cancel", "b2")]));
        assert!(judged(&[], &[]));
    }
}
