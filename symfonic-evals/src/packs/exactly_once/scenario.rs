//! The exactly-once pack's one scenario: learn the effects, then crash at
//! each boundary from fresh fixtures and retry.

use serde_json::Value;

use super::{ExactlyOncePack, CLOCK_JUMP, PROBES};
use crate::assertion::Assertion;
use crate::evidence::PAUSED;
use crate::packs::probes::Selection;
use crate::runner::{Session, StepErrorKind};
use crate::scenario::{Continuation, Restart, Scenario, Step};

/// The name of the pack's scenario.
pub const SEED: &str = "exactly-once-effects";

impl ExactlyOncePack {
    pub(super) fn prompt_step(&self, label: &str) -> Step {
        self.request_step(label, &self.prompt)
    }

    /// The uncrashed run the experiments learn from: the request, and its
    /// resume when there is one. With no crash anywhere, an attempt the
    /// ledger refuses as applied before is a second effect sharing a key,
    /// which would make every count learned here wrong, or, where the
    /// deployment retries under the same key (`retries = same_key`), a
    /// retry of the same effect (KeysNotShared).
    fn learning_steps(&self) -> Vec<Step> {
        let mut steps = vec![self.prompt_step("learn")];
        steps.extend(self.resume_step("learn resume"));
        let retries = self.retries;
        steps
            .into_iter()
            .map(|step| step.asserting([Assertion::KeysNotShared { retries }]))
            .collect()
    }

    /// `prompt` (or the second request) with the pack's state, pausing when
    /// there is an answer to resume it with.
    pub(super) fn request_step(&self, label: &str, prompt: &str) -> Step {
        let step = Step::prompt(label, prompt, &self.conversation);
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

    pub(super) fn resume_step(&self, label: &str) -> Option<Step> {
        self.answer
            .as_ref()
            .map(|answer| Step::resume(label, answer.clone(), &self.conversation))
    }

    /// The scenario: the uncrashed run, then a continuation that crashes
    /// at every boundary it learned.
    pub fn seed(&self) -> Scenario {
        Scenario::new(SEED, self.learning_steps(), self.policy)
            .continued(CrashEverywhere { pack: self.clone() })
    }

    /// The pack's scenarios: the seed, and the clock probe unless skipped.
    pub fn scenarios(&self) -> Vec<Scenario> {
        let selection = Selection::new(&self.skip_probes);
        let mut scenarios = vec![self.seed()];
        if selection.runs(&PROBES[0], true) {
            scenarios.push(
                Scenario::probe(PROBES[0].name, self.learning_steps(), self.policy)
                    .continued(ClockAdvanced { pack: self.clone() }),
            );
        }
        scenarios
    }
}

/// After the uncrashed run: from fresh fixtures, a crash at the first
/// effect, the clock moved past every common window, a restart and the
/// retry, which must apply nothing twice.
struct ClockAdvanced {
    pack: ExactlyOncePack,
}

impl Continuation for ClockAdvanced {
    fn describe(&self) -> String {
        format!(
            "fresh fixtures, the request crashed right after its first effect is granted (or, \
             when the request applies none before its pause, the resume crashed there), the \
             clock the deployment reads through its context moved {} s forward, a restart and \
             the retry: the interrupted effect retried under its key (CrashedEffectRetried) and \
             exactly the uncrashed run's effects applied (EffectsApplied)",
            CLOCK_JUMP.as_secs()
        )
    }

