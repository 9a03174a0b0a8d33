//! The runner isolates every trial: a target that panics, hangs or errs ends
//! its trial as an error naming the step, restarts rebuild from the same
//! context, every trial starts fresh, and pause tokens are retained.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use symfonic_evals::{
    run_pack, run_scenario, Assertion, CapabilityEvidence, Pause, PromptRequest, ResumeRequest,
    RunOptions, Scenario, Step, StepErrorKind, Target, TargetContext, TrialPolicy, TrialRun,
    TurnError, TurnRecord, Verdict,
};

/// Does what each prompt says: `panic`, `hang`, `fail:<kind>`, `pause:<token>`,
/// or anything else to answer. Resumes log the token they were sent.
struct Script {
    resumed: Arc<Mutex<Vec<String>>>,
}

impl Script {
    fn new() -> Self {
        Self {
            resumed: Arc::default(),
        }
    }
}

impl Target for Script {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let prompt = request.prompt.as_str();
        if prompt == "panic" {
            panic!("the deployment fell over");
        }
        if prompt == "hang" {
            std::thread::sleep(Duration::from_secs(30));
        }
        if let Some(kind) = prompt.strip_prefix("fail:") {
            return Err(TurnError::new(kind, "it failed"));
        }
        let record = TurnRecord::builder().answer(format!("did {prompt}"));
        Ok(match prompt.strip_prefix("pause:") {
            Some(token) => record.paused(Pause::new("ask_user", true, token)),
            None => record,
        }
        .build())
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        self.resumed.lock().unwrap().push(request.token.clone());
        Ok(TurnRecord::builder().answer("resumed").build())
    }
}

fn scenario(steps: Vec<Step>) -> Scenario {
    Scenario::new("runner", steps, TrialPolicy::default())
}

fn prompt(label: &str) -> Step {
    Step::prompt(label, label, "c")
}

fn only_trial(trials: Vec<TrialRun>) -> TrialRun {
    assert_eq!(trials.len(), 1);
    trials.into_iter().next().unwrap()
}

/// The label and error kind of the step a broken trial stopped at.
fn broke_at(trial: &TrialRun) -> (&str, StepErrorKind) {
    assert!(!trial.passed());
    let step = trial.steps.last().expect("a step ran");
    let error = step.error.as_ref().expect("the last step broke");
    (step.label.as_str(), error.kind)
}

#[test]
fn a_panicking_turn_ends_the_trial_at_that_step() {
    let steps = vec![prompt("first"), prompt("panic"), prompt("never")];
    let trial = only_trial(run_scenario(&scenario(steps), |_| Script::new()));
    assert_eq!(broke_at(&trial), ("panic", StepErrorKind::TargetPanicked));
    assert_eq!(
        trial.steps.len(),
        2,
        "the step after the panic does not run"
    );
    let observed = &trial.steps[1].error.as_ref().unwrap().observed;
    // The deployment's own location is shown; its message only as a digest.
    assert!(
        observed.starts_with("the target panicked at "),
        "{observed}"
    );
    assert!(observed.contains("runner.rs:"), "{observed}");
    assert!(observed.contains(" with message sha256:"), "{observed}");
}

#[test]
fn a_panicking_constructor_ends_the_trial_or_the_pack() {
    let trial = only_trial(run_scenario(
        &scenario(vec![prompt("first")]),
        |_| -> Script { panic!("cannot connect") },
    ));
    assert_eq!(broke_at(&trial), ("first", StepErrorKind::TargetPanicked));
    let observed = &trial.steps[0].error.as_ref().unwrap().observed;
    assert!(observed.starts_with("constructor panicked"), "{observed}");

    let pack = common::extension(common::extension_pack());
    let run = run_pack(
        "runner.constructor",
        &pack,
        &RunOptions::default(),
        |_| -> common::extension::WeatherDesk { panic!("cannot connect") },
    );
    assert!(
        matches!(run.verdict(), Verdict::Unbuildable(why) if why.starts_with("TargetPanicked")),
        "{}",
        run.render()
    );
}

