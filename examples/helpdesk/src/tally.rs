//! What the main job found: each run judged against what it is for (a
//! reference passes, a twin is caught where it is pinned, an honest
//! variant passes), the lines printed for it, and the totals.

use helpdesk::{honest, Catch, Variant};
use serde_json::{json, Value};
use symfonic_evals::{PackRun, Verdict};

use crate::job::{desk, pack_name};

/// What one run came to, for the totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
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
pub(crate) struct Tally {
    pub(crate) references: Vec<(String, Outcome)>,
    pub(crate) twins: Vec<(String, Outcome)>,
    /// Per honest variant: its name, and every way it was failed.
    pub(crate) honest: Vec<(Variant, Vec<String>)>,
    pub(crate) summary: Vec<Value>,
}

pub(crate) fn count(outcomes: &[Outcome], which: Outcome) -> usize {
    outcomes.iter().filter(|o| **o == which).count()
}

/// The outcomes of `desk` (every desk when `None`).
pub(crate) fn of(runs: &[(String, Outcome)], desk: Option<&str>) -> Vec<Outcome> {
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

impl Tally {
    /// Judges a reference's run and prints every scenario's verdict.
    pub(crate) fn reference(&mut self, desk: &str, run: &PackRun) {
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
    pub(crate) fn twin(&mut self, desk: &str, twin: &str, catch: &Catch, run: &PackRun) {
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
    pub(crate) fn honest_run(&mut self, variant: Variant, python: bool, run: &PackRun) {
        let complaints = honest::complaints(desk(python), variant, run);
        match self.honest.iter_mut().find(|(v, _)| *v == variant) {
            Some((_, failed)) => failed.extend(complaints),
            None => self.honest.push((variant, complaints)),
        }
    }

    /// The totals line of `desk` (every desk when `None`).
    pub(crate) fn totals(&self, desk: Option<&str>) -> String {
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

    pub(crate) fn all_good(&self) -> bool {
        self.references
            .iter()
            .chain(&self.twins)
            .all(|(_, outcome)| *outcome == Outcome::Good)
            && self.honest.iter().all(|(_, failed)| failed.is_empty())
    }

    /// Prints a line per honest variant, with every way it was failed.
    pub(crate) fn honest_variants(&mut self) {
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

/// Pack names joined, or `-` for none.
pub(crate) fn listed(packs: &[&str]) -> String {
    if packs.is_empty() {
        "-".to_owned()
    } else {
        packs.join(", ")
    }
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
