//! The pack runs the main job makes (a reference, a twin, an honest
//! variant, on each desk), and how they run side by side.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use helpdesk::python::PythonTwin;
use helpdesk::typescript::{self, TsDesk, TsTwin};
use helpdesk::{honest, packs, python, Catch, Flaw, Helpdesk, Pack, Variant};
use symfonic_evals::{
    run_pack, PackDefinition, PackRun, PinnedCatch, RunOptions, RunRole, Verdict,
};

use crate::console;

/// One pack run the main job makes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Job {
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

pub(crate) fn desk(python: bool) -> &'static str {
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
    pub(crate) fn all(typescript: bool) -> Vec<Self> {
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
pub(crate) fn workers() -> usize {
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
pub(crate) fn run_side_by_side(jobs: &[Job], workers: usize) -> Vec<PackRun> {
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

pub(crate) fn pack_name(pack: Pack) -> &'static str {
    packs::definition(pack).kind().name()
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
