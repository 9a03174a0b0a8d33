//! The overview of a report directory: what one look should tell.
//!
//! A verdict line first ("references 8/8 passed, twins 116/116 caught,
//! honest variants 13/13 passed", from the role each run recorded), then a
//! matrix of deployment by pack, grouped by role: a twin caught where it is
//! pinned is the expected failure it is and shows as caught, an escaped
//! twin (or one caught elsewhere) as the failure it is. Every cell links to
//! its run's page (at its first failure), shows the test's trend over its
//! latest runs, and pass^k with its interval where more than one trial ran.
//! Filters (pack, deployment, outcome, probe) and a search over names hide
//! rows in place; a legend gives each probe's purpose and its pack's
//! contract page.

use std::collections::{BTreeMap, BTreeSet};

use maud::{html, Markup};

use super::super::index_digest::Point;
use super::super::model::{IndexLine, ReportVerdict, RunRole};
use super::catalog::{contract_page, pack_named, purpose_of, purposes, PACKS};
use super::{assets, layout, trend};

/// One report as the overview shows it: its page, its latest index line
/// and its latest runs, oldest first.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The run's page in the directory.
    pub(crate) page: String,
    /// Its latest line.
    pub(crate) line: IndexLine,
    /// Its latest runs (the latest included).
    pub(crate) history: Vec<Point>,
}

/// What a run came to, given what it was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Outcome {
    /// A failure: a reference or variant that did not pass, a twin that
    /// escaped or was caught elsewhere, a run that failed.
    Failed,
    /// Neither a pass nor a failure (not applicable, say).
    Other,
    /// A twin caught where it is pinned: the expected failure.
    Caught,
    /// Passed, as it must.
    Passed,
}

impl Outcome {
    /// The outcome in a word (also the filter's value and the CSS class).
    pub(crate) fn word(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Caught => "caught",
            Self::Failed => "failed",
            Self::Other => "other",
        }
    }

    /// What `verdict` (with these failed scenarios) means for a run of `role`.
    pub(crate) fn of(
        role: Option<&RunRole>,
        verdict: ReportVerdict,
        failed_scenarios: &[String],
    ) -> Self {
        match (role, verdict) {
            (Some(RunRole::Twin { catch, .. }), ReportVerdict::Failed) => {
                if failed_scenarios.contains(&catch.scenario) {
                    Self::Caught
                } else {
                    Self::Failed
                }
            }
            (Some(RunRole::Twin { .. }), ReportVerdict::Passed) => Self::Failed,
            (Some(RunRole::Twin { .. }), _) => Self::Other,
            (_, ReportVerdict::Passed) => Self::Passed,
            (Some(_), _) | (None, ReportVerdict::Failed) => Self::Failed,
            (None, _) => Self::Other,
        }
    }

    /// The cell's label for a run of `role`.
    fn label(self, role: Option<&RunRole>, verdict: ReportVerdict) -> String {
        match (self, role) {
            (Self::Caught, _) => "caught".to_owned(),
            (Self::Failed, Some(RunRole::Twin { .. })) if verdict == ReportVerdict::Passed => {
                "ESCAPED".to_owned()
            }
            (Self::Failed, Some(RunRole::Twin { .. })) => "caught elsewhere".to_owned(),
            (Self::Failed, _) => "FAILED".to_owned(),
            (Self::Passed, _) => "passed".to_owned(),
            (Self::Other, _) => verdict.name().replace('_', " "),
        }
    }
}

impl Entry {
    fn outcome(&self) -> Outcome {
        Outcome::of(
            self.line.role.as_ref(),
            self.line.verdict,
            &self.line.failed_scenarios,
        )
    }

    fn trend(&self) -> Vec<(Outcome, u64)> {
        self.history
            .iter()
            .map(|p| {
                let outcome = Outcome::of(self.line.role.as_ref(), p.verdict, &p.failed_scenarios);
                (outcome, p.duration_us)
            })
            .collect()
    }

