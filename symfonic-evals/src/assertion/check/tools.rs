//! Checks on tool calls: how many, with which arguments, how they ended,
//! their ids, what the tool body witnessed, and whether results reached the
//! model.

use std::collections::HashSet;

use serde_json::Value;

use super::Check;
use crate::assertion::{ArgumentMatch, Evidence};
use crate::evidence::{ToolCall, ToolOutcome, TurnRecord};
use crate::redact::{shape, PublicValues};

pub(super) fn calls_of<'a>(
    record: &'a TurnRecord,
    tool: &'a str,
) -> impl Iterator<Item = &'a ToolCall> {
    record
        .tool_calls()
        .iter()
        .filter(move |call| call.name == tool)
}

pub(super) fn called(
    record: &TurnRecord,
    tool: &str,
    times: usize,
    arguments: Option<&Value>,
    matching: ArgumentMatch,
    public: &PublicValues,
) -> Check {
    let calls: Vec<&ToolCall> = calls_of(record, tool).collect();
    let matches =
        |call: &&&ToolCall| arguments.is_none_or(|a| matching.accepts(a, &call.arguments));
    let matching_calls = calls.iter().filter(matches).count();
    let expected = match arguments {
        Some(args) => format!(
            "{times} call(s) of {tool} with arguments {args} ({})",
            matching.as_str()
        ),
        None => format!("{times} call(s) of {tool}"),
    };
    let observed = if arguments.is_some() && matching_calls != calls.len() {
        format!(
            "{matching_calls} matching of {} call(s); arguments {}",
            calls.len(),
            calls
                .iter()
                .map(|c| shape(&c.arguments, public))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!("{matching_calls} call(s)")
    };
    // Exactly `times` calls of the tool, each with the arguments: an extra
    // call with other arguments is still a call.
    Check::new(
        calls.len() == times && matching_calls == times,
        expected,
        observed,
    )
}

pub(super) fn succeeded(record: &TurnRecord, tool: &str, times: usize) -> Check {
    let (mut succeeded, mut total) = (0, 0);
    for call in calls_of(record, tool) {
        total += 1;
        succeeded += usize::from(call.is_success());
    }
    Check::new(
        succeeded == times,
        format!("{times} successful call(s) of {tool}"),
        format!("{succeeded} of {total} call(s) succeeded"),
    )
}

pub(super) fn pending(record: &TurnRecord, tool: &str, times: usize) -> Check {
    let (mut pending, mut total) = (0, 0);
    for call in calls_of(record, tool) {
        total += 1;
        pending += usize::from(call.is_pending());
    }
    Check::new(
        pending == times,
        format!("{times} call(s) of {tool} pending"),
        format!("{pending} of {total} call(s) pending"),
    )
}

pub(super) fn ids_unique(evidence: &Evidence<'_>, minimum: usize, across_trial: bool) -> Check {
    let calls = evidence.record.tool_calls();
    let mut seen = HashSet::with_capacity(calls.len());
    let repeated = calls.iter().filter(|c| !seen.insert(&c.id)).count();
    let earlier = evidence.earlier_call_ids.filter(|_| across_trial);
    let reused = earlier.map_or(0, |ids| {
        calls.iter().filter(|c| ids.contains(&c.id)).count()
    });
    let (expected, observed) = if across_trial {
        (
            format!("at least {minimum} call(s), no id repeated in the turn or from earlier turns"),
            format!(
                "{} call(s), {repeated} repeated id(s), {reused} reused from earlier turns",
                calls.len()
            ),
        )
    } else {
        (
            format!("at least {minimum} call(s), no repeated id"),
            format!("{} call(s), {repeated} repeated id(s)", calls.len()),
        )
    };
    Check::new(
        calls.len() >= minimum && repeated == 0 && reused == 0,
        expected,
        observed,
    )
}

pub(super) fn witnessed(
    evidence: &Evidence<'_>,
    tool: &str,
    arguments: Option<&Value>,
    matching: ArgumentMatch,
    public: &PublicValues,
) -> Check {
    // The harness's MCP fixture is a tool body too, one the deployment
    // cannot fake: each call whose answer it delivered is a witness (an
    // answer never delivered ran nothing the deployment saw).
    let served: Vec<crate::ledger::Witness> = evidence
        .fixture
        .into_iter()
        .flat_map(|seen| &seen.calls)
        .filter(|call| call.delivered)
        .map(|call| crate::ledger::Witness {
            tool: call.tool.clone(),
            arguments: call.arguments.clone(),
            outcome: if call.failed {
                crate::ledger::WitnessOutcome::failed("fixture_error")
            } else {
                crate::ledger::WitnessOutcome::succeeded(serde_json::json!({ "nonce": call.nonce }))
            },
        })
        .collect();
    let of_tool: Vec<_> = evidence
        .witnesses
        .iter()
        .chain(&served)
        .filter(|w| w.tool == tool)
        .collect();
    let fitting = of_tool
        .iter()
        .filter(|w| arguments.is_none_or(|a| matching.accepts(a, &w.arguments)))
        .collect::<Vec<_>>();
    let clean = fitting.iter().filter(|w| w.outcome.is_success()).count();
    let expected = match arguments {
        Some(args) => format!(
            "a witnessed execution of {tool} that received {args} ({}) and succeeded",
            matching.as_str()
        ),
        None => format!("a witnessed execution of {tool} that succeeded"),
    };
    // With no execution witnessed there are no arguments to list: say so,
    // rather than end on an empty list.
    let received = if of_tool.is_empty() {
        "no tool body reported running".to_owned()
    } else {
        format!(
            "received {}",
            of_tool
                .iter()
                .map(|w| shape(&w.arguments, public))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let observed = format!(
        "{} witnessed execution(s) of {tool}, {} with the arguments, {clean} of those succeeded; \
         {received}",
        of_tool.len(),
        fitting.len(),
    );
    Check::new(clean >= 1, expected, observed)
}

/// The text fragments of a result that must reach the model: its string
/// leaves of three characters or more (a result rendered as pretty JSON,
/// compact JSON or prose still carries them, JSON with its strings escaped,
/// see [`spellings`]); failing those, its numbers; failing those, the whole
/// result as compact JSON.
pub(crate) fn result_fragments(result: &Value) -> Vec<String> {
    let mut strings = Vec::new();
    let mut numbers = Vec::new();
    let mut stack = vec![result];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) if text.trim().chars().count() >= 3 => {
                strings.push(text.trim().to_owned());
            }
            Value::Number(n) => numbers.push(n.to_string()),
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    if !strings.is_empty() {
        strings
    } else if !numbers.is_empty() {
        numbers
    } else {
        vec![result.to_string()]
    }
}

/// The ways a result's text `fragment` can read in a model input: as it
/// is, and as it reads inside a JSON string, the way a deployment that
/// shows results as JSON writes it: quotes, backslashes and control
/// characters escaped, and (as Python's `json.dumps` does by default) every
/// character outside ASCII as a `\u` escape, in lower or upper case hex.
fn spellings(fragment: &str) -> Vec<String> {
    let quoted = Value::String(fragment.to_owned()).to_string();
    let escaped = quoted[1..quoted.len() - 1].to_owned();
    let ascii = |upper: bool| -> String {
        let mut out = String::with_capacity(escaped.len());
        for c in escaped.chars() {
            if c.is_ascii() {
                out.push(c);
                continue;
            }
            for unit in c.encode_utf16(&mut [0; 2]) {
                if upper {
                    out.push_str(&format!("\\u{unit:04X}"));
                } else {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
        }
        out
    };
    let mut spellings = vec![fragment.to_owned(), ascii(false), ascii(true), escaped];
    spellings.sort();
    spellings.dedup();
    spellings
}

/// Whether a result's `fragment` appears in `input` in any of its
/// [`spellings`].
pub(super) fn shown_in(input: &str, fragment: &str) -> bool {
    spellings(fragment)
        .iter()
        .any(|spelling| input.contains(spelling.as_str()))
}

pub(super) fn result_shown(record: &TurnRecord, tool: &str) -> Check {
    let input = record.model_input();
    let results: Vec<&Value> = calls_of(record, tool)
        .filter_map(|call| match &call.outcome {
            ToolOutcome::Succeeded { result } => Some(result),
            _ => None,
        })
        .collect();
    let mut missing = 0;
    let mut total = 0;
    for result in &results {
        for fragment in result_fragments(result) {
            total += 1;
            missing += usize::from(!shown_in(input, &fragment));
        }
    }
    Check::new(
        !results.is_empty() && missing == 0,
        format!("every successful {tool} result's fragments appear in the model input"),
        format!(
            "{} successful call(s); {missing} of {total} result fragment(s) missing from model input {}",
            results.len(),
            super::record::model_input_shown(input)
        ),
    )
}

/// Every successful result of `tool` this turn differs from each result
/// `tool` returned earlier in the trial (see [`Assertion::ToolResultFresh`]).
///
/// [`Assertion::ToolResultFresh`]: crate::Assertion::ToolResultFresh
pub(super) fn result_fresh(evidence: &Evidence<'_>, record: &TurnRecord, tool: &str) -> Check {
    let earlier = evidence
        .earlier_results
        .and_then(|results| results.get(tool));
    let results: Vec<String> = calls_of(record, tool)
        .filter_map(|call| match &call.outcome {
            ToolOutcome::Succeeded { result } => Some(super::super::result_digest(result)),
            _ => None,
        })
        .collect();
    let repeated = results
        .iter()
        .filter(|digest| earlier.is_some_and(|seen| seen.contains(*digest)))
        .count();
    Check::new(
        !results.is_empty() && repeated == 0,
        format!(
            "every successful {tool} result differs from each result {tool} returned earlier in \
             the trial"
        ),
        format!(
            "{} successful call(s), {repeated} returning a result {tool} already returned \
             (results: {})",
            results.len(),
            results.join(", ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn no_witnessed_execution_is_said_in_words() {
        let record = TurnRecord::default();
        let evidence = Evidence::of(&record, Default::default());
        let check = witnessed(
            &evidence,
            "weather",
            Some(&json!({ "city": "Oslo" })),
            ArgumentMatch::Exact,
            &PublicValues::default(),
        );
        assert!(!check.passed);
        assert!(
            check.observed.ends_with("; no tool body reported running"),
            "{}",
            check.observed
        );
        assert!(!check.observed.trim_end().ends_with("received"));
    }

    #[test]
    fn a_result_the_tool_returned_earlier_in_the_trial_is_not_fresh() {
        let record = |result: Value| {
            TurnRecord::builder()
                .tool_calls([ToolCall::succeeded("c1", "weather", json!({}), result)])
                .build()
        };
        let oslo = json!({ "city": "Oslo", "forecast": "rain" });
        let lisbon = json!({ "city": "Lisbon", "forecast": "sun" });
        let earlier = std::collections::HashMap::from([(
            "weather".to_owned(),
            HashSet::from([crate::assertion::result_digest(&oslo)]),
        )]);
        let fresh = |result: Value, earlier| {
            let record = record(result);
            let mut evidence = Evidence::of(&record, Default::default());
            evidence.earlier_results = earlier;
            result_fresh(&evidence, &record, "weather").passed
        };
        assert!(fresh(lisbon.clone(), Some(&earlier)));
        assert!(!fresh(oslo.clone(), Some(&earlier)));
        // The trial's first call is fresh; a turn with no result is not.
        assert!(fresh(oslo.clone(), None));
        let failed = TurnRecord::builder()
            .tool_calls([ToolCall::failed("c1", "weather", json!({}), "down")])
            .build();
        let evidence = Evidence::of(&failed, Default::default());
        assert!(!result_fresh(&evidence, &failed, "weather").passed);
        // The digest does not depend on the order the keys were written in.
        let reordered: Value =
            serde_json::from_str(r#"{"forecast":"rain","city":"Oslo"}"#).unwrap();
        assert!(!fresh(reordered, Some(&earlier)));
    }

    fn shown(input: &str, result: Value) -> bool {
        let record = TurnRecord::builder()
            .model_input(input)
            .tool_calls([ToolCall::succeeded("c1", "weather", json!({}), result)])
            .build();
        result_shown(&record, "weather").passed
    }

    #[test]
    fn a_result_shown_as_escaped_json_reaches_the_model() {
        let result = json!({ "city": "São Paulo", "forecast": "say \"rain\", 21 °C" });
        // As serde_json writes it: quotes escaped, non-ASCII kept.
        assert!(shown(&format!("tool weather -> {result}"), result.clone()));
        // As Python's json.dumps writes it by default: non-ASCII as \\u.
        let python =
            r#"tool weather -> {"city": "S\u00e3o Paulo", "forecast": "say \"rain\", 21 \u00b0C"}"#;
        assert!(shown(python, result.clone()));
        assert!(shown(
            &python.replace("00e3", "00E3").replace("00b0", "00B0"),
            result.clone()
        ));
        // As prose.
        assert!(shown("São Paulo: say \"rain\", 21 °C", result.clone()));
    }

    #[test]
    fn a_result_missing_from_the_input_is_still_missing() {
        let result = json!({ "city": "São Paulo", "forecast": "say \"rain\", 21 °C" });
        assert!(!shown(
            "tool weather -> sent to the customer",
            result.clone()
        ));
        // One leaf shown, the other not.
        assert!(!shown(r#"{"city": "S\u00e3o Paulo"}"#, result.clone()));
        // An escape of another character is not the fragment.
        assert!(!shown(
            r#"{"city": "S\u00e4o Paulo", "forecast": "x"}"#,
            result
        ));
    }

    #[test]
    fn spellings_escape_astral_characters_as_surrogate_pairs() {
        assert!(spellings("ok 🚚").contains(&"ok \\ud83d\\ude9a".to_owned()));
        assert_eq!(spellings("plain"), vec!["plain".to_owned()]);
    }
}
