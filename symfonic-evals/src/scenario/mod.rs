//! Scenarios: the steps a pack drives, and how many trials must pass.
//!
//! A pack resolves to several scenarios: its seed scenario (the steps the
//! pack's contract fixes) and probe scenarios, each named for what it
//! proves. A scenario is a list of fixed steps, optionally followed by a
//! [`Continuation`] that decides further steps from what the trial showed
//! (a sweep of states generated from the procedures a deployment published).
//!
//! The steps are plain data (`step.rs`, which the runner reads); a
//! continuation is handed the runner's [`Session`], which knows steps and
//! never scenarios, so the runner reads scenarios and the seam points one
//! way.

mod policy;
pub(crate) mod step;

use std::fmt;
use std::sync::Arc;

pub use policy::{TrialPolicy, REQUIRED_ENV, TRIALS_ENV};
pub use step::{
    ErrorMatch, Expect, Forgery, QuestionSource, Restart, Step, StepInput, TokenSource,
};

use crate::redact::PublicValues;
use crate::runner::session::Session;

/// Whether a scenario is a pack's seed scenario or one of its probes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ScenarioKind {
    /// The scenario the pack's contract fixes, step by step.
    #[default]
    Seed,
    /// A probe: the seed's shape varied (a restart placed elsewhere, two of
    /// a thing, evidence recomputed from content) to tell a working
    /// deployment from one that only looks like one.
    Probe,
}

/// Steps a scenario runs after its fixed ones, decided while the trial runs.
pub trait Continuation: Send + Sync {
    /// Runs further steps through `session` (and reads what earlier steps
    /// showed from it). Returning ends the trial's steps.
    fn run(&self, session: &mut Session<'_>);

    /// What the continuation will do, in a sentence, for a pack's
    /// explanation of its scenarios.
    fn describe(&self) -> String {
        "further steps decided from what the trial showed".into()
    }
}

/// A shared [`Continuation`]. Two tails are equal when they are the same
/// object: a closure has no other identity.
#[derive(Clone)]
pub struct Tail(pub Arc<dyn Continuation>);

impl fmt::Debug for Tail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Tail(..)")
    }
}

impl PartialEq for Tail {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A named sequence of steps run under a trial policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The scenario's name: a seed scenario's name from its pack's contract,
    /// a probe's as `pack/what-it-proves`.
    pub name: String,
    /// Seed or probe.
    pub kind: ScenarioKind,
    /// Its fixed steps, in order.
    pub steps: Vec<Step>,
    /// Steps decided while the trial runs, after the fixed ones.
    pub tail: Option<Tail>,
    /// How many trials, and how many must pass.
    pub policy: TrialPolicy,
    /// Everything the steps say (prompts, states, answers, every value an
    /// assertion expects): public already, so reports show it in clear.
    pub public: PublicValues,
}

impl Scenario {
    /// A seed scenario of `steps`.
    pub fn new(name: impl Into<String>, steps: Vec<Step>, policy: TrialPolicy) -> Self {
        let public = Step::public_values(&steps);
        Self {
            name: name.into(),
            kind: ScenarioKind::Seed,
            steps,
            tail: None,
            policy,
            public,
        }
    }

    /// A probe scenario of `steps`.
    pub fn probe(name: impl Into<String>, steps: Vec<Step>, policy: TrialPolicy) -> Self {
        Self {
            kind: ScenarioKind::Probe,
            ..Self::new(name, steps, policy)
        }
    }

    /// The same scenario, continued by `tail` after its fixed steps.
    #[must_use]
    pub fn continued(mut self, tail: impl Continuation + 'static) -> Self {
        self.tail = Some(Tail(Arc::new(tail)));
        self
    }
}
