//! The JSON report document: one versioned object per pack run, built from
//! the run, carrying only what the run's table shows (digests for turn
//! content), plus where and when it ran and, when the program said, what
//! the run was for.

use std::time::UNIX_EPOCH;

use super::model::{
    ExtensionEvidence, Harness, Machine, MissingEntry, ReportDocument, ReportVerdict,
    ScenarioReport, ScenarioStats, INTERVAL_WORDS,
};
use super::run::{PackRun, ScenarioRun, Verdict};

/// The version of the report's JSON shape. Bumped whenever a field changes
/// meaning or goes away; new fields do not bump it.
pub const REPORT_SCHEMA_VERSION: u32 = 2;

/// The package whose tests (or program) ran the pack, as cargo names it to
/// the process it runs.
pub(crate) fn package() -> Option<String> {
    std::env::var("CARGO_PKG_NAME")
        .ok()
        .filter(|p| !p.is_empty())
}

/// Names the CI partition a run belongs to (`2/4`, say) in its report, for a
/// suite split over machines: nextest does not tell a test its partition,
/// so the CI job that passes `--partition` sets this too.
pub const PARTITION_ENV: &str = "SYMFONIC_EVALS_PARTITION";

/// This machine's name, from `HOSTNAME` or the system's record of it.
fn host_name() -> Option<String> {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
}

/// Where the run ran, as plain metadata: the host, the partition
/// ([`PARTITION_ENV`]) and nextest's run id and profile when nextest ran it.
pub(crate) fn machine() -> Machine {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    Machine {
        host: host_name(),
        partition: var(PARTITION_ENV),
        nextest_run_id: var("NEXTEST_RUN_ID"),
        nextest_profile: var("NEXTEST_PROFILE"),
    }
}

/// The verdict as reports name it: accepted not-applicable is a verdict of
/// its own, never a pass.
pub(crate) fn report_verdict(run: &PackRun) -> ReportVerdict {
    match run.verdict() {
        Verdict::Passed => ReportVerdict::Passed,
        Verdict::Failed => ReportVerdict::Failed,
        Verdict::NotApplicable(_) if run.accepted_not_applicable() => {
            ReportVerdict::AcceptedNotApplicable
        }
        Verdict::NotApplicable(_) => ReportVerdict::NotApplicable,
        Verdict::InvalidArguments(_) => ReportVerdict::InvalidArguments,
        Verdict::Unbuildable(_) => ReportVerdict::Unbuildable,
    }
}

fn scenario(run: &ScenarioRun) -> ScenarioReport {
    ScenarioReport {
        name: run.name.clone(),
        kind: run.kind,
        passed: run.passed(),
        trials_planned: run.planned_trials,
        trials_required: run.required,
        trials_passed: u32::try_from(run.passes()).unwrap_or(u32::MAX),
        stats: Some(ScenarioStats {
            stats: run.stats(),
            interval: INTERVAL_WORDS.to_owned(),
        }),
        trials: run.trials.clone(),
    }
}

/// The whole report of `run`.
pub(crate) fn document(run: &PackRun) -> ReportDocument {
    let started_unix_ms = run
        .started
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    // Which evidence judged an extension pack's calls: the harness's MCP
    // fixture, or only what the deployment reported.
    let extension_evidence = (run.kind() == crate::PackKind::ExtensionTool).then(|| {
        if run
            .scenarios()
            .iter()
            .any(|s| s.name == "extension/mcp-fixture")
        {
            ExtensionEvidence::McpFixture
        } else {
            ExtensionEvidence::SelfReported
        }
    });
    let mut report = ReportDocument {
        schema_version: REPORT_SCHEMA_VERSION,
        harness: Harness {
            name: env!("CARGO_PKG_NAME").to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        },
        package: package(),
        name: run.name().to_owned(),
        pack: run.kind().name().to_owned(),
        fingerprint: run.fingerprint().to_owned(),
        started_unix_ms,
        duration_us: u64::try_from(run.duration().as_micros()).unwrap_or(u64::MAX),
        verdict: report_verdict(run),
        role: run.role.clone(),
        scenarios: run.scenarios().iter().map(scenario).collect(),
        probes_not_run: run.probes_not_run().to_vec(),
        machine: machine(),
        extension_evidence,
        missing: None,
        errors: None,
        unbuildable: None,
    };
    match run.verdict() {
        Verdict::NotApplicable(missing) => {
            // Missing serializes itself (kind, names, reason in words): the
            // entry is read back from that one form.
            report.missing = Some(
                missing
                    .iter()
                    .map(|m| {
                        serde_json::to_value(m)
                            .and_then(serde_json::from_value)
                            .unwrap_or_else(|_| MissingEntry {
                                reason: m.to_string(),
                                ..MissingEntry::default()
                            })
                    })
                    .collect(),
            );
        }
        Verdict::InvalidArguments(errors) => report.errors = Some(errors.clone()),
        Verdict::Unbuildable(why) => report.unbuildable = Some(why.clone()),
        Verdict::Passed | Verdict::Failed => {}
    }
    report
}