#[test]
fn a_constructor_that_panics_on_restart_names_the_restarted_step() {
    let steps = vec![prompt("first"), prompt("second").restarting(true)];
    let trial = only_trial(run_scenario(&scenario(steps), |ctx: &TargetContext| {
        let marker = ctx.durable_path("built");
        assert!(!marker.exists(), "refusing to build twice");
        std::fs::write(marker, b"").unwrap();
        Script::new()
    }));
    assert_eq!(broke_at(&trial), ("second", StepErrorKind::TargetPanicked));
    assert!(trial.steps[0].passed());
}

#[test]
fn a_hanging_turn_is_abandoned_at_the_step_limit() {
    let mut hung = scenario(vec![prompt("first"), prompt("hang"), prompt("never")]);
    hung.policy.step_timeout = Duration::from_millis(200);
    let started = Instant::now();
    let trial = only_trial(run_scenario(&hung, |_| Script::new()));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(broke_at(&trial), ("hang", StepErrorKind::StepTimeout));
    assert!(trial.steps[0].passed(), "the finished step is kept");
    assert_eq!(trial.steps.len(), 2, "nothing runs after the hung step");
}

/// The script, declaring the weather tool so the extension pack applies.
struct Declaring(Script);

impl Target for Declaring {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new().contributes("extensions", common::extension::TOOL)
    }
    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        self.0.run_turn(request)
    }
}

#[test]
fn a_hanging_pack_step_is_its_first_failure() {
    let mut pack = common::extension_pack();
    pack.prompt = "hang".into();
    pack.policy.step_timeout = Duration::from_millis(200);
    let started = Instant::now();
    let run = run_pack(
        "runner.hang_pack",
        &common::extension(pack),
        &RunOptions::default(),
        |_| Declaring(Script::new()),
    );
    // Well under the 30 s the target hangs for, with room for a loaded
    // machine: the step's deadline ended the wait, not the hang.
    assert!(started.elapsed() < Duration::from_secs(15));
    common::assert_fails_at(&run, "extension call", "StepTimeout");
}

#[test]
fn a_hanging_constructor_leaves_the_pack_unbuildable() {
    let mut pack = common::extension_pack();
    pack.policy.step_timeout = Duration::from_millis(200);
    let started = Instant::now();
    let run = run_pack(
        "runner.hang_constructor",
        &common::extension(pack),
        &RunOptions::default(),
        |_| {
            std::thread::sleep(Duration::from_secs(30));
            Declaring(Script::new())
        },
    );
    // Well under the 30 s the target hangs for, with room for a loaded
    // machine: the step's deadline ended the wait, not the hang.
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(matches!(run.verdict(), Verdict::Unbuildable(why) if why.starts_with("StepTimeout")));
}

#[test]
fn an_unexpected_error_ends_the_trial() {
    let steps = vec![prompt("fail:StoreDown"), prompt("never")];
    let trial = only_trial(run_scenario(&scenario(steps), |_| Script::new()));
    assert_eq!(
        broke_at(&trial),
        ("fail:StoreDown", StepErrorKind::UnexpectedError)
    );
    assert_eq!(trial.steps.len(), 1);
    let observed = &trial.steps[0].error.as_ref().unwrap().observed;
    assert!(
        observed.starts_with("error StoreDown (sha256:"),
        "{observed}"
    );
}

#[test]
fn an_expected_error_must_be_the_named_kind() {
    let matched = prompt("fail:Replayed").expecting_error("Replayed");
    let mismatched = prompt("fail:Other").expecting_error("Replayed");
    let succeeded = prompt("fine").expecting_error("Replayed");
    let steps = vec![matched, mismatched, succeeded, prompt("after")];
    let trial = only_trial(run_scenario(&scenario(steps), |_| Script::new()));
    assert_eq!(
        trial.steps.len(),
        4,
        "a wrong expected error does not stop the trial"
    );
    assert!(trial.steps[0].passed());
    assert!(trial.steps[3].passed());
    for (index, observed) in [(1, "error Other ("), (2, "the turn succeeded")] {
        let error = trial.steps[index].error.as_ref().unwrap();
        assert_eq!(error.kind, StepErrorKind::ExpectedError);
        assert_eq!(error.expected, "error Replayed");
        assert!(error.observed.starts_with(observed), "{}", error.observed);
    }
}

