//! One trial in progress, on its worker thread: the deployment, the
//! fixtures, and everything the harness retains between steps (pause tokens
//! per conversation, the trial's call ids, the last record).
//!
//! The fixed steps of a scenario run through [`Session::run`]; a scenario's
//! continuation gets the same session and decides further steps from what
//! the earlier ones showed.

use std::collections::{BTreeMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use super::forge::forged;
use super::judge::{judge_step, step_run, Judged, TurnResult};
use super::outcome::{StepError, StepErrorKind, StepRun};
use super::trial::{lock, panic_text, Factory, Progress};
use crate::assertion::{Assertion, Evidence, RetainedPause};
use crate::evidence::{PromptRequest, ResumeRequest, TurnRecord};
use crate::replay::ModelEndpoint;
use crate::scenario::{QuestionSource, Restart, Scenario, Step, StepInput, TokenSource};
use crate::target::{Target, TargetContext};

/// Reads the deployment's own store in the durable directory and counts the
/// effects it holds: the harness compares that with the ledger after every
/// step, so an effect applied outside the ledger, or a ledger entry with
/// nothing behind it, shows.
pub type EffectsProbe = fn(&Path) -> Result<u64, String>;

/// A trial in progress. Handed to a scenario's
/// [`Continuation`](crate::scenario::Continuation).
pub struct Session<'a> {
    pub(super) scenario: &'a Scenario,
    pub(super) factory: &'a Factory,
    pub(super) context: &'a TargetContext,
    pub(super) target: Option<Box<dyn Target>>,
    pub(super) progress: &'a Mutex<Progress>,
    pub(super) oracle: Option<EffectsProbe>,
    endpoint: Option<&'a ModelEndpoint>,
    pauses: BTreeMap<String, RetainedPause>,
    call_ids: HashSet<String>,
    last_record: Option<TurnRecord>,
    ended: bool,
}

impl<'a> Session<'a> {
    pub(super) fn new(
        scenario: &'a Scenario,
        factory: &'a Factory,
        context: &'a TargetContext,
        target: Box<dyn Target>,
        progress: &'a Mutex<Progress>,
        oracle: Option<EffectsProbe>,
    ) -> Self {
        Self {
            scenario,
            factory,
            context,
            target: Some(target),
            progress,
            oracle,
            endpoint: None,
            pauses: BTreeMap::new(),
            call_ids: HashSet::new(),
            last_record: None,
            ended: false,
        }
    }

    /// The same session, answering model requests from `endpoint`.
    pub(super) fn with_endpoint(mut self, endpoint: Option<&'a ModelEndpoint>) -> Self {
        self.endpoint = endpoint;
        self
    }

    /// The trial's fixtures.
    pub fn context(&self) -> &TargetContext {
        self.context
    }

    /// The record of the latest step that returned one.
    pub fn last_record(&self) -> Option<&TurnRecord> {
        self.last_record.as_ref()
    }

    /// Whether the trial has ended (a step broke, or the watchdog gave up):
    /// nothing more will run.
    pub fn ended(&self) -> bool {
        self.ended || lock(self.progress).abandoned
    }

    /// Runs `step` as the trial's next step, records it, and returns its
    /// result; `None` when the trial has already ended.
    pub fn run(&mut self, step: &Step) -> Option<StepRun> {
        if self.ended() {
            return None;
        }
        let index = {
            let mut p = lock(self.progress);
            p.current_label = step.label.clone();
            p.started = Instant::now();
            p.steps.len()
        };
        let run = self.execute(index, step);
        if run.error.as_ref().is_some_and(|e| e.kind.ends_trial()) {
            self.ended = true;
        }
        lock(self.progress).steps.push(run.clone());
        Some(run)
    }

    /// Runs `step` and judges it without recording it as a step of the
    /// trial: a shrinking search's extra turns, which the trial reports as a
    /// note instead. `None` when the trial has ended.
    pub fn try_step(&mut self, step: &Step) -> Option<StepRun> {
        if self.ended() {
            return None;
        }
        lock(self.progress).started = Instant::now();
        let run = self.execute(usize::MAX, step);
        if run.error.as_ref().is_some_and(|e| e.kind.ends_trial()) {
            self.ended = true;
        }
        Some(run)
    }

    /// The pause retained for `conversation`, if one is.
    pub fn retained(&self, conversation: &str) -> Option<&RetainedPause> {
        self.pauses.get(conversation)
    }

    /// Records a step that broke before any turn ran (the evidence a
    /// continuation needed was missing or malformed) and ends the trial.
    pub fn fail(&mut self, label: &str, kind: StepErrorKind, expected: &str, observed: String) {
        if self.ended() {
            return;
        }
        let mut p = lock(self.progress);
        let index = p.steps.len();
        let mut run = super::trial::entry(index, label, kind, expected, &observed);
        run.label = label.to_owned();
        p.steps.push(run);
        drop(p);
        self.ended = true;
    }

    /// Adds a report-safe note to the trial.
    pub fn note(&mut self, text: impl Into<String>) {
        lock(self.progress).notes.push(text.into());
    }

