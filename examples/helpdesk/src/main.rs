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

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use helpdesk::python::PythonTwin;
use helpdesk::typescript::{self, TsDesk, TsTwin};
use helpdesk::{honest, packs, python, Catch, Flaw, Helpdesk, Pack, Variant};
use serde_json::{json, Value};
use symfonic_evals::{
    report_dir, run_pack, PackDefinition, PackRun, PinnedCatch, RunOptions, RunRole, Verdict,
};

/// What one run came to, for the totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// A reference passed, or a twin was caught where it must be.
    Good,
    /// A reference failed, or a twin escaped every scenario.
    Bad,
    /// A twin failed, but not where its catch says.
    Elsewhere,
    /// The deployment could not be built.
    NotBuilt,
    /// The pack's arguments were refused.
    Invalid,
    /// The deployment lacks what the pack needs.
    NotApplicable,
}

impl Outcome {
    /// The outcome a verdict fixes before anything is judged, if it does.
    fn of_verdict(verdict: &Verdict) -> Option<(Self, String)> {
        match verdict {
            Verdict::Unbuildable(why) => Some((Self::NotBuilt, format!("NOT BUILT ({why})"))),
            Verdict::InvalidArguments(errors) => {
                Some((Self::Invalid, format!("INVALID ({})", errors.join("; "))))
            }
            Verdict::NotApplicable(missing) => {
                let missing: Vec<String> = missing.iter().map(ToString::to_string).collect();
                Some((
                    Self::NotApplicable,
                    format!("NOT APPLICABLE ({})", missing.join("; ")),
                ))
            }
            Verdict::Passed | Verdict::Failed => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Good => "good",
            Self::Bad => "bad",
            Self::Elsewhere => "elsewhere",
            Self::NotBuilt => "not built",
            Self::Invalid => "invalid",
            Self::NotApplicable => "not applicable",
        }
    }
}

/// What the run has found so far.
#[derive(Default)]
struct Tally {
    references: Vec<(String, Outcome)>,
    twins: Vec<(String, Outcome)>,
    /// Per honest variant: its name, and every way it was failed.
    honest: Vec<(Variant, Vec<String>)>,
    summary: Vec<Value>,
}

fn count(outcomes: &[Outcome], which: Outcome) -> usize {
    outcomes.iter().filter(|o| **o == which).count()
}

/// The outcomes of `desk` (every desk when `None`).
fn of(runs: &[(String, Outcome)], desk: Option<&str>) -> Vec<Outcome> {
    runs.iter()
        .filter(|(d, _)| desk.is_none_or(|desk| d == desk))
        .map(|(_, outcome)| *outcome)
        .collect()
}

/// Every scenario's verdict, one line each; the estimates and their
/// intervals only where more than one trial ran (one trial's interval
/// says nothing).
fn scenario_lines(run: &PackRun) {
    for scenario in run.scenarios() {
        let mark = if scenario.passed() { "pass" } else { "FAIL" };
        let estimates = if scenario.trials.len() > 1 {
            format!("; {}", scenario.stats().phrase())
        } else {
            String::new()
        };
        println!(
            "  [{mark}] {} ({} of {} trial(s) passed, {} required{estimates})",
            scenario.name,
            scenario.passes(),
            scenario.trials.len(),
            scenario.required,
        );
    }
}

/// One pack run the main job makes.
#[derive(Debug, Clone, Copy)]
enum Job {
    /// A pack against a reference desk (`python`: the Python desk).
    Reference { pack: Pack, python: bool },
    /// A Rust twin against the pack that must catch it.
    RustTwin(Flaw),
    /// A Python twin against the pack that must catch it.
    PythonTwin(PythonTwin),
    /// A pack against a TypeScript desk, under `node`.
    TsReference { desk: TsDesk, pack: Pack },
    /// A TypeScript twin against the pack that must catch it.
    TsTwin(TsTwin),
    /// An honest variant against one pack it is meant for.
    Honest {
        variant: Variant,
        pack: Pack,
        python: bool,
    },
}

fn desk(python: bool) -> &'static str {
    if python {
        "helpdesk-py"
    } else {
        "helpdesk"
    }
}