/// Counts turns in memory and in a durable file, and writes each to the ledger.
struct Counter {
    context_dir: std::path::PathBuf,
    ledger: symfonic_evals::SideEffectLedger,
    in_memory: u32,
}

impl Target for Counter {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let file = self.context_dir.join("turns");
        let durable: u32 = std::fs::read_to_string(&file)
            .map(|text| text.parse().unwrap())
            .unwrap_or(0);
        std::fs::write(&file, (durable + 1).to_string()).unwrap();
        self.in_memory += 1;
        self.ledger.record(&request.prompt);
        Ok(TurnRecord::builder()
            .attribute("durable_turns", durable + 1)
            .attribute("memory_turns", self.in_memory)
            .build())
    }
}

fn counter(context: &TargetContext) -> Counter {
    Counter {
        context_dir: context.durable_dir().to_owned(),
        ledger: context.ledger().clone(),
        in_memory: 0,
    }
}

fn counts(durable: u32, memory: u32, ledger: u64) -> Vec<Assertion> {
    vec![
        Assertion::attribute_equals("durable_turns", json!(durable)),
        Assertion::attribute_equals("memory_turns", json!(memory)),
        Assertion::SideEffectCount {
            attempts: ledger,
            effects: ledger,
            duplicates: 0,
        },
    ]
}

#[test]
fn a_restart_keeps_the_durable_dir_and_ledger_and_loses_memory() {
    let steps = vec![
        prompt("one").asserting(counts(1, 1, 1)),
        prompt("two").asserting(counts(2, 2, 2)),
        prompt("three").restarting(true).asserting(counts(3, 1, 3)),
        prompt("four").asserting(counts(4, 2, 4)),
    ];
    let built = Arc::new(Mutex::new(Vec::new()));
    let seen = built.clone();
    let trial = only_trial(run_scenario(
        &scenario(steps),
        move |ctx: &TargetContext| {
            seen.lock().unwrap().push(ctx.durable_dir().to_owned());
            counter(ctx)
        },
    ));
    assert!(trial.passed(), "{trial:#?}");
    assert!(trial.steps[2].restarted);
    let built = built.lock().unwrap();
    assert_eq!(built.len(), 2, "built once, then once more for the restart");
    assert_eq!(built[0], built[1], "the restart reuses the context");
}

#[test]
fn every_trial_starts_from_a_fresh_context_and_ledger() {
    let mut fresh = scenario(vec![prompt("one").asserting(counts(1, 1, 1))]);
    fresh.policy = TrialPolicy::all_of(3);
    let built = Arc::new(Mutex::new(Vec::new()));
    let seen = built.clone();
    let trials = run_scenario(&fresh, move |ctx: &TargetContext| {
        seen.lock()
            .unwrap()
            .push((ctx.trial(), ctx.durable_dir().to_owned()));
        counter(ctx)
    });
    assert_eq!(trials.len(), 3);
    assert!(trials.iter().all(TrialRun::passed), "{trials:#?}");
    let built = built.lock().unwrap();
    // Trials run side by side, so they may be built in any order.
    let mut numbers: Vec<u32> = built.iter().map(|(n, _)| *n).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, [0, 1, 2]);
    let mut dirs: Vec<_> = built.iter().map(|(_, d)| d.clone()).collect();
    dirs.sort();
    dirs.dedup();
    assert_eq!(dirs.len(), 3, "each trial has its own durable directory");
    // A trial's directory goes away with its trial.
    assert!(dirs.iter().all(|d| !d.exists()));
}

#[test]
fn the_retained_token_is_redeemed_and_replayed() {
    let steps = vec![
        prompt("pause:tok-1"),
        prompt("pause:tok-2"),
        Step::prompt("elsewhere", "pause:tok-other", "d"),
        Step::resume("resume", json!({"ok": true}), "c"),
        Step::resume("replay", json!({"ok": true}), "c").restarting(true),
    ];
    let log = Arc::new(Mutex::new(Vec::new()));
    let shared = log.clone();
    let trial = only_trial(run_scenario(&scenario(steps), move |_| Script {
        resumed: shared.clone(),
    }));
    assert!(trial.passed(), "{trial:#?}");
    assert_eq!(*log.lock().unwrap(), ["tok-2", "tok-2"]);
}