    fn run(&self, session: &mut Session<'_>) {
        let Some((prompt_effects, total)) = learned_effects(session) else {
            return;
        };
        let pack = &self.pack;
        let retried = [
            Assertion::CrashedEffectRetried,
            CrashEverywhere::same_effects(total),
        ];
        let steps = if prompt_effects > 0 {
            let mut steps = vec![pack
                .prompt_step("crash, then a later clock")
                .crashing_at_effect(1)
                .jumping_clock(CLOCK_JUMP)
                .asserting([Assertion::CrashedEffectRetried])];
            steps.extend(pack.resume_step("resume"));
            if let Some(last) = steps.last_mut() {
                last.assertions.push(CrashEverywhere::same_effects(total));
            }
            steps
        } else {
            let Some(resume) = pack.resume_step("resume crashed, then a later clock") else {
                return;
            };
            vec![
                pack.prompt_step("pause"),
                resume
                    .crashing_at_effect(1)
                    .jumping_clock(CLOCK_JUMP)
                    .asserting(retried),
            ]
        };
        let crash = CrashEverywhere { pack: pack.clone() };
        crash.experiment(session, steps);
    }
}

/// The uncrashed run's effects: before the pause (the prompt's own) and in
/// all; `None` (with the trial failed) when it applied none.
fn learned_effects(session: &mut Session<'_>) -> Option<(u64, u64)> {
    let learned = session.steps();
    let (prompt, last) = (learned.first()?, learned.last()?);
    let (prompt_effects, total) = (prompt.ledger.effects, last.ledger.effects);
    if total == 0 {
        session.fail(
            "learn",
            StepErrorKind::MalformedEvidence,
            "the turn applies at least one effect through the ledger",
            "the uncrashed run applied none, so there is no effect boundary to crash at".into(),
        );
        return None;
    }
    Some((prompt_effects, total))
}

/// Repeats the learned run from fresh fixtures once per effect boundary,
/// crashing there.
pub(super) struct CrashEverywhere {
    pub(super) pack: ExactlyOncePack,
}

impl CrashEverywhere {
    /// The end state every experiment must reach: the uncrashed run's count
    /// of applied effects.
    pub(super) fn same_effects(total: u64) -> Assertion {
        Assertion::EffectsApplied { effects: total }
    }

    /// Runs one experiment from fresh fixtures; `false` once the trial ended.
    pub(super) fn experiment(&self, session: &mut Session<'_>, steps: Vec<Step>) -> bool {
        let label = steps
            .first()
            .map_or("experiment", |s| s.label.as_str())
            .to_owned();
        if !session.reset(&label) {
            return false;
        }
        steps.iter().all(|step| session.run(step).is_some())
    }

    /// Every crash experiment; `false` once the trial ended.
    fn crash_at_every_effect(
        &self,
        session: &mut Session<'_>,
        prompt_effects: u64,
        total: u64,
    ) -> bool {
        let pack = &self.pack;
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
                return false;
            }
        }
        let Some(resume) = pack.resume_step("resume after a crash") else {
            return true;
        };
        let paused = vec![
            pack.prompt_step("pause"),
            resume
                .interrupted(Restart::CrashBefore)
                .asserting([Self::same_effects(total)]),
        ];
        if !self.experiment(session, paused) {
            return false;
        }
        for k in 1..=total.saturating_sub(prompt_effects) {
            let crashed = pack
                .resume_step(&format!("crash at resume effect {k}"))
                .expect("a resume step exists")
                .crashing_at_effect(k as u32)
                .asserting([Assertion::CrashedEffectRetried, Self::same_effects(total)]);
            if !self.experiment(session, vec![pack.prompt_step("pause"), crashed]) {
                return false;
            }
        }
        true
    }
}

impl Continuation for CrashEverywhere {
    fn describe(&self) -> String {
        "for each effect the uncrashed run applied: fresh fixtures, the same request with the \
         deployment killed right after the harness grants that effect, a restart and a retry; \
         the retry completes, the interrupted effect retried under its key (CrashedEffectRetried), \
         and exactly the uncrashed run's effects applied (EffectsApplied); with a pause, also a \
         crash between pause and resume and at each of the resume's effects; then a second \
         request (`second_prompt`, or `prompt` with its numbers moved on by one, judged only when \
         it completes alone as `prompt` does): the second request alone, then the first, a \
         restart and the second, \
         which must apply all of its own effects on top of the first's (EffectsApplied)"
            .into()
    }

    fn run(&self, session: &mut Session<'_>) {
        // What the uncrashed run applied: before the pause (the prompt's
        // own effects) and in all.
        let Some((prompt_effects, total)) = learned_effects(session) else {
            return;
        };
        if !self.crash_at_every_effect(session, prompt_effects, total) {
            return;
        }
        if let Some(second) = self.pack.second_request() {
            self.second_request_after_a_restart(session, &second, total);
        }
    }
}
