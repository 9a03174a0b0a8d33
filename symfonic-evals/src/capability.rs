//! What a deployment declares it can do, and whether a pack applies to it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

/// The trait a deployment declares when its tool gate evaluates approved
/// procedures' preconditions.
pub const PROCEDURAL_PRECONDITION: &str = "procedural-precondition";
/// The trait a deployment declares when it has a public review door for
/// learned procedures.
pub const PROCEDURAL_REVIEW: &str = "procedural-review";

/// The trait a deployment declares when several instances of it can run
/// at once on one durable directory (replicas behind a load balancer): the
/// replica probes then run on two instances.
pub const REPLICAS: &str = "replicas";

/// The trait a deployment declares when a person answering a pause may
/// edit the call it holds (a human-in-the-loop middleware's `edit`
/// decision): its pauses name the editable calls
/// ([`Pause::editable`](crate::Pause::editable)) and its resume takes the
/// edit answer ([`EditDecision`](crate::EditDecision)). The
/// `approval/edited-call` probe runs on it.
pub const EDITABLE_CALLS: &str = "editable-calls";

/// The trait a deployment declares when one conversation may hold more
/// than one pending pause at once (a request asked after another is still
/// waiting, each with its own token, each answered on its own): the
/// `approval/one-of-two` probe then also pauses two requests in one
/// conversation (with the approval pack's `second_prompt`).
pub const CONCURRENT_PAUSES: &str = "concurrent-pauses";

/// The operation a deployment declares when it can reset (or cancel) a
/// conversation ([`Target::reset`](crate::Target::reset)): the
/// `approval/reset-between` probe then runs.
pub const RESET: &str = "reset";

/// A deployment's declaration of capabilities, traits, operations and the
/// tools each capability contributes.
///
/// ```
/// use symfonic_evals::CapabilityEvidence;
/// let evidence = CapabilityEvidence::new()
///     .capability("tools")
///     .with_trait("procedural-precondition")
///     .operation("resume")
///     .contributes("extensions", "weather_lookup");
/// assert!(evidence.has_capability("extensions"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityEvidence {
    /// Capability names such as `tools`, `human`, `extensions`.
    #[serde(default)]
    pub capabilities: BTreeSet<String>,
    /// Trait names such as [`PROCEDURAL_PRECONDITION`].
    #[serde(default)]
    pub traits: BTreeSet<String>,
    /// Operations beyond a prompt, such as `resume`.
    #[serde(default)]
    pub operations: BTreeSet<String>,
    /// The tools each capability contributes.
    #[serde(default)]
    pub contributed_tools: BTreeMap<String, BTreeSet<String>>,
}

impl CapabilityEvidence {
    /// Declares nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares a capability.
    #[must_use]
    pub fn capability(mut self, name: impl Into<String>) -> Self {
        self.capabilities.insert(name.into());
        self
    }

    /// Declares a trait.
    #[must_use]
    pub fn with_trait(mut self, name: impl Into<String>) -> Self {
        self.traits.insert(name.into());
        self
    }

    /// Declares an operation (the prompt operation is implied).
    #[must_use]
    pub fn operation(mut self, name: impl Into<String>) -> Self {
        self.operations.insert(name.into());
        self
    }

    /// Declares that `capability` contributes `tool` (and the capability itself).
    #[must_use]
    pub fn contributes(mut self, capability: impl Into<String>, tool: impl Into<String>) -> Self {
        let capability = capability.into();
        self.capabilities.insert(capability.clone());
        self.contributed_tools
            .entry(capability)
            .or_default()
            .insert(tool.into());
        self
    }

    /// Whether `name` is declared.
    pub fn has_capability(&self, name: &str) -> bool {
        self.capabilities.contains(name)
    }

    /// Whether `name` is declared as an operation or a trait: what a probe
    /// that needs a declaration reads.
    pub fn declares(&self, name: &str) -> bool {
        self.operations.contains(name) || self.traits.contains(name)
    }

    /// What of `requirements` this evidence lacks, in declaration order.
    pub fn missing(&self, requirements: &Requirements) -> Vec<Missing> {
        let mut missing = Vec::new();
        for name in &requirements.capabilities {
            if !self.capabilities.contains(name) {
                missing.push(Missing::Capability(name.clone()));
            }
        }
        for name in &requirements.traits {
            if !self.traits.contains(name) {
                missing.push(Missing::Trait(name.clone()));
            }
        }
        for name in &requirements.operations {
            if name != "prompt" && !self.operations.contains(name) {
                missing.push(Missing::Operation(name.clone()));
            }
        }
        for (capability, tool) in &requirements.contributed_tools {
            let contributed = self
                .contributed_tools
                .get(capability)
                .is_some_and(|tools| tools.contains(tool));
            if !contributed {
                missing.push(Missing::ContributedTool {
                    capability: capability.clone(),
                    tool: tool.clone(),
                });
            }
        }
        missing
    }
}