#[test]
fn resuming_a_conversation_that_never_paused_breaks_the_step() {
    let steps = vec![
        Step::prompt("pause elsewhere", "pause:tok-1", "other"),
        Step::resume("resume", json!({"ok": true}), "c"),
        prompt("never"),
    ];
    let trial = only_trial(run_scenario(&scenario(steps), |_| Script::new()));
    assert_eq!(broke_at(&trial), ("resume", StepErrorKind::NoPauseToResume));
    assert_eq!(trial.steps.len(), 2);
}

/// A weather desk that fails whichever trials are listed.
fn flaky(failing: &'static [u32]) -> impl Fn(&TargetContext) -> common::extension::WeatherDesk {
    move |ctx| {
        common::extension::WeatherDesk::with(
            failing
                .contains(&ctx.trial())
                .then_some(common::extension::ExtensionFlaw::NeverCalled),
        )
    }
}

#[test]
fn a_policy_passes_on_enough_trials_and_fails_on_too_few() {
    let mut pack = common::extension_pack();
    pack.policy = TrialPolicy {
        trials: 3,
        required: 2,
        ..TrialPolicy::default()
    };
    let two_of_three = run_pack(
        "runner.two_of_three",
        &common::extension(pack.clone()),
        &RunOptions::default(),
        flaky(&[1]),
    );
    two_of_three.assert_passed();
    assert_eq!(two_of_three.seed().expect("the seed ran").trials.len(), 3);
    // The failing trial is still on record.
    assert_eq!(two_of_three.first_failure().unwrap().trial, 1);

    pack.policy.required = 3;
    let all_three = run_pack(
        "runner.all_three",
        &common::extension(pack.clone()),
        &RunOptions::default(),
        flaky(&[1]),
    );
    assert_eq!(all_three.verdict(), &Verdict::Failed);
    assert_eq!(
        all_three.seed().expect("the seed ran").trials.len(),
        2,
        "stops once the policy is lost"
    );

    pack.policy.required = 2;
    let one_of_three = run_pack(
        "runner.one_of_three",
        &common::extension(pack),
        &RunOptions::default(),
        flaky(&[0, 2]),
    );
    assert_eq!(one_of_three.verdict(), &Verdict::Failed);
}

#[test]
fn panicking_targets_do_not_disturb_runs_beside_them() {
    let handles: Vec<_> = (0..8)
        .map(|i| {
            std::thread::spawn(move || {
                let label = if i % 2 == 0 { "panic" } else { "fine" };
                let steps = vec![prompt(label), prompt("after")];
                let trial = only_trial(run_scenario(&scenario(steps), |_| Script::new()));
                (label, trial.passed())
            })
        })
        .collect();
    for handle in handles {
        let (label, passed) = handle.join().expect("the caller's thread never panics");
        assert_eq!(passed, label == "fine", "{label}");
    }
}

/// Panics when dropped, as a deployment with a broken shutdown would.
struct BrokenShutdown;

impl Drop for BrokenShutdown {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("shutdown failed");
        }
    }
}

impl Target for BrokenShutdown {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().build())
    }
}

#[test]
fn a_panic_while_dropped_is_blamed_on_the_teardown_or_the_restart() {
    let steps = vec![prompt("one"), prompt("two")];
    let trial = only_trial(run_scenario(&scenario(steps), |_| BrokenShutdown));
    let labels: Vec<&str> = trial.steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["one", "two", "teardown"], "no step named twice");
    assert!(trial.steps[1].passed());
    assert_eq!(
        broke_at(&trial),
        ("teardown", StepErrorKind::TargetPanicked)
    );

    let steps = vec![prompt("one"), prompt("two").restarting(true)];
    let trial = only_trial(run_scenario(&scenario(steps), |_| BrokenShutdown));
    assert_eq!(trial.steps.len(), 2);
    assert_eq!(broke_at(&trial), ("two", StepErrorKind::TargetPanicked));
}

