//! The main job: every pack against the reference desk and its broken twins,
//! first the Rust desk in process, then the same desk written in Python,
//! judged over the process protocol. Prints each pack's table, the
//! not-applicable reasons, each twin and where it was caught, the totals and
//! the report path. Exits non-zero if a reference fails a pack or a twin
//! escapes.

use std::process::ExitCode;
use std::time::Instant;

use helpdesk::{packs, python, Catch, Flaw, Helpdesk, Pack};
use serde_json::{json, Value};
use symfonic_evals::{
    report_dir, run_pack, PackDefinition, RunOptions, Target, TargetContext, Verdict,
};

const PACKS: [Pack; 3] = [Pack::Procedural, Pack::ApprovalResume, Pack::ExtensionTool];

/// What the run has found so far.
#[derive(Default)]
struct Tally {
    references: usize,
    references_passed: usize,
    twins: usize,
    twins_caught: usize,
    summary: Vec<Value>,
}

impl Tally {
    /// Runs `definition` against a reference deployment and prints its table.
    fn reference<T, F>(&mut self, desk: &str, definition: &PackDefinition, factory: F) -> bool
    where
        T: Target + 'static,
        F: Fn(&TargetContext) -> T + Send + Sync + 'static,
    {
        let pack = definition.kind().name();
        let run = run_pack(
            &format!("{desk}::reference::{pack}"),
            definition,
            &RunOptions::default(),
            factory,
        );
        println!("{}", run.render());
        if let Verdict::NotApplicable(missing) = run.verdict() {
            for reason in missing {
                println!("  not applicable: {reason}");
            }
        }
        self.references += 1;
        self.references_passed += usize::from(run.passed());
        self.summary.push(json!({
            "desk": desk,
            "pack": pack,
            "reference_passed": run.passed(),
            "report": run.report_path().map(|p| p.display().to_string()),
        }));
        run.passed()
    }

    /// Runs `definition` against a twin and checks it is caught where it must be.
    fn twin<T, F>(
        &mut self,
        desk: &str,
        twin: &str,
        definition: &PackDefinition,
        catch: Catch,
        factory: F,
    ) where
        T: Target + 'static,
        F: Fn(&TargetContext) -> T + Send + Sync + 'static,
    {
        let run = run_pack(
            &format!("{desk}::twin::{twin}"),
            definition,
            &RunOptions::default(),
            factory,
        );
        let failure = run.first_failure();
        let caught = !run.passed() && failure.as_ref().is_some_and(|f| catch.matches(f));
        let at = failure.as_ref().map_or_else(
            || "not caught: the pack passed".to_owned(),
            |f| format!("step `{}` by {}", f.step_label, f.description),
        );
        println!(
            "  twin {twin:<36} {} at {at}",
            if caught { "caught" } else { "ESCAPED" }
        );
        self.twins += 1;
        self.twins_caught += usize::from(caught);
        self.summary
            .push(json!({ "desk": desk, "twin": twin, "caught": caught, "at": at }));
    }
}

fn main() -> ExitCode {
    let started = Instant::now();
    let mut tally = Tally::default();
    let total = PACKS.len() * 2;
    for (index, pack) in PACKS.into_iter().enumerate() {
        let flaws: Vec<Flaw> = Flaw::ALL
            .iter()
            .copied()
            .filter(|f| f.pack() == pack)
            .collect();
        eprintln!(
            "[{}/{total}] {} (Rust desk): reference and {} twin(s)",
            index + 1,
            pack_name(pack),
            flaws.len()
        );
        let definition = packs::definition(pack);
        tally.reference("helpdesk", &definition, Helpdesk::open);
        for flaw in flaws {
            tally.twin(
                "helpdesk",
                flaw.name(),
                &definition,
                flaw.expected_catch(),
                move |ctx| Helpdesk::open_with(ctx, Some(flaw)),
            );
        }
        println!();
    }
    for (index, pack) in PACKS.into_iter().enumerate() {
        let twins: Vec<_> = python::TWINS
            .into_iter()
            .filter(|t| t.pack == pack)
            .collect();
        eprintln!(
            "[{}/{total}] {} (Python desk over the protocol): reference and {} twin(s)",
            PACKS.len() + index + 1,
            pack_name(pack),
            twins.len()
        );
        let definition = python::definition(pack);
        let spec = python::spec(None);
        tally.reference("helpdesk-py", &definition, move |ctx| {
            python::start(ctx, &spec)
        });
        for twin in twins {
            let spec = python::spec(Some(twin.name));
            tally.twin(
                "helpdesk-py",
                twin.name,
                &definition,
                twin.catch,
                move |ctx| python::start(ctx, &spec),
            );
        }
        println!();
    }
    println!(
        "{} of {} packs passed against the references (Rust and Python desks); {} of {} twins caught ({:.1} s)",
        tally.references_passed,
        tally.references,
        tally.twins_caught,
        tally.twins,
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
    if tally.references_passed == tally.references && tally.twins_caught == tally.twins {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn pack_name(pack: Pack) -> &'static str {
    packs::definition(pack).kind().name()
}
