//! Checking a pack's arguments: each problem names the argument at fault
//! and why it would stop the pack from telling a working deployment from a
//! broken one. The attribute macros make the same checks at compile time.

use std::fmt;

use serde_json::Value;

use super::probes::Probe;
use crate::scenario::TrialPolicy;

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

/// Collects argument errors.
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

impl ArgumentChecks {
    /// An optional text argument, when given, is not empty.
    pub(crate) fn optional_text(&mut self, argument: &'static str, value: Option<&String>) {
        if let Some(value) = value {
            self.text(argument, value);
        }
    }

    /// A list of prompts whose items are not empty.
    pub(crate) fn prompts(&mut self, argument: &'static str, items: &[String]) {
        self.require(
            items.iter().all(|item| !item.is_empty()),
            argument,
            "an item is an empty prompt, which gives the deployment nothing to act on",
        );
    }

    /// Every name in `skip_probes` is a probe of the pack.
    pub(crate) fn probes(&mut self, skipped: &[String], known: &[Probe]) {
        for name in skipped {
            if !known.iter().any(|probe| probe.name == name) {
                let names: Vec<&str> = known.iter().map(|p| p.name).collect();
                self.0.push(ArgumentError {
                    argument: "skip_probes",
                    message: format!(
                        "`{name}` is not a probe of this pack; its probes are: {}",
                        names.join(", ")
                    ),
                });
            }
        }
    }
}
