//! The exactly-once effects pack: a crash between applying an effect and
//! reporting it must not apply the effect twice when the turn is retried.
//!
//! The pack learns the turn's effects from one uncrashed run, then for each
//! effect boundary starts over from fresh fixtures, crashes the deployment
//! right after the harness grants that effect (before the deployment hears
//! back), restarts it and retries the request as a client would. The final
//! applied effects must equal the uncrashed run's, with the interrupted
//! effect retried under its own idempotency key (a duplicate the ledger
//! refuses), and the retried turn must complete. With a pause/resume pair it
//! also crashes between the pause and the resume, and inside the resume
//! after the token was spent: the continuation must be neither lost nor
//! applied twice. Crashes need the deployment in a child process: run the
//! pack isolated (the default) or against a process target.

mod scenario;
mod second_request;

use serde_json::Value;

use super::arguments::ArgumentChecks;
use super::probes::Probe;
use super::{ArgumentError, PackKind};
use crate::assertion::Retries;
use crate::capability::Requirements;
use crate::scenario::TrialPolicy;

pub use scenario::SEED;

/// The trait a deployment declares when it claims its effects are applied
/// exactly once across crashes and retries.
pub const IDEMPOTENT_EFFECTS: &str = "idempotent-effects";

/// How far the clock probe moves the clock between the crash and the
/// retry: past every minute, hour and day window (a day, an hour, a minute
/// and a second).
pub const CLOCK_JUMP: std::time::Duration = std::time::Duration::from_secs(25 * 3600 + 61);

/// The exactly-once pack's probes. Its seed scenario already repeats the
/// experiment at every effect boundary; the probe varies what a crash and
/// its retry have in common.
pub const PROBES: &[Probe] = &[Probe::on_declaring(
    "exactly-once/clock-advanced",
    crate::clock::CONTEXT_CLOCK,
    "idempotency keys derived from a clock window (the current minute, hour or day): the \
     first effect's crash and the retry are a day, an hour and a minute apart on the clock the \
     deployment reads through its context, and the retry must still apply nothing twice",
)];

/// Arguments of the exactly-once effects pack.
///
#[doc = include_str!("../../../docs/exactly_once.md")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExactlyOncePack {
    /// The turn whose effects go through the ledger.
    pub prompt: String,
    /// Explicit turn state for it, if it needs one.
    pub state: Option<Value>,
    /// When given, the prompt pauses and a resume with this answer
    /// continues it (and applies the effects it still has to apply).
    pub answer: Option<Value>,
    /// A second request, distinct from `prompt`, whose effects are its own
    /// (shaped like `prompt`: with `answer` it pauses and is resumed too).
    /// Adds an experiment where `prompt` completes, the deployment
    /// restarts, and this request must apply every effect it applies
    /// alone: keys drawn from something that restarts with the process (a
    /// counter, a sequence in memory) collide with the first request's and
    /// lose them. Without it the pack derives one: `prompt` with every
    /// number moved on by one, judged only when it completes alone as
    /// `prompt` does.
    pub second_prompt: Option<String>,
    /// The conversation the steps run in.
    pub conversation: String,
    /// How the uncrashed run's refusals are read: `exact` (the default),
    /// where no attempt may be refused as applied before (there is no
    /// crash to retry after, so a refusal is a second effect sharing a key
    /// or an effect sent twice), or `same_key`, where a retry under the
    /// applied key is the deployment's way and only an attempt told apart
    /// from the key's effect (another tool, other arguments) is a second
    /// effect. The crash experiments read the same either way.
    pub retries: Retries,
    /// Probes to switch off, by name (see [`PackKind::probes`](super::PackKind::probes)).
    pub skip_probes: Vec<String>,
    /// Trials and passes required.
    #[serde(skip)]
    pub policy: TrialPolicy,
}

impl Default for ExactlyOncePack {
    fn default() -> Self {
        Self {
            prompt: String::new(),
            state: None,
            answer: None,
            second_prompt: None,
            conversation: "exactly-once".into(),
            retries: Retries::Exact,
            skip_probes: Vec::new(),
            policy: TrialPolicy::default(),
        }
    }
}

impl ExactlyOncePack {
    /// Refuses arguments that would make the pack unable to discriminate.
    ///
    /// # Errors
    ///
    /// Every offending argument.
    pub fn check(&self) -> Result<(), Vec<ArgumentError>> {
        let mut checks = ArgumentChecks::default();
        checks.text("prompt", &self.prompt);
        checks.text("conversation", &self.conversation);
        checks.optional_text("second_prompt", self.second_prompt.as_ref());
        checks.require(
            self.second_prompt.as_deref() != Some(self.prompt.as_str()),
            "second_prompt",
            "equals `prompt`: a second request must be a distinct one, with effects of its own",
        );
        if let Some(state) = &self.state {
            checks.state("state", state);
        }
        if let Some(answer) = &self.answer {
            checks.state("answer", answer);
        }
        checks.probes(&self.skip_probes, PROBES);
        checks.policy(&self.policy);
        checks.finish()
    }

    /// The `tools` capability and the idempotent-effects trait (and the
    /// `resume` operation, with a pause/resume pair).
    pub fn requirements(&self) -> Requirements {
        Requirements {
            capabilities: vec![PackKind::ExactlyOnce.capability().into()],
            traits: vec![IDEMPOTENT_EFFECTS.into()],
            operations: if self.answer.is_some() {
                vec!["resume".into()]
            } else {
                Vec::new()
            },
            ..Requirements::default()
        }
    }
}
