//! The extractor seam: turning demonstrated episodes into procedural drafts.
//!
//! Extraction is best-effort by contract. A model that answers garbage, a
//! field that is missing, a call that fails: each yields no drafts rather than
//! an error, because a consolidation cycle must never take the deployment down
//! with it. The report still lets the caller tell "found nothing" from
//! "broke", through the number of calls made and of errors met.

use std::panic::{catch_unwind, AssertUnwindSafe};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::drafts::ProceduralDraft;

/// One demonstrated episode an extractor learns from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Episode {
    /// A stable id, carried into each draft's source episode ids.
    pub id: String,
    /// The prompt the turn answered.
    pub prompt: String,
    /// The tools the turn called, in order.
    #[serde(default)]
    pub tools: Vec<String>,
}

impl Episode {
    /// An episode with no tool calls yet.
    pub fn new(id: impl Into<String>, prompt: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            prompt: prompt.into(),
            tools: Vec::new(),
        }
    }

    /// Adds one tool call, in order.
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>) -> Self {
        self.tools.push(name.into());
        self
    }
}

/// What one extraction produced, and what it cost to find out.
///
/// ```
/// use symfonic_evals::contracts::ExtractionReport;
///
/// let nothing = ExtractionReport::from_response("[]");
/// assert!(nothing.found_nothing() && !nothing.broke());
///
/// let garbage = ExtractionReport::from_response("I think you should refund.");
/// assert!(garbage.drafts.is_empty() && garbage.broke());
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ExtractionReport {
    /// The drafts proposed; empty when nothing was found or something broke.
    pub drafts: Vec<ProceduralDraft>,
    /// Model or service calls made (0 for a purely rule-based extractor).
    pub calls: u32,
    /// Failures met and absorbed: malformed responses, failed calls, panics.
    pub errors: u32,
}

impl ExtractionReport {
    /// A report of drafts found without any external call.
    pub fn found(drafts: Vec<ProceduralDraft>) -> Self {
        Self {
            drafts,
            calls: 0,
            errors: 0,
        }
    }

    /// A report of one absorbed failure and no drafts.
    pub fn failed() -> Self {
        Self {
            drafts: Vec::new(),
            calls: 0,
            errors: 1,
        }
    }

    /// Parses one model response: a JSON array of drafts, or an object whose
    /// `drafts` field is one. Counts as one call. A response that is not JSON,
    /// has another shape, or holds any malformed draft yields no drafts and
    /// one error: a model that garbled one item may have garbled the others.
    pub fn from_response(text: &str) -> Self {
        let mut report = match parse_drafts(text) {
            Some(drafts) => Self::found(drafts),
            None => Self::failed(),
        };
        report.calls = 1;
        report
    }

    /// Whether extraction ran cleanly and proposed nothing.
    pub fn found_nothing(&self) -> bool {
        self.drafts.is_empty() && self.errors == 0
    }

    /// Whether anything failed along the way.
    pub fn broke(&self) -> bool {
        self.errors > 0
    }

    /// Folds another report into this one (for extractors that batch).
    pub fn absorb(&mut self, other: Self) {
        self.drafts.extend(other.drafts);
        self.calls += other.calls;
        self.errors += other.errors;
    }
}

fn parse_drafts(text: &str) -> Option<Vec<ProceduralDraft>> {
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    let items = match value {
        Value::Array(items) => items,
        Value::Object(mut object) => match object.remove("drafts") {
            Some(Value::Array(items)) => items,
            _ => return None,
        },
        _ => return None,
    };
    items
        .into_iter()
        .map(|item| serde_json::from_value(item).ok())
        .collect()
}

