//! Shared fixtures for the end-to-end tests.

#[cfg(unix)]
mod venv;

#[cfg(unix)]
pub use venv::venv_python;

use symfonic_evals::{Failure, PackRun};

/// Asserts that `run` failed first at `step` on `assertion`, and returns that
/// failure; the panic message carries the run's table.
///
/// # Panics
///
/// When the run passed or failed elsewhere first.
pub fn fails_at(run: &PackRun, step: &str, assertion: &str) -> Failure {
    assert!(!run.passed(), "the twin passed:\n{}", run.render());
    let failure = run
        .first_failure()
        .expect("a failed run names its first failure");
    assert_eq!(
        (failure.step_label.as_str(), failure.assertion.as_str()),
        (step, assertion),
        "{}",
        run.render()
    );
    failure
}
