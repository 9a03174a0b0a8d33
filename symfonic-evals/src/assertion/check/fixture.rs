//! Checks on what the harness's MCP server fixture saw: the calls it
//! received and the results it decided, against what the deployment
//! reports. Nonces are shown by digest, arguments by shape.

use serde_json::Value;

use super::Check;
use crate::assertion::{ArgumentMatch, Evidence, FixtureEvidence};
use crate::evidence::{ToolCall, TurnRecord};
use crate::mcp::FixtureCall;
use crate::redact::{shape, short_digest, PublicValues};

/// The fixture's evidence, or the failed check saying there was none.
fn seen<'a>(evidence: &Evidence<'a>, expected: &str) -> Result<&'a FixtureEvidence, Check> {
    evidence.fixture.ok_or_else(|| {
        Check::new(
            false,
            expected.to_owned(),
            "no MCP fixture served this run (the `mcp` feature is off, or the pack is not the \
             extension pack)",
        )
    })
}

fn fixture_calls<'a>(seen: &'a FixtureEvidence, tool: &'a str) -> Vec<&'a FixtureCall> {
    seen.calls.iter().filter(|call| call.tool == tool).collect()
}

fn reported<'a>(record: &'a TurnRecord, tool: &'a str) -> Vec<&'a ToolCall> {
    super::tools::calls_of(record, tool).collect()
}

