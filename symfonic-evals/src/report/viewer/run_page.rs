//! The page of one pack run, from its report: the verdict and where it ran,
//! the first failure in a box, every scenario by trial with its estimates,
//! the probes not run, then every scenario's trials step by step (the
//! failed ones first and open), each step with its assertions and the
//! calls the MCP fixture received.

use maud::{html, Markup};

use super::super::anchors::{id_of, millis, scenario_anchor, step_anchor, trial_anchor, utc};
use super::super::model::{ExtensionEvidence, ReportDocument, ScenarioReport, ScenarioStats};
use super::{layout, verdict_badge, VIEWER_INDEX_FILE};
use crate::ledger::LedgerCounts;
use crate::runner::{FixtureCallSeen, StepRun, TrialRun};
use crate::scenario::ScenarioKind;

fn kind_name(kind: ScenarioKind) -> &'static str {
    match kind {
        ScenarioKind::Seed => "seed",
        ScenarioKind::Probe => "probe",
    }
}

/// The estimates in a phrase, as the grid shows them.
pub(super) fn stats_text(stats: Option<&ScenarioStats>) -> String {
    let Some(stats) = stats.map(|s| &s.stats) else {
        return String::new();
    };
    let k = stats.k;
    let estimate = |value: Option<f64>, interval: Option<(f64, f64)>| match (value, interval) {
        (Some(v), Some((lo, hi))) => format!("{v:.2} [{lo:.2}, {hi:.2}]"),
        (Some(v), None) => format!("{v:.2}"),
        (None, _) => "n/a".to_owned(),
    };
    if k == 1 {
        // pass^1 and pass@1 are both the per-trial rate.
        return format!(
            "pass^1 = pass@1 = p {}",
            estimate(stats.rate, stats.rate_interval)
        );
    }
    format!(
        "pass^{k} {}, pass@{k} {}, p {}",
        estimate(stats.pass_hat_k, stats.pass_hat_k_interval),
        estimate(stats.pass_at_k, stats.pass_at_k_interval),
        estimate(stats.rate, stats.rate_interval),
    )
}

/// Scenarios with the failed ones first, each group in run order.
fn failures_first(document: &ReportDocument) -> Vec<&ScenarioReport> {
    let (failed, passed): (Vec<_>, Vec<_>) = document.scenarios.iter().partition(|s| !s.passed);
    failed.into_iter().chain(passed).collect()
}

/// The page of one pack run, from its report.
pub(crate) fn run_page(document: &ReportDocument) -> String {
    let verdict = document.verdict.name();
    let machine = document.machine.words();
    let first = document.first_failure_anchor();
    let body = html! {
        header id=(id_of(&["run"])) {
            a href=(VIEWER_INDEX_FILE) { "← all runs" }
            h1 { (verdict_badge(verdict)) " " (document.name) }
            div {
                "pack " code { (document.pack) } " · package "
                code { (document.package.as_deref().unwrap_or("-")) }
                " · started " (utc(document.started_unix_ms)) " · " (millis(document.duration_us))
                @if !machine.is_empty() { " · on " (machine) }
            }
            div class="meta" {
                "fingerprint " code { (document.fingerprint) } " · harness "
                (document.harness.name) " " (document.harness.version)
                " · schema " (document.schema_version)
            }
        }
        main {
            (verdict_detail(document))
            @match document.extension_evidence {
                Some(ExtensionEvidence::McpFixture) => {
                    p class="meta" {
                        "extension calls judged by what the harness's MCP fixture received, \
                         beside the deployment's own record"
                    }
                }
                Some(ExtensionEvidence::SelfReported) => {
                    p class="meta" {
                        "extension calls judged by the deployment's own record (it binds no MCP fixture)"
                    }
                }
                None => {}
            }
            (first_failure_box(document))
            (grid(document))
            (probes_not_run(document))
            label class="filter" { input type="checkbox" id="only-failed"; " failed steps only" }
            @for scenario in failures_first(document) {
                (scenario_section(scenario, first.as_deref()))
            }
        }
    };
    layout(
        &format!("{verdict}: {}", document.name),
        "",
        super::assets::SCRIPT,
        &body,
    )
}

fn verdict_detail(document: &ReportDocument) -> Markup {
    html! {
        @if let Some(missing) = document.missing.as_ref().filter(|m| !m.is_empty()) {
            h2 { "The deployment cannot be judged by this pack:" }
            ul { @for item in missing { li { code { (item.reason) } } } }
        }
        @if let Some(errors) = document.errors.as_ref().filter(|e| !e.is_empty()) {
            h2 { "The pack's arguments are invalid:" }
            ul { @for error in errors { li { code { (error) } } } }
        }
        @if let Some(why) = &document.unbuildable {
            h2 { "The deployment did not build" }
            pre { (why) }
        }
    }
}