    /// Which group and row of the matrix the run is a cell of.
    fn place(&self) -> (Group, String, String) {
        match &self.line.role {
            Some(RunRole::Reference { deployment }) => {
                (Group::References, deployment.clone(), deployment.clone())
            }
            Some(RunRole::Twin {
                deployment, twin, ..
            }) => (
                Group::Twins(deployment.clone()),
                format!("{deployment} twin {twin}"),
                deployment.clone(),
            ),
            Some(RunRole::HonestVariant {
                deployment,
                variant,
            }) => (
                Group::Honest,
                format!("{deployment} variant {variant}"),
                deployment.clone(),
            ),
            None => (
                Group::Other,
                self.line.name.clone(),
                self.line.package.clone().unwrap_or_default(),
            ),
        }
    }
}

/// A group of the matrix's rows, in the order shown.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    References,
    Twins(String),
    Honest,
    Other,
}

impl Group {
    fn title(&self) -> String {
        match self {
            Self::References => "References (must pass)".to_owned(),
            Self::Twins(deployment) => {
                format!("Twins of {deployment} (must be caught where pinned)")
            }
            Self::Honest => "Honest variants (must pass)".to_owned(),
            Self::Other => "Runs".to_owned(),
        }
    }
}

/// A tally: how many were good of how many.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    good: usize,
    total: usize,
}

impl Tally {
    fn add(&mut self, good: bool) {
        self.total += 1;
        self.good += usize::from(good);
    }
}

/// The verdict line: references passed, twins caught, honest variants
/// passed (a variant passes when every pack it ran passed), and runs with
/// no role; whether all of it is good.
pub(crate) fn verdict_line(entries: &[Entry]) -> (String, bool) {
    let (mut references, mut twins, mut others) =
        (Tally::default(), Tally::default(), Tally::default());
    let mut variants: BTreeMap<&str, bool> = BTreeMap::new();
    for entry in entries {
        let outcome = entry.outcome();
        match &entry.line.role {
            Some(RunRole::Reference { .. }) => references.add(outcome == Outcome::Passed),
            Some(RunRole::Twin { .. }) => twins.add(outcome == Outcome::Caught),
            Some(RunRole::HonestVariant { variant, .. }) => {
                *variants.entry(variant).or_insert(true) &= outcome == Outcome::Passed;
            }
            None => others.add(outcome == Outcome::Passed),
        }
    }
    let honest = Tally {
        good: variants.values().filter(|passed| **passed).count(),
        total: variants.len(),
    };
    let mut parts = Vec::new();
    for (tally, what, done) in [
        (references, "references", "passed"),
        (twins, "twins", "caught"),
        (honest, "honest variants", "passed"),
        (others, "runs", "passed"),
    ] {
        if tally.total > 0 {
            parts.push(format!("{what} {}/{} {done}", tally.good, tally.total));
        }
    }
    let good = [references, twins, honest, others]
        .iter()
        .all(|t| t.good == t.total);
    if parts.is_empty() {
        return ("no runs yet".to_owned(), true);
    }
    (parts.join(", "), good)
}

/// One row of the matrix: its cells by pack.
struct Row<'a> {
    label: String,
    deployment: String,
    cells: BTreeMap<usize, &'a Entry>,
}

impl Row<'_> {
    fn outcomes(&self) -> BTreeSet<Outcome> {
        self.cells.values().map(|e| e.outcome()).collect()
    }

    /// The probes the row's runs bear on: where a twin is pinned, and every
    /// scenario that failed.
    fn probes(&self) -> BTreeSet<&str> {
        let mut probes = BTreeSet::new();
        for entry in self.cells.values() {
            if let Some(RunRole::Twin { catch, .. }) = &entry.line.role {
                probes.insert(catch.scenario.as_str());
            }
            probes.extend(entry.line.failed_scenarios.iter().map(String::as_str));
        }
        probes
    }
}

/// The column of a pack: the known packs in order, then any other.
fn column_of(pack: &str, extra: &mut Vec<String>) -> usize {
    if let Some(at) = PACKS.iter().position(|k| k.name() == pack) {
        return at;
    }
    let at = extra.iter().position(|p| p == pack).unwrap_or_else(|| {
        extra.push(pack.to_owned());
        extra.len() - 1
    });
    PACKS.len() + at
}

