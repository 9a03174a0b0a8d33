//! What every pack shares: its kind, its argument checks, and applicability.

use std::fmt;

use serde_json::Value;

use super::{ApprovalResumePack, ExtensionToolPack, ProceduralPack};
use crate::capability::{CapabilityEvidence, Missing, Requirements};
use crate::scenario::{Scenario, TrialPolicy};

/// The three packs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum PackKind {
    /// Learned procedures: promoted, reviewed, persisted, enforced.
    Procedural,
    /// A pause for a person, resumed once, replay refused.
    ApprovalResume,
    /// A tool an extension contributes really runs.
    ExtensionTool,
}

impl PackKind {
    /// The pack's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Procedural => "procedural-skills",
            Self::ApprovalResume => "approval-resume",
            Self::ExtensionTool => "extension-tools",
        }
    }

    /// The capability whose claim the pack checks.
    pub fn capability(self) -> &'static str {
        match self {
            Self::Procedural => "tools",
            Self::ApprovalResume => "human",
            Self::ExtensionTool => "extensions",
        }
    }
}

/// A pack argument that cannot make a meaningful scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentError {
    /// The argument at fault.
    pub argument: &'static str,
    /// Why.
    pub message: String,
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.argument, self.message)
    }
}

impl std::error::Error for ArgumentError {}

/// Collects argument errors; the checks are shared with nothing else, so
/// the macros mirror them at compile time.
#[derive(Default)]
pub(crate) struct ArgumentChecks(Vec<ArgumentError>);

impl ArgumentChecks {
    pub(crate) fn require(&mut self, ok: bool, argument: &'static str, message: &str) {
        if !ok {
            self.0.push(ArgumentError {
                argument,
                message: message.to_owned(),
            });
        }
    }

    pub(crate) fn text(&mut self, argument: &'static str, value: &str) {
        self.require(!value.is_empty(), argument, "must not be empty");
    }

    pub(crate) fn state(&mut self, argument: &'static str, value: &Value) {
        let ok = value.as_object().is_some_and(|map| !map.is_empty());
        self.require(ok, argument, "must be a non-empty JSON object");
    }

    pub(crate) fn policy(&mut self, policy: &TrialPolicy) {
        if let Some(problem) = policy.problem() {
            self.0.push(ArgumentError {
                argument: "policy",
                message: problem,
            });
        }
    }

    pub(crate) fn finish(self) -> Result<(), Vec<ArgumentError>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }
}

/// Either the scenario a pack runs, or precisely what the deployment lacks.
#[derive(Debug, Clone, PartialEq)]
pub enum PackResolution {
    /// The pack applies; run this.
    Scenario(Scenario),
    /// The pack does not apply, for these reasons.
    NotApplicable(Vec<Missing>),
}

/// Resolves a pack against the deployment's evidence: its scenario when
/// nothing is missing, else the list of what is.
pub fn resolve_pack(
    evidence: &CapabilityEvidence,
    requirements: &Requirements,
    build: impl FnOnce() -> Scenario,
) -> PackResolution {
    let missing = evidence.missing(requirements);
    if missing.is_empty() {
        PackResolution::Scenario(build())
    } else {
        PackResolution::NotApplicable(missing)
    }
}

/// One of the three packs, fully specified.
// Built once per pack run, so the size spread between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum PackDefinition {
    /// See [`ProceduralPack`].
    Procedural(ProceduralPack),
    /// See [`ApprovalResumePack`].
    ApprovalResume(ApprovalResumePack),
    /// See [`ExtensionToolPack`].
    ExtensionTool(ExtensionToolPack),
}

impl PackDefinition {
    /// Which pack this is.
    pub fn kind(&self) -> PackKind {
        match self {
            Self::Procedural(_) => PackKind::Procedural,
            Self::ApprovalResume(_) => PackKind::ApprovalResume,
            Self::ExtensionTool(_) => PackKind::ExtensionTool,
        }
    }