fn first_failure_box(document: &ReportDocument) -> Markup {
    let Some(at) = document.first_failing_step() else {
        return html! {};
    };
    let anchor = step_anchor(
        &at.scenario.name,
        u64::from(at.trial.trial),
        at.step.index as u64,
    );
    let (what, expected, observed) = at
        .step
        .assertions
        .iter()
        .find(|a| !a.passed)
        .map(|a| {
            (
                a.description.as_str(),
                a.expected.as_str(),
                a.observed.as_str(),
            )
        })
        .or_else(|| {
            at.step
                .error
                .as_ref()
                .map(|e| (e.kind.as_str(), e.expected.as_str(), e.observed.as_str()))
        })
        .unwrap_or_default();
    html! {
        div id="failure" {
            b { "First failure:" } " " (kind_name(at.scenario.kind)) " "
            code { (at.scenario.name) } ", trial " (at.trial.trial + 1) ", step "
            (at.step.index + 1) " " code { (at.step.label) } ": " b { (what) }
            " — " a id="first-failure-link" href={ "#" (anchor) } { "go to step" }
            table {
                tr { th { "expected" } td { pre { (expected) } } }
                tr { th { "observed" } td { pre { (observed) } } }
            }
        }
    }
}

fn grid(document: &ReportDocument) -> Markup {
    let scenarios = failures_first(document);
    if scenarios.is_empty() {
        return html! {};
    }
    let columns = scenarios
        .iter()
        .map(|s| {
            s.trials_planned
                .max(u32::try_from(s.trials.len()).unwrap_or(u32::MAX))
        })
        .max()
        .unwrap_or(0);
    html! {
        h2 { "Scenarios by trial" }
        table class="grid" {
            tr {
                th { "scenario" } th { "kind" }
                @for trial in 1..=columns { th { (trial) } }
                th { "k of n" } th { "estimates (95% Wilson on the per-trial rate)" }
            }
            @for scenario in scenarios {
                tr {
                    td { a href={ "#" (scenario_anchor(&scenario.name)) } { (scenario.name) } }
                    td { (kind_name(scenario.kind)) }
                    @for column in 0..columns {
                        td {
                            @match scenario.trials.iter().find(|t| t.trial == column) {
                                None => { span class="cell none" title="not run" { "·" } }
                                Some(t) => {
                                    @let (class, mark) = if t.passed() { ("cell ok", "✓") } else { ("cell bad", "✗") };
                                    a class=(class) href={ "#" (trial_anchor(&scenario.name, u64::from(column))) } { (mark) }
                                }
                            }
                        }
                    }
                    td {
                        @if scenario.passed { "pass" } @else { b { "FAIL" } }
                        " " (scenario.trials_passed) " of " (scenario.trials_planned)
                        " passed, " (scenario.trials_required) " required"
                    }
                    td { (stats_text(scenario.stats.as_ref())) }
                }
            }
        }
    }
}

fn probes_not_run(document: &ReportDocument) -> Markup {
    let ran = document
        .scenarios
        .iter()
        .filter(|s| s.kind == ScenarioKind::Probe)
        .count();
    let probes = &document.probes_not_run;
    html! {
        p class="coverage" { "Coverage: " (ran) " of " (ran + probes.len()) " probe(s) ran." }
        @if !probes.is_empty() {
            h2 { "Probes not run" }
            table {
                tr { th { "probe" } th { "reason" } }
                @for probe in probes {
                    tr { td { code { (probe.probe) } } td { (probe.reason.to_string()) } }
                }
            }
        }
    }
}

fn scenario_section(scenario: &ScenarioReport, first: Option<&str>) -> Markup {
    let passed = scenario.passed;
    html! {
        section class=(if passed { "scenario passed hide-ok" } else { "scenario failed" })
            id=(scenario_anchor(&scenario.name)) {
            h2 {
                (if passed { "pass" } else { "FAIL" }) " " (kind_name(scenario.kind)) " "
                code { (scenario.name) } " "
                span class="meta" {
                    (scenario.trials_passed) " of " (scenario.trials_planned) " trial(s) passed, "
                    (scenario.trials_required) " required; " (stats_text(scenario.stats.as_ref()))
                }
            }
            @for trial in &scenario.trials {
                (trial_section(&scenario.name, trial, first))
            }
        }
    }
}

