//! The report's typed model: the serde types the runner writes and the
//! viewer reads, one set for both, so a field cannot be written under one
//! name and looked for under another.
//!
//! The JSON they make is the report format other languages read (its
//! schema is `protocol/report.schema.json`, checked against these types by
//! a test). Fields only ever get added, each with a default, so a report
//! written by an older build still loads.

use serde::{Deserialize, Serialize};

use crate::packs::probes::ProbeNotRun;
use crate::runner::TrialRun;
use crate::scenario::ScenarioKind;

/// The harness that wrote a report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Harness {
    /// The crate's name.
    #[serde(default)]
    pub name: String,
    /// The crate's version.
    #[serde(default)]
    pub version: String,
}

/// Where a run ran, as plain metadata: the host, the CI partition and
/// nextest's run id and profile when nextest ran it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Machine {
    /// The host's name.
    #[serde(default)]
    pub host: Option<String>,
    /// The CI partition (`2/4`), from `SYMFONIC_EVALS_PARTITION`.
    #[serde(default)]
    pub partition: Option<String>,
    /// nextest's run id.
    #[serde(default)]
    pub nextest_run_id: Option<String>,
    /// nextest's profile.
    #[serde(default)]
    pub nextest_profile: Option<String>,
}

impl Machine {
    /// The host and partition in a few words (empty when neither is known).
    pub fn words(&self) -> String {
        let mut parts = Vec::new();
        if let Some(host) = &self.host {
            parts.push(host.clone());
        }
        if let Some(partition) = &self.partition {
            parts.push(format!("partition {partition}"));
        }
        parts.join(", ")
    }
}

/// The verdict as reports name it: accepted not-applicable is a verdict of
/// its own, never a pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportVerdict {
    /// Every scenario met its policy.
    Passed,
    /// A scenario had too few passing trials.
    Failed,
    /// Not applicable, and the run accepted that.
    AcceptedNotApplicable,
    /// The deployment lacks what the pack needs.
    NotApplicable,
    /// The pack's arguments were refused.
    InvalidArguments,
    /// The deployment could not be built.
    Unbuildable,
    /// A verdict this build does not know (a newer report's).
    #[default]
    #[serde(other)]
    Unknown,
}

impl ReportVerdict {
    /// The verdict's name in reports (`passed`, `failed`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::AcceptedNotApplicable => "accepted_not_applicable",
            Self::NotApplicable => "not_applicable",
            Self::InvalidArguments => "invalid_arguments",
            Self::Unbuildable => "unbuildable",
            Self::Unknown => "unknown",
        }
    }
}

/// The failure a twin is pinned to: where a correct harness must catch it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PinnedCatch {
    /// The scenario (seed or probe) whose first failure it is.
    pub scenario: String,
    /// The step's label.
    pub step: String,
    /// The assertion (or step error) kind.
    pub assertion: String,
}

/// What a run was for, as the program that ran it says: a suite that runs a
/// reference deployment beside deliberately broken twins and correct but
/// unusual variants records which is which, so the overview can show a
/// caught twin as the expected failure it is and an escaped one as the
/// failure it is. Set with [`RunOptions::role`](crate::RunOptions::role).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum RunRole {
    /// The reference deployment: it must pass.
    Reference {
        /// The deployment's name (`helpdesk`).
        deployment: String,
    },
    /// A twin of a deployment with one flaw: it must fail, where `catch`
    /// says.
    Twin {
        /// The deployment it is a twin of.
        deployment: String,
        /// The twin's name (its flaw).
        twin: String,
        /// Where it must be caught.
        catch: PinnedCatch,
    },
    /// A correct deployment configured unusually: it must pass.
    HonestVariant {
        /// The deployment it is a variant of.
        deployment: String,
        /// The variant's name.
        variant: String,
    },
}

impl RunRole {
    /// The deployment the role names.
    pub fn deployment(&self) -> &str {
        match self {
            Self::Reference { deployment }
            | Self::Twin { deployment, .. }
            | Self::HonestVariant { deployment, .. } => deployment,
        }
    }
}

