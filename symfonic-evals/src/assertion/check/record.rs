//! Checks on what the record itself says: attributes, the model input, the
//! governance trace, the answer.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Check;
use crate::evidence::TurnRecord;
use crate::redact::{sensitive, shape, PublicValues};

/// How many differing paths a mismatch lists before summing up the rest.
const DIFF_LINES: usize = 6;

pub(super) fn attribute_equals(
    record: &TurnRecord,
    name: &str,
    expected: &Value,
    public: &PublicValues,
) -> Check {
    let expected_text = format!("{name} = {expected}");
    match record.fact(name) {
        None => Check::new(false, expected_text, format!("{name} absent")),
        Some(observed) if observed == *expected => {
            Check::new(true, expected_text, format!("{name} = {expected}"))
        }
        Some(observed) => {
            // The shape, and each path where it differs from what the pack
            // expected: leaves in clear only when that hides nothing.
            let diff = crate::redact::expected_vs_found(expected, &observed, public, DIFF_LINES);
            Check::new(
                false,
                expected_text,
                format!("{name} = {}; {}", shape(&observed, public), diff.join("; ")),
            )
        }
    }
}

/// A count read from a number, or the size of a collection. Text is not a
/// count: its length would let a published `"0"` pass a minimum of one.
fn count_of(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
        Value::Array(items) => Some(items.len() as u64),
        Value::Object(map) => Some(map.len() as u64),
        Value::String(_) | Value::Bool(_) | Value::Null => None,
    }
}

pub(super) fn attribute_count(record: &TurnRecord, name: &str, minimum: u64) -> Check {
    let expected = format!("{name} counts at least {minimum}");
    match record.fact(name) {
        None => Check::new(false, expected, format!("{name} absent")),
        Some(value) => match count_of(&value) {
            Some(count) => Check::new(count >= minimum, expected, format!("{name} counts {count}")),
            None => Check::new(
                false,
                expected,
                format!("{name} is not a count or collection"),
            ),
        },
    }
}

/// Review rows with nothing live among them: no `draft`, no `approved`,
/// and no row that names a governed tool. A failure names the live rows by
/// the pack's own words (`draft`, `approved`, "another status"), never by
/// what the deployment stored.
pub(super) fn rows_inert(record: &TurnRecord, name: &str) -> Check {
    let expected = format!("{name} holds no draft, no approved procedure and no governed tool");
    let Some(rows) = record.fact(name) else {
        return Check::new(false, expected, format!("{name} absent"));
    };
    let Some(rows) = rows.as_array() else {
        return Check::malformed(expected, format!("{name} is not a list of rows"));
    };
    let mut live = Vec::new();
    for row in rows {
        let (Some(status), Some(tool)) = (
            row.get(0).and_then(Value::as_str),
            row.get(1).and_then(Value::as_str),
        ) else {
            return Check::malformed(
                expected,
                format!("{name} has a row that is not [status, tool]"),
            );
        };
        if status == "draft" || status == "approved" || !tool.is_empty() {
            let status = match status {
                "draft" | "approved" => status,
                _ => "another status",
            };
            let governs = if tool.is_empty() {
                ""
            } else {
                " governing a tool"
            };
            live.push(format!("{status}{governs}"));
        }
    }
    if live.is_empty() {
        Check::new(
            true,
            expected,
            format!("{name}: {} inert row(s)", rows.len()),
        )
    } else {
        Check::new(false, expected, format!("{name} holds {}", live.join(", ")))
    }
}

pub(super) fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        Value::String(text) => text.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

pub(super) fn same_non_empty(
    record: &TurnRecord,
    left: &str,
    right: &str,
    public: &PublicValues,
) -> Check {
    let expected = format!("{left} and {right} equal and non-empty");
    let (l, r) = (record.fact(left), record.fact(right));
    let describe = |name: &str, value: &Option<Value>| match value {
        None => format!("{name} absent"),
        Some(v) if is_empty(v) => format!("{name} empty"),
        Some(v) => format!("{name} = {}", shape(v, public)),
    };
    let passed = matches!((&l, &r), (Some(a), Some(b)) if a == b && !is_empty(a));
    Check::new(
        passed,
        expected,
        format!("{}; {}", describe(left, &l), describe(right, &r)),
    )
}

/// The model input as a report shows it: `empty` when the deployment
/// reported none (a digest of nothing would hide that), its digest
/// otherwise.
pub(super) fn model_input_shown(input: &str) -> String {
    if input.is_empty() {
        "empty".to_owned()
    } else {
        sensitive(input)
    }
}

pub(super) fn recall(record: &TurnRecord, fragment: &str, present: bool) -> Check {
    let found = record.model_input().contains(fragment);
    let expected = if present {
        format!("the model input contains {fragment:?}")
    } else {
        format!("the model input does not contain {fragment:?}")
    };
    let observed = format!(
        "fragment {} model input {}",
        if found { "present in" } else { "absent from" },
        model_input_shown(record.model_input())
    );
    Check::new(found == present, expected, observed)
}