/// `definition` with every probe switched off but the one `catch` names
/// (none when the seed catches): all the main job needs to show where the
/// twin is caught.
fn only_catching(definition: PackDefinition, catch: &Catch) -> PackDefinition {
    let others: Vec<&str> = definition
        .kind()
        .probes()
        .iter()
        .map(|probe| probe.name)
        .filter(|name| *name != catch.scenario)
        .collect();
    definition.skipping(&others)
}

impl Job {
    /// Every job, in the order the results are printed; the TypeScript
    /// desks' only when `typescript` (they can run on this machine).
    fn all(typescript: bool) -> Vec<Self> {
        let mut jobs = Vec::new();
        for python in [false, true] {
            for pack in Pack::ALL {
                jobs.push(Self::Reference { pack, python });
                if python {
                    jobs.extend(
                        python::all_twins()
                            .filter(|t| t.pack == pack)
                            .map(Self::PythonTwin),
                    );
                } else {
                    jobs.extend(
                        Flaw::ALL
                            .iter()
                            .filter(|f| f.pack() == pack)
                            .map(|f| Self::RustTwin(*f)),
                    );
                }
            }
        }
        if typescript {
            for desk in TsDesk::ALL {
                for &pack in desk.packs() {
                    jobs.push(Self::TsReference { desk, pack });
                    jobs.extend(
                        typescript::TWINS
                            .iter()
                            .filter(|t| t.desk == desk && t.pack == pack)
                            .map(|t| Self::TsTwin(*t)),
                    );
                }
            }
        }
        for &variant in Variant::ALL {
            for (python, packs) in [(false, variant.packs()), (true, variant.python_packs())] {
                jobs.extend(packs.iter().map(|&pack| Self::Honest {
                    variant,
                    pack,
                    python,
                }));
            }
        }
        jobs
    }

    /// A rough cost, for starting the longest jobs first: a full run (a
    /// reference, an honest variant) runs every probe, a twin two
    /// scenarios; the Python desk's turns cross a process boundary, and
    /// the procedural pack has the most scenarios. A TypeScript desk starts
    /// a fresh `node` at every restart (no fork server), and the
    /// LangGraph.js desk imports the framework each time: its approval run
    /// is the longest of all (45 s of a 48 s job when it started last).
    fn weight(self) -> u32 {
        let node = match self {
            Self::TsReference { desk, .. } | Self::TsTwin(TsTwin { desk, .. }) => Some(desk),
            _ => None,
        };
        let node_factor = match node {
            Some(TsDesk::LangGraph | TsDesk::OpenAiAgents) => 12,
            Some(TsDesk::Plain) => 4,
            None => 1,
        };
        self.base_weight() * node_factor
    }

    fn base_weight(self) -> u32 {
        let (full, python, pack) = match self {
            Self::Reference { pack, python } | Self::Honest { pack, python, .. } => {
                (true, python, pack)
            }
            Self::TsReference { pack, .. } => (true, true, pack),
            Self::RustTwin(flaw) => (false, false, flaw.pack()),
            Self::PythonTwin(twin) => (false, true, twin.pack),
            Self::TsTwin(twin) => (false, true, twin.pack),
        };
        let mut weight = if full { 8 } else { 1 };
        if python {
            weight *= 2;
        }
        if pack == Pack::Procedural {
            weight += weight / 2;
        }
        weight
    }

    fn label(self) -> String {
        match self {
            Self::Reference { pack, python } => {
                format!("{} reference, {}", desk(python), pack_name(pack))
            }
            Self::TsReference { desk, pack } => {
                format!("{} reference, {}", desk.name(), pack_name(pack))
            }
            Self::RustTwin(flaw) => format!("helpdesk twin {}", flaw.name()),
            Self::PythonTwin(twin) => format!("helpdesk-py twin {}", twin.name),
            Self::TsTwin(twin) => format!("{} twin {}", twin.desk.name(), twin.name),
            Self::Honest {
                variant,
                pack,
                python,
            } => format!(
                "{} variant {}, {}",
                desk(python),
                variant.name(),
                pack_name(pack)
            ),
        }
    }

