//! What one pack run produced: its verdict, every scenario's trials, and the
//! first thing that went wrong.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::capability::Missing;
use crate::packs::probes::ProbeNotRun;
use crate::packs::PackKind;
use crate::runner::TrialRun;
use crate::scenario::ScenarioKind;

/// The pack's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// Every scenario's policy was met.
    Passed,
    /// A scenario had too few passing trials.
    Failed,
    /// The deployment lacks what the pack needs.
    NotApplicable(Vec<Missing>),
    /// The pack's arguments cannot make a meaningful scenario.
    InvalidArguments(Vec<String>),
    /// The deployment could not even be built to declare its capabilities.
    Unbuildable(String),
}

/// The first thing that went wrong, for tests that assert a broken
/// deployment fails for the right reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The scenario: the seed scenario's name, or a probe's.
    pub scenario: String,
    /// Zero-based trial.
    pub trial: u32,
    /// Zero-based step.
    pub step: usize,
    /// The step's label ("blocked", "replay", ...).
    pub step_label: String,
    /// The assertion kind or step error kind ("SideEffectCount", "ExpectedError", ...).
    pub assertion: String,
    /// The assertion with its parameters.
    pub description: String,
    /// What was required.
    pub expected: String,
    /// What the evidence showed (digests for turn content).
    pub observed: String,
}

/// One scenario's trials within a pack run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScenarioRun {
    /// The scenario's name.
    pub name: String,
    /// Seed or probe.
    pub kind: ScenarioKind,
    /// Every trial that ran, in trial order.
    pub trials: Vec<TrialRun>,
    /// Trials the policy planned.
    pub planned_trials: u32,
    /// Trials that had to pass.
    pub required: u32,
}

impl ScenarioRun {
    /// How many trials passed.
    pub fn passes(&self) -> usize {
        self.trials.iter().filter(|t| t.passed()).count()
    }

    /// Whether enough trials passed.
    pub fn passed(&self) -> bool {
        self.passes() >= self.required as usize
    }

    /// The trials as unbiased pass@k and pass^k estimates with 95%
    /// intervals, `k` being the policy's required passes (see
    /// [`TrialStats`](crate::TrialStats)).
    pub fn stats(&self) -> super::TrialStats {
        let n = u32::try_from(self.trials.len()).unwrap_or(u32::MAX);
        let c = u32::try_from(self.passes()).unwrap_or(u32::MAX);
        super::TrialStats::new(n, c, self.required)
    }
}

/// Everything one pack run produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PackRun {
    pub(crate) name: String,
    pub(crate) kind: PackKind,
    pub(crate) fingerprint: String,
    pub(crate) verdict: Verdict,
    pub(crate) scenarios: Vec<ScenarioRun>,
    /// The pack's probes left out of the run, and why (a report from
    /// before the list was kept reads as none).
    #[serde(default)]
    pub(crate) probes_not_run: Vec<ProbeNotRun>,
    pub(crate) accept_not_applicable: bool,
    pub(crate) started: SystemTime,
    pub(crate) duration: Duration,
    pub(crate) report_path: Option<PathBuf>,
    /// The run's page in the evidence viewer, if it could be written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) viewer_path: Option<PathBuf>,
    /// Made in a child serving another run (see
    /// [`served_elsewhere`](Self::served_elsewhere)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) elsewhere: bool,
    /// What the run was for, as [`RunOptions::role`](crate::RunOptions::role) said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) role: Option<super::RunRole>,
}

impl PackRun {
    /// What `run_pack` returns in a child started to serve another pack
    /// run: nothing ran here, and nothing is reported.
    pub(crate) fn not_run_here(name: &str, definition: &crate::PackDefinition) -> Self {
        Self {
            name: name.to_owned(),
            kind: definition.kind(),
            fingerprint: definition.fingerprint(),
            verdict: Verdict::Passed,
            scenarios: Vec::new(),
            probes_not_run: Vec::new(),
            accept_not_applicable: false,
            started: SystemTime::now(),
            duration: Duration::ZERO,
            report_path: None,
            viewer_path: None,
            elsewhere: true,
            role: None,
        }
    }

