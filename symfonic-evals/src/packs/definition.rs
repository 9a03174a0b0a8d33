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

/// Either the scenarios a pack runs, or precisely what the deployment lacks.
#[derive(Debug, Clone, PartialEq)]
pub enum PackResolution {
    /// The pack applies; run these.
    Scenarios(Vec<Scenario>),
    /// The pack does not apply, for these reasons.
    NotApplicable(Vec<Missing>),
}

/// Resolves a pack against the deployment's evidence: its scenarios when
/// nothing is missing, else the list of what is.
pub fn resolve_pack(
    evidence: &CapabilityEvidence,
    requirements: &Requirements,
    build: impl FnOnce() -> Vec<Scenario>,
) -> PackResolution {
    let missing = evidence.missing(requirements);
    if missing.is_empty() {
        PackResolution::Scenarios(build())
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

    /// Resolves against a deployment's evidence.
    ///
    /// # Errors
    ///
    /// The argument errors of [`check`](Self::check).
    pub fn resolve(
        &self,
        evidence: &CapabilityEvidence,
    ) -> Result<PackResolution, Vec<ArgumentError>> {
        self.check()?;
        let scenario = || match self {
            Self::Procedural(pack) => pack.scenario(),
            Self::ApprovalResume(pack) => pack.scenario(),
            Self::ExtensionTool(pack) => pack.scenario(),
        };
        Ok(resolve_pack(evidence, &self.requirements(), || {
            vec![scenario()]
        }))
    }
}