    /// What the run is for, as its report records it (an honest variant's
    /// run records its own, in `honest`).
    fn role(self) -> Option<RunRole> {
        let twin = |deployment: &str, twin: &str, catch: &Catch| RunRole::Twin {
            deployment: deployment.to_owned(),
            twin: twin.to_owned(),
            catch: PinnedCatch {
                scenario: catch.scenario.to_owned(),
                step: catch.step.to_owned(),
                assertion: catch.assertion.to_owned(),
            },
        };
        match self {
            Self::Reference { python, .. } => Some(RunRole::Reference {
                deployment: desk(python).to_owned(),
            }),
            Self::TsReference { desk, .. } => Some(RunRole::Reference {
                deployment: desk.name().to_owned(),
            }),
            Self::RustTwin(flaw) => Some(twin("helpdesk", flaw.name(), &flaw.expected_catch())),
            Self::PythonTwin(t) => Some(twin("helpdesk-py", t.name, &t.catch)),
            Self::TsTwin(t) => Some(twin(t.desk.name(), t.name, &t.catch)),
            Self::Honest { .. } => None,
        }
    }

    /// `options` with this job's role.
    fn with_role(self, options: RunOptions) -> RunOptions {
        RunOptions {
            role: self.role(),
            ..options
        }
    }

    fn run(self) -> PackRun {
        match self {
            Self::Reference {
                pack,
                python: false,
            } => run_pack(
                &format!("helpdesk::reference::{}", pack_name(pack)),
                &packs::definition(pack),
                &self.with_role(packs::run_options()),
                Helpdesk::open,
            ),
            Self::Reference { pack, python: true } => {
                let spec = python::spec(None);
                run_pack(
                    &format!("helpdesk-py::reference::{}", pack_name(pack)),
                    &python::definition(pack),
                    &self.with_role(python::run_options()),
                    move |ctx| python::start(ctx, &spec),
                )
            }
            Self::RustTwin(flaw) => run_pack(
                &format!("helpdesk::twin::{}", flaw.name()),
                &only_catching(flaw.definition(), &flaw.expected_catch()),
                &self.with_role(packs::run_options()),
                move |ctx| Helpdesk::open_with(ctx, Some(flaw)),
            ),
            Self::PythonTwin(twin) => {
                let spec = python::spec(Some(twin.name));
                run_pack(
                    &format!("helpdesk-py::twin::{}", twin.name),
                    &only_catching(twin.definition(), &twin.catch),
                    &self.with_role(python::run_options()),
                    move |ctx| python::start(ctx, &spec),
                )
            }
            Self::TsReference { desk, pack } => {
                let spec = typescript::spec(desk.script());
                run_pack(
                    &format!("{}::reference::{}", desk.name(), pack_name(pack)),
                    &typescript::definition(desk, pack),
                    &self.with_role(RunOptions::default()),
                    move |ctx| typescript::start(ctx, spec.as_ref().expect("node was found")),
                )
            }
            Self::TsTwin(twin) => {
                let spec = typescript::spec(&twin.script());
                run_pack(
                    &format!("{}::twin::{}", twin.desk.name(), twin.name),
                    &only_catching(typescript::definition(twin.desk, twin.pack), &twin.catch),
                    &self.with_role(RunOptions::default()),
                    move |ctx| typescript::start(ctx, spec.as_ref().expect("node was found")),
                )
            }
            Self::Honest {
                variant,
                pack,
                python: false,
            } => honest::run_rust(variant, pack),
            Self::Honest {
                variant,
                pack,
                python: true,
            } => honest::run_python(variant, pack),
        }
    }
}

/// How many jobs run at once: `SYMFONIC_EVALS_JOBS`, or four per core. A
/// job's thread mostly waits on the children its trials run in (a
/// re-executed desk, a Python interpreter), so one job per core leaves the
/// cores idle between turns: on two cores, in a release build, 4 jobs took
/// 66.3 s, 8 took 49.8 s, 12 took 48.0 s and 16 took 48.1 s in one session.
fn workers() -> usize {
    std::env::var("SYMFONIC_EVALS_JOBS")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| 4 * std::thread::available_parallelism().map_or(1, usize::from))
}

