//! Procedural drafts: structured candidates for a learned procedure.
//!
//! A draft is what an extractor proposes after watching demonstrations. It
//! governs nothing until a reviewer approves it; this module only defines its
//! shape, so extractors, stores and review doors share one vocabulary.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What kind of rule a draft proposes.
///
/// Unknown kinds clamp to [`ProceduralKind::Action`], the most benign: a noisy
/// action draft surfaces to review, while a fabricated preflight rule could
/// hide a real precondition gap.
///
/// ```
/// use symfonic_evals::contracts::ProceduralKind;
///
/// assert_eq!(ProceduralKind::parse("preflight"), ProceduralKind::Preflight);
/// assert_eq!(ProceduralKind::parse(" Guardrail "), ProceduralKind::Guardrail);
/// assert_eq!(ProceduralKind::parse("shortcut"), ProceduralKind::Action);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum ProceduralKind {
    /// Repeated tool use that should become a habit.
    #[default]
    Action,
    /// A check that prevents a downstream failure: before X, call Y.
    Preflight,
    /// An error-recovery rule: after E, call R.
    Recovery,
    /// A negative rule: never X, use Y instead.
    Guardrail,
}

impl ProceduralKind {
    /// Every kind, in declaration order.
    pub const ALL: [Self; 4] = [
        Self::Action,
        Self::Preflight,
        Self::Recovery,
        Self::Guardrail,
    ];

    /// Reads a kind from text (trimmed, case-insensitive); anything else is
    /// clamped to `Action`.
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        Self::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(text))
            .unwrap_or(Self::Action)
    }

    /// The lowercase name used in storage and prompts.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Action => "action",
            Self::Preflight => "preflight",
            Self::Recovery => "recovery",
            Self::Guardrail => "guardrail",
        }
    }
}

impl fmt::Display for ProceduralKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for ProceduralKind {
    fn from(text: &str) -> Self {
        Self::parse(text)
    }
}

impl Serialize for ProceduralKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProceduralKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Self::parse(&text))
    }
}

/// The pre-flight rules a draft carries: none, one, or an ordered list.
///
/// The shape is kept through serialization (`null`, a string, an array), so a
/// consumer that stored a single rule reads back a single rule.
///
/// ```
/// use symfonic_evals::contracts::Precondition;
///
/// let one: Precondition = serde_json::from_str(r#""call lookup_account first""#).unwrap();
/// assert_eq!(one, Precondition::One("call lookup_account first".into()));
/// assert_eq!(one.rules().count(), 1);
/// assert_eq!(serde_json::to_string(&Precondition::None).unwrap(), "null");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Precondition {
    /// No pre-flight gate.
    #[default]
    None,
    /// A single pre-flight rule.
    One(String),
    /// Several rules, in the order they must be honoured.
    Ordered(Vec<String>),
}

impl Precondition {
    /// The rules in order, whatever the shape.
    pub fn rules(&self) -> impl Iterator<Item = &str> {
        let rules: &[String] = match self {
            Self::None => &[],
            Self::One(rule) => std::slice::from_ref(rule),
            Self::Ordered(rules) => rules,
        };
        rules.iter().map(String::as_str)
    }

    /// Whether there is no rule at all (`None`, or an empty ordered list).
    pub fn is_empty(&self) -> bool {
        self.rules().next().is_none()
    }
}

/// One proposed procedure. Immutable once built: fields are read through
/// accessors, and a draft is built with [`ProceduralDraft::builder`].
///
/// ```
/// use symfonic_evals::contracts::{Precondition, ProceduralDraft, ProceduralKind};
///
/// let draft = ProceduralDraft::builder(
///     ProceduralKind::Preflight,
///     "refund requested",
///     "call issue_refund",
///     "seen in two demonstrations",
/// )
/// .confidence(0.8)
/// .precondition(Precondition::One("verify the account region".into()))
/// .source_episode("ep-1")
/// .build();
///
/// let json = serde_json::to_string(&draft).unwrap();
/// let back: ProceduralDraft = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, draft);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProceduralDraft {
    kind: ProceduralKind,
    trigger: String,
    action: String,
    rationale: String,
    #[serde(default)]
    confidence: f64,
    #[serde(default)]
    precondition: Precondition,
    #[serde(default)]
    source_episode_ids: Vec<String>,
}