    fn execute(&mut self, index: usize, step: &Step) -> StepRun {
        let started = Instant::now();
        let mut run = step_run(index, step, std::time::Duration::ZERO);
        let broken = |mut run: StepRun, kind, expected: &str, observed: String| {
            run.error = Some(StepError {
                kind,
                expected: expected.to_owned(),
                observed,
            });
            run
        };
        if step.restart.rebuilds() {
            if let Err(why) = self.restart(step.restart) {
                return broken(
                    run,
                    StepErrorKind::TargetPanicked,
                    "the deployment rebuilds after the restart",
                    format!("constructor {why}"),
                );
            }
        }
        let Some(target) = self.target.as_mut() else {
            return broken(
                run,
                StepErrorKind::TargetPanicked,
                "a deployment to run the step on",
                "the deployment could not be rebuilt".into(),
            );
        };
        if let Some(endpoint) = self.endpoint {
            endpoint.set_step(Some(&step.label));
        }
        let ledger_before = self.context.ledger().counts();
        let witnesses_from = self.context.ledger().witness_count();
        let (result, redeemed): (TurnResult, Option<RetainedPause>) = match &step.input {
            StepInput::Prompt(prompt) => {
                let request = PromptRequest {
                    role: step.role,
                    conversation: step.conversation.clone(),
                    prompt: prompt.clone(),
                    state: step.state.clone(),
                };
                let result = catch_unwind(AssertUnwindSafe(|| target.run_turn(&request)))
                    .map_err(|payload| panic_text(&*payload));
                (result, None)
            }
            StepInput::Resume {
                answer,
                token,
                question,
            } => {
                let source = match token {
                    TokenSource::Conversation(other) => other.as_str(),
                    TokenSource::Own | TokenSource::Forged => step.conversation.as_str(),
                };
                let Some(retained) = self.pauses.get(source).cloned() else {
                    return broken(
                        run,
                        StepErrorKind::NoPauseToResume,
                        "a pause retained in the conversation whose token the step presents",
                        "no earlier step paused there".into(),
                    );
                };
                let request = ResumeRequest {
                    conversation: step.conversation.clone(),
                    token: match token {
                        TokenSource::Forged => forged(&retained.token),
                        _ => retained.token.clone(),
                    },
                    question_id: match question {
                        QuestionSource::Genuine => retained.question_id.clone(),
                        QuestionSource::Forged => Some(
                            retained
                                .question_id
                                .as_deref()
                                .map_or_else(|| "q".to_owned(), forged),
                        ),
                    },
                    answer: answer.clone(),
                };
                let genuine = matches!(token, TokenSource::Own);
                let result = catch_unwind(AssertUnwindSafe(|| target.resume(&request)))
                    .map_err(|payload| panic_text(&*payload));
                (result, genuine.then_some(retained))
            }
        };
        run.duration = started.elapsed();
        if let Ok(Ok(record)) = &result {
            if let Some(pause) = record.pause() {
                let pending_calls = record
                    .tool_calls()
                    .iter()
                    .filter(|call| call.is_pending())
                    .map(|call| call.id.clone())
                    .collect();
                self.pauses.insert(
                    step.conversation.clone(),
                    RetainedPause {
                        token: pause.token.clone(),
                        question_id: pause.question_id.clone(),
                        pending_calls,
                    },
                );
            }
        }
        let oracle = self
            .oracle
            .map(|probe| read_oracle(probe, self.context.durable_dir()));
        let extra: &[Assertion] = if oracle.is_some() {
            &[Assertion::EffectsMatchOracle]
        } else {
            &[]
        };
        let witnesses = self.context.ledger().witnesses_since(witnesses_from);
        let judged = Judged {
            base: Evidence {
                record: &TurnRecord::default(),
                ledger: self.context.ledger().counts(),
                ledger_before,
                earlier_call_ids: Some(&self.call_ids),
                witnesses: &witnesses,
                conversation: &step.conversation,
                pauses: Some(&self.pauses),
                redeemed: redeemed.as_ref(),
                oracle: oracle.as_ref(),
            },
            extra,
        };
        let record = match &result {
            Ok(Ok(record)) => Some(record.clone()),
            _ => None,
        };
        judge_step(&mut run, step, result, judged);
        // A step whose model requests went unanswered fails with the
        // endpoint's named error, not with what followed from it.
        if let Some(error) = crate::replay::step_failure(self.endpoint) {
            run.assertions.clear();
            run.error = Some(error);
        }
        if let Some(record) = record {
            self.call_ids
                .extend(record.tool_calls().iter().map(|call| call.id.clone()));
            self.last_record = Some(record);
        }
        run
    }

    /// Drops the deployment (killing a child first when the restart is a
    /// crash) and builds it again from the same context.
    fn restart(&mut self, restart: Restart) -> Result<(), String> {
        if let Some(mut target) = self.target.take() {
            if restart == Restart::CrashBefore && !target.kill() {
                lock(self.progress)
                    .notes
                    .push("an in-thread deployment cannot crash; it was dropped instead".into());
            }
            drop(target);
        }
        let target = super::trial::build(self.factory, self.context)?;
        self.target = Some(target);
        Ok(())
    }

    /// Runs the scenario's fixed steps, then its continuation.
    pub(super) fn run_scenario(&mut self) {
        let scenario = self.scenario;
        for step in &scenario.steps {
            if self.run(step).is_none() || self.ended {
                return;
            }
        }
        if let Some(tail) = &scenario.tail {
            tail.0.run(self);
        }
        if !self.ended() {
            lock(self.progress).finished = true;
        }
    }

    /// Hands the deployment back for teardown.
    pub(super) fn into_target(self) -> Option<Box<dyn Target>> {
        self.target
    }
}

/// Calls the adopter's effect oracle, containing a panic.
/// The oracle is the adopter's code reading a store: its own error text
/// may quote a row, so it is digested; a panic is named as one.
fn read_oracle(probe: EffectsProbe, dir: &Path) -> Result<u64, String> {
    match catch_unwind(AssertUnwindSafe(|| probe(dir))) {
        Ok(Ok(count)) => Ok(count),
        Ok(Err(why)) => Err(format!(
            "it returned an error {}",
            crate::redact::sensitive(&why)
        )),
        Err(payload) => Err(panic_text(&*payload)),
    }
}