    /// Whether this run was served elsewhere. Under the default process
    /// isolation a child re-runs the test that started it up to the
    /// `run_pack` call it serves. A run it passes on the way comes back as
    /// the parent made it when the parent made it earlier on the same
    /// thread; any other (one the parent made on another thread, say)
    /// comes back served elsewhere: verdict [`Passed`](Verdict::Passed), no
    /// scenarios, no report. The real run is the parent's. A hand-written
    /// test that inspects a run (counts its scenarios, writes its results
    /// to a file) must leave such a run alone:
    ///
    /// ```no_run
    /// # fn check(run: symfonic_evals::PackRun) {
    /// if run.served_elsewhere() {
    ///     return; // the parent process judges and records this run
    /// }
    /// assert_eq!(run.scenarios().len(), 4);
    /// # }
    /// ```
    pub fn served_elsewhere(&self) -> bool {
        self.elsewhere
    }

    /// The name the run was given (usually the annotated function's path).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Which pack ran.
    pub fn kind(&self) -> PackKind {
        self.kind
    }

    /// The fingerprint of the definition that ran (see
    /// [`PackDefinition::fingerprint`](crate::PackDefinition::fingerprint)).
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Wall time of the whole run, every scenario's trials included.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// Whether the pack was not applicable and the run accepted that: a
    /// verdict of its own, never a pass.
    pub fn accepted_not_applicable(&self) -> bool {
        self.accept_not_applicable && matches!(self.verdict, Verdict::NotApplicable(_))
    }

