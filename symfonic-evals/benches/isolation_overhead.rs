//! What isolation costs, and what running trials side by side saves.
//!
//! - a restart of an isolated Rust deployment (the harness re-executes this
//!   binary, which serves the deployment over a socket): median per step of
//!   a scenario that restarts before every step;
//! - the harness's work per step, isolated against on a thread (medians);
//! - a deployment whose every turn waits 200 ms (a model API), five trials:
//!   wall time with the trials side by side against one after another.
//!
//! `cargo bench -p symfonic-evals --bench isolation_overhead`
//!
//! The binary re-executes itself to serve each isolated run, so everything
//! before the last run happens again in each child; that is why the figures
//! are printed only once, by the process that was not started to serve.

use std::time::{Duration, Instant};

use symfonic_evals::{
    run_scenario_with, CapabilityEvidence, Isolation, PromptRequest, Scenario, Step, Target,
    TrialPolicy, TurnError, TurnRecord,
};

const STEPS: usize = 200;
const RESTARTS: usize = 40;

/// Answers at once, or after `wait`.
struct Sleeper {
    wait: Duration,
}

impl Target for Sleeper {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        std::thread::sleep(self.wait);
        Ok(TurnRecord::builder().answer("ok").build())
    }
}

fn steps(n: usize, restart: bool) -> Vec<Step> {
    (0..n)
        .map(|i| Step::prompt(format!("step {i}"), "a prompt", "bench").restarting(restart))
        .collect()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// The median step duration of one trial of `scenario`.
fn median_step(scenario: &Scenario, isolation: Isolation, wait: Duration) -> Duration {
    let trials = run_scenario_with(scenario, isolation, move |_| Sleeper { wait });
    let trial = trials.first().expect("a trial ran");
    assert!(trial.passed(), "{trial:#?}");
    median(trial.steps.iter().map(|s| s.duration).collect())
}

fn wall(scenario: &Scenario, isolation: Isolation, wait: Duration) -> Duration {
    let started = Instant::now();
    let trials = run_scenario_with(scenario, isolation, move |_| Sleeper { wait });
    assert!(trials.iter().all(symfonic_evals::TrialRun::passed));
    started.elapsed()
}

fn main() {
    let policy = TrialPolicy {
        step_timeout: Duration::from_secs(60),
        ..TrialPolicy::default()
    };
    let restarting = Scenario::new("bench.restarts", steps(RESTARTS, true), policy);
    let restart = median_step(&restarting, Isolation::Process, Duration::ZERO);
    let plain = Scenario::new("bench.steps.process", steps(STEPS, false), policy);
    let isolated_step = median_step(&plain, Isolation::Process, Duration::ZERO);
    let threaded = Scenario::new("bench.steps.thread", steps(STEPS, false), policy);
    let thread_step = median_step(&threaded, Isolation::Thread, Duration::ZERO);

    let five = |concurrency| TrialPolicy {
        concurrency,
        ..TrialPolicy {
            step_timeout: Duration::from_secs(60),
            ..TrialPolicy::all_of(5)
        }
    };
    let wait = Duration::from_millis(200);
    let parallel = Scenario::new("bench.parallel", steps(1, false), five(5));
    let parallel = wall(&parallel, Isolation::Thread, wait);
    let serial = Scenario::new("bench.serial", steps(1, false), five(1));
    let serial = wall(&serial, Isolation::Thread, wait);

    println!("isolated restart (shutdown, re-exec, handshake), median: {restart:?}");
    println!("harness work per step, isolated, median:  {isolated_step:?}");
    println!("harness work per step, on a thread, median: {thread_step:?}");
    println!(
        "isolated / thread per step: {:.1}x",
        isolated_step.as_secs_f64() / thread_step.as_secs_f64().max(1e-9)
    );
    println!(
        "5 trials waiting 200 ms a step: side by side {parallel:?}, one after another {serial:?} ({:.1}x)",
        serial.as_secs_f64() / parallel.as_secs_f64()
    );
}