/// Runs every job, `workers` at a time, longest first (so no long run
/// starts last and leaves the other workers idle), and returns the runs in
/// the jobs' order. Each job shows on the progress line as it ends.
/// In a child re-executed to serve one isolated run, every other job
/// returns at once and the served one ends the process.
fn run_side_by_side(jobs: &[Job], workers: usize) -> Vec<PackRun> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].weight()));
    // A served child passes through the other jobs silently.
    let quiet = std::env::var_os(symfonic_evals::process::SERVE_RUN_ENV).is_some();
    let next = AtomicUsize::new(0);
    let runs: Mutex<Vec<Option<PackRun>>> = Mutex::new(jobs.iter().map(|_| None).collect());
    let progress = console::Progress::new(jobs.len(), console::rewrites_in_place());
    std::thread::scope(|scope| {
        for _ in 0..workers.min(jobs.len()) {
            scope.spawn(|| {
                while let Some(&index) = order.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let job = jobs[index];
                    let began = Instant::now();
                    let run = job.run();
                    if !quiet {
                        let word = job.progress_word(run.verdict());
                        progress.ended(
                            &job.label(),
                            word,
                            job.kind(),
                            matches!(word, "passed" | "caught"),
                            began.elapsed(),
                        );
                    }
                    runs.lock().unwrap_or_else(PoisonError::into_inner)[index] = Some(run);
                }
            });
        }
    });
    if !quiet {
        progress.finish();
    }
    runs.into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .into_iter()
        .flatten()
        .collect()
}

/// A verdict in a word, for the progress lines.
fn verdict_word(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Passed => "passed",
        Verdict::Failed => "FAILED",
        Verdict::Unbuildable(_) => "not built",
        Verdict::InvalidArguments(_) => "invalid",
        Verdict::NotApplicable(_) => "not applicable",
    }
}

impl Job {
    /// Which kind of deployment the job runs, for the counts.
    fn kind(self) -> console::Kind {
        match self {
            Self::Reference { .. } | Self::TsReference { .. } => console::Kind::Reference,
            Self::RustTwin(_) | Self::PythonTwin(_) | Self::TsTwin(_) => console::Kind::Twin,
            Self::Honest { .. } => console::Kind::Honest,
        }
    }

    /// What a run's verdict means for this job, in a word: a twin is meant
    /// to fail, so its failure reads "caught" (where it was caught is
    /// checked against its pin once every run is in) and a pass "ESCAPED";
    /// a reference or an honest variant reads as its verdict.
    fn progress_word(&self, verdict: &Verdict) -> &'static str {
        let twin = matches!(
            self,
            Self::RustTwin(_) | Self::PythonTwin(_) | Self::TsTwin(_)
        );
        match verdict {
            Verdict::Failed if twin => "caught",
            Verdict::Passed if twin => "ESCAPED",
            verdict => verdict_word(verdict),
        }
    }
}

impl Tally {
    /// Judges a reference's run and prints every scenario's verdict.
    fn reference(&mut self, desk: &str, run: &PackRun) {
        let pack = run.kind().name();
        let (outcome, verdict) = match Outcome::of_verdict(run.verdict()) {
            Some(fixed) => fixed,
            None if run.passed() => (Outcome::Good, "passed".to_owned()),
            None => (Outcome::Bad, "FAILED".to_owned()),
        };
        println!("{desk} reference, {pack}: {verdict}");
        scenario_lines(run);
        if outcome == Outcome::Bad {
            println!("{}", run.render());
        }
        self.references.push((desk.to_owned(), outcome));
        self.summary.push(json!({
            "desk": desk,
            "pack": pack,
            "reference": outcome.name(),
            "scenarios": run.scenarios().iter().map(|s| json!({"name": s.name, "passed": s.passed()})).collect::<Vec<_>>(),
            "report": run.report_path().map(|p| p.display().to_string()),
        }));
    }

    /// Judges a twin's run: caught where `catch` says, first.
    fn twin(&mut self, desk: &str, twin: &str, catch: &Catch, run: &PackRun) {
        let (outcome, at) = match Outcome::of_verdict(run.verdict()) {
            Some(fixed) => fixed,
            None => match (catch.first_in(run), run.first_failure()) {
                (Some(failure), _) if catch.matches(&failure) => (
                    Outcome::Good,
                    format!(
                        "caught in {} at step `{}` by {}",
                        failure.scenario, failure.step_label, failure.assertion
                    ),
                ),
                (_, Some(failure)) => (
                    Outcome::Elsewhere,
                    format!(
                        "CAUGHT ELSEWHERE: {} at step `{}` by {} (expected {} at `{}` by {})",
                        failure.scenario,
                        failure.step_label,
                        failure.assertion,
                        catch.scenario,
                        catch.step,
                        catch.assertion
                    ),
                ),
                (_, None) => (Outcome::Bad, "ESCAPED: every scenario passed".to_owned()),
            },
        };
        println!("  twin {twin:<38} {at}");
        self.twins.push((desk.to_owned(), outcome));
        self.summary
            .push(json!({ "desk": desk, "twin": twin, "outcome": outcome.name(), "at": at }));
    }