/// Proposes procedural drafts from episodes. Best-effort: an implementation
/// reports failures in [`ExtractionReport::errors`] and never fails the call.
///
/// ```
/// use symfonic_evals::contracts::{
///     Episode, ExtractionReport, ProceduralDraft, ProceduralExtractor, ProceduralKind,
/// };
///
/// /// Proposes an action draft for a tool every episode called.
/// struct Habits;
///
/// impl ProceduralExtractor for Habits {
///     fn extract(&self, episodes: &[Episode]) -> ExtractionReport {
///         let Some(first) = episodes.first() else { return ExtractionReport::default() };
///         let drafts = first
///             .tools
///             .iter()
///             .filter(|tool| episodes.iter().all(|e| e.tools.contains(tool)))
///             .map(|tool| {
///                 let mut draft = ProceduralDraft::builder(
///                     ProceduralKind::Action, "a matching request", format!("call {tool}"), "repeated",
///                 );
///                 for episode in episodes {
///                     draft = draft.source_episode(episode.id.clone());
///                 }
///                 draft.build()
///             })
///             .collect();
///         ExtractionReport::found(drafts)
///     }
/// }
///
/// let episodes = [
///     Episode::new("e1", "refund order 1").tool("issue_refund"),
///     Episode::new("e2", "refund order 2").tool("issue_refund"),
/// ];
/// let report = Habits.extract(&episodes);
/// assert_eq!(report.drafts.len(), 1);
/// assert_eq!(report.drafts[0].source_episode_ids(), ["e1", "e2"]);
/// ```
pub trait ProceduralExtractor {
    /// Proposes drafts from `episodes`.
    fn extract(&self, episodes: &[Episode]) -> ExtractionReport;
}

/// Runs `extractor`, turning a panic into a report of one error and no drafts,
/// so that even an implementation that breaks its contract cannot take the
/// consolidation cycle down.
///
/// ```
/// use symfonic_evals::contracts::{extract_contained, Episode, ExtractionReport, ProceduralExtractor};
///
/// struct Broken;
/// impl ProceduralExtractor for Broken {
///     fn extract(&self, _: &[Episode]) -> ExtractionReport { panic!("model client unavailable") }
/// }
///
/// let report = extract_contained(&Broken, &[]);
/// assert!(report.drafts.is_empty() && report.broke());
/// ```
pub fn extract_contained<E>(extractor: &E, episodes: &[Episode]) -> ExtractionReport
where
    E: ProceduralExtractor + ?Sized,
{
    catch_unwind(AssertUnwindSafe(|| extractor.extract(episodes)))
        .unwrap_or_else(|_| ExtractionReport::failed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contracts::ProceduralKind;

    #[test]
    fn a_well_formed_response_yields_its_drafts() {
        let report = ExtractionReport::from_response(
            r#"{"drafts": [{"kind": "preflight", "trigger": "t", "action": "a", "rationale": "r",
                "precondition": ["x", "y"], "confidence": 0.5}]}"#,
        );
        assert_eq!(report.calls, 1);
        assert_eq!(report.errors, 0);
        assert_eq!(report.drafts.len(), 1);
        assert_eq!(report.drafts[0].kind(), ProceduralKind::Preflight);
    }

    #[test]
    fn any_malformed_item_discards_the_whole_response() {
        let report = ExtractionReport::from_response(
            r#"[{"kind": "action", "trigger": "t", "action": "a", "rationale": "r"},
                {"kind": "action", "trigger": "t"}]"#,
        );
        assert!(report.drafts.is_empty());
        assert!(report.broke());
        assert!(!report.found_nothing());
    }

    #[test]
    fn other_shapes_are_malformed() {
        for text in [
            "",
            "null",
            "42",
            r#"{"items": []}"#,
            r#"{"drafts": {}}"#,
            "[1]",
        ] {
            let report = ExtractionReport::from_response(text);
            assert!(report.drafts.is_empty() && report.broke(), "{text:?}");
        }
    }

    #[test]
    fn absorbing_adds_calls_errors_and_drafts() {
        let mut total = ExtractionReport::from_response("[]");
        total.absorb(ExtractionReport::from_response("nope"));
        assert_eq!((total.calls, total.errors), (2, 1));
    }
}