    /// The same argument checks the attribute macros make at compile time.
    ///
    /// # Errors
    ///
    /// Every argument that cannot make a meaningful scenario.
    pub fn check(&self) -> Result<(), Vec<ArgumentError>> {
        match self {
            Self::Procedural(pack) => pack.check(),
            Self::ApprovalResume(pack) => pack.check(),
            Self::ExtensionTool(pack) => pack.check(),
        }
    }

    /// What the pack needs the deployment to declare.
    pub fn requirements(&self) -> Requirements {
        match self {
            Self::Procedural(pack) => pack.requirements(),
            Self::ApprovalResume(pack) => pack.requirements(),
            Self::ExtensionTool(pack) => pack.requirements(),
        }
    }

    /// The trial policy.
    pub fn policy(&self) -> TrialPolicy {
        match self {
            Self::Procedural(pack) => pack.policy,
            Self::ApprovalResume(pack) => pack.policy,
            Self::ExtensionTool(pack) => pack.policy,
        }
    }

    /// A pack of `kind` from a JSON object of its arguments by field name
    /// (the runtime defaults fill the rest), plus an optional `policy`
    /// object `{"trials", "required", "step_timeout_ms"}`. This is what the
    /// attributes expand to, and lets a hand-written suite keep its packs in
    /// JSON files.
    ///
    /// ```
    /// use symfonic_evals::{PackDefinition, PackKind};
    /// let pack = PackDefinition::from_arguments(
    ///     PackKind::ExtensionTool,
    ///     r#"{"prompt": "weather in Oslo?", "tool_name": "weather", "policy": {"trials": 3, "required": 2}}"#,
    /// ).unwrap();
    /// assert_eq!(pack.policy().trials, 3);
    /// assert!(pack.check().is_ok());
    /// ```
    ///
    /// # Errors
    ///
    /// Malformed JSON, an unknown field, or a value of the wrong type.
    pub fn from_arguments(kind: PackKind, json: &str) -> Result<Self, serde_json::Error> {
        let mut fields: serde_json::Map<String, Value> = serde_json::from_str(json)?;
        let policy = match fields.remove("policy") {
            Some(policy) => Some(serde_json::from_value::<PolicyArguments>(policy)?.policy()),
            None => None,
        };
        let fields = Value::Object(fields);
        let mut definition = match kind {
            PackKind::Procedural => Self::Procedural(serde_json::from_value(fields)?),
            PackKind::ApprovalResume => Self::ApprovalResume(serde_json::from_value(fields)?),
            PackKind::ExtensionTool => Self::ExtensionTool(serde_json::from_value(fields)?),
        };
        if let Some(policy) = policy {
            match &mut definition {
                Self::Procedural(pack) => pack.policy = policy,
                Self::ApprovalResume(pack) => pack.policy = policy,
                Self::ExtensionTool(pack) => pack.policy = policy,
            }
        }
        Ok(definition)
    }

    /// A sha-256 (hex) of the whole resolved definition: its kind, every
    /// field with defaults applied (JSON object keys sorted) and its policy.
    /// Two definitions that run the same scenario fingerprint alike however
    /// they were spelled.
    pub fn fingerprint(&self) -> String {
        let fields = match self {
            Self::Procedural(pack) => serde_json::to_value(pack),
            Self::ApprovalResume(pack) => serde_json::to_value(pack),
            Self::ExtensionTool(pack) => serde_json::to_value(pack),
        }
        .map(|fields| sorted(&fields))
        .unwrap_or_default();
        let policy = self.policy();
        let text = format!(
            "{}\n{fields}\ntrials={} required={} step_timeout_ms={}",
            self.kind().name(),
            policy.trials,
            policy.required,
            policy.step_timeout.as_millis()
        );
        crate::redact::sha256_hex(text.as_bytes())
    }

