//! The extension tool pack: the contributed tool is called and really runs.

use serde_json::Value;

use super::definition::ArgumentChecks;
use super::{ArgumentError, PackKind};
use crate::assertion::Assertion;
use crate::capability::Requirements;
use crate::scenario::{Scenario, Step, TrialPolicy};

/// Arguments of the extension tool pack.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExtensionToolPack {
    /// The turn that should call the tool.
    pub prompt: String,
    /// The tool the `extensions` capability contributes.
    pub tool_name: String,
    /// The exact arguments the call must carry, if given.
    pub arguments: Option<Value>,
    /// Fragments the answer must contain.
    pub expected_fragments: Vec<String>,
    /// The conversation the step runs in.
    pub conversation: String,
    /// Trials and passes required (not read from JSON: a policy holds a
    /// duration, which the attribute spells as `step_timeout_ms`).
    #[serde(skip)]
    pub policy: TrialPolicy,
}

impl Default for ExtensionToolPack {
    fn default() -> Self {
        Self {
            prompt: String::new(),
            tool_name: String::new(),
            arguments: None,
            expected_fragments: Vec::new(),
            conversation: "extensions".into(),
            policy: TrialPolicy::default(),
        }
    }
}

impl ExtensionToolPack {
    /// Refuses arguments that would make the pack unable to discriminate.
    ///
    /// # Errors
    ///
    /// Every offending argument.
    pub fn check(&self) -> Result<(), Vec<ArgumentError>> {
        let mut checks = ArgumentChecks::default();
        checks.text("prompt", &self.prompt);
        checks.text("tool_name", &self.tool_name);
        checks.text("conversation", &self.conversation);
        checks.require(
            self.arguments.as_ref().is_none_or(Value::is_object),
            "arguments",
            "must be a JSON object of the tool's arguments",
        );
        checks.require(
            self.expected_fragments.iter().all(|f| !f.is_empty()),
            "expected_fragments",
            "an empty fragment matches every answer",
        );
        checks.policy(&self.policy);
        checks.finish()
    }

    /// The `extensions` capability contributing exactly this tool.
    pub fn requirements(&self) -> Requirements {
        Requirements {
            capabilities: vec![PackKind::ExtensionTool.capability().into()],
            contributed_tools: vec![(
                PackKind::ExtensionTool.capability().into(),
                self.tool_name.clone(),
            )],
            ..Requirements::default()
        }
    }

    /// The pack's one scenario.
    pub fn scenario(&self) -> Scenario {
        let mut assertions = vec![
            Assertion::ToolCalled {
                tool: self.tool_name.clone(),
                times: 1,
                arguments: self.arguments.clone(),
            },
            Assertion::tool_succeeded(&self.tool_name, 1),
            Assertion::ToolCallIdsUnique { minimum: 1 },
        ];
        if !self.expected_fragments.is_empty() {
            assertions.push(Assertion::ResponseContains(self.expected_fragments.clone()));
        }
        Scenario {
            name: "extension-tool-execution".into(),
            steps: vec![
                Step::prompt("extension call", &self.prompt, &self.conversation)
                    .asserting(assertions),
            ],
            policy: self.policy,
        }
    }
}