    /// Files every way `run` failed the honest variant `variant`.
    fn honest_run(&mut self, variant: Variant, python: bool, run: &PackRun) {
        let complaints = honest::complaints(desk(python), variant, run);
        match self.honest.iter_mut().find(|(v, _)| *v == variant) {
            Some((_, failed)) => failed.extend(complaints),
            None => self.honest.push((variant, complaints)),
        }
    }

    /// The totals line of `desk` (every desk when `None`).
    fn totals(&self, desk: Option<&str>) -> String {
        let refs = of(&self.references, desk);
        let twins = of(&self.twins, desk);
        let mut problems = Vec::new();
        for (outcome, label) in [
            (Outcome::Bad, "escaped"),
            (Outcome::Elsewhere, "caught elsewhere"),
            (Outcome::NotBuilt, "not built"),
            (Outcome::Invalid, "invalid"),
            (Outcome::NotApplicable, "not applicable"),
        ] {
            let n = count(&twins, outcome);
            if n > 0 {
                problems.push(format!("{n} {label}"));
            }
        }
        let problems = if problems.is_empty() {
            String::new()
        } else {
            format!(" ({})", problems.join(", "))
        };
        format!(
            "{} of {} references passed; {} of {} twins caught{problems}",
            count(&refs, Outcome::Good),
            refs.len(),
            count(&twins, Outcome::Good),
            twins.len(),
        )
    }

    fn all_good(&self) -> bool {
        self.references
            .iter()
            .chain(&self.twins)
            .all(|(_, outcome)| *outcome == Outcome::Good)
            && self.honest.iter().all(|(_, failed)| failed.is_empty())
    }

    /// Prints a line per honest variant, with every way it was failed.
    fn honest_variants(&mut self) {
        for (variant, failed) in &self.honest {
            let packs: Vec<String> = variant
                .packs()
                .iter()
                .map(|p| format!("rust {}", pack_name(*p)))
                .chain(
                    variant
                        .python_packs()
                        .iter()
                        .map(|p| format!("python {}", pack_name(*p))),
                )
                .collect();
            self.summary.push(json!({
                "variant": variant.name(),
                "packs": packs,
                "failures": failed,
            }));
        }
        let failing = self.honest.iter().filter(|(_, f)| !f.is_empty()).count();
        if failing == 0 {
            println!(
                "honest variants: {}, each passing the packs it is meant for",
                self.honest.len()
            );
        } else {
            println!(
                "honest variants: {}, {failing} FAILED by a pack it is meant for",
                self.honest.len()
            );
        }
        for (variant, failed) in &self.honest {
            let mark = if failed.is_empty() { "pass" } else { "FAIL" };
            let rust: Vec<&str> = variant.packs().iter().map(|p| pack_name(*p)).collect();
            let py: Vec<&str> = variant
                .python_packs()
                .iter()
                .map(|p| pack_name(*p))
                .collect();
            println!(
                "  [{mark}] {:<26} rust: {}; python: {}",
                variant.name(),
                listed(&rust),
                listed(&py)
            );
            for complaint in failed {
                println!("      {complaint}");
            }
        }
        println!();
    }
}

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

/// Pack names joined, or `-` for none.
fn listed(packs: &[&str]) -> String {
    if packs.is_empty() {
        "-".to_owned()
    } else {
        packs.join(", ")
    }
}