/// The overview page of `entries`.
pub(crate) fn page(entries: Vec<Entry>) -> String {
    let mut extra_packs = Vec::new();
    let mut groups: BTreeMap<Group, BTreeMap<String, Row<'_>>> = BTreeMap::new();
    for entry in &entries {
        let (group, label, deployment) = entry.place();
        let column = column_of(&entry.line.pack, &mut extra_packs);
        let rows = groups.entry(group).or_default();
        // The same test from another machine or directory (a merged
        // viewer): a row of its own, named by where it ran, else by its
        // page (unique in the directory).
        let machine = entry.line.machine.words();
        let label = [
            label.clone(),
            format!("{label} ({machine})"),
            format!("{label} ({})", entry.page),
        ]
        .into_iter()
        .find(|candidate| {
            rows.get(candidate)
                .is_none_or(|row| !row.cells.contains_key(&column))
        })
        .unwrap_or_else(|| entry.page.clone());
        rows.entry(label.clone())
            .or_insert_with(|| Row {
                label,
                deployment,
                cells: BTreeMap::new(),
            })
            .cells
            .insert(column, entry);
    }
    let columns: Vec<(usize, String)> = PACKS
        .iter()
        .map(|k| k.name().to_owned())
        .chain(extra_packs)
        .enumerate()
        .filter(|(at, _)| {
            groups
                .values()
                .flat_map(|rows| rows.values())
                .any(|r| r.cells.contains_key(at))
        })
        .collect();
    let rows: usize = groups.values().map(BTreeMap::len).sum();
    let (line, good) = verdict_line(&entries);
    let deployments: BTreeSet<&str> = groups
        .values()
        .flat_map(|rows| rows.values())
        .map(|r| r.deployment.as_str())
        .filter(|d| !d.is_empty())
        .collect();
    let probes: BTreeSet<&str> = groups
        .values()
        .flat_map(|rows| rows.values())
        .flat_map(Row::probes)
        .collect();
    let body = html! {
        header {
            h1 { "Pack runs" }
            div id="verdict-line" class=(if good { "all-good" } else { "not-good" }) { (line) }
            div {
                (entries.len()) " run(s) in " (rows) " row(s); " span id="shown" { (rows) } " shown"
            }
        }
        main {
            (filters(&columns, &deployments, &probes))
            @for (group, rows) in &groups {
                (group_table(group, rows, &columns))
            }
            (legend(&columns))
        }
    };
    layout(
        "symfonic-evals: pack runs",
        assets::OVERVIEW_STYLE,
        assets::OVERVIEW_SCRIPT,
        &body,
    )
}

fn filters(
    columns: &[(usize, String)],
    deployments: &BTreeSet<&str>,
    probes: &BTreeSet<&str>,
) -> Markup {
    html! {
        div class="filters" {
            label for="f-search" { "search" }
            input id="f-search" type="search" placeholder="name of a run, twin or variant";
            label for="f-pack" { "pack" }
            select id="f-pack" {
                option value="" { "all" }
                @for (_, pack) in columns { option value=(pack) { (pack) } }
            }
            label for="f-deployment" { "deployment" }
            select id="f-deployment" {
                option value="" { "all" }
                @for deployment in deployments { option value=(deployment) { (deployment) } }
            }
            label for="f-verdict" { "outcome" }
            select id="f-verdict" {
                option value="" { "all" }
                @for outcome in [Outcome::Failed, Outcome::Other, Outcome::Caught, Outcome::Passed] {
                    option value=(outcome.word()) { (outcome.word()) }
                }
            }
            label for="f-probe" { "probe" }
            select id="f-probe" {
                option value="" { "all" }
                @for probe in probes { option value=(probe) { (probe) } }
            }
        }
    }
}

