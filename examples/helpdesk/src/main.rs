//! The main job: every pack against the reference desk and its broken twins,
//! first the Rust desk in process, then the same desk written in Python,
//! judged over the process protocol (whose conformance it checks too).
//!
//! For each reference it prints every scenario's verdict (the seed and each
//! probe), and the full table when one fails; for each twin, where it was
//! caught (scenario, step, assertion), or that it escaped; a Rust twin
//! failing other scenarios than its pinned set counts as caught elsewhere.
//! A deployment that could not be built and a pack whose arguments are
//! invalid are reported as such, never as a pass or an escape. Exits
//! non-zero unless every reference passes and every twin is caught where it
//! must be, and every honest variant (a correct but unusual configuration
//! of either desk) passes every pack it is meant for.

use std::process::ExitCode;
use std::time::Instant;

use helpdesk::{honest, packs, python, Catch, Flaw, Helpdesk, Pack, Variant};
use serde_json::{json, Value};
use symfonic_evals::{
    report_dir, run_pack, PackDefinition, PackRun, RunOptions, Target, TargetContext, Verdict,
};

const PACKS: [Pack; 4] = [
    Pack::Procedural,
    Pack::ApprovalResume,
    Pack::ExtensionTool,
    Pack::ExactlyOnce,
];

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

/// Where a twin must be caught, and every scenario it must fail when that
/// is pinned.
struct Expected {
    catch: Catch,
    failing: Option<Vec<&'static str>>,
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

/// Every scenario's verdict, one line each.
fn scenario_lines(run: &PackRun) {
    for scenario in run.scenarios() {
        let mark = if scenario.passed() { "pass" } else { "FAIL" };
        println!(
            "  [{mark}] {} ({} of {} trial(s) passed, {} required; {})",
            scenario.name,
            scenario.passes(),
            scenario.trials.len(),
            scenario.required,
            scenario.stats().phrase()
        );
    }
}

impl Tally {
    /// Runs `definition` against a reference deployment and prints every
    /// scenario's verdict.
    fn reference<T, F>(
        &mut self,
        desk: &str,
        definition: &PackDefinition,
        options: &RunOptions,
        factory: F,
    ) where
        T: Target + 'static,
        F: Fn(&TargetContext) -> T + Send + Sync + 'static,
    {
        let pack = definition.kind().name();
        let run = run_pack(
            &format!("{desk}::reference::{pack}"),
            definition,
            options,
            factory,
        );
        let (outcome, verdict) = match Outcome::of_verdict(run.verdict()) {
            Some(fixed) => fixed,
            None if run.passed() => (Outcome::Good, "passed".to_owned()),
            None => (Outcome::Bad, "FAILED".to_owned()),
        };
        println!("{desk} reference, {pack}: {verdict}");
        scenario_lines(&run);
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

    /// Runs `definition` against a twin and checks it is caught where it
    /// must be, and (when `expected` names them) that exactly those
    /// scenarios fail.
    fn twin<T, F>(
        &mut self,
        desk: &str,
        twin: &str,
        definition: &PackDefinition,
        options: &RunOptions,
        expected: Expected,
        factory: F,
    ) where
        T: Target + 'static,
        F: Fn(&TargetContext) -> T + Send + Sync + 'static,
    {
        let Expected { catch, failing } = expected;
        let run = run_pack(
            &format!("{desk}::twin::{twin}"),
            definition,
            options,
            factory,
        );
        let (outcome, at) = match Outcome::of_verdict(run.verdict()) {
            Some(fixed) => fixed,
            None => match (catch.first_in(&run), run.first_failure()) {
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
        let failed: Vec<&str> = run.failed_scenarios();
        let (outcome, at) = match failing {
            Some(expected) if outcome == Outcome::Good && failed != expected => (
                Outcome::Elsewhere,
                format!("{at}, but it fails {failed:?}, not {expected:?}"),
            ),
            _ => (outcome, at),
        };
        println!("  twin {twin:<38} {at}");
        self.twins.push((desk.to_owned(), outcome));
        self.summary
            .push(json!({ "desk": desk, "twin": twin, "outcome": outcome.name(), "at": at }));
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

    /// Runs every honest variant against every pack it is meant for, on
    /// both desks, and prints a line per variant.
    fn honest_variants(&mut self) {
        for &variant in Variant::ALL {
            eprintln!("honest variant {}", variant.name());
            let mut failed = Vec::new();
            let mut packs = Vec::new();
            for &pack in variant.packs() {
                failed.extend(honest::complaints(
                    "helpdesk",
                    variant,
                    &honest::run_rust(variant, pack),
                ));
                packs.push(format!("rust {}", pack_name(pack)));
            }
            for &pack in variant.python_packs() {
                failed.extend(honest::complaints(
                    "helpdesk-py",
                    variant,
                    &honest::run_python(variant, pack),
                ));
                packs.push(format!("python {}", pack_name(pack)));
            }
            self.summary.push(json!({
                "variant": variant.name(),
                "packs": packs,
                "failures": failed,
            }));
            self.honest.push((variant, failed));
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
        let options = packs::run_options();
        tally.reference("helpdesk", &definition, &options, Helpdesk::open);
        for flaw in flaws {
            tally.twin(
                "helpdesk",
                flaw.name(),
                &definition,
                &options,
                Expected {
                    catch: flaw.expected_catch(),
                    failing: Some(flaw.failing_scenarios()),
                },
                move |ctx| Helpdesk::open_with(ctx, Some(flaw)),
            );
        }
        println!();
    }
    for (index, pack) in PACKS.into_iter().enumerate() {
        let twins: Vec<_> = python::all_twins().filter(|t| t.pack == pack).collect();
        eprintln!(
            "[{}/{total}] {} (Python desk over the protocol): reference and {} twin(s)",
            PACKS.len() + index + 1,
            pack_name(pack),
            twins.len()
        );
        let definition = python::definition(pack);
        let options = python::run_options();
        let spec = python::spec(None);
        tally.reference("helpdesk-py", &definition, &options, move |ctx| {
            python::start(ctx, &spec)
        });
        for twin in twins {
            let spec = python::spec(Some(twin.name));
            tally.twin(
                "helpdesk-py",
                twin.name,
                &definition,
                &options,
                Expected {
                    catch: twin.catch,
                    failing: None,
                },
                move |ctx| python::start(ctx, &spec),
            );
        }
        println!();
    }
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
    for desk in ["helpdesk", "helpdesk-py"] {
        println!("{desk}: {}", tally.totals(Some(desk)));
    }
    println!(
        "{} ({:.1} s)",
        tally.totals(None),
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