fn pack_name(pack: Pack) -> &'static str {
    packs::definition(pack).kind().name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_never_judged_anything_is_neither_passed_nor_escaped() {
        let (built, _) = Outcome::of_verdict(&Verdict::Unbuildable("panicked".into())).unwrap();
        assert_eq!(built, Outcome::NotBuilt);
        let (invalid, text) =
            Outcome::of_verdict(&Verdict::InvalidArguments(vec!["`x`: empty".into()])).unwrap();
        assert_eq!(invalid, Outcome::Invalid);
        assert!(text.starts_with("INVALID"), "{text}");
        assert_eq!(Outcome::of_verdict(&Verdict::Passed), None);
        assert_eq!(Outcome::of_verdict(&Verdict::Failed), None);
    }

    #[test]
    fn a_twin_runs_the_seed_and_the_scenario_it_is_caught_in_alone() {
        for flaw in Flaw::ALL {
            let catch = flaw.expected_catch();
            let definition = only_catching(flaw.definition(), &catch);
            let names: Vec<String> = definition.scenarios().into_iter().map(|s| s.name).collect();
            let seed = definition.kind().seed_scenario();
            let mut expected = vec![seed.to_owned()];
            if catch.scenario != seed {
                expected.push(catch.scenario.to_owned());
            }
            assert_eq!(names, expected, "{}", flaw.name());
        }
    }

    #[test]
    fn every_run_the_main_job_judges_is_a_job_once() {
        let labels: Vec<String> = Job::all(true).into_iter().map(Job::label).collect();
        let unique: std::collections::BTreeSet<&String> = labels.iter().collect();
        assert_eq!(unique.len(), labels.len());
        let twins = Flaw::ALL.len() + python::all_twins().count() + typescript::TWINS.len();
        let honest: usize = Variant::ALL
            .iter()
            .map(|v| v.packs().len() + v.python_packs().len())
            .sum();
        let typescript: usize = TsDesk::ALL.iter().map(|d| d.packs().len()).sum();
        assert_eq!(
            labels.len(),
            Pack::ALL.len() * 2 + typescript + twins + honest
        );
        assert_eq!(
            Job::all(false).len(),
            labels.len() - typescript - typescript::TWINS.len()
        );
    }

    #[test]
    fn every_run_records_its_role_and_a_twin_its_pinned_catch() {
        for job in Job::all(true) {
            match (job, job.role()) {
                (Job::Reference { python, .. }, Some(RunRole::Reference { deployment })) => {
                    assert_eq!(deployment, desk(python));
                }
                (
                    Job::RustTwin(flaw),
                    Some(RunRole::Twin {
                        deployment,
                        twin,
                        catch,
                    }),
                ) => {
                    let pinned = flaw.expected_catch();
                    assert_eq!(
                        (deployment.as_str(), twin.as_str()),
                        ("helpdesk", flaw.name())
                    );
                    assert_eq!(
                        (
                            catch.scenario.as_str(),
                            catch.step.as_str(),
                            catch.assertion.as_str()
                        ),
                        (pinned.scenario, pinned.step, pinned.assertion)
                    );
                }
                (
                    Job::PythonTwin(t),
                    Some(RunRole::Twin {
                        deployment,
                        twin,
                        catch,
                    }),
                ) => {
                    assert_eq!(
                        (deployment.as_str(), twin.as_str()),
                        ("helpdesk-py", t.name)
                    );
                    assert_eq!(catch.scenario, t.catch.scenario);
                }
                (Job::TsReference { desk, .. }, Some(RunRole::Reference { deployment })) => {
                    assert_eq!(deployment, desk.name());
                }
                (
                    Job::TsTwin(t),
                    Some(RunRole::Twin {
                        deployment, twin, ..
                    }),
                ) => {
                    assert_eq!(
                        (deployment.as_str(), twin.as_str()),
                        (t.desk.name(), t.name)
                    );
                }
                // An honest variant's run records its role where it is run.
                (Job::Honest { .. }, None) => {}
                (job, role) => panic!("{}: {role:?}", job.label()),
            }
        }
    }

    #[test]
    fn the_totals_name_every_twin_not_caught_and_only_all_good_succeeds() {
        let mut tally = Tally::default();
        tally.references.push(("a".into(), Outcome::Good));
        tally.twins.push(("a".into(), Outcome::Good));
        assert!(tally.all_good());
        tally.twins.push(("b".into(), Outcome::NotBuilt));
        tally.twins.push(("b".into(), Outcome::Bad));
        assert!(!tally.all_good());
        assert_eq!(
            tally.totals(None),
            "1 of 1 references passed; 1 of 3 twins caught (1 escaped, 1 not built)"
        );
        assert_eq!(
            tally.totals(Some("a")),
            "1 of 1 references passed; 1 of 1 twins caught"
        );
    }
}