/// A scenario's trial statistics as reports carry them: the estimates,
/// and a sentence naming the interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioStats {
    /// The estimates.
    #[serde(flatten)]
    pub stats: super::TrialStats,
    /// Which interval the bounds are.
    #[serde(default = "interval_words")]
    pub interval: String,
}

fn interval_words() -> String {
    INTERVAL_WORDS.to_owned()
}

/// What the `interval` field of every scenario's statistics says.
pub const INTERVAL_WORDS: &str = "95% Wilson score interval on the per-trial pass rate";

/// One scenario of a report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScenarioReport {
    /// The scenario's name.
    pub name: String,
    /// Seed or probe.
    #[serde(default)]
    pub kind: ScenarioKind,
    /// Whether its policy was met.
    #[serde(default)]
    pub passed: bool,
    /// Trials the policy planned.
    #[serde(default)]
    pub trials_planned: u32,
    /// Trials that had to pass.
    #[serde(default)]
    pub trials_required: u32,
    /// Trials that passed.
    #[serde(default)]
    pub trials_passed: u32,
    /// The estimates (absent in reports from before they were kept).
    #[serde(default)]
    pub stats: Option<ScenarioStats>,
    /// Every trial, in order.
    #[serde(default)]
    pub trials: Vec<TrialRun>,
}

/// One thing the deployment lacks, as the report records it (the kind, the
/// name or capability and tool, and the reason in words).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingEntry {
    /// `capability`, `trait`, `operation` or `contributed_tool`.
    #[serde(default)]
    pub missing: String,
    /// The capability's, trait's or operation's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The contributing capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    /// The contributed tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The reason in words.
    #[serde(default)]
    pub reason: String,
}

/// Which evidence judged an extension pack's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExtensionEvidence {
    /// What the harness's MCP fixture received, beside the deployment's record.
    McpFixture,
    /// Only what the deployment reported.
    SelfReported,
}

/// A pack run's whole report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReportDocument {
    /// The version of this shape ([`REPORT_SCHEMA_VERSION`](crate::REPORT_SCHEMA_VERSION)).
    pub schema_version: u32,
    /// The harness that wrote it.
    #[serde(default)]
    pub harness: Harness,
    /// The package whose tests (or program) ran the pack.
    #[serde(default)]
    pub package: Option<String>,
    /// The run's name.
    pub name: String,
    /// The pack's name.
    pub pack: String,
    /// The definition's fingerprint.
    #[serde(default)]
    pub fingerprint: String,
    /// When it started, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub started_unix_ms: u64,
    /// Its wall time in microseconds.
    #[serde(default)]
    pub duration_us: u64,
    /// The verdict.
    pub verdict: ReportVerdict,
    /// What the run was for, when the program that ran it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<RunRole>,
    /// Every scenario that ran, the seed first.
    #[serde(default)]
    pub scenarios: Vec<ScenarioReport>,
    /// The pack's probes left out, and why.
    #[serde(default)]
    pub probes_not_run: Vec<ProbeNotRun>,
    /// Where it ran.
    #[serde(default)]
    pub machine: Machine,
    /// For the extension pack: which evidence judged the calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_evidence: Option<ExtensionEvidence>,
    /// For a pack not applicable: what the deployment lacks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<MissingEntry>>,
    /// For refused arguments: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Vec<String>>,
    /// For a deployment that did not build: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unbuildable: Option<String>,
}

/// Where a report's first failing step is, in the order the run judged.
#[derive(Debug, Clone, Copy)]
pub struct StepAt<'a> {
    /// The scenario.
    pub scenario: &'a ScenarioReport,
    /// The trial.
    pub trial: &'a TrialRun,
    /// The step.
    pub step: &'a crate::runner::StepRun,
}

