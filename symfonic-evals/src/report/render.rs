//! The readable account of a pack run: one line per step and assertion,
//! expected against observed for each failure, the first failure marked.

use std::fmt::Write as _;

use super::run::{PackRun, ScenarioRun, Verdict};
use crate::runner::TrialRun;
use crate::scenario::ScenarioKind;

impl PackRun {
    /// The run as a table of steps and assertions with pass/fail.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let headline = match &self.verdict {
            Verdict::Passed => "PASSED".to_owned(),
            Verdict::Failed => "FAILED".to_owned(),
            Verdict::NotApplicable(_) if self.accept_not_applicable => {
                "NOT APPLICABLE (accepted)".to_owned()
            }
            Verdict::NotApplicable(_) => "NOT APPLICABLE".to_owned(),
            Verdict::InvalidArguments(_) => "INVALID ARGUMENTS".to_owned(),
            Verdict::Unbuildable(_) => "DEPLOYMENT DID NOT BUILD".to_owned(),
        };
        let _ = writeln!(out, "pack {} `{}`: {headline}", self.kind.name(), self.name);
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
        let mut marked = false;
        for scenario in &self.scenarios {
            let _ = writeln!(out, "  {} {}:", scenario_kind(scenario.kind), scenario.name);
            for trial in &scenario.trials {
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
            "[{status}] {} {} ({} of {} trial(s) passed, {} required)",
            scenario_kind(self.kind),
            self.name,
            self.passes(),
            self.planned_trials,
            self.required
        )
    }
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
    let status = if trial.passed() { "pass" } else { "FAIL" };
    let _ = writeln!(out, "  trial {} [{status}]", trial.trial + 1);
    for step in &trial.steps {
        let status = if step.passed() { "pass" } else { "FAIL" };
        let restart = if step.restarted {
            ", after restart"
        } else {
            ""
        };
        let role = match step.role {
            crate::evidence::Role::User => "",
            crate::evidence::Role::Operator => " by the operator",
        };
        let _ = writeln!(
            out,
            "    step {} {} [{status}] ({} {}{role}{restart})",
            step.index + 1,
            step.label,
            step.operation.as_str(),
            step.input_digest,
        );
        for assertion in &step.assertions {
            let tick = if assertion.passed { "ok  " } else { "FAIL" };
            let marker = mark(!assertion.passed && !assertion.malformed);
            let _ = writeln!(out, "      {tick} {}{marker}", assertion.description);
            if !assertion.passed {
                let _ = writeln!(out, "           expected: {}", assertion.expected);
                let _ = writeln!(out, "           observed: {}", assertion.observed);
            }
        }
        if let Some(error) = &step.error {
            let marker = mark(true);
            let _ = writeln!(out, "      FAIL {}{marker}", error.kind.as_str());
            let _ = writeln!(out, "           expected: {}", error.expected);
            let _ = writeln!(out, "           observed: {}", error.observed);
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