fn trial_section(scenario: &str, trial: &TrialRun, first: Option<&str>) -> Markup {
    let passed = trial.passed();
    let mut before = LedgerCounts::default();
    let steps: Vec<Markup> = trial
        .steps
        .iter()
        .map(|step| {
            let markup = step_section(scenario, u64::from(trial.trial), step, before, first);
            before = step.ledger;
            markup
        })
        .collect();
    html! {
        details class=(if passed { "trial passed hide-ok" } else { "trial failed" })
            id=(trial_anchor(scenario, u64::from(trial.trial))) open[!passed] {
            summary {
                "trial " (trial.trial + 1) " " @if passed { "pass" } @else { b { "FAIL" } }
                " · " (trial.steps.len()) " step(s) of " (trial.planned_steps) " planned · "
                (millis(u64::try_from(trial.duration.as_micros()).unwrap_or(u64::MAX)))
            }
            @for step in steps { (step) }
            @for note in &trial.notes { p class="meta" { "note: " (note) } }
            @if !trial.finished && trial.steps.len() < trial.planned_steps {
                p class="meta" { (trial.planned_steps - trial.steps.len()) " step(s) not run" }
            }
        }
    }
}

fn step_section(
    scenario: &str,
    trial: u64,
    step: &StepRun,
    before: LedgerCounts,
    first: Option<&str>,
) -> Markup {
    let anchor = step_anchor(scenario, trial, step.index as u64);
    let passed = step.passed();
    let after = step.ledger;
    let role = serde_json::to_value(step.role)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    html! {
        div class=(if passed { "step passed hide-ok" } else { "step failed" }) id=(anchor) {
            div class="step-head" {
                a href={ "#" (anchor) } { "step " (step.index + 1) } " " b { (step.label) }
                " [" (if passed { "pass" } else { "FAIL" }) "]"
                @if first == Some(anchor.as_str()) { " " span class="first" { "first failure" } }
            }
            div class="meta" {
                (step.operation.as_str()) " " code { (step.input_digest) } " by " (role)
                " in " code { (step.conversation) }
                @if let Some(digest) = &step.state_digest { " · state " code { (digest) } }
                @if step.restarted { " · " span class="badge" { "after restart" } }
                @if let (true, Some(how)) = (step.restarted, &step.warm_start) {
                    " · " span class="badge" { (how) }
                }
                " · ledger attempts/effects/duplicates " (before.attempts) "/" (before.effects) "/"
                (before.duplicates) " → " (after.attempts) "/" (after.effects) "/" (after.duplicates)
                " · " (millis(u64::try_from(step.duration.as_micros()).unwrap_or(u64::MAX)))
            }
            @if !step.assertions.is_empty() || step.error.is_some() {
                table class="assertions" {
                    tr { th {} th { "assertion" } th { "expected" } th { "observed" } }
                    @for assertion in &step.assertions {
                        tr class=(if assertion.passed { "hide-ok" } else { "bad" }) {
                            td { @if assertion.passed { span class="cell ok" { "✓" } } @else { span class="cell bad" { "✗" } } }
                            td {
                                code { (assertion.description) }
                                @if assertion.kind.contains("Witness") || assertion.kind.contains("Fixture") {
                                    " " span class="badge" { "witness" }
                                }
                                @if assertion.malformed { " " span class="badge" { "malformed evidence" } }
                            }
                            td { pre { (assertion.expected) } }
                            td { pre { (assertion.observed) } }
                        }
                    }
                    @if let Some(error) = &step.error {
                        tr class="bad" {
                            td { span class="cell bad" { "✗" } }
                            td { "step error " code { (error.kind.as_str()) } }
                            td { pre { (error.expected) } }
                            td {
                                pre { (error.observed) }
                                // The deployment's exception, as its
                                // companion reported it (already report-safe).
                                @if let Some(exception) = &error.exception {
                                    pre class="traceback" { (exception.traceback().join("\n")) }
                                }
                            }
                        }
                    }
                }
            }
            (fixture_calls(&step.fixture_calls))
        }
    }
}

/// The calls the harness's MCP fixture received during a step, by digest.
fn fixture_calls(calls: &[FixtureCallSeen]) -> Markup {
    if calls.is_empty() {
        return html! {};
    }
    html! {
        table class="assertions" {
            tr { th {} th { "MCP fixture received" } th { "arguments as received" } th { "result nonce" } }
            @for call in calls {
                tr {
                    td { span class="badge" { "witness" } }
                    td { code { (call.tool) } @if call.failed { " (answered with a tool error)" } }
                    td { code { (call.arguments_digest) } }
                    td { code { (call.nonce_digest) } }
                }
            }
        }
    }
}