impl ReportDocument {
    /// The first failing step, across scenarios, trials and steps in order.
    pub fn first_failing_step(&self) -> Option<StepAt<'_>> {
        self.scenarios.iter().find_map(|scenario| {
            scenario.trials.iter().find_map(|trial| {
                trial
                    .steps
                    .iter()
                    .find(|step| !step.passed())
                    .map(|step| StepAt {
                        scenario,
                        trial,
                        step,
                    })
            })
        })
    }

    /// The viewer anchor of the first failing step.
    pub fn first_failure_anchor(&self) -> Option<String> {
        self.first_failing_step().map(|at| {
            super::anchors::step_anchor(
                &at.scenario.name,
                u64::from(at.trial.trial),
                at.step.index as u64,
            )
        })
    }
}

/// A scenario's estimate as the index keeps it: only for scenarios that ran
/// more than one trial (one trial's interval says nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexEstimate {
    /// The scenario.
    pub scenario: String,
    /// Trials run.
    pub n: u32,
    /// Trials passed.
    pub c: u32,
    /// The policy's required passes.
    pub k: u32,
    /// Unbiased pass^k.
    #[serde(default)]
    pub pass_hat_k: Option<f64>,
    /// Its 95% interval.
    #[serde(default)]
    pub pass_hat_k_interval: Option<(f64, f64)>,
}

/// One line of the report directory's `index.jsonl`: one run, in brief.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexLine {
    /// The executable that ran it (so one build's runs can be told from an
    /// earlier build's).
    #[serde(default)]
    pub binary: Option<String>,
    /// The package that ran it.
    #[serde(default)]
    pub package: Option<String>,
    /// The run's name.
    #[serde(default)]
    pub name: String,
    /// The pack's name.
    #[serde(default)]
    pub pack: String,
    /// The verdict.
    #[serde(default)]
    pub verdict: ReportVerdict,
    /// The definition's fingerprint.
    #[serde(default)]
    pub fingerprint: String,
    /// When it started, in milliseconds since the Unix epoch.
    #[serde(default)]
    pub started_unix_ms: u64,
    /// Its wall time in microseconds.
    #[serde(default)]
    pub duration_us: u64,
    /// The report's file name in the directory.
    #[serde(default)]
    pub report: Option<String>,
    /// Where it ran.
    #[serde(default)]
    pub machine: Machine,
    /// The viewer anchor of its first failing step.
    #[serde(default)]
    pub first_failure: Option<String>,
    /// What the run was for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<RunRole>,
    /// The scenarios that did not meet their policy, in run order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_scenarios: Vec<String>,
    /// The estimates of the scenarios that ran more than one trial.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub estimates: Vec<IndexEstimate>,
}

impl IndexLine {
    /// The line of a report just written to the file `report`.
    pub fn of(document: &ReportDocument, report: Option<String>) -> Self {
        let binary = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()));
        Self {
            binary,
            package: document.package.clone(),
            name: document.name.clone(),
            pack: document.pack.clone(),
            verdict: document.verdict,
            fingerprint: document.fingerprint.clone(),
            started_unix_ms: document.started_unix_ms,
            duration_us: document.duration_us,
            report,
            machine: document.machine.clone(),
            first_failure: document.first_failure_anchor(),
            role: document.role.clone(),
            failed_scenarios: document
                .scenarios
                .iter()
                .filter(|s| !s.passed)
                .map(|s| s.name.clone())
                .collect(),
            estimates: document
                .scenarios
                .iter()
                .filter(|s| s.trials.len() > 1)
                .map(|s| {
                    let n = u32::try_from(s.trials.len()).unwrap_or(u32::MAX);
                    let stats = super::TrialStats::new(n, s.trials_passed, s.trials_required);
                    IndexEstimate {
                        scenario: s.name.clone(),
                        n,
                        c: stats.c,
                        k: stats.k,
                        pass_hat_k: stats.pass_hat_k,
                        pass_hat_k_interval: stats.pass_hat_k_interval,
                    }
                })
                .collect(),
        }
    }
}
