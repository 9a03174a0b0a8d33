//! The JSON report document: one versioned object per pack run, built from
//! the run, carrying only what the run's table shows (digests for turn
//! content), plus where and when it ran.

use std::time::UNIX_EPOCH;

use serde_json::{json, Value};

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
pub(crate) fn machine() -> Value {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    json!({
        "host": host_name(),
        "partition": var(PARTITION_ENV),
        "nextest_run_id": var("NEXTEST_RUN_ID"),
        "nextest_profile": var("NEXTEST_PROFILE"),
    })
}

/// The verdict's name in reports: accepted not-applicable is a verdict of
/// its own, never a pass.
pub(crate) fn verdict_name(run: &PackRun) -> &'static str {
    match run.verdict() {
        Verdict::Passed => "passed",
        Verdict::Failed => "failed",
        Verdict::NotApplicable(_) if run.accepted_not_applicable() => "accepted_not_applicable",
        Verdict::NotApplicable(_) => "not_applicable",
        Verdict::InvalidArguments(_) => "invalid_arguments",
        Verdict::Unbuildable(_) => "unbuildable",
    }
}

fn scenario(run: &ScenarioRun) -> Value {
    let mut stats = json!(run.stats());
    stats["interval"] = json!("95% Wilson score interval on the per-trial pass rate");
    json!({
        "name": run.name,
        "kind": run.kind,
        "passed": run.passed(),
        "trials_planned": run.planned_trials,
        "trials_required": run.required,
        "trials_passed": run.passes(),
        "stats": stats,
        "trials": run.trials,
    })
}

/// The whole report of `run`.
pub(crate) fn document(run: &PackRun) -> Value {
    let started_unix_ms = run
        .started
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let mut report = json!({
        "schema_version": REPORT_SCHEMA_VERSION,
        "harness": {"name": env!("CARGO_PKG_NAME"), "version": env!("CARGO_PKG_VERSION")},
        "package": package(),
        "name": run.name(),
        "pack": run.kind().name(),
        "fingerprint": run.fingerprint(),
        "started_unix_ms": started_unix_ms,
        "duration_us": u64::try_from(run.duration().as_micros()).unwrap_or(u64::MAX),
        "verdict": verdict_name(run),
        "scenarios": run.scenarios().iter().map(scenario).collect::<Vec<_>>(),
        "probes_not_run": run.probes_not_run(),
        "machine": machine(),
    });
    if run.kind() == crate::PackKind::ExtensionTool {
        // Which evidence judged the calls: the harness's MCP fixture, or
        // only what the deployment reported.
        let fixture = run
            .scenarios()
            .iter()
            .any(|s| s.name == "extension/mcp-fixture");
        report["extension_evidence"] = json!(if fixture {
            "mcp-fixture"
        } else {
            "self-reported"
        });
    }
    match run.verdict() {
        Verdict::NotApplicable(missing) => report["missing"] = json!(missing),
        Verdict::InvalidArguments(errors) => report["errors"] = json!(errors),
        Verdict::Unbuildable(why) => report["unbuildable"] = json!(why),
        Verdict::Passed | Verdict::Failed => {}
    }
    report
}
