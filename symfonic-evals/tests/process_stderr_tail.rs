//! A process target that quotes its child's stderr in errors
//! (`include_stderr_tail(true)`) is judged exactly as one that does not:
//! an injected crash is still recognised and retried, and a child that dies
//! is still a process failure, whatever the child wrote to stderr. Reports
//! show the harness's account and digest the quoted stderr.
#![cfg(unix)]

use std::path::PathBuf;
use std::time::Duration;

use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{
    run_scenario, Assertion, ErrorMatch, ProcessTarget, Scenario, Step, StepErrorKind,
    TargetContext, TrialPolicy,
};

fn chatty(stderr_tail: bool) -> ProcessSpec {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/process_children/misbehave.py");
    ProcessSpec::new("python3")
        .arg(script)
        .arg("--chatty")
        .request_timeout(Duration::from_secs(10))
        .handshake_timeout(Duration::from_secs(10))
        .shutdown_grace(Duration::from_millis(500))
        .include_stderr_tail(stderr_tail)
}

fn run(name: &str, step: Step, spec: ProcessSpec) -> symfonic_evals::TrialRun {
    let scenario = Scenario::new(name, vec![step], TrialPolicy::all_of(1));
    let mut trials = run_scenario(&scenario, move |ctx: &TargetContext| {
        ProcessTarget::spawn(ctx, &spec).expect("the child starts")
    });
    trials.pop().expect("one trial")
}

#[test]
fn a_crash_is_injected_and_retried_whether_or_not_stderr_is_quoted() {
    // The `ledger` turn asks for `refund:1` twice, then `refund:2`: killed
    // at the k-th new effect, the retry asks for the same keys again.
    for stderr_tail in [false, true] {
        for k in [1_u32, 2] {
            let step = Step::prompt("pay", "ledger", "c")
                .crashing_at_effect(k)
                .asserting([Assertion::CrashedEffectRetried]);
            let trial = run(
                &format!("stderr_tail.crash.{stderr_tail}.{k}"),
                step,
                chatty(stderr_tail),
            );
            assert!(
                trial.passed(),
                "stderr tail {stderr_tail}, crash at {k}: {:#?}",
                trial.steps
            );
        }
    }
}

#[test]
fn a_child_that_dies_is_a_process_failure_not_the_error_a_step_expected() {
    // Any error would do for this step; a dead child is not the deployment
    // refusing, and quoting its stderr must not make it one.
    let step = Step::prompt("refused", "exit", "c").expecting(ErrorMatch::any());
    let trial = run("stderr_tail.exit", step, chatty(true));
    let error = trial.steps[0].error.as_ref().expect("the step fails");
    assert_eq!(error.kind, StepErrorKind::ProcessFailed, "{error:?}");
    assert!(error.observed.contains("exit status: 3"), "{error:?}");
    assert!(error.observed.contains("stderr tail sha256:"), "{error:?}");
    assert!(
        !error.observed.contains("marker-7f3a"),
        "the quoted stderr is digested in the report: {error:?}"
    );
}
