//! The readable account of a pack run.
//!
//! Its first line says, on its own, what failed first: a JUnit report and a
//! terminal both show it as the failure's message. Then one line per
//! scenario and one naming the probes that did not run (and why), then the
//! failing scenarios step by step, expected against observed for each
//! failure, the first failure marked, and a last line on how to see the
//! digested values locally.

use std::fmt::Write as _;

use super::run::{PackRun, ScenarioRun, Verdict};
use crate::evidence::Role;
use crate::runner::{StepRun, TrialRun};
use crate::scenario::ScenarioKind;

impl PackRun {
    /// The verdict as a table heading.
    fn headline(&self) -> &'static str {
        match &self.verdict {
            Verdict::Passed => "PASSED",
            Verdict::Failed => "FAILED",
            Verdict::NotApplicable(_) if self.accept_not_applicable => "NOT APPLICABLE (accepted)",
            Verdict::NotApplicable(_) => "NOT APPLICABLE",
            Verdict::InvalidArguments(_) => "INVALID ARGUMENTS",
            Verdict::Unbuildable(_) => "DEPLOYMENT DID NOT BUILD",
        }
    }

    /// The first line: the verdict, and for a failure where it first failed,
    /// in one sentence.
    pub fn summary(&self) -> String {
        let pack = self.kind.name();
        match (&self.verdict, self.first_failure()) {
            (Verdict::Failed, Some(f)) => format!(
                "pack {pack} `{}` failed: {} {}, trial {}, step {} `{}`: {}: expected {}, observed {}",
                self.name,
                scenario_kind(self.scenario_kind_of(&f.scenario)),
                f.scenario,
                f.trial + 1,
                f.step + 1,
                f.step_label,
                f.description,
                f.expected,
                f.observed
            ),
            _ => format!("pack {pack} `{}`: {}", self.name, self.headline()),
        }
    }

    fn scenario_kind_of(&self, name: &str) -> ScenarioKind {
        self.scenario(name).map_or(ScenarioKind::Seed, |s| s.kind)
    }

    /// The run as a table: one line per scenario, the failing ones step by
    /// step with expected against observed.
    pub fn render(&self) -> String {
        let mut out = self.summary();
        out.push('\n');
        match &self.verdict {
            Verdict::NotApplicable(missing) => {
                let _ = writeln!(out, "  the deployment cannot be judged by this pack:");
                for reason in missing {
                    let _ = writeln!(out, "  - {reason}");
                }
                if !self.accept_not_applicable {
                    let _ = writeln!(
                        out,
                        "  (set `accept_not_applicable = true` to let a shared suite accept this)"
                    );
                }
            }
            Verdict::InvalidArguments(errors) => {
                for error in errors {
                    let _ = writeln!(out, "  - {error}");
                }
            }
            Verdict::Unbuildable(why) => {
                let _ = writeln!(out, "  - {why}");
            }
            Verdict::Passed | Verdict::Failed => self.render_scenarios(&mut out),
        }
        if let Some(path) = &self.report_path {
            let _ = writeln!(out, "  report: {}", path.display());
        }
        if let Some(link) = self.viewer_link() {
            let _ = writeln!(out, "  viewer: {link}");
        }
        if self.verdict == Verdict::Failed {
            let _ = writeln!(out, "  {}", crate::redact::how_to_see_values());
        }
        out
    }

    fn render_scenarios(&self, out: &mut String) {
        let passed = self.scenarios.iter().filter(|s| s.passed()).count();
        let _ = writeln!(
            out,
            "  {passed} of {} scenario(s) met their policy",
            self.scenarios.len()
        );
        for scenario in &self.scenarios {
            let _ = writeln!(out, "  {}", scenario.headline());
        }
        let ran = self
            .scenarios
            .iter()
            .filter(|s| s.kind == crate::scenario::ScenarioKind::Probe)
            .count();
        let _ = writeln!(
            out,
            "  coverage: {ran} of {} probe(s) ran",
            ran + self.probes_not_run.len()
        );
        if !self.probes_not_run.is_empty() {
            let probes: Vec<String> = self
                .probes_not_run
                .iter()
                .map(ToString::to_string)
                .collect();
            let _ = writeln!(out, "  not run: {}", probes.join(", "));
        }
        let mut marked = false;
        for scenario in self.scenarios.iter().filter(|s| !s.passed()) {
            let _ = writeln!(out, "  {} {}:", scenario_kind(scenario.kind), scenario.name);
            for trial in scenario.trials.iter().filter(|t| !t.passed()) {
                render_trial(out, trial, &mut marked);
            }
        }
    }
}

fn scenario_kind(kind: ScenarioKind) -> &'static str {
    match kind {
        ScenarioKind::Seed => "seed",
        ScenarioKind::Probe => "probe",
    }
}

impl ScenarioRun {
    /// One line: the scenario, its kind, its verdict and trial counts.
    pub fn headline(&self) -> String {
        let status = if self.passed() { "pass" } else { "FAIL" };
        format!(
            "[{status}] {} {} ({} of {} trial(s) passed, {} required; {})",
            scenario_kind(self.kind),
            self.name,
            self.passes(),
            self.planned_trials,
            self.required,
            self.stats().phrase()
        )
    }
}

fn step_line(step: &StepRun) -> String {
    let status = if step.passed() { "pass" } else { "FAIL" };
    let role = match step.role {
        Role::User => "",
        Role::Operator => " by the operator",
    };
    let restart = match (step.restarted, &step.warm_start) {
        (true, Some(how)) => format!(", after restart ({how})"),
        (true, None) => ", after restart".to_owned(),
        (false, _) => String::new(),
    };
    let state = step
        .state_digest
        .as_deref()
        .map(|digest| format!("; state {digest}"))
        .unwrap_or_default();
    format!(
        "    step {} {} [{status}] ({} {}{role}{restart}{state}; ledger {}/{}/{})",
        step.index + 1,
        step.label,
        step.operation.as_str(),
        step.input_digest,
        step.ledger.attempts,
        step.ledger.effects,
        step.ledger.duplicates,
    )
}

fn render_trial(out: &mut String, trial: &TrialRun, marked: &mut bool) {
    let mut mark = |failed: bool| {
        if failed && !*marked {
            *marked = true;
            "   <== first failure"
        } else {
            ""
        }
    };
    let _ = writeln!(out, "  trial {} [FAIL]", trial.trial + 1);
    for step in &trial.steps {
        let _ = writeln!(out, "{}", step_line(step));
        if step.passed() {
            continue;
        }
        for assertion in step.assertions.iter().filter(|a| !a.passed) {
            let marker = mark(!assertion.malformed);
            let _ = writeln!(out, "      FAIL {}{marker}", assertion.description);
            let _ = writeln!(out, "           expected: {}", assertion.expected);
            let _ = writeln!(out, "           observed: {}", assertion.observed);
        }
        if let Some(error) = &step.error {
            let marker = mark(true);
            let _ = writeln!(out, "      FAIL {}{marker}", error.kind.as_str());
            let _ = writeln!(out, "           expected: {}", error.expected);
            let _ = writeln!(out, "           observed: {}", error.observed);
            for line in error.exception.iter().flat_map(|e| e.traceback()) {
                let _ = writeln!(out, "             {line}");
            }
        }
    }
    for note in &trial.notes {
        let _ = writeln!(out, "    note: {note}");
    }
    if !trial.finished && trial.steps.len() < trial.planned_steps {
        let _ = writeln!(
            out,
            "    ({} step(s) not run)",
            trial.planned_steps - trial.steps.len()
        );
    }
}