fn group_table(
    group: &Group,
    rows: &BTreeMap<String, Row<'_>>,
    columns: &[(usize, String)],
) -> Markup {
    // Failures first, then by name.
    let mut ordered: Vec<&Row<'_>> = rows.values().collect();
    ordered.sort_by(|a, b| {
        a.outcomes()
            .first()
            .cmp(&b.outcomes().first())
            .then_with(|| a.label.cmp(&b.label))
    });
    let good = rows
        .values()
        .flat_map(|r| r.cells.values())
        .filter(|e| matches!(e.outcome(), Outcome::Passed | Outcome::Caught))
        .count();
    let total: usize = rows.values().map(|r| r.cells.len()).sum();
    html! {
        details class="group" open {
            summary { (group.title()) " · " (good) " of " (total) " as expected" }
            table class="matrix" {
                tr {
                    th { (if *group == Group::Other { "run" } else { "deployment" }) }
                    @for (_, pack) in columns { th { (pack) } }
                }
                @for row in ordered {
                    @let outcomes: Vec<&str> = row.outcomes().into_iter().map(Outcome::word).collect();
                    @let packs: Vec<&str> = row.cells.values().map(|e| e.line.pack.as_str()).collect();
                    @let probes: Vec<&str> = row.probes().into_iter().collect();
                    @let search: String = std::iter::once(row.label.as_str())
                        .chain(row.cells.values().map(|e| e.line.name.as_str()))
                        .collect::<Vec<_>>()
                        .join(" ")
                        .to_lowercase();
                    tr class="row" data-deployment=(row.deployment) data-packs=(packs.join(" "))
                        data-outcomes=(outcomes.join(" ")) data-probes=(probes.join(" "))
                        data-search=(search) {
                        th { (row.label) }
                        @for (column, _) in columns {
                            td class="c" {
                                @if let Some(entry) = row.cells.get(column) { (cell(entry)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn cell(entry: &Entry) -> Markup {
    let outcome = entry.outcome();
    let role = entry.line.role.as_ref();
    let href = match &entry.line.first_failure {
        Some(anchor) => format!("{}#{anchor}", entry.page),
        None => entry.page.clone(),
    };
    let machine = entry.line.machine.words();
    let title = format!(
        "{}: {} ({}), started {}, {}{}{}",
        entry.line.name,
        entry.line.verdict.name(),
        outcome.word(),
        super::super::anchors::utc(entry.line.started_unix_ms),
        super::super::anchors::millis(entry.line.duration_us),
        if machine.is_empty() { "" } else { ", on " },
        machine
    );
    html! {
        a class={ "o o-" (outcome.word()) } href=(href) title=(title) {
            (outcome.label(role, entry.line.verdict))
        }
        (trend::svg(&entry.trend()))
        @if let Some(RunRole::Twin { catch, .. }) = role {
            div class="est" {
                "pinned: "
                @match pack_named(&entry.line.pack) {
                    Some(kind) => {
                        a href=(contract_page(kind)) title=(purpose_of(&catch.scenario).unwrap_or("")) {
                            (catch.scenario)
                        }
                    }
                    None => { (catch.scenario) }
                }
                " · " (catch.step) " · " (catch.assertion)
            }
        }
        @for estimate in &entry.line.estimates {
            div class="est" {
                (estimate.scenario) ": pass^" (estimate.k) " "
                (estimate_text(estimate.pass_hat_k, estimate.pass_hat_k_interval))
                " (" (estimate.c) " of " (estimate.n) ")"
            }
        }
    }
}

/// An estimate with its interval when there is one.
fn estimate_text(value: Option<f64>, interval: Option<(f64, f64)>) -> String {
    match (value, interval) {
        (Some(v), Some((lo, hi))) => format!("{v:.2} [{lo:.2}, {hi:.2}]"),
        (Some(v), None) => format!("{v:.2}"),
        (None, _) => "n/a".to_owned(),
    }
}

/// Each pack shown: its contract page, and every scenario it can run with
/// its purpose.
fn legend(columns: &[(usize, String)]) -> Markup {
    let kinds: Vec<_> = columns.iter().filter_map(|(_, p)| pack_named(p)).collect();
    html! {
        @if !kinds.is_empty() {
            h2 { "What each probe checks" }
            @for kind in kinds {
                details class="legend" open {
                    summary {
                        (kind.name()) " · " a href=(contract_page(kind)) { "contract page" }
                    }
                    table class="probe-list" {
                        tr { th { "scenario" } th { "what it is for" } }
                        @for purpose in purposes(kind) {
                            tr { td { code { (purpose.scenario) } } td { (purpose.purpose) } }
                        }
                    }
                }
            }
        }
    }
}