    /// Checks the arguments, then resolves against a deployment's evidence.
    ///
    /// # Errors
    ///
    /// The argument errors of [`check`](Self::check).
    pub fn resolve(
        &self,
        evidence: &CapabilityEvidence,
    ) -> Result<PackResolution, Vec<ArgumentError>> {
        self.check()?;
        Ok(self.resolve_checked(evidence))
    }

    /// [`resolve`](Self::resolve) for a definition already checked.
    pub(crate) fn resolve_checked(&self, evidence: &CapabilityEvidence) -> PackResolution {
        resolve_pack(evidence, &self.requirements(), || match self {
            Self::Procedural(pack) => pack.scenario(),
            Self::ApprovalResume(pack) => pack.scenario(),
            Self::ExtensionTool(pack) => pack.scenario(),
        })
    }
}

/// `value` with every object's keys in sorted order, so that a fingerprint
/// does not depend on how a JSON literal was written.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// A trial policy as JSON spells it (a duration in milliseconds).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyArguments {
    trials: u32,
    required: u32,
    #[serde(default)]
    step_timeout_ms: Option<u64>,
}

impl PolicyArguments {
    /// The runtime default timeout unless one was given.
    fn policy(&self) -> TrialPolicy {
        let mut policy = TrialPolicy {
            trials: self.trials,
            required: self.required,
            ..TrialPolicy::default()
        };
        if let Some(ms) = self.step_timeout_ms {
            policy.step_timeout = std::time::Duration::from_millis(ms);
        }
        policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extension(json: &str) -> PackDefinition {
        PackDefinition::from_arguments(PackKind::ExtensionTool, json).unwrap()
    }

    #[test]
    fn fingerprints_follow_the_resolved_definition_not_its_spelling() {
        let plain = extension(r#"{"prompt":"p","tool_name":"t","arguments":{"a":1,"b":2}}"#);
        let spelled = extension(
            r#"{"arguments":{"b":2,"a":1},"tool_name":"t","prompt":"p","conversation":"extensions",
                "policy":{"trials":1,"required":1,"step_timeout_ms":30000}}"#,
        );
        let other = extension(r#"{"prompt":"p","tool_name":"t","arguments":{"a":1,"b":3}}"#);
        let stricter = extension(
            r#"{"prompt":"p","tool_name":"t","arguments":{"a":1,"b":2},"policy":{"trials":3,"required":3}}"#,
        );
        assert_eq!(plain.fingerprint(), spelled.fingerprint());
        assert_ne!(plain.fingerprint(), other.fingerprint());
        assert_ne!(plain.fingerprint(), stricter.fingerprint());
        assert_eq!(plain.fingerprint().len(), 64);
    }

    #[test]
    fn answers_and_tool_arguments_must_be_objects_as_the_attributes_require() {
        let approval = |answer: &str| {
            PackDefinition::from_arguments(
                PackKind::ApprovalResume,
                &format!(r#"{{"pause_prompt":"p","interaction_tool":"ask","answer":{answer}}}"#),
            )
            .unwrap()
            .check()
        };
        assert!(approval(r#"{"approved":true}"#).is_ok());
        for answer in ["true", "5", r#""yes""#, "[1]", "{}"] {
            let errors = approval(answer).unwrap_err();
            assert_eq!(errors[0].argument, "answer", "{answer}");
        }
        let errors = extension(r#"{"prompt":"p","tool_name":"t","arguments":"Oslo"}"#)
            .check()
            .unwrap_err();
        assert_eq!(errors[0].argument, "arguments");
    }

    #[test]
    fn arguments_of_the_wrong_shape_are_refused() {
        for json in [
            r#"{"tool_nam":"t"}"#,
            r#"{"tool_name":3}"#,
            r#"{"policy":{"trials":1}}"#,
            "[]",
        ] {
            assert!(
                PackDefinition::from_arguments(PackKind::ExtensionTool, json).is_err(),
                "{json}"
            );
        }
    }
}
