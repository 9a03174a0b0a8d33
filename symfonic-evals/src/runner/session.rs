//! One trial in progress, on its worker thread: the deployment, the
//! fixtures, and everything the harness retains between steps (pause tokens
//! per conversation, the trial's call ids, the last record).
//!
//! It reads steps, never the scenario that holds them: a scenario's
//! [`Continuation`](crate::Continuation) names this session, so the session
//! sits below scenarios and the seam points one way.
//!
//! The fixed steps of a scenario run through [`Session::run`]; a scenario's
//! continuation gets the same session and decides further steps from what
//! the earlier ones showed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::Mutex;
use std::time::Instant;

use super::fixture::TrialFixture;
use super::judge::{judge_step, step_run, Judged};
use super::outcome::{StepError, StepErrorKind, StepRun};
use super::quiet_panics::panic_text;
use super::turn::{invoke, request, Request, TurnResult};
use super::worker::{build, entry, lock, Factory, Progress, Unbuilt};
use crate::assertion::{Assertion, CrashSeen, Evidence, FixtureEvidence, RetainedPause};
use crate::evidence::TurnRecord;
use crate::process::kinds::INJECTED_CRASH;
use crate::redact::PublicValues;
use crate::replay::ModelEndpoint;
use crate::scenario::step::{Restart, Step, StepInput};
use crate::target::{Target, TargetContext};

/// Reads the deployment's own store in the durable directory and counts the
/// effects it holds: the harness compares that with the ledger after every
/// step, so an effect applied outside the ledger, or a ledger entry with
/// nothing behind it, shows.
pub type EffectsProbe = fn(&Path) -> Result<u64, String>;

/// A trial in progress. Handed to a scenario's
/// [`Continuation`](crate::Continuation).
pub struct Session<'a> {
    /// The scenario's fixed steps.
    steps: &'a [Step],
    /// Everything the scenario's steps say, public already.
    public: &'a PublicValues,
    factory: &'a Factory,
    context: TargetContext,
    target: Option<Box<dyn Target>>,
    /// The second instance, for scenarios with steps on it: built from the
    /// same context when the trial starts.
    replica: Option<Box<dyn Target>>,
    progress: &'a Mutex<Progress>,
    oracle: Option<EffectsProbe>,
    endpoint: Option<&'a ModelEndpoint>,
    fixture: Option<&'a TrialFixture>,
    /// The nonces of the fixture's calls in earlier steps, each with its
    /// step's conversation.
    fixture_nonces: Vec<(String, String)>,
    pauses: BTreeMap<String, RetainedPause>,
    /// The pause each step ended in, by its label.
    step_pauses: BTreeMap<String, RetainedPause>,
    call_ids: HashSet<String>,
    /// Per tool, digests of the results it returned in the trial so far.
    results: HashMap<String, HashSet<String>>,
    /// Per step label, digests of the attributes its record carried.
    attributes: HashMap<String, BTreeMap<String, String>>,
    /// Per conversation, the ledger attempts made since its latest prompt
    /// step (that step's included).
    since_pause: HashMap<String, Vec<crate::ledger::LedgerEvent>>,
    last_record: Option<TurnRecord>,
    ended: bool,
    /// How the deployment rebuilt in the step under way started, when not
    /// from nothing (see [`Target::warm_start`]).
    warm_start: Option<&'static str>,
}

/// What running one step's turn produced, beyond the result itself.
struct Turn {
    result: TurnResult,
    redeemed: Option<RetainedPause>,
    crash: Option<CrashSeen>,
}

impl<'a> Session<'a> {
    pub(super) fn new(
        steps: &'a [Step],
        public: &'a PublicValues,
        factory: &'a Factory,
        context: TargetContext,
        target: Box<dyn Target>,
        progress: &'a Mutex<Progress>,
        oracle: Option<EffectsProbe>,
    ) -> Self {
        Self {
            steps,
            public,
            factory,
            context,
            target: Some(target),
            replica: None,
            progress,
            oracle,
            endpoint: None,
            fixture: None,
            fixture_nonces: Vec::new(),
            pauses: BTreeMap::new(),
            step_pauses: BTreeMap::new(),
            call_ids: HashSet::new(),
            results: HashMap::new(),
            attributes: HashMap::new(),
            since_pause: HashMap::new(),
            last_record: None,
            ended: false,
            warm_start: None,
        }
    }