impl ProceduralDraft {
    /// Starts a draft from its four required fields.
    pub fn builder(
        kind: ProceduralKind,
        trigger: impl Into<String>,
        action: impl Into<String>,
        rationale: impl Into<String>,
    ) -> ProceduralDraftBuilder {
        ProceduralDraftBuilder {
            draft: Self {
                kind,
                trigger: trigger.into(),
                action: action.into(),
                rationale: rationale.into(),
                confidence: 0.0,
                precondition: Precondition::None,
                source_episode_ids: Vec::new(),
            },
        }
    }

    /// The kind of rule proposed.
    pub fn kind(&self) -> ProceduralKind {
        self.kind
    }

    /// When the procedure applies.
    pub fn trigger(&self) -> &str {
        &self.trigger
    }

    /// What it says to do.
    pub fn action(&self) -> &str {
        &self.action
    }

    /// Why the extractor proposed it.
    pub fn rationale(&self) -> &str {
        &self.rationale
    }

    /// The extractor's confidence, 0 when it gave none.
    pub fn confidence(&self) -> f64 {
        self.confidence
    }

    /// The pre-flight rules, in their original shape.
    pub fn precondition(&self) -> &Precondition {
        &self.precondition
    }

    /// The episodes the draft was learned from.
    pub fn source_episode_ids(&self) -> &[String] {
        &self.source_episode_ids
    }
}

/// Sets a draft's optional fields before it is frozen by [`build`](Self::build).
#[derive(Debug, Clone)]
pub struct ProceduralDraftBuilder {
    draft: ProceduralDraft,
}

impl ProceduralDraftBuilder {
    /// The extractor's confidence. A non-finite value is stored as 0, since it
    /// could not be written back out as JSON.
    #[must_use]
    pub fn confidence(mut self, confidence: f64) -> Self {
        self.draft.confidence = if confidence.is_finite() {
            confidence
        } else {
            0.0
        };
        self
    }

    /// The pre-flight rules.
    #[must_use]
    pub fn precondition(mut self, precondition: Precondition) -> Self {
        self.draft.precondition = precondition;
        self
    }

    /// Adds one source episode id.
    #[must_use]
    pub fn source_episode(mut self, id: impl Into<String>) -> Self {
        self.draft.source_episode_ids.push(id.into());
        self
    }

    /// Freezes the draft.
    pub fn build(self) -> ProceduralDraft {
        self.draft
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_kind_clamps_to_action_when_read_from_json() {
        let draft: ProceduralDraft = serde_json::from_value(json!({
            "kind": "shortcut", "trigger": "t", "action": "a", "rationale": "r"
        }))
        .unwrap();
        assert_eq!(draft.kind(), ProceduralKind::Action);
        assert_eq!(draft.confidence(), 0.0);
        assert_eq!(draft.precondition(), &Precondition::None);
        assert!(draft.source_episode_ids().is_empty());
    }

    #[test]
    fn required_fields_are_required() {
        for missing in ["kind", "trigger", "action", "rationale"] {
            let mut value =
                json!({"kind": "action", "trigger": "t", "action": "a", "rationale": "r"});
            value.as_object_mut().unwrap().remove(missing);
            assert!(
                serde_json::from_value::<ProceduralDraft>(value).is_err(),
                "{missing}"
            );
        }
    }

    #[test]
    fn precondition_shape_survives_a_round_trip() {
        for precondition in [
            Precondition::None,
            Precondition::One("x".into()),
            Precondition::Ordered(vec!["x".into()]),
            Precondition::Ordered(vec!["b".into(), "a".into()]),
            Precondition::Ordered(vec![]),
        ] {
            let draft = ProceduralDraft::builder(ProceduralKind::Recovery, "t", "a", "r")
                .precondition(precondition.clone())
                .build();
            let back: ProceduralDraft =
                serde_json::from_str(&serde_json::to_string(&draft).unwrap()).unwrap();
            assert_eq!(back.precondition(), &precondition);
        }
    }

    #[test]
    fn non_finite_confidence_is_stored_as_zero() {
        let draft = ProceduralDraft::builder(ProceduralKind::Action, "t", "a", "r")
            .confidence(f64::NAN)
            .build();
        assert_eq!(draft.confidence(), 0.0);
    }
}
