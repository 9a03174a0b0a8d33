//! The main job: every pack against the reference desk and its broken twins,
//! first the Rust desk in process, then the same desk written in Python,
//! judged over the process protocol (whose conformance it checks too), then
//! the desk in TypeScript, plain and on LangGraph.js, under `node` (where
//! `node` and the package's dependencies are installed; elsewhere the job
//! says so on its first line and judges the others).
//!
//! For each reference it prints every scenario's verdict (the seed and each
//! probe), and the full table when one fails; for each twin, where it was
//! caught (scenario, step, assertion), or that it escaped. A twin runs only
//! as far as that takes: the seed and the scenario it must be caught in
//! (the workspace tests prove it passes every other one). Every run is a
//! job; the jobs run side by side, four per core and the longest first
//! (`SYMFONIC_EVALS_JOBS` sets how many), with a progress line on stderr
//! (rewritten in place on a terminal, a plain line per run in CI), and the
//! results are printed in a fixed order once all are in, then a summary
//! table. Every run records its role (reference, twin with its pinned
//! catch, honest variant) in its report, for the viewer's overview. Run it optimised (`cargo run --release -p helpdesk`): in a debug
//! build the harness's own work, not the deployments', dominates.
//! A deployment that could not be built and a pack whose arguments are
//! invalid are reported as such, never as a pass or an escape. Exits
//! non-zero unless every reference passes and every twin is caught where it
//! must be, and every honest variant (a correct but unusual configuration
//! of either desk) passes every pack it is meant for.

mod console;
mod job;
mod tally;

use std::process::ExitCode;
use std::time::Instant;

use helpdesk::python;
use helpdesk::typescript::{self, TsDesk};
use serde_json::json;
use symfonic_evals::{report_dir, PackRun};

use job::{desk, run_side_by_side, workers, Job};
use tally::{count, of, Outcome, Tally};

/// The main job's reports go to a directory of their own (`main-job`
/// beside the test suite's reports), unless the caller names one: its
/// index then shows this run's references, twins and variants, never the
/// fixtures `cargo test` ran.
fn own_report_dir() {
    if std::env::var_os(symfonic_evals::REPORT_DIR_ENV).is_none() {
        let dir = report_dir().join("main-job");
        // Before any thread starts; children inherit it, so a re-executed
        // child writes where its parent reads.
        std::env::set_var(symfonic_evals::REPORT_DIR_ENV, dir);
    }
}

fn main() -> ExitCode {
    own_report_dir();
    let started = Instant::now();
    // The TypeScript desks run where `node` and the package's dependencies
    // are installed; elsewhere the job says so and judges the others.
    let typescript = typescript::built();
    if let Err(why) = &typescript {
        println!("TypeScript desks not judged: {why}");
    }
    let jobs = Job::all(typescript.is_ok());
    let workers = workers();
    eprintln!(
        "{} pack runs (references, twins, honest variants), {workers} at a time",
        jobs.len()
    );
    let runs = run_side_by_side(&jobs, workers);
    let mut tally = Tally::default();
    let mut group = None;
    let mut reference = |tally: &mut Tally, desk: &'static str, run: &PackRun| {
        if group.replace(desk).is_some_and(|last| last != desk) {
            println!();
        }
        tally.reference(desk, run);
    };
    for (job, run) in jobs.iter().zip(&runs) {
        match *job {
            Job::Reference { python, .. } => reference(&mut tally, desk(python), run),
            Job::TsReference { desk, .. } => reference(&mut tally, desk.name(), run),
            Job::TsTwin(twin) => tally.twin(twin.desk.name(), twin.name, &twin.catch, run),
            Job::RustTwin(flaw) => {
                tally.twin("helpdesk", flaw.name(), &flaw.expected_catch(), run);
            }
            Job::PythonTwin(twin) => tally.twin("helpdesk-py", twin.name, &twin.catch, run),
            Job::Honest {
                variant, python, ..
            } => tally.honest_run(variant, python, run),
        }
    }
    println!();
    tally.honest_variants();
    let conformance = symfonic_evals::process::conformance(
        &python::spec(None),
        &symfonic_evals::process::ConformanceInputs {
            prompt: "what are your opening hours?".into(),
            effect_prompt: Some("refund order 9".into()),
            effect_state: Some(json!({ "region": "US" })),
        },
    );
    println!("helpdesk-py {}", conformance.render());
    let mut desks = vec!["helpdesk", "helpdesk-py"];
    if typescript.is_ok() {
        desks.extend(TsDesk::ALL.map(TsDesk::name));
    }
    for desk in desks {
        println!("{desk}: {}", tally.totals(Some(desk)));
    }
    let honest_passed = tally.honest.iter().filter(|(_, f)| f.is_empty()).count();
    println!(
        "{}; {honest_passed} of {} honest variants passed ({:.1} s)",
        tally.totals(None),
        tally.honest.len(),
        started.elapsed().as_secs_f64()
    );
    let path = report_dir().join("helpdesk-summary.json");
    let written = std::fs::create_dir_all(report_dir()).and_then(|()| {
        std::fs::write(
            &path,
            serde_json::to_vec_pretty(&json!({ "runs": tally.summary })).unwrap_or_default(),
        )
    });
    match written {
        Ok(()) => println!("report: {}", path.display()),
        Err(error) => eprintln!("report not written: {error}"),
    }
    // Every run's evidence, page by page: open in any browser, no server.
    match symfonic_evals::refresh_index(&report_dir()) {
        Ok(index) => println!("viewer: {}", index.display()),
        Err(error) => eprintln!("viewer not written: {error}"),
    }
    let good = |runs: &[(String, Outcome)]| {
        let outcomes = of(runs, None);
        (count(&outcomes, Outcome::Good), outcomes.len())
    };
    println!();
    print!(
        "{}",
        console::summary_table(
            good(&tally.references),
            good(&tally.twins),
            (honest_passed, tally.honest.len()),
            started.elapsed(),
        )
    );
    if tally.all_good() && conformance.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
