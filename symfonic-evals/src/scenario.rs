//! Scenarios: the steps a pack drives, and how many trials must pass.

use std::time::Duration;

use serde_json::Value;

use crate::assertion::Assertion;

/// How many trials a scenario runs and how many must pass. Each trial starts
/// from a fresh [`TargetContext`](crate::TargetContext).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialPolicy {
    /// Trials to run.
    pub trials: u32,
    /// Trials that must pass.
    pub required: u32,
    /// How long one step may take before the trial ends as hung.
    pub step_timeout: Duration,
}

impl Default for TrialPolicy {
    fn default() -> Self {
        Self {
            trials: 1,
            required: 1,
            step_timeout: Duration::from_secs(30),
        }
    }
}

impl TrialPolicy {
    /// Every one of `trials` must pass.
    pub fn all_of(trials: u32) -> Self {
        Self {
            trials,
            required: trials,
            ..Self::default()
        }
    }

    /// What is wrong with this policy, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.trials == 0 {
            Some("a trial policy must run at least one trial".into())
        } else if self.required == 0 {
            Some("a trial policy must require at least one passing trial".into())
        } else if self.required > self.trials {
            Some(format!(
                "a trial policy cannot require {} passes out of {} trials",
                self.required, self.trials
            ))
        } else if self.step_timeout.is_zero() {
            Some("a step timeout of zero would end every trial before it starts".into())
        } else {
            None
        }
    }
}

/// What a step sends through the deployment.
#[derive(Debug, Clone, PartialEq)]
pub enum StepInput {
    /// A prompt turn.
    Prompt(String),
    /// Redeem the conversation's latest retained pause token with `answer`.
    Resume {
        /// What the person answered.
        answer: Value,
    },
}

/// One step of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// A readable name for reports ("draft probe", "resume", ...), never the prompt.
    pub label: String,
    /// What the step sends.
    pub input: StepInput,
    /// The conversation it belongs to.
    pub conversation: String,
    /// Explicit turn state (a JSON object), if the step declares one.
    pub state: Option<Value>,
    /// What the evidence must show.
    pub assertions: Vec<Assertion>,
    /// The error kind the turn must fail with, if the step expects one.
    pub expected_error: Option<String>,
    /// Rebuild the deployment from the same context before this step.
    pub restart_before: bool,
}

impl Step {
    /// A prompt step in `conversation` with no assertions yet.
    pub fn prompt(
        label: impl Into<String>,
        prompt: impl Into<String>,
        conversation: impl Into<String>,
    ) -> Self {
        Self::new(label, StepInput::Prompt(prompt.into()), conversation)
    }

    /// A resume step in `conversation` answering with `answer`.
    pub fn resume(
        label: impl Into<String>,
        answer: Value,
        conversation: impl Into<String>,
    ) -> Self {
        Self::new(label, StepInput::Resume { answer }, conversation)
    }

    fn new(label: impl Into<String>, input: StepInput, conversation: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            input,
            conversation: conversation.into(),
            state: None,
            assertions: Vec::new(),
            expected_error: None,
            restart_before: false,
        }
    }

    /// Adds assertions.
    #[must_use]
    pub fn asserting(mut self, assertions: impl IntoIterator<Item = Assertion>) -> Self {
        self.assertions.extend(assertions);
        self
    }

    /// Declares the turn state.
    #[must_use]
    pub fn with_state(mut self, state: Value) -> Self {
        self.state = Some(state);
        self
    }

    /// Declares the error kind the turn must fail with.
    #[must_use]
    pub fn expecting_error(mut self, kind: impl Into<String>) -> Self {
        self.expected_error = Some(kind.into());
        self
    }

    /// Rebuilds the deployment before this step when `restart` is true.
    #[must_use]
    pub fn restarting(mut self, restart: bool) -> Self {
        self.restart_before = restart;
        self
    }
}

/// A named sequence of steps run under a trial policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The scenario's name.
    pub name: String,
    /// Its steps, in order.
    pub steps: Vec<Step>,
    /// How many trials, and how many must pass.
    pub policy: TrialPolicy,
}