    /// The verdict.
    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }

    /// What the run was for, when the program that ran it said (see
    /// [`RunOptions::role`](crate::RunOptions::role)).
    pub fn role(&self) -> Option<&super::RunRole> {
        self.role.as_ref()
    }

    /// Whether the verdict is a pass.
    pub fn passed(&self) -> bool {
        self.verdict == Verdict::Passed
    }

    /// Every scenario that ran: the seed scenario first, then the probes.
    pub fn scenarios(&self) -> &[ScenarioRun] {
        &self.scenarios
    }

    /// The pack's probes that did not run, in the order the pack lists
    /// them, each with why (see
    /// [`PackDefinition::probes_not_run`](crate::PackDefinition::probes_not_run)).
    /// Empty when every probe ran, and when the pack ran no scenario at all
    /// (its verdict says why).
    pub fn probes_not_run(&self) -> &[ProbeNotRun] {
        &self.probes_not_run
    }

    /// The seed scenario's run, if the pack ran at all.
    pub fn seed(&self) -> Option<&ScenarioRun> {
        self.scenarios.iter().find(|s| s.kind == ScenarioKind::Seed)
    }

    /// The names of the scenarios that did not meet their policy, in the
    /// order they ran: what a twin's pinned set is compared with.
    pub fn failed_scenarios(&self) -> Vec<&str> {
        self.scenarios
            .iter()
            .filter(|s| !s.passed())
            .map(|s| s.name.as_str())
            .collect()
    }

    /// The scenario called `name`, if it ran.
    pub fn scenario(&self, name: &str) -> Option<&ScenarioRun> {
        self.scenarios.iter().find(|s| s.name == name)
    }

    /// Where the JSON report was written, if it could be.
    pub fn report_path(&self) -> Option<&Path> {
        self.report_path.as_deref()
    }

    /// The run's page in the evidence viewer (beside the JSON report, with
    /// the directory's `index.html`), if it could be written.
    pub fn viewer_path(&self) -> Option<&Path> {
        self.viewer_path.as_deref()
    }

    /// Where the first failure is shown in the evidence viewer: the run's
    /// page and the anchor of the failing step (`page.html#anchor`).
    pub fn viewer_link(&self) -> Option<String> {
        let page = self.viewer_path.as_deref()?;
        let link = match self.first_failure() {
            Some(f) => format!(
                "{}#{}",
                page.display(),
                super::anchors::step_anchor(&f.scenario, u64::from(f.trial), f.step as u64)
            ),
            None => page.display().to_string(),
        };
        Some(link)
    }

    /// The first failed assertion or broken step, across scenarios and
    /// trials in order.
    pub fn first_failure(&self) -> Option<Failure> {
        self.failures().into_iter().next()
    }

    /// Every failed assertion and broken step, in order.
    pub fn failures(&self) -> Vec<Failure> {
        let mut out = Vec::new();
        for scenario in &self.scenarios {
            for trial in &scenario.trials {
                for step in &trial.steps {
                    let failure = |assertion: &str,
                                   description: String,
                                   expected: &str,
                                   observed: &str| Failure {
                        scenario: scenario.name.clone(),
                        trial: trial.trial,
                        step: step.index,
                        step_label: step.label.clone(),
                        assertion: assertion.to_owned(),
                        description,
                        expected: expected.to_owned(),
                        observed: observed.to_owned(),
                    };
                    // A malformed check is reported once, as the step's error.
                    for a in step.assertions.iter().filter(|a| !a.passed && !a.malformed) {
                        out.push(failure(
                            &a.kind,
                            a.description.clone(),
                            &a.expected,
                            &a.observed,
                        ));
                    }
                    if let Some(e) = &step.error {
                        out.push(failure(
                            e.kind.as_str(),
                            e.kind.as_str().to_owned(),
                            &e.expected,
                            &e.observed,
                        ));
                    }
                }
            }
        }
        out
    }

    /// Panics with a readable account unless the pack passed (or was not
    /// applicable and the run accepts that, in which case a note is printed).
    ///
    /// # Panics
    ///
    /// On any verdict but a pass. The panic's first line says where the run
    /// first failed, and the panic is located at the caller (the adopter's
    /// test), not in the harness.
    #[track_caller]
    pub fn assert_passed(&self) {
        match &self.verdict {
            Verdict::Passed => {}
            Verdict::NotApplicable(_) if self.accept_not_applicable => {
                eprintln!("{}", self.render());
            }
            _ => panic!("{}", self.render()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PackDefinition, PackKind};

    #[test]
    fn a_run_served_elsewhere_says_so_and_a_real_one_does_not() {
        let definition = PackDefinition::from_arguments(
            PackKind::ExtensionTool,
            r#"{"prompt":"p","tool_name":"t"}"#,
        )
        .unwrap();
        let elsewhere = PackRun::not_run_here("run.elsewhere", &definition);
        assert!(elsewhere.served_elsewhere());
        assert!(elsewhere.passed() && elsewhere.scenarios().is_empty());
        assert!(elsewhere.probes_not_run().is_empty());
        let json = serde_json::to_value(&elsewhere).unwrap();
        let back: PackRun = serde_json::from_value(json.clone()).unwrap();
        assert!(back.served_elsewhere());

        // A run judged here (or one recorded before the mark existed) is not.
        let mut judged = json;
        judged.as_object_mut().unwrap().remove("elsewhere");
        let judged: PackRun = serde_json::from_value(judged).unwrap();
        assert!(!judged.served_elsewhere());
        let on_a_thread = crate::RunOptions {
            isolation: crate::Isolation::Thread,
            ..crate::RunOptions::default()
        };
        let run = crate::run_pack("run.not_applicable", &definition, &on_a_thread, |_| NoTools);
        assert!(matches!(run.verdict(), Verdict::NotApplicable(_)));
        assert!(!run.served_elsewhere());
    }

    struct NoTools;

    impl crate::Target for NoTools {
        fn capabilities(&self) -> crate::CapabilityEvidence {
            crate::CapabilityEvidence::new()
        }

        fn run_turn(
            &mut self,
            _: &crate::PromptRequest,
        ) -> Result<crate::TurnRecord, crate::TurnError> {
            Ok(crate::TurnRecord::builder().build())
        }
    }
}