/// Logs each prompt it finishes; `slow` takes 400 ms.
struct Slow(Arc<Mutex<Vec<String>>>);

impl Target for Slow {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        if request.prompt == "slow" {
            std::thread::sleep(Duration::from_millis(400));
        }
        self.0.lock().unwrap().push(request.prompt.clone());
        Ok(TurnRecord::builder().build())
    }
}

#[test]
fn an_abandoned_trial_starts_no_further_step() {
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut plan = scenario(vec![prompt("slow"), prompt("after")]);
    plan.policy.step_timeout = Duration::from_millis(100);
    let shared = log.clone();
    let trial = only_trial(run_scenario(&plan, move |_| Slow(shared.clone())));
    assert_eq!(broke_at(&trial), ("slow", StepErrorKind::StepTimeout));
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        *log.lock().unwrap(),
        ["slow"],
        "the step after the timeout never ran"
    );
}

/// Takes 600 ms to drop, as a deployment with a slow shutdown would.
struct SlowShutdown;

impl Drop for SlowShutdown {
    fn drop(&mut self) {
        std::thread::sleep(Duration::from_millis(600));
    }
}

impl Target for SlowShutdown {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().build())
    }
}

#[test]
fn a_slow_teardown_is_the_teardowns_timeout_not_the_last_steps() {
    let mut plan = scenario(vec![prompt("one")]);
    plan.policy.step_timeout = Duration::from_millis(150);
    let trial = only_trial(run_scenario(&plan, |_| SlowShutdown));
    let labels: Vec<&str> = trial.steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["one", "teardown"], "no step named twice");
    assert!(trial.steps[0].passed());
    assert_eq!(broke_at(&trial), ("teardown", StepErrorKind::StepTimeout));
}

/// Applies an effect, then refuses the turn.
struct RefusesAfterEffect(symfonic_evals::SideEffectLedger);

impl Target for RefusesAfterEffect {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        self.0.record("effect");
        Err(TurnError::new("Refused", "no"))
    }
}

#[test]
fn an_expected_error_step_still_reads_the_ledger_and_refuses_record_assertions() {
    let step = |assertion: Assertion| {
        scenario(vec![Step::prompt("refuse", "refuse", "c")
            .expecting_error("Refused")
            .asserting([assertion])])
    };
    let untouched = Assertion::SideEffectCount {
        attempts: 0,
        effects: 0,
        duplicates: 0,
    };
    let trial = only_trial(run_scenario(&step(untouched), |ctx: &TargetContext| {
        RefusesAfterEffect(ctx.ledger().clone())
    }));
    assert!(!trial.passed(), "the refused turn applied an effect");
    assert_eq!(trial.steps[0].assertions[0].kind, "ExpectedError");
    assert_eq!(trial.steps[0].assertions[1].kind, "SideEffectCount");

    let moved = Assertion::SideEffectCount {
        attempts: 1,
        effects: 1,
        duplicates: 0,
    };
    let trial = only_trial(run_scenario(&step(moved), |ctx: &TargetContext| {
        RefusesAfterEffect(ctx.ledger().clone())
    }));
    assert!(trial.passed());

    let needs_a_record = Assertion::tool_called("anything", 0);
    let trial = only_trial(run_scenario(
        &step(needs_a_record),
        |ctx: &TargetContext| RefusesAfterEffect(ctx.ledger().clone()),
    ));
    assert!(
        !trial.passed(),
        "an assertion with nothing to read never passes"
    );
}

/// Declares the extension pack's tool, answers faithfully, and hangs in
/// every drop.
struct HangsWhenDropped(common::extension::WeatherDesk);

impl Target for HangsWhenDropped {
    fn capabilities(&self) -> CapabilityEvidence {
        self.0.capabilities()
    }
    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        self.0.run_turn(request)
    }
}

impl Drop for HangsWhenDropped {
    fn drop(&mut self) {
        std::thread::sleep(Duration::from_secs(30));
    }
}