    /// The same session, answering model requests from `endpoint`.
    pub(super) fn with_endpoint(mut self, endpoint: Option<&'a ModelEndpoint>) -> Self {
        self.endpoint = endpoint;
        self
    }

    /// The same session, with the trial's MCP fixture.
    pub(super) fn with_fixture(mut self, fixture: Option<&'a TrialFixture>) -> Self {
        self.fixture = fixture;
        self
    }

    /// The trial's fixtures.
    pub fn context(&self) -> &TargetContext {
        &self.context
    }

    /// The record of the latest step that returned one.
    pub fn last_record(&self) -> Option<&TurnRecord> {
        self.last_record.as_ref()
    }

    /// Every step the trial recorded so far, in order.
    pub fn steps(&self) -> Vec<StepRun> {
        lock(self.progress).steps.clone()
    }

    /// The pause retained for `conversation`, if one is.
    pub fn retained(&self, conversation: &str) -> Option<&RetainedPause> {
        self.pauses.get(conversation)
    }

    /// Whether the deployment (the first instance) declares `name`, an
    /// operation or a trait: a continuation with a form only some
    /// deployments allow (two pauses pending in one conversation) asks.
    pub fn declares(&self, name: &str) -> bool {
        self.target
            .as_ref()
            .is_some_and(|target| target.capabilities().declares(name))
    }

    /// Whether a step may crash the deployment at an effect: only a
    /// deployment in a child process can be killed (the default process
    /// isolation, or a process target). A continuation that crashes as an
    /// extra check, rather than as the pack's point, asks first.
    pub fn can_crash(&self) -> bool {
        self.target
            .as_ref()
            .is_some_and(|target| target.crashable())
    }

    /// Whether the trial has ended (a step broke, or the watchdog gave up):
    /// nothing more will run.
    pub fn ended(&self) -> bool {
        self.ended || lock(self.progress).abandoned
    }

    /// Starts over from fresh fixtures (a new durable directory and ledger)
    /// and a newly built deployment, inside the same trial: what the next
    /// steps show owes nothing to the ones before. A scenario that repeats
    /// one experiment at several crash points uses it between them. Returns
    /// whether it could: when the fixtures or the deployment cannot be
    /// built, the trial has ended with a broken step saying so.
    pub fn reset(&mut self, label: &str) -> bool {
        drop(self.replica.take());
        drop(self.target.take());
        let fresh = TargetContext::fresh(self.context.trial()).map(|context| {
            let context = super::fixture::bind(self.fixture, context);
            match self.context.model_url() {
                Some(url) => context.with_model_url(url),
                None => context,
            }
        });
        match fresh {
            Ok(context) => self.context = context,
            Err(error) => {
                self.fail(
                    label,
                    StepErrorKind::ContextFailed,
                    "fresh fixtures",
                    error.to_string(),
                );
                return false;
            }
        }
        self.pauses.clear();
        self.step_pauses.clear();
        self.call_ids.clear();
        self.results.clear();
        self.attributes.clear();
        self.since_pause.clear();
        self.fixture_nonces.clear();
        self.last_record = None;
        match build(self.factory, &self.context) {
            Ok(target) => {
                self.target = Some(target);
                self.start_replica(label)
            }
            Err(unbuilt) => {
                let (kind, expected, observed) = unbuilt.into_step("the deployment builds");
                self.fail(label, kind, &expected, observed);
                false
            }
        }
    }