pub(super) fn stage_observed(
    record: &TurnRecord,
    stage: &str,
    outcome: Option<crate::StageOutcome>,
    minimum_counts: &BTreeMap<String, u64>,
) -> Check {
    let mut expected = format!("stage {stage}");
    if let Some(outcome) = outcome {
        expected.push_str(&format!(" {outcome}"));
    }
    for (name, least) in minimum_counts {
        expected.push_str(&format!(", {name} >= {least}"));
    }
    let named: Vec<_> = record
        .governance()
        .iter()
        .filter(|r| r.stage == stage)
        .collect();
    if named.is_empty() {
        return Check::new(false, expected, format!("stage {stage} absent from trace"));
    }
    let matching: Vec<_> = named
        .iter()
        .filter(|r| outcome.is_none_or(|o| r.outcome == o))
        .collect();
    let outcomes = named
        .iter()
        .map(|r| r.outcome.as_str())
        .collect::<Vec<_>>()
        .join(",");
    if matching.is_empty() {
        return Check::new(
            false,
            expected,
            format!("stage {stage} outcomes [{outcomes}]"),
        );
    }
    let mut totals = BTreeMap::<&str, u64>::new();
    for record in &matching {
        for (name, n) in &record.counts {
            *totals.entry(name.as_str()).or_insert(0) += n;
        }
    }
    let short = minimum_counts
        .iter()
        .any(|(name, least)| totals.get(name.as_str()).copied().unwrap_or(0) < *least);
    // Only the counts the assertion names: the others' names are the
    // deployment's own strings and could carry turn content.
    let counts = minimum_counts
        .keys()
        .map(|name| format!("{name}={}", totals.get(name.as_str()).copied().unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(" ");
    Check::new(
        !short,
        expected,
        format!("stage {stage} outcomes [{outcomes}], counts [{counts}]"),
    )
}

pub(super) fn response_contains(record: &TurnRecord, fragments: &[String]) -> Check {
    let missing = fragments
        .iter()
        .filter(|f| !record.answer().contains(f.as_str()))
        .count();
    Check::new(
        missing == 0,
        format!("answer contains all {} fragment(s)", fragments.len()),
        format!(
            "{missing} fragment(s) missing from answer {}",
            sensitive(record.answer())
        ),
    )
}

/// The attribute against its digest after the earlier step `step`.
pub(super) fn since_step(
    evidence: &crate::assertion::Evidence<'_>,
    name: &str,
    step: &str,
    unchanged: bool,
) -> Check {
    let how = if unchanged {
        "the same as"
    } else {
        "different from"
    };
    let expected = format!("{name} present and {how} its value after step `{step}`");
    let Some(now) = evidence.record.fact(name) else {
        return Check::new(false, expected, format!("{name} absent"));
    };
    let then = evidence
        .earlier_attributes
        .and_then(|steps| steps.get(step))
        .map(|attributes| attributes.get(name));
    let observed = match then {
        None => {
            return Check::new(
                false,
                expected,
                format!("no earlier step `{step}` recorded"),
            )
        }
        Some(None) => return Check::new(false, expected, format!("{name} absent after `{step}`")),
        Some(Some(digest)) => *digest == crate::assertion::result_digest(&now),
    };
    let said = if observed {
        "the same value"
    } else {
        "a different value"
    };
    Check::new(observed == unchanged, expected, said.to_owned())
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde_json::json;

    use super::*;
    use crate::assertion::{attribute_digests, Evidence};

    #[test]
    fn an_attribute_is_compared_with_its_digest_after_an_earlier_step() {
        let approved = TurnRecord::builder()
            .attribute("ids", json!(["a1"]))
            .build();
        let earlier: HashMap<String, BTreeMap<String, String>> =
            HashMap::from([("approve".to_owned(), attribute_digests(&approved))]);
        let judge = |ids: Value, step: &str, unchanged: bool| {
            let record = TurnRecord::builder().attribute("ids", ids).build();
            let mut evidence = Evidence::of(&record, Default::default());
            evidence.earlier_attributes = Some(&earlier);
            since_step(&evidence, "ids", step, unchanged)
        };
        assert!(judge(json!(["a1"]), "approve", true).passed);
        assert!(!judge(json!(["a2"]), "approve", true).passed);
        assert!(judge(json!(["a2"]), "approve", false).passed);
        assert!(!judge(json!(["a1"]), "approve", false).passed);
        // A step the trial never ran, or an attribute gone, never passes;
        // and the observation names no value.
        let missing = judge(json!(["a1"]), "amend", true);
        assert!(!missing.passed && missing.observed.contains("no earlier step"));
        let gone = TurnRecord::default();
        let mut evidence = Evidence::of(&gone, Default::default());
        evidence.earlier_attributes = Some(&earlier);
        assert!(!since_step(&evidence, "ids", "approve", false).passed);
        assert!(!judge(json!(["a9"]), "approve", true)
            .observed
            .contains("a9"));
    }

    #[test]
    fn review_rows_are_inert_with_no_draft_no_approval_and_no_governed_tool() {
        let rows = |value: Value| {
            let record = TurnRecord::builder().attribute("review", value).build();
            rows_inert(&record, "review")
        };
        assert!(rows(json!([])).passed);
        assert!(rows(json!([["rejected", ""], ["guardrail", ""]])).passed);
        let draft = rows(json!([["rejected", ""], ["draft", ""]]));
        assert!(!draft.passed && draft.observed.ends_with("holds draft"));
        assert!(!rows(json!([["approved", "issue_refund"]])).passed);
        // Another status that names a tool governs it; its status is not
        // repeated in the report.
        let governing = rows(json!([["secret-status", "issue_refund"]]));
        assert!(!governing.passed);
        assert!(!governing.observed.contains("secret-status"));
        assert!(rows(json!({"draft": ""})).malformed);
        assert!(rows(json!([["draft"]])).malformed);
        assert!(!rows_inert(&TurnRecord::default(), "review").passed);
    }

    #[test]
    fn an_empty_model_input_is_called_empty_not_digested() {
        let empty = recall(&TurnRecord::default(), "verify", true);
        assert!(!empty.passed);
        assert_eq!(empty.observed, "fragment absent from model input empty");
        let shown = TurnRecord::builder().model_input("recall: verify").build();
        let digested = recall(&shown, "refund", true);
        assert!(digested.observed.ends_with(&sensitive("recall: verify")));
        assert!(!digested.observed.contains("recall"));
    }
}
