//! The exactly-once pack's one scenario: learn the effects, then crash at
//! each boundary from fresh fixtures and retry.

use serde_json::Value;

use super::ExactlyOncePack;
use crate::assertion::Assertion;
use crate::evidence::PAUSED;
use crate::runner::{Session, StepErrorKind};
use crate::scenario::{Continuation, Restart, Scenario, Step};

/// The name of the pack's scenario.
pub const SEED: &str = "exactly-once-effects";

impl ExactlyOncePack {
    fn prompt_step(&self, label: &str) -> Step {
        let step = Step::prompt(label, &self.prompt, &self.conversation);
        let step = match &self.state {
            Some(state) => step.with_state(state.clone()),
            None => step,
        };
        if self.answer.is_some() {
            step.asserting([Assertion::attribute_equals(PAUSED, Value::Bool(true))])
        } else {
            step
        }
    }

    fn resume_step(&self, label: &str) -> Option<Step> {
        self.answer
            .as_ref()
            .map(|answer| Step::resume(label, answer.clone(), &self.conversation))
    }

    /// The scenario: the uncrashed run, then a continuation that crashes
    /// at every boundary it learned.
    pub fn seed(&self) -> Scenario {
        let mut steps = vec![self.prompt_step("learn")];
        steps.extend(self.resume_step("learn resume"));
        Scenario::new(SEED, steps, self.policy).continued(CrashEverywhere { pack: self.clone() })
    }

    /// The pack's scenarios: its one scenario.
    pub fn scenarios(&self) -> Vec<Scenario> {
        vec![self.seed()]
    }
}

/// Repeats the learned run from fresh fixtures once per effect boundary,
/// crashing there.
struct CrashEverywhere {
    pack: ExactlyOncePack,
}

impl CrashEverywhere {
    /// The end state every experiment must reach: the uncrashed run's count
    /// of applied effects.
    fn same_effects(total: u64) -> Assertion {
        Assertion::EffectsApplied { effects: total }
    }

    /// Runs one experiment from fresh fixtures; `false` once the trial ended.
    fn experiment(&self, session: &mut Session<'_>, steps: Vec<Step>) -> bool {
        let label = steps
            .first()
            .map_or("experiment", |s| s.label.as_str())
            .to_owned();
        if !session.reset(&label) {
            return false;
        }
        steps.iter().all(|step| session.run(step).is_some())
    }
}

impl Continuation for CrashEverywhere {
    fn describe(&self) -> String {
        "for each effect the uncrashed run applied: fresh fixtures, the same request with the \
         deployment killed right after the harness grants that effect, a restart and a retry; \
         the retry completes, the interrupted effect retried under its key (CrashedEffectRetried), \
         and exactly the uncrashed run's effects applied (EffectsApplied); with a pause, also a \
         crash between pause and resume and at each of the resume's effects"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        let pack = &self.pack;
        let learned = session.steps();
        let (Some(prompt), Some(last)) = (learned.first(), learned.last()) else {
            return;
        };
        // What the uncrashed run applied: before the pause (the prompt's
        // own effects) and in all.
        let (prompt_effects, total) = (prompt.ledger.effects, last.ledger.effects);
        if total == 0 {
            session.fail(
                "learn",
                StepErrorKind::MalformedEvidence,
                "the turn applies at least one effect through the ledger",
                "the uncrashed run applied none, so there is no effect boundary to crash at".into(),
            );
            return;
        }
        for k in 1..=prompt_effects {
            let crashed = pack
                .prompt_step(&format!("crash at effect {k}"))
                .crashing_at_effect(k as u32)
                .asserting([Assertion::CrashedEffectRetried]);
            let mut steps = vec![crashed];
            steps.extend(pack.resume_step("resume"));
            if let Some(last) = steps.last_mut() {
                last.assertions.push(Self::same_effects(total));
            }
            if !self.experiment(session, steps) {
                return;
            }
        }
        let Some(resume) = pack.resume_step("resume after a crash") else {
            return;
        };
        let paused = vec![
            pack.prompt_step("pause"),
            resume
                .interrupted(Restart::CrashBefore)
                .asserting([Self::same_effects(total)]),
        ];
        if !self.experiment(session, paused) {
            return;
        }
        for k in 1..=total.saturating_sub(prompt_effects) {
            let crashed = pack
                .resume_step(&format!("crash at resume effect {k}"))
                .expect("a resume step exists")
                .crashing_at_effect(k as u32)
                .asserting([Assertion::CrashedEffectRetried, Self::same_effects(total)]);
            if !self.experiment(session, vec![pack.prompt_step("pause"), crashed]) {
                return;
            }
        }
    }
}