    /// Builds the second instance when the scenario has steps on it.
    /// Returns whether the trial can go on.
    fn start_replica(&mut self, label: &str) -> bool {
        if !self.steps.iter().any(|step| step.instance > 0) {
            return true;
        }
        match build(self.factory, &self.context) {
            Ok(replica) => {
                self.replica = Some(replica);
                true
            }
            Err(unbuilt) => {
                let (kind, expected, observed) =
                    unbuilt.into_step("a second instance builds on the same durable directory");
                self.fail(label, kind, &expected, observed);
                false
            }
        }
    }

    /// The slot of the instance `instance` (0, or 1 for the second).
    fn slot(&mut self, instance: u8) -> &mut Option<Box<dyn Target>> {
        if instance == 0 {
            &mut self.target
        } else {
            &mut self.replica
        }
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

    /// Records a step that broke before any turn ran (the evidence a
    /// continuation needed was missing or malformed) and ends the trial.
    pub fn fail(&mut self, label: &str, kind: StepErrorKind, expected: &str, observed: String) {
        if self.ended() {
            return;
        }
        let mut p = lock(self.progress);
        let index = p.steps.len();
        p.steps.push(entry(index, label, kind, expected, &observed));
        drop(p);
        self.ended = true;
    }

    /// Adds a report-safe note to the trial.
    pub fn note(&mut self, text: impl Into<String>) {
        lock(self.progress).notes.push(text.into());
    }

    /// Says, report-safe, why the probe's own check cannot be made on this
    /// deployment (it published nothing the check needs), as a note; a
    /// trial that then passes counts the probe as not run for that reason
    /// (see [`TrialRun::unproven`](crate::TrialRun::unproven)).
    pub fn unproven(&mut self, why: impl Into<String>) {
        let why = why.into();
        let mut progress = lock(self.progress);
        progress.notes.push(why.clone());
        progress.unproven.get_or_insert(why);
    }

    fn execute(&mut self, index: usize, step: &Step) -> StepRun {
        let started = Instant::now();
        let mut run = step_run(index, step, std::time::Duration::ZERO);
        if let Some(endpoint) = self.endpoint {
            endpoint.set_step(Some(&step.label));
        }
        let ledger_before = self.context.ledger().counts();
        let witnesses_from = self.context.ledger().witness_count();
        let events_from = self.context.ledger().event_count();
        let calls_from = self.fixture.map_or(0, |f| f.log().call_count());
        let refusals_from = self.fixture.map_or(0, |f| f.log().refusals().len());
        if let Some(fixture) = self.fixture {
            fixture.log().fail_calls(step.fixture_error);
        }
        self.warm_start = None;
        let turn = self.turn(step);
        run.warm_start = self.warm_start.take().map(str::to_owned);
        if let Some(fixture) = self.fixture {
            fixture.log().fail_calls(false);
        }
        if let Some(fixture) = self.fixture {
            // An answer the deployment read was acknowledged before its
            // turn ended; wait (boundedly) for the server to settle it.
            fixture.log().settle(crate::mcp::SETTLE_TIMEOUT);
        }
        let fixture = self.fixture.map(|fixture| FixtureEvidence {
            calls: fixture.log().calls().split_off(calls_from),
            earlier: self.fixture_nonces.clone(),
            listed: fixture.log().listings() > 0,
            refusals: fixture.log().refusals().split_off(refusals_from),
        });
        if let Some(seen) = &fixture {
            run.fixture_calls = seen
                .calls
                .iter()
                .map(super::outcome::FixtureCallSeen::of)
                .collect();
            self.fixture_nonces.extend(
                seen.calls
                    .iter()
                    .map(|call| (call.nonce.clone(), step.conversation.clone())),
            );
        }
        let turn = match turn {
            Ok(mut turn) => {
                if let Some(crash) = &mut turn.crash {
                    crash.attempts = self.context.ledger().attempts_for(&crash.key);
                }
                turn
            }
            Err(error) => {
                run.error = Some(error);
                run.duration = started.elapsed();
                return run;
            }
        };
        run.duration = started.elapsed();
        if let Ok(Ok(record)) = &turn.result {
            self.retain(step, record);
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
        let ledger_events = self.context.ledger().events_since(events_from);
        let trial_events = self.context.ledger().events_since(0);
        let since_pause = match &step.input {
            StepInput::Prompt(_) => Vec::new(),
            _ => self
                .since_pause
                .get(&step.conversation)
                .cloned()
                .unwrap_or_default(),
        };
        let judged = Judged {
            base: Evidence {
                record: &TurnRecord::default(),
                ledger: self.context.ledger().counts(),
                ledger_before,
                earlier_call_ids: Some(&self.call_ids),
                earlier_results: Some(&self.results),
                earlier_attributes: Some(&self.attributes),
                witnesses: &witnesses,
                ledger_events: &ledger_events,
                trial_events: &trial_events,
                since_pause: &since_pause,
                conversation: &step.conversation,
                pauses: Some(&self.pauses),
                redeemed: turn.redeemed.as_ref(),
                crash: turn.crash.as_ref(),
                oracle: oracle.as_ref(),
                public: Some(self.public),
                fixture: fixture.as_ref(),
            },
            extra,
        };
        let record = match &turn.result {
            Ok(Ok(record)) => Some(record.clone()),
            _ => None,
        };
        judge_step(&mut run, step, turn.result, judged);
        match &step.input {
            StepInput::Prompt(_) => {
                self.since_pause
                    .insert(step.conversation.clone(), ledger_events);
            }
            StepInput::Resume { .. } => self
                .since_pause
                .entry(step.conversation.clone())
                .or_default()
                .extend(ledger_events),
            StepInput::Review(_) | StepInput::Reset => {}
        }
        run.ledger = self.context.ledger().counts();
        // A step whose model requests went unanswered fails with the
        // endpoint's named error, not with what followed from it.
        if let Some(error) = crate::replay::step_failure(self.endpoint) {
            run.assertions.clear();
            run.error = Some(error);
        }
        if let Some(record) = record {
            self.call_ids
                .extend(record.tool_calls().iter().map(|call| call.id.clone()));
            for call in record.tool_calls() {
                if let crate::evidence::ToolOutcome::Succeeded { result } = &call.outcome {
                    self.results
                        .entry(call.name.clone())
                        .or_default()
                        .insert(crate::assertion::result_digest(result));
                }
            }
            self.attributes.insert(
                step.label.clone(),
                crate::assertion::attribute_digests(&record),
            );
            self.last_record = Some(record);
        }
        run
    }

    /// The step's turn: the restart before it, the request, and the call,
    /// crashed at the armed effect and retried when the step asks for it.
    fn turn(&mut self, step: &Step) -> Result<Turn, StepError> {
        if let (Some(by), None) = (step.clock_jump, step.crash_at_effect) {
            self.context.clock().advance(by);
        }
        if step.restart.rebuilds() {
            self.restart(step.instance, step.restart)
                .map_err(|unbuilt| {
                    let (kind, expected, observed) =
                        unbuilt.into_step("the deployment rebuilds after the restart");
                    StepError {
                        kind,
                        expected,
                        observed,
                        exception: None,
                    }
                })?;
        }
        let (request, redeemed) = request(step, &self.pauses, &self.step_pauses)?;
        let Some(target) = self.slot(step.instance).as_mut() else {
            return Err(StepError {
                kind: StepErrorKind::TargetPanicked,
                expected: "a deployment to run the step on".into(),
                observed: "the deployment could not be rebuilt".into(),
                exception: None,
            });
        };
        let Some(k) = step.crash_at_effect else {
            let result = invoke(target.as_mut(), &request);
            return Ok(Turn {
                result,
                redeemed,
                crash: None,
            });
        };
        let crash = self.crash_and_retry(step.instance, k, step.clock_jump, &request)?;
        let result = invoke(
            self.slot(step.instance)
                .as_mut()
                .expect("rebuilt after the crash")
                .as_mut(),
            &request,
        );
        Ok(Turn {
            result,
            redeemed,
            crash: Some(crash),
        })
    }

    /// Sends `request` with a crash armed at its `k`-th granted effect,
    /// then rebuilds the killed deployment; the caller retries the request
    /// as a client would.
    fn crash_and_retry(
        &mut self,
        instance: u8,
        k: u32,
        clock_jump: Option<std::time::Duration>,
        request: &Request,
    ) -> Result<CrashSeen, StepError> {
        let not_injected = |observed: String| StepError {
            kind: StepErrorKind::CrashNotInjected,
            expected: format!("a crash at the step's effect {k}"),
            observed,
            exception: None,
        };
        let ledger = self.context.ledger().clone();
        let target = self.slot(instance).as_mut().expect("checked by the caller");
        if !target.crashable() {
            return Err(not_injected(
                "the deployment runs on the harness's own thread; crash injection needs it in a \
                 child process (run the pack isolated, or as a process target)"
                    .into(),
            ));
        }
        ledger.arm_crash(k);
        let first = invoke(target.as_mut(), request);
        let fired = ledger.disarm_crash();
        match (first, fired) {
            (Ok(Err(error)), Some(key)) if error.harness && error.kind == INJECTED_CRASH => {
                if let Some(by) = clock_jump {
                    self.context.clock().advance(by);
                }
                self.restart(instance, Restart::Before).map_err(|unbuilt| {
                    let (kind, expected, observed) =
                        unbuilt.into_step("the deployment rebuilds after the crash");
                    StepError {
                        kind,
                        expected,
                        observed,
                        exception: None,
                    }
                })?;
                Ok(CrashSeen {
                    key,
                    effect: k,
                    attempts: 0,
                })
            }
            _ => Err(not_injected(format!(
                "the turn granted fewer than {k} new effect(s), so there was no such crash point"
            ))),
        }
    }

    /// Keeps the pause a record ended in, for the conversation's resumes.
    fn retain(&mut self, step: &Step, record: &TurnRecord) {
        if let Some(pause) = record.pause() {
            let pending_calls = record
                .tool_calls()
                .iter()
                .filter(|call| call.is_pending())
                .map(|call| call.id.clone())
                .collect();
            let retained = RetainedPause {
                token: pause.token.clone(),
                question_id: pause.question_id.clone(),
                pending_calls,
            };
            self.step_pauses
                .insert(step.label.clone(), retained.clone());
            self.pauses.insert(step.conversation.clone(), retained);
        }
    }

    /// Drops the instance (killing a child first when the restart is a
    /// crash) and builds it again from the same context.
    fn restart(&mut self, instance: u8, restart: Restart) -> Result<(), Unbuilt> {
        if let Some(mut target) = self.slot(instance).take() {
            let killed =
                matches!(restart, Restart::CrashBefore | Restart::KillBefore) && target.kill();
            if restart == Restart::CrashBefore && !killed {
                lock(self.progress)
                    .notes
                    .push("an in-thread deployment cannot crash; it was dropped instead".into());
            }
            drop(target);
        }
        let rebuilt = build(self.factory, &self.context)?;
        if let Some(how) = rebuilt.warm_start() {
            self.warm_start = Some(how);
        }
        *self.slot(instance) = Some(rebuilt);
        Ok(())
    }

    /// Runs the scenario's fixed steps, then `tail` (its continuation,
    /// which the trial hands in: the session knows steps, not scenarios).
    pub(super) fn run_scenario(&mut self, tail: impl FnOnce(&mut Self)) {
        let steps = self.steps;
        if !self.start_replica("second instance") {
            return;
        }
        for step in steps {
            if self.run(step).is_none() || self.ended {
                return;
            }
        }
        tail(self);
        if !self.ended() {
            lock(self.progress).finished = true;
        }
    }

    /// Hands the deployment and its fixtures back for teardown.
    pub(super) fn into_parts(mut self) -> (Option<Box<dyn Target>>, TargetContext) {
        drop(self.replica.take());
        (self.target, self.context)
    }
}

/// Calls the adopter's effect oracle, containing a panic. The oracle is the
/// adopter's code reading a store: its own error text may quote a row, so
/// it is digested; a panic is named as one.
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
