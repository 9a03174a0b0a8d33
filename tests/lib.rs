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

/// Asserts that `run`, the run of twin `name`, failed first at `catch`
/// and failed nowhere but `catch`'s scenario and `also_fails`; the panic
/// message carries the run's table.
///
/// # Panics
///
/// When the run passed, failed first elsewhere, or failed another scenario.
pub fn assert_caught_only(run: &PackRun, name: &str, catch: &helpdesk::Catch, also_fails: &[&str]) {
    let failure = fails_at(run, catch.step, catch.assertion);
    assert!(
        catch.matches(&failure),
        "{name}: first failure {failure:?}, expected {catch:?}\n{}",
        run.render()
    );
    let failing: std::collections::BTreeSet<&str> = run.failed_scenarios().into_iter().collect();
    let expected: std::collections::BTreeSet<&str> = std::iter::once(catch.scenario)
        .chain(also_fails.iter().copied())
        .collect();
    assert_eq!(
        failing,
        expected,
        "{name}: failing scenarios\n{}",
        run.render()
    );
}

/// Runs `work` on every item, as many at once as the machine has cores,
/// and returns the results in the items' order.
///
/// For tests that loop over many pack runs: one run mostly waits on child
/// processes, so running them one after another leaves the cores idle and
/// makes that test the suite's long pole. A panic in `work` (a failed
/// assertion) is raised again, with its own message, once every item has
/// run.
///
/// The workers take the test's thread name: an isolated pack run
/// re-executes the test binary filtered to the test its thread is named
/// after. Each item must run its packs under names of its own, since which
/// worker runs which item is not fixed. In that re-executed child the items
/// run one after another on the test's thread: the child passes over the
/// runs before the one it serves (a run still going in the parent has no
/// outcome to pass over with, so its assertions may fail there, and are
/// ignored) and exits serving it, so nothing after it runs. Return the runs
/// and assert on them afterwards: an assertion failing in every child is
/// paid for in every child.
///
/// # Panics
///
/// When `work` panicked on an item: the first such item's panic.
pub fn side_by_side<T: Send, R: Send>(
    items: impl IntoIterator<Item = T>,
    work: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
    use std::sync::Mutex;

    let items: Vec<T> = items.into_iter().collect();
    let count = items.len();
    if std::env::var_os(symfonic_evals::process::SERVE_RUN_ENV).is_some() {
        let outcomes: Vec<_> = items
            .into_iter()
            .map(|item| catch_unwind(AssertUnwindSafe(|| work(item))))
            .collect();
        return outcomes
            .into_iter()
            .map(|outcome| outcome.unwrap_or_else(|panic| resume_unwind(panic)))
            .collect();
    }
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    let queue = Mutex::new(items.into_iter().enumerate());
    let done = Mutex::new(Vec::with_capacity(count));
    let test = std::thread::current().name().map(str::to_owned);
    std::thread::scope(|scope| {
        for _ in 0..cores.min(count) {
            let worker = match &test {
                Some(test) => std::thread::Builder::new().name(test.clone()),
                None => std::thread::Builder::new(),
            };
            let spawned = worker.spawn_scoped(scope, || loop {
                let Some((at, item)) = queue.lock().expect("the queue").next() else {
                    break;
                };
                let outcome = catch_unwind(AssertUnwindSafe(|| work(item)));
                done.lock().expect("the results").push((at, outcome));
            });
            spawned.expect("a worker thread");
        }
    });
    let mut done = done.into_inner().expect("the results");
    done.sort_by_key(|(at, _)| *at);
    done.into_iter()
        .map(|(_, outcome)| outcome.unwrap_or_else(|panic| resume_unwind(panic)))
        .collect()
}
