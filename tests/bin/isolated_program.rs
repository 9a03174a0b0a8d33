//! A program that runs a scenario from its own `main`, its deployment in a
//! child process (the default isolation), for the `isolated_program` test.
//!
//! The deployment answers with the program's first argument, read when it
//! is built, which happens in the re-executed child: the answer carries the
//! word only if the child got the program's arguments. With
//! `--die-in-child` as well, the re-executed child panics before it reaches
//! the run. Prints `passed`, or the first failed step's error, and exits
//! non-zero on a failure.

use std::process::ExitCode;

use symfonic_evals::process::SERVE_RUN_ENV;
use symfonic_evals::{
    run_scenario_with, Assertion, CapabilityEvidence, Isolation, PromptRequest, Scenario, Step,
    Target, TrialPolicy, TurnError, TurnRecord,
};

/// Answers every prompt with the word it was built with.
struct Echo(String);

impl Target for Echo {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }

    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder()
            .answer(format!("said {}", self.0))
            .build())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let serving = std::env::var_os(SERVE_RUN_ENV).is_some();
    if serving && args.iter().any(|arg| arg == "--die-in-child") {
        panic!("the program's set-up failed: marker-c41d");
    }
    let word = args.first().cloned().unwrap_or_default();
    let scenario = Scenario::new(
        "isolated-program",
        vec![Step::prompt("echo", "say the word", "c")
            .asserting([Assertion::ResponseContains(vec![format!("said {word}")])])],
        TrialPolicy::all_of(1),
    );
    let trials = run_scenario_with(&scenario, Isolation::Process, |_| {
        Echo(std::env::args().nth(1).unwrap_or_default())
    });
    let failed = trials
        .iter()
        .flat_map(|trial| &trial.steps)
        .find(|step| !step.passed());
    match failed {
        None if !trials.is_empty() => {
            println!("passed");
            ExitCode::SUCCESS
        }
        None => {
            println!("no trial ran");
            ExitCode::FAILURE
        }
        Some(step) => {
            println!("{step:#?}");
            ExitCode::FAILURE
        }
    }
}
