//! The readable account of a pack run: one line per step and assertion,
//! expected against observed for each failure, the first failure marked.

use std::fmt::Write as _;

use super::run::{PackRun, Verdict};

impl PackRun {
    /// The run as a table of steps and assertions with pass/fail.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let passes = self.trials.iter().filter(|t| t.passed()).count();
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
            Verdict::Passed | Verdict::Failed => {
                let _ = writeln!(
                    out,
                    "  scenario {}: {passes} of {} trial(s) passed, {} required",
                    self.scenario.as_deref().unwrap_or("-"),
                    self.planned_trials,
                    self.required
                );
                self.render_trials(&mut out);
            }
        }
        if let Some(path) = &self.report_path {
            let _ = writeln!(out, "  report: {}", path.display());
        }
        out
    }

    fn render_trials(&self, out: &mut String) {
        let mut marked = false;
        let mut mark = |failed: bool| {
            if failed && !marked {
                marked = true;
                "   <== first failure"
            } else {
                ""
            }
        };
        for trial in &self.trials {
            let status = if trial.passed() { "pass" } else { "FAIL" };
            let _ = writeln!(out, "  trial {} [{status}]", trial.trial + 1);
            for step in &trial.steps {
                let status = if step.passed() { "pass" } else { "FAIL" };
                let restart = if step.restarted {
                    ", after restart"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "    step {} {} [{status}] ({} {}{restart})",
                    step.index + 1,
                    step.label,
                    step.operation.as_str(),
                    step.input_digest,
                );
                for assertion in &step.assertions {
                    let tick = if assertion.passed { "ok  " } else { "FAIL" };
                    let marker = mark(!assertion.passed);
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
            if trial.steps.len() < trial.planned_steps {
                let _ = writeln!(
                    out,
                    "    ({} step(s) not run)",
                    trial.planned_steps - trial.steps.len()
                );
            }
        }
    }
}