/// Exactly `times` calls of `tool` reached the fixture, whose tools the
/// deployment listed in the trial, each with the arguments named and with the arguments
/// the deployment reports for the model's call, each answer delivered to
/// the client (a call counts as served only then), none refused.
pub(super) fn served(
    evidence: &Evidence<'_>,
    tool: &str,
    times: usize,
    arguments: Option<&Value>,
    matching: ArgumentMatch,
    public: &PublicValues,
) -> Check {
    let expected = match arguments {
        Some(args) => format!(
            "{times} call(s) of {tool} received by the MCP fixture with arguments {args} ({}), \
             as the model's call(s) carried them, each answer delivered, from a deployment \
             that listed the fixture's tools in the trial",
            matching.as_str()
        ),
        None => format!(
            "{times} call(s) of {tool} received by the MCP fixture with the arguments of the \
             model's call(s), each answer delivered, from a deployment that listed the \
             fixture's tools in the trial"
        ),
    };
    let seen = match seen(evidence, &expected) {
        Ok(seen) => seen,
        Err(check) => return check,
    };
    let received = fixture_calls(seen, tool);
    let reported = reported(evidence.record, tool);
    let named = received
        .iter()
        .filter(|call| arguments.is_none_or(|a| matching.accepts(a, &call.arguments)))
        .count();
    // The i-th call the deployment reports is the i-th the fixture got:
    // what the model asked for must be what arrived.
    let as_called = received
        .iter()
        .zip(&reported)
        .filter(|(got, asked)| matching.accepts(&asked.arguments, &got.arguments))
        .count();
    let delivered = received.iter().filter(|call| call.delivered).count();
    let refusals: Vec<String> = seen.refusals.iter().map(ToString::to_string).collect();
    let arguments_received = if received.is_empty() {
        "no arguments".to_owned()
    } else {
        received
            .iter()
            .map(|call| shape(&call.arguments, public))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let observed = format!(
        "{} call(s) received ({named} with the named arguments, {as_called} as the model's \
         call(s) carried them, {delivered} answer(s) delivered; received {arguments_received}); \
         {} reported; tools listed in the trial: {}{}",
        received.len(),
        reported.len(),
        if seen.listed { "yes" } else { "no" },
        if refusals.is_empty() {
            String::new()
        } else {
            format!("; refused: {}", refusals.join(", "))
        },
    );
    Check::new(
        received.len() == times
            && delivered == times
            && named == times
            && reported.len() == times
            && as_called == times
            && seen.listed
            && refusals.is_empty(),
        expected,
        observed,
    )
}

/// Each nonce the fixture delivered for `tool` this step is in the model
/// input; no nonce it returned in another conversation is. Only a
/// delivered answer counts: a nonce is unguessable, so a result the client
/// never received cannot honestly be in the model input.
pub(super) fn result_shown(evidence: &Evidence<'_>, tool: &str) -> Check {
    let expected = format!(
        "the result of each call of {tool} the MCP fixture answered and delivered in the step \
         reaches the step's model input, and no result it returned in another conversation \
         does"
    );
    let seen = match seen(evidence, &expected) {
        Ok(seen) => seen,
        Err(check) => return check,
    };
    let input = evidence.record.model_input();
    let answered: Vec<&FixtureCall> = fixture_calls(seen, tool)
        .into_iter()
        .filter(|call| !call.failed && call.delivered)
        .collect();
    let missing: Vec<String> = answered
        .iter()
        .filter(|call| !super::tools::shown_in(input, &call.nonce))
        .map(|call| short_digest(call.nonce.as_bytes()))
        .collect();
    let foreign: Vec<String> = seen
        .earlier
        .iter()
        .filter(|(nonce, conversation)| {
            conversation != evidence.conversation && super::tools::shown_in(input, nonce)
        })
        .map(|(nonce, _)| short_digest(nonce.as_bytes()))
        .collect();
    Check::new(
        !answered.is_empty() && missing.is_empty() && foreign.is_empty(),
        expected,
        format!(
            "{} result(s) answered and delivered ({} not delivered); missing from the model \
             input ({}): [{}]; from another conversation in it: [{}]",
            answered.len(),
            fixture_calls(seen, tool)
                .iter()
                .filter(|call| !call.failed && !call.delivered)
                .count(),
            super::record::model_input_shown(input),
            missing.join(", "),
            foreign.join(", ")
        ),
    )
}

/// The fixture failed this step's calls of `tool`, and the deployment
/// reports every one of its calls of `tool` as failed.
pub(super) fn error_reported(evidence: &Evidence<'_>, tool: &str) -> Check {
    let expected = format!(
        "the MCP fixture's injected error for {tool} is reported as a failed call, not a success"
    );
    let seen = match seen(evidence, &expected) {
        Ok(seen) => seen,
        Err(check) => return check,
    };
    let failed = fixture_calls(seen, tool)
        .into_iter()
        .filter(|call| call.failed && call.delivered)
        .count();
    let reported = reported(evidence.record, tool);
    let succeeded = reported.iter().filter(|call| call.is_success()).count();
    Check::new(
        failed >= 1 && !reported.is_empty() && succeeded == 0,
        expected,
        format!(
            "{failed} call(s) answered with an error by the fixture (and delivered); {} reported, \
             {succeeded} \
             of them as a success",
            reported.len()
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::evidence::ToolCall;
    use crate::ledger::LedgerCounts;

    fn call(seq: u64, arguments: Value, nonce: &str, failed: bool) -> FixtureCall {
        FixtureCall {
            seq,
            tool: "track".into(),
            arguments,
            nonce: nonce.into(),
            failed,
            delivered: true,
        }
    }

    fn check(record: &TurnRecord, seen: &FixtureEvidence, assertion: &crate::Assertion) -> Check {
        let evidence = Evidence {
            fixture: Some(seen),
            conversation: "c",
            ..Evidence::of(record, LedgerCounts::default())
        };
        assertion.check(&evidence)
    }

    fn served(arguments: Value) -> crate::Assertion {
        crate::Assertion::ServedByFixture {
            tool: "track".into(),
            times: 1,
            arguments: Some(arguments),
            matching: ArgumentMatch::Exact,
        }
    }

    #[test]
    fn a_call_is_served_when_it_arrived_as_the_model_made_it() {
        let args = json!({ "order": 7, "include_eta": true });
        let record = TurnRecord::builder()
            .tool_calls([ToolCall::succeeded("c1", "track", args.clone(), json!({}))])
            .build();
        let seen = FixtureEvidence {
            calls: vec![call(1, args.clone(), "mcp-nonce-1", false)],
            listed: true,
            ..FixtureEvidence::default()
        };
        assert!(check(&record, &seen, &served(args.clone())).passed);
        // Arguments dropped on the way.
        let dropped = FixtureEvidence {
            calls: vec![call(1, json!({ "order": 7 }), "mcp-nonce-1", false)],
            ..seen.clone()
        };
        assert!(!check(&record, &dropped, &served(args.clone())).passed);
        // Never reached the fixture (a built-in copy, a cache).
        let none = FixtureEvidence {
            calls: vec![],
            ..seen.clone()
        };
        assert!(!check(&record, &none, &served(args.clone())).passed);
        // Never listed: no client session bound the tool.
        let stale = FixtureEvidence {
            listed: false,
            ..seen.clone()
        };
        assert!(!check(&record, &stale, &served(args.clone())).passed);
        // A refused request is a failure too.
        let refused = FixtureEvidence {
            refusals: vec![crate::mcp::FixtureRefusal::Flooded],
            ..seen
        };
        assert!(!check(&record, &refused, &served(args)).passed);
    }

    #[test]
    fn a_call_whose_answer_was_never_delivered_does_not_count() {
        let args = json!({ "order": 7 });
        let record = TurnRecord::builder()
            .model_input("mcp-nonce-1")
            .tool_calls([ToolCall::succeeded("c1", "track", args.clone(), json!({}))])
            .build();
        let undelivered = FixtureCall {
            delivered: false,
            ..call(1, args.clone(), "mcp-nonce-1", false)
        };
        let seen = FixtureEvidence {
            calls: vec![undelivered.clone()],
            listed: true,
            ..FixtureEvidence::default()
        };
        let delivered = FixtureEvidence {
            calls: vec![call(1, args.clone(), "mcp-nonce-1", false)],
            ..seen.clone()
        };
        let shown = crate::Assertion::FixtureResultShown {
            tool: "track".into(),
        };
        assert!(check(&record, &delivered, &served(args.clone())).passed);
        assert!(check(&record, &delivered, &shown).passed);
        assert!(!check(&record, &seen, &served(args.clone())).passed);
        assert!(!check(&record, &seen, &shown).passed);
        // Nor is it a witness of the tool's run.
        let witnessed = crate::Assertion::ToolWitnessed {
            tool: "track".into(),
            arguments: Some(args.clone()),
            matching: ArgumentMatch::Exact,
        };
        assert!(check(&record, &delivered, &witnessed).passed);
        assert!(!check(&record, &seen, &witnessed).passed);
        // Nor an injected error it never delivered.
        let errored = crate::Assertion::FixtureErrorReported {
            tool: "track".into(),
        };
        let failed = TurnRecord::builder()
            .tool_calls([ToolCall::failed("c1", "track", args.clone(), "upstream")])
            .build();
        let lost_error = FixtureEvidence {
            calls: vec![FixtureCall {
                failed: true,
                ..undelivered
            }],
            ..seen
        };
        assert!(!check(&failed, &lost_error, &errored).passed);
    }

    #[test]
    fn the_model_must_see_this_calls_result_and_no_other_conversations() {
        let shown = crate::Assertion::FixtureResultShown {
            tool: "track".into(),
        };
        let seen = FixtureEvidence {
            calls: vec![call(2, json!({}), "mcp-nonce-two", false)],
            earlier: vec![
                ("mcp-nonce-one".into(), "c".into()),
                ("mcp-nonce-other".into(), "d".into()),
            ],
            listed: true,
            ..FixtureEvidence::default()
        };
        let input = |text: &str| TurnRecord::builder().model_input(text).build();
        // This call's result, beside an earlier one of the same conversation.
        assert!(check(&input("mcp-nonce-one ... mcp-nonce-two"), &seen, &shown).passed);
        // The earlier result in place of this one.
        assert!(!check(&input("mcp-nonce-one"), &seen, &shown).passed);
        // Another conversation's result.
        assert!(!check(&input("mcp-nonce-two mcp-nonce-other"), &seen, &shown).passed);
    }

    #[test]
    fn an_injected_error_must_be_reported_as_a_failure() {
        let errored = crate::Assertion::FixtureErrorReported {
            tool: "track".into(),
        };
        let seen = FixtureEvidence {
            calls: vec![call(1, json!({}), "mcp-nonce-1", true)],
            listed: true,
            ..FixtureEvidence::default()
        };
        let failed = TurnRecord::builder()
            .tool_calls([ToolCall::failed("c1", "track", json!({}), "upstream")])
            .build();
        let dressed_up = TurnRecord::builder()
            .tool_calls([ToolCall::succeeded("c1", "track", json!({}), json!({}))])
            .build();
        assert!(check(&failed, &seen, &errored).passed);
        assert!(!check(&dressed_up, &seen, &errored).passed);
    }
}