/// What a pack needs a deployment to declare.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements {
    /// Required capabilities.
    pub capabilities: Vec<String>,
    /// Required traits.
    pub traits: Vec<String>,
    /// Required operations.
    pub operations: Vec<String>,
    /// Required `(capability, tool)` contributions.
    pub contributed_tools: Vec<(String, String)>,
}

/// One thing a deployment lacks for a pack to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// A capability is not declared.
    Capability(String),
    /// A trait is not declared.
    Trait(String),
    /// An operation is not declared.
    Operation(String),
    /// The capability does not contribute the tool.
    ContributedTool {
        /// The contributing capability.
        capability: String,
        /// The tool it should contribute.
        tool: String,
    },
}

/// Reports write a missing item as `{"missing": <what>, "name": ...}` (a
/// contributed tool as `"capability"` and `"tool"`), with the same sentence
/// the failure message printed as `"reason"`.
impl Serialize for Missing {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3))?;
        match self {
            Self::Capability(name) => {
                map.serialize_entry("missing", "capability")?;
                map.serialize_entry("name", name)?;
            }
            Self::Trait(name) => {
                map.serialize_entry("missing", "trait")?;
                map.serialize_entry("name", name)?;
            }
            Self::Operation(name) => {
                map.serialize_entry("missing", "operation")?;
                map.serialize_entry("name", name)?;
            }
            Self::ContributedTool { capability, tool } => {
                map.serialize_entry("missing", "contributed_tool")?;
                map.serialize_entry("capability", capability)?;
                map.serialize_entry("tool", tool)?;
            }
        }
        map.serialize_entry("reason", &self.to_string())?;
        map.end()
    }
}

/// Reads a missing item back from the form [`Serialize`] writes.
impl<'de> Deserialize<'de> for Missing {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Form {
            missing: String,
            #[serde(default)]
            name: String,
            #[serde(default)]
            capability: String,
            #[serde(default)]
            tool: String,
        }
        let form = Form::deserialize(deserializer)?;
        Ok(match form.missing.as_str() {
            "capability" => Self::Capability(form.name),
            "trait" => Self::Trait(form.name),
            "operation" => Self::Operation(form.name),
            "contributed_tool" => Self::ContributedTool {
                capability: form.capability,
                tool: form.tool,
            },
            other => {
                return Err(serde::de::Error::custom(format!(
                    "unknown missing item `{other}`"
                )))
            }
        })
    }
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Capability(name) => write!(f, "capability `{name}` is not declared"),
            Self::Trait(name) => write!(f, "trait `{name}` is not declared"),
            Self::Operation(name) => write!(f, "operation `{name}` is not declared"),
            Self::ContributedTool { capability, tool } => {
                write!(
                    f,
                    "capability `{capability}` does not contribute tool `{tool}`"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs() -> Requirements {
        Requirements {
            capabilities: vec!["extensions".into()],
            traits: vec![PROCEDURAL_REVIEW.into()],
            operations: vec!["resume".into()],
            contributed_tools: vec![("extensions".into(), "weather".into())],
        }
    }

    #[test]
    fn names_exactly_what_is_missing() {
        let evidence = CapabilityEvidence::new().contributes("extensions", "other");
        let missing = evidence.missing(&needs());
        let text: Vec<String> = missing.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "trait `procedural-review` is not declared",
                "operation `resume` is not declared",
                "capability `extensions` does not contribute tool `weather`",
            ]
        );
    }

    #[test]
    fn missing_items_serialize() {
        let json = serde_json::to_value(CapabilityEvidence::new().missing(&needs())).unwrap();
        assert_eq!(
            json[0],
            serde_json::json!({
                "missing": "capability",
                "name": "extensions",
                "reason": "capability `extensions` is not declared",
            })
        );
        assert_eq!(json[3]["capability"], "extensions");
        assert_eq!(json[3]["tool"], "weather");
    }

    #[test]
    fn full_evidence_misses_nothing() {
        let evidence = CapabilityEvidence::new()
            .contributes("extensions", "weather")
            .with_trait(PROCEDURAL_REVIEW)
            .operation("resume");
        assert!(evidence.missing(&needs()).is_empty());
    }
}