#[test]
fn a_drop_that_always_hangs_is_blamed_on_teardown_never_on_the_constructor() {
    let mut pack = common::extension_pack();
    pack.skip_probes = vec![
        "extension/repeated-and-fresh-conversation".into(),
        "extension/result-reaches-model".into(),
    ];
    pack.policy.step_timeout = Duration::from_millis(300);
    let on_a_thread = RunOptions {
        isolation: symfonic_evals::Isolation::Thread,
        ..RunOptions::default()
    };
    let run = run_pack(
        "runner.hangs_when_dropped",
        &common::extension(pack),
        &on_a_thread,
        |_| HangsWhenDropped(common::extension::WeatherDesk::with(None)),
    );
    assert!(
        !matches!(run.verdict(), Verdict::Unbuildable(_)),
        "it built and declared its capabilities: {}",
        run.render()
    );
    let trial = &run.seed().expect("the seed ran").trials[0];
    assert!(trial.steps[0].passed(), "{}", run.render());
    assert_eq!(broke_at(trial), ("teardown", StepErrorKind::StepTimeout));
}

/// Builds only once two trials are being built at the same time: a serial
/// runner would wait here forever (bounded by the barrier's timeout).
struct Together;

static ARRIVED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Together {
    fn meet() -> Self {
        ARRIVED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let waited = Instant::now();
        while ARRIVED.load(std::sync::atomic::Ordering::SeqCst) < 2 {
            assert!(
                waited.elapsed() < Duration::from_secs(5),
                "the other trial never started beside this one"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        Self
    }
}

impl Target for Together {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().build())
    }
}

#[test]
fn trials_run_side_by_side_up_to_the_concurrency() {
    let mut plan = scenario(vec![prompt("one")]);
    plan.policy = TrialPolicy {
        concurrency: 2,
        ..TrialPolicy::all_of(2)
    };
    let trials = run_scenario(&plan, |_| Together::meet());
    assert_eq!(trials.len(), 2);
    assert!(trials.iter().all(TrialRun::passed), "{trials:#?}");
    assert_eq!(
        trials.iter().map(|t| t.trial).collect::<Vec<_>>(),
        [0, 1],
        "reported in trial order"
    );
}

#[test]
fn an_error_kind_that_is_free_text_is_digested_and_a_plain_one_shown() {
    let plain = only_trial(run_scenario(
        &scenario(vec![prompt("fail:PlainKind")]),
        |_| Script::new(),
    ));
    let shown = &plain.steps[0].error.as_ref().unwrap().observed;
    assert!(shown.starts_with("error PlainKind ("), "{shown}");
    // A kind that is free text may carry turn state: only its digest shows.
    let secret_kind = "card 4111 1111 1111 1111 declined";
    let plan = scenario(vec![Step::prompt(
        "free",
        format!("fail:{secret_kind}"),
        "c",
    )]);
    let trial = only_trial(run_scenario(&plan, |_| Script::new()));
    let observed = &trial.steps[0].error.as_ref().unwrap().observed;
    assert!(!observed.contains("4111"), "{observed}");
    assert!(observed.starts_with("error sha256:"), "{observed}");
}

/// Run by [`a_slow_step_says_it_is_still_running`] in a child process.
#[test]
#[ignore = "run as a child process by a_slow_step_says_it_is_still_running"]
fn slow_step_in_a_child() {
    let plan = Scenario::new(
        "runner.slow_step",
        vec![Step::prompt("slow", "slow", "c")],
        TrialPolicy::default(),
    );
    let trials = run_scenario(&plan, |_| Sleeps(Duration::from_millis(600)));
    assert!(trials[0].passed());
}

/// Sleeps through every turn.
struct Sleeps(Duration);

impl Target for Sleeps {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        std::thread::sleep(self.0);
        Ok(TurnRecord::builder().build())
    }
}

#[test]
fn a_slow_step_says_it_is_still_running() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "runner::slow_step_in_a_child",
            "--ignored",
            "--nocapture",
        ])
        .env(symfonic_evals::PROGRESS_AFTER_ENV, "100")
        .output()
        .expect("the child runs");
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.matches("still running after").count(),
        1,
        "one line per slow step: {stderr}"
    );
    assert!(stderr.contains("step `slow`"), "{stderr}");
}
