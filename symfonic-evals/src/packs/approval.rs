//! The approval and resume pack: pause for a person, resume once, refuse the replay.

use serde_json::Value;

use super::definition::ArgumentChecks;
use super::{ArgumentError, PackKind};
use crate::assertion::Assertion;
use crate::capability::Requirements;
use crate::evidence::{PAUSED, PAUSE_NAME, PAUSE_RESUMABLE};
use crate::scenario::{Scenario, Step, TrialPolicy};

/// Arguments of the approval and resume pack. `Default` fills the optional
/// arguments with their documented defaults.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalResumePack {
    /// The turn that must pause.
    pub pause_prompt: String,
    /// What the person answers; the deployment validates it.
    pub answer: Value,
    /// The registered interaction that pauses (no default: it is the one under test).
    pub interaction_tool: String,
    /// What the deployment claims its pause is; continuation follows it.
    pub resumable: bool,
    /// Where the deployment publishes the redemption's outcome.
    pub resume_attribute: String,
    /// The outcome a successful redemption reports.
    pub resume_outcome: String,
    /// Where it publishes whether the paused turn was continued.
    pub continued_attribute: String,
    /// Where it publishes whether the token was bound to a checkpoint.
    pub checkpoint_attribute: String,
    /// The error kind a replayed token must fail with.
    pub replay_error: String,
    /// Rebuild the deployment before the replay: a token single-use only
    /// until the next restart is not single-use.
    pub restart_before_replay: bool,
    /// The conversation every step runs in.
    pub conversation: String,
    /// Trials and passes required (not read from JSON: a policy holds a
    /// duration, which the attribute spells as `step_timeout_ms`).
    #[serde(skip)]
    pub policy: TrialPolicy,
}

impl Default for ApprovalResumePack {
    fn default() -> Self {
        Self {
            pause_prompt: String::new(),
            answer: Value::Null,
            interaction_tool: String::new(),
            resumable: true,
            resume_attribute: "resume_outcome".into(),
            resume_outcome: "resumed".into(),
            continued_attribute: "resume_continued".into(),
            checkpoint_attribute: "resume_checkpoint".into(),
            replay_error: "PauseTokenReplayedError".into(),
            restart_before_replay: false,
            conversation: "approval".into(),
            policy: TrialPolicy::default(),
        }
    }
}

impl ApprovalResumePack {
    /// Refuses arguments that would make the pack unable to discriminate.
    ///
    /// # Errors
    ///
    /// Every offending argument.
    pub fn check(&self) -> Result<(), Vec<ArgumentError>> {
        let mut checks = ArgumentChecks::default();
        checks.text("pause_prompt", &self.pause_prompt);
        checks.text("interaction_tool", &self.interaction_tool);
        // A person's answer is a mapping of fields, as the attribute requires.
        checks.require(
            self.answer
                .as_object()
                .is_some_and(|fields| !fields.is_empty()),
            "answer",
            "must be a non-empty JSON object: redeeming a token with nothing to validate \
             proves only that it was spent",
        );
        for (argument, value) in [
            ("resume_attribute", &self.resume_attribute),
            ("resume_outcome", &self.resume_outcome),
            ("continued_attribute", &self.continued_attribute),
            ("checkpoint_attribute", &self.checkpoint_attribute),
            ("replay_error", &self.replay_error),
            ("conversation", &self.conversation),
        ] {
            checks.text(argument, value);
        }
        checks.policy(&self.policy);
        checks.finish()
    }

    /// The `human` capability and the `resume` operation.
    pub fn requirements(&self) -> Requirements {
        Requirements {
            capabilities: vec![PackKind::ApprovalResume.capability().into()],
            operations: vec!["resume".into()],
            ..Requirements::default()
        }
    }

    /// The pack's one scenario.
    pub fn scenario(&self) -> Scenario {
        let conversation = self.conversation.as_str();
        let tool = self.interaction_tool.as_str();
        let steps = vec![
            Step::prompt("pause", &self.pause_prompt, conversation).asserting([
                Assertion::attribute_equals(PAUSED, Value::Bool(true)),
                Assertion::attribute_equals(PAUSE_NAME, Value::from(tool)),
                Assertion::attribute_equals(PAUSE_RESUMABLE, Value::Bool(self.resumable)),
            ]),
            Step::resume("resume", self.answer.clone(), conversation).asserting([
                Assertion::attribute_equals(
                    &self.resume_attribute,
                    Value::from(self.resume_outcome.as_str()),
                ),
                Assertion::attribute_equals("resume_name", Value::from(tool)),
                Assertion::attribute_equals(&self.checkpoint_attribute, Value::Bool(true)),
                Assertion::attribute_equals(&self.continued_attribute, Value::Bool(self.resumable)),
                Assertion::tool_called(tool, 0),
            ]),
            Step::resume("replay", self.answer.clone(), conversation)
                .restarting(self.restart_before_replay)
                .expecting_error(&self.replay_error),
        ];
        Scenario {
            name: "approval-pause-resume-and-replay-refusal".into(),
            steps,
            policy: self.policy,
        }
    }
}
