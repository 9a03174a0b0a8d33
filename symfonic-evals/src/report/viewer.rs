//! The evidence viewer: self-contained HTML beside the JSON reports.
//!
//! Each report `X.json` gets a page `X.html` rendered from the report's own
//! JSON document (so the page carries exactly what the report carries:
//! digests, never turn content or state values), and the directory gets an
//! `index.html` listing every run, failures first. Everything is inline:
//! no server, no network, no remote script, style or font.
//!
//! A pack run writes its page and rebuilds `index.html` from `index.jsonl`
//! (one line per run, so the rebuild reads one file, not every report).
//! Both are written to a temporary file and renamed into place, since the
//! tests of one build write reports concurrently. A viewer that cannot be
//! written is logged and never fails the run.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

/// The viewer's entry page in a report directory.
pub const VIEWER_INDEX_FILE: &str = "index.html";

/// The page of the report file `report` (`X.json` gives `X.html`).
pub(crate) fn page_name(report: &str) -> String {
    let stem = report.strip_suffix(".json").unwrap_or(report);
    format!("{stem}.html")
}

/// Escapes text for HTML content and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An element id for a sequence of names: letters, digits and `-` kept,
/// anything else as `_xx` hex, so distinct names never share an id.
fn id_of(parts: &[&str]) -> String {
    let mut out = String::from("v");
    for part in parts {
        out.push('-');
        for byte in part.bytes() {
            if byte.is_ascii_alphanumeric() {
                out.push(char::from(byte));
            } else {
                let _ = write!(out, "_{byte:02x}");
            }
        }
    }
    out
}

/// The anchor of a scenario on its run's page.
pub(crate) fn scenario_anchor(scenario: &str) -> String {
    id_of(&[scenario])
}

/// The anchor of a trial on its run's page (`trial` zero-based).
pub(crate) fn trial_anchor(scenario: &str, trial: u64) -> String {
    id_of(&[scenario, &format!("t{}", trial + 1)])
}

/// The anchor of a step on its run's page (`trial` and `step` zero-based).
pub(crate) fn step_anchor(scenario: &str, trial: u64, step: u64) -> String {
    id_of(&[
        scenario,
        &format!("t{}", trial + 1),
        &format!("s{}", step + 1),
    ])
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn number(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn array<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn step_passed(step: &Value) -> bool {
    step.get("error").is_none_or(Value::is_null)
        && array(step, "assertions")
            .iter()
            .all(|a| a.get("passed").and_then(Value::as_bool).unwrap_or(false))
}

fn trial_passed(trial: &Value) -> bool {
    trial
        .get("finished")
        .and_then(Value::as_bool)
        .unwrap_or(false)
        && array(trial, "steps").iter().all(step_passed)
}

fn scenario_passed(scenario: &Value) -> bool {
    scenario
        .get("passed")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// The anchor of a report's first failing step, in the order the run
/// judged them (the first failure of its account).
pub(crate) fn first_failure_anchor(document: &Value) -> Option<String> {
    for scenario in array(document, "scenarios") {
        for trial in array(scenario, "trials") {
            for step in array(trial, "steps") {
                if !step_passed(step) {
                    return Some(step_anchor(
                        text(scenario, "name"),
                        number(trial, "trial"),
                        number(step, "index"),
                    ));
                }
            }
        }
    }
    None
}

/// `YYYY-MM-DD HH:MM:SS UTC` for milliseconds since the Unix epoch.
fn utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

fn millis(micros: u64) -> String {
    // Precision loss past 2^53 µs (285 years) is immaterial here.
    #[allow(clippy::cast_precision_loss)]
    let ms = micros as f64 / 1000.0;
    format!("{ms:.1} ms")
}

const STYLE: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2330;background:#f6f7f9}\
header{background:#1d2330;color:#fff;padding:12px 20px}header a{color:#9cc3ff}\
main{padding:12px 20px;max-width:1400px}\
h1{font-size:18px;margin:4px 0}h2{font-size:16px;margin:18px 0 6px}h3{font-size:14px;margin:10px 0 4px}\
table{border-collapse:collapse;background:#fff;margin:6px 0}\
th,td{border:1px solid #d8dce3;padding:3px 7px;text-align:left;vertical-align:top}\
th{background:#eef0f4;font-weight:600}\
code,pre{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\
pre{margin:0;white-space:pre-wrap;word-break:break-word}\
.verdict{display:inline-block;padding:1px 8px;border-radius:9px;font-weight:600;font-size:12px}\
.v-passed{background:#d7f5dd;color:#0d5a1c}.v-failed{background:#fddede;color:#8a1010}\
.v-other{background:#fdf1cf;color:#6b4b00}\
.cell{display:inline-block;min-width:22px;text-align:center;border-radius:4px;text-decoration:none;font-weight:700}\
.cell.ok{background:#d7f5dd;color:#0d5a1c}.cell.bad{background:#fddede;color:#8a1010}.cell.none{color:#999}\
.scenario,.trial,.step{background:#fff;border:1px solid #d8dce3;border-radius:6px;margin:8px 0;padding:6px 10px}\
.scenario.failed{border-left:4px solid #c62828}.scenario.passed{border-left:4px solid #2e7d32}\
.trial.failed>summary,.step.failed>.step-head{color:#8a1010}\
.step{margin-left:12px}.step.failed{background:#fff7f7}\
.targeted{outline:3px solid #f0a000}\
.first{background:#fff1c2;padding:1px 6px;border-radius:4px;font-weight:600}\
.nw{white-space:nowrap}.meta{color:#566}.badge{background:#e6ecff;color:#233a8a;border-radius:4px;padding:0 5px;font-size:11px}\
.only-failed .hide-ok{display:none}\
#failure{background:#fff;border:2px solid #c62828;border-radius:6px;padding:8px 12px;margin:10px 0}\
label.filter{display:inline-block;margin:8px 0;font-weight:600}\
";

const SCRIPT: &str = "\
(function(){var b=document.body;var f=document.getElementById('only-failed');\
function apply(){if(f.checked){b.classList.add('only-failed');}else{b.classList.remove('only-failed');}}\
if(f){f.addEventListener('change',apply);apply();}\
function reveal(){var h=decodeURIComponent(location.hash.slice(1));if(!h){return;}\
var t=document.getElementById(h);if(!t){b.setAttribute('data-anchor-missing',h);return;}\
var old=document.querySelector('.targeted');if(old){old.classList.remove('targeted');}\
t.classList.add('targeted');var d=t.closest('details');while(d){d.open=true;d=d.parentElement.closest('details');}\
b.setAttribute('data-anchor-found',h);t.scrollIntoView();}\
window.addEventListener('hashchange',reveal);reveal();\
var m=document.getElementById('viewer-status');if(m){m.textContent='ready';}b.setAttribute('data-viewer','ready');})();";

fn page_start(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        esc(title)
    );
}

fn page_end(out: &mut String) {
    let _ = writeln!(
        out,
        "<footer class=\"meta\" style=\"padding:8px 20px\">symfonic-evals evidence viewer \
         <span id=\"viewer-status\">static</span></footer><script>{SCRIPT}</script></body></html>"
    );
}

fn verdict_badge(verdict: &str) -> String {
    let class = match verdict {
        "passed" => "v-passed",
        "failed" => "v-failed",
        _ => "v-other",
    };
    format!(
        "<span class=\"verdict {class}\">{}</span>",
        esc(&verdict.replace('_', " "))
    )
}

fn machine_text(machine: Option<&Value>) -> String {
    let Some(machine) = machine else {
        return String::new();
    };
    let mut parts = Vec::new();
    if let Some(host) = machine.get("host").and_then(Value::as_str) {
        parts.push(host.to_owned());
    }
    if let Some(partition) = machine.get("partition").and_then(Value::as_str) {
        parts.push(format!("partition {partition}"));
    }
    parts.join(", ")
}

fn stats_text(stats: Option<&Value>) -> String {
    let Some(stats) = stats else {
        return String::new();
    };
    let k = number(stats, "k");
    let estimate = |value: &str, interval: &str| {
        let v = stats.get(value).and_then(Value::as_f64);
        let i = stats
            .get(interval)
            .and_then(Value::as_array)
            .and_then(|a| Some((a.first()?.as_f64()?, a.get(1)?.as_f64()?)));
        match (v, i) {
            (Some(v), Some((lo, hi))) => format!("{v:.2} [{lo:.2}, {hi:.2}]"),
            (Some(v), None) => format!("{v:.2}"),
            (None, _) => "n/a".to_owned(),
        }
    };
    if k == 1 {
        // pass^1 and pass@1 are both the per-trial rate.
        return format!("pass^1 = pass@1 = p {}", estimate("rate", "rate_interval"));
    }
    format!(
        "pass^{k} {}, pass@{k} {}, p {}",
        estimate("pass_hat_k", "pass_hat_k_interval"),
        estimate("pass_at_k", "pass_at_k_interval"),
        estimate("rate", "rate_interval"),
    )
}

/// Scenarios with the failed ones first, each group in run order.
fn failures_first(document: &Value) -> Vec<&Value> {
    let scenarios = array(document, "scenarios");
    let mut ordered: Vec<&Value> = scenarios.iter().filter(|s| !scenario_passed(s)).collect();
    ordered.extend(scenarios.iter().filter(|s| scenario_passed(s)));
    ordered
}

/// The page of one pack run, from its JSON report document.
pub(crate) fn run_page(document: &Value) -> String {
    let name = text(document, "name");
    let verdict = text(document, "verdict");
    let mut out = String::with_capacity(16 * 1024);
    page_start(&mut out, &format!("{verdict}: {name}"));
    let run_id = id_of(&["run"]);
    let _ = write!(
        out,
        "<header id=\"{run_id}\"><a href=\"{VIEWER_INDEX_FILE}\">&larr; all runs</a>\
         <h1>{} {}</h1><div>pack <code>{}</code> &middot; package <code>{}</code> &middot; \
         started {} &middot; {}{}</div><div class=\"meta\">fingerprint <code>{}</code> &middot; \
         harness {} {} &middot; schema {}</div></header><main>",
        verdict_badge(verdict),
        esc(name),
        esc(text(document, "pack")),
        esc(document
            .get("package")
            .and_then(Value::as_str)
            .unwrap_or("-")),
        utc(number(document, "started_unix_ms")),
        millis(number(document, "duration_us")),
        {
            let machine = machine_text(document.get("machine"));
            if machine.is_empty() {
                String::new()
            } else {
                format!(" &middot; on {}", esc(&machine))
            }
        },
        esc(text(document, "fingerprint")),
        esc(document
            .pointer("/harness/name")
            .and_then(Value::as_str)
            .unwrap_or("")),
        esc(document
            .pointer("/harness/version")
            .and_then(Value::as_str)
            .unwrap_or("")),
        number(document, "schema_version"),
    );
    verdict_detail(&mut out, document);
    match document.get("extension_evidence").and_then(Value::as_str) {
        Some("mcp-fixture") => out.push_str(
            "<p class=\"meta\">extension calls judged by what the harness's MCP fixture \
             received, beside the deployment's own record</p>",
        ),
        Some(_) => out.push_str(
            "<p class=\"meta\">extension calls judged by the deployment's own record (it binds \
             no MCP fixture)</p>",
        ),
        None => {}
    }
    first_failure_box(&mut out, document);
    grid(&mut out, document);
    probes_not_run(&mut out, document);
    let _ = write!(
        out,
        "<label class=\"filter\"><input type=\"checkbox\" id=\"only-failed\"> failed steps only</label>"
    );
    let first = first_failure_anchor(document);
    for scenario in failures_first(document) {
        scenario_section(&mut out, scenario, first.as_deref());
    }
    out.push_str("</main>");
    page_end(&mut out);
    out
}

fn verdict_detail(out: &mut String, document: &Value) {
    let lists = [
        ("missing", "The deployment cannot be judged by this pack:"),
        ("errors", "The pack's arguments are invalid:"),
    ];
    for (key, heading) in lists {
        let items = array(document, key);
        if items.is_empty() {
            continue;
        }
        let _ = write!(out, "<h2>{heading}</h2><ul>");
        for item in items {
            // A missing capability is recorded with its reason in words.
            let shown = item
                .as_str()
                .or_else(|| item.get("reason").and_then(Value::as_str))
                .map_or_else(|| item.to_string(), str::to_owned);
            let _ = write!(out, "<li><code>{}</code></li>", esc(&shown));
        }
        out.push_str("</ul>");
    }
    if let Some(why) = document.get("unbuildable").and_then(Value::as_str) {
        let _ = write!(
            out,
            "<h2>The deployment did not build</h2><pre>{}</pre>",
            esc(why)
        );
    }
}

fn first_failure_box(out: &mut String, document: &Value) {
    for scenario in array(document, "scenarios") {
        for trial in array(scenario, "trials") {
            for step in array(trial, "steps") {
                if step_passed(step) {
                    continue;
                }
                let anchor = step_anchor(
                    text(scenario, "name"),
                    number(trial, "trial"),
                    number(step, "index"),
                );
                let (what, expected, observed) = array(step, "assertions")
                    .iter()
                    .find(|a| !a.get("passed").and_then(Value::as_bool).unwrap_or(false))
                    .map(|a| {
                        (
                            text(a, "description").to_owned(),
                            text(a, "expected"),
                            text(a, "observed"),
                        )
                    })
                    .or_else(|| {
                        step.get("error").filter(|e| !e.is_null()).map(|e| {
                            (
                                text(e, "kind").to_owned(),
                                text(e, "expected"),
                                text(e, "observed"),
                            )
                        })
                    })
                    .unwrap_or_default();
                let _ = write!(
                    out,
                    "<div id=\"failure\"><b>First failure:</b> {} <code>{}</code>, trial {}, \
                     step {} <code>{}</code>: <b>{}</b> &mdash; <a id=\"first-failure-link\" \
                     href=\"#{anchor}\">go to step</a><table><tr><th>expected</th><td><pre>{}</pre>\
                     </td></tr><tr><th>observed</th><td><pre>{}</pre></td></tr></table></div>",
                    esc(text(scenario, "kind")),
                    esc(text(scenario, "name")),
                    number(trial, "trial") + 1,
                    number(step, "index") + 1,
                    esc(text(step, "label")),
                    esc(&what),
                    esc(expected),
                    esc(observed),
                );
                return;
            }
        }
    }
}

fn grid(out: &mut String, document: &Value) {
    let scenarios = failures_first(document);
    if scenarios.is_empty() {
        return;
    }
    let columns = scenarios
        .iter()
        .map(|s| number(s, "trials_planned").max(array(s, "trials").len() as u64))
        .max()
        .unwrap_or(0);
    out.push_str(
        "<h2>Scenarios by trial</h2><table class=\"grid\"><tr><th>scenario</th><th>kind</th>",
    );
    for trial in 1..=columns {
        let _ = write!(out, "<th>{trial}</th>");
    }
    out.push_str("<th>k of n</th><th>estimates (95% Wilson on the per-trial rate)</th></tr>");
    for scenario in scenarios {
        let name = text(scenario, "name");
        let _ = write!(
            out,
            "<tr><td><a href=\"#{}\">{}</a></td><td>{}</td>",
            scenario_anchor(name),
            esc(name),
            esc(text(scenario, "kind"))
        );
        let trials = array(scenario, "trials");
        for column in 0..columns {
            let cell = trials
                .iter()
                .find(|t| number(t, "trial") == column)
                .map_or_else(
                    || "<span class=\"cell none\" title=\"not run\">&middot;</span>".to_owned(),
                    |t| {
                        let (class, mark) = if trial_passed(t) {
                            ("ok", "&#10003;")
                        } else {
                            ("bad", "&#10007;")
                        };
                        format!(
                            "<a class=\"cell {class}\" href=\"#{}\">{mark}</a>",
                            trial_anchor(name, column)
                        )
                    },
                );
            let _ = write!(out, "<td>{cell}</td>");
        }
        let _ = write!(
            out,
            "<td>{} {} of {} passed, {} required</td><td>{}</td></tr>",
            if scenario_passed(scenario) {
                "pass"
            } else {
                "<b>FAIL</b>"
            },
            number(scenario, "trials_passed"),
            number(scenario, "trials_planned"),
            number(scenario, "trials_required"),
            esc(&stats_text(scenario.get("stats"))),
        );
    }
    out.push_str("</table>");
}

fn probes_not_run(out: &mut String, document: &Value) {
    let probes = array(document, "probes_not_run");
    let ran = array(document, "scenarios")
        .iter()
        .filter(|scenario| text(scenario, "kind") == "probe")
        .count();
    let _ = write!(
        out,
        "<p class=\"coverage\">Coverage: {ran} of {} probe(s) ran.</p>",
        ran + probes.len()
    );
    if probes.is_empty() {
        return;
    }
    out.push_str("<h2>Probes not run</h2><table><tr><th>probe</th><th>reason</th></tr>");
    for probe in probes {
        // The reason as the table words it; a shape this build does not
        // know is shown as it was recorded.
        let (name, reason) =
            match serde_json::from_value::<crate::packs::probes::ProbeNotRun>(probe.clone()) {
                Ok(known) => (known.probe, known.reason.to_string()),
                Err(_) => (text(probe, "probe").to_owned(), probe.to_string()),
            };
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td></tr>",
            esc(&name),
            esc(&reason)
        );
    }
    out.push_str("</table>");
}

fn scenario_section(out: &mut String, scenario: &Value, first: Option<&str>) {
    let name = text(scenario, "name");
    let passed = scenario_passed(scenario);
    let _ = write!(
        out,
        "<section class=\"scenario {}\" id=\"{}\"><h2>{} {} <code>{}</code> \
         <span class=\"meta\">{} of {} trial(s) passed, {} required; {}</span></h2>",
        if passed { "passed hide-ok" } else { "failed" },
        scenario_anchor(name),
        if passed { "pass" } else { "FAIL" },
        esc(text(scenario, "kind")),
        esc(name),
        number(scenario, "trials_passed"),
        number(scenario, "trials_planned"),
        number(scenario, "trials_required"),
        esc(&stats_text(scenario.get("stats"))),
    );
    for trial in array(scenario, "trials") {
        trial_section(out, name, trial, first);
    }
    out.push_str("</section>");
}

fn trial_section(out: &mut String, scenario: &str, trial: &Value, first: Option<&str>) {
    let number_of = number(trial, "trial");
    let passed = trial_passed(trial);
    let steps = array(trial, "steps");
    let _ = write!(
        out,
        "<details class=\"trial {}\" id=\"{}\"{}><summary>trial {} {} &middot; {} step(s) of {} planned \
         &middot; {}</summary>",
        if passed { "passed hide-ok" } else { "failed" },
        trial_anchor(scenario, number_of),
        if passed { "" } else { " open" },
        number_of + 1,
        if passed { "pass" } else { "<b>FAIL</b>" },
        steps.len(),
        number(trial, "planned_steps"),
        millis(number(trial, "duration_us")),
    );
    let mut before = (0, 0, 0);
    for step in steps {
        let ledger = step.get("ledger").unwrap_or(&Value::Null);
        let after = (
            number(ledger, "attempts"),
            number(ledger, "effects"),
            number(ledger, "duplicates"),
        );
        step_section(out, scenario, number_of, step, before, after, first);
        before = after;
    }
    for note in array(trial, "notes") {
        let _ = write!(
            out,
            "<p class=\"meta\">note: {}</p>",
            esc(note.as_str().unwrap_or(""))
        );
    }
    let planned = number(trial, "planned_steps");
    let finished = trial
        .get("finished")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if !finished && (steps.len() as u64) < planned {
        let _ = write!(
            out,
            "<p class=\"meta\">{} step(s) not run</p>",
            planned - steps.len() as u64
        );
    }
    out.push_str("</details>");
}

fn step_section(
    out: &mut String,
    scenario: &str,
    trial: u64,
    step: &Value,
    before: (u64, u64, u64),
    after: (u64, u64, u64),
    first: Option<&str>,
) {
    let index = number(step, "index");
    let anchor = step_anchor(scenario, trial, index);
    let passed = step_passed(step);
    let marker = if first == Some(anchor.as_str()) {
        " <span class=\"first\">first failure</span>"
    } else {
        ""
    };
    let state = step
        .get("state_digest")
        .and_then(Value::as_str)
        .map(|d| format!(" &middot; state <code>{}</code>", esc(d)))
        .unwrap_or_default();
    let restarted = if step.get("restarted").and_then(Value::as_bool) == Some(true) {
        " &middot; <span class=\"badge\">after restart</span>"
    } else {
        ""
    };
    let _ = write!(
        out,
        "<div class=\"step {}\" id=\"{anchor}\"><div class=\"step-head\"><a href=\"#{anchor}\">step {}</a> \
         <b>{}</b> [{}]{marker}</div><div class=\"meta\">{} <code>{}</code> by {} in <code>{}</code>{state}{restarted} \
         &middot; ledger attempts/effects/duplicates {}/{}/{} &rarr; {}/{}/{} &middot; {}</div>",
        if passed { "passed hide-ok" } else { "failed" },
        index + 1,
        esc(text(step, "label")),
        if passed { "pass" } else { "FAIL" },
        esc(text(step, "operation")),
        esc(text(step, "input_digest")),
        esc(text(step, "role")),
        esc(text(step, "conversation")),
        before.0,
        before.1,
        before.2,
        after.0,
        after.1,
        after.2,
        millis(number(step, "duration_us")),
    );
    let assertions = array(step, "assertions");
    let error = step.get("error").filter(|e| !e.is_null());
    if !assertions.is_empty() || error.is_some() {
        out.push_str(
            "<table class=\"assertions\"><tr><th></th><th>assertion</th><th>expected</th><th>observed</th></tr>",
        );
        for assertion in assertions {
            let ok = assertion
                .get("passed")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let kind = text(assertion, "kind");
            let badge = if kind.contains("Witness") || kind.contains("Fixture") {
                " <span class=\"badge\">witness</span>"
            } else {
                ""
            };
            let malformed = if assertion.get("malformed").and_then(Value::as_bool) == Some(true) {
                " <span class=\"badge\">malformed evidence</span>"
            } else {
                ""
            };
            let _ = write!(
                out,
                "<tr class=\"{}\"><td>{}</td><td><code>{}</code>{badge}{malformed}</td><td><pre>{}</pre></td>\
                 <td><pre>{}</pre></td></tr>",
                if ok { "hide-ok" } else { "bad" },
                if ok {
                    "<span class=\"cell ok\">&#10003;</span>"
                } else {
                    "<span class=\"cell bad\">&#10007;</span>"
                },
                esc(text(assertion, "description")),
                esc(text(assertion, "expected")),
                esc(text(assertion, "observed")),
            );
        }
        if let Some(error) = error {
            let _ = write!(
                out,
                "<tr class=\"bad\"><td><span class=\"cell bad\">&#10007;</span></td><td>step error \
                 <code>{}</code></td><td><pre>{}</pre></td><td><pre>{}</pre>{}</td></tr>",
                esc(text(error, "kind")),
                esc(text(error, "expected")),
                esc(text(error, "observed")),
                traceback(error),
            );
        }
        out.push_str("</table>");
    }
    fixture_calls(out, array(step, "fixture_calls"));
    out.push_str("</div>");
}

/// The exception behind a step error, when the deployment's companion
/// reported one, as its traceback (already report-safe in the report).
fn traceback(error: &Value) -> String {
    error
        .get("exception")
        .and_then(|e| serde_json::from_value::<crate::ExceptionTrace>(e.clone()).ok())
        .map(|e| {
            format!(
                "<pre class=\"traceback\">{}</pre>",
                esc(&e.traceback().join("\n"))
            )
        })
        .unwrap_or_default()
}

/// The calls the harness's MCP fixture received during a step, by digest.
fn fixture_calls(out: &mut String, calls: &[Value]) {
    if calls.is_empty() {
        return;
    }
    out.push_str(
        "<table class=\"assertions\"><tr><th></th><th>MCP fixture received</th>\
         <th>arguments as received</th><th>result nonce</th></tr>",
    );
    for call in calls {
        let failed = call.get("failed").and_then(Value::as_bool) == Some(true);
        let _ = write!(
            out,
            "<tr><td><span class=\"badge\">witness</span></td><td><code>{}</code>{}</td>\
             <td><code>{}</code></td><td><code>{}</code></td></tr>",
            esc(text(call, "tool")),
            if failed {
                " (answered with a tool error)"
            } else {
                ""
            },
            esc(text(call, "arguments_digest")),
            esc(text(call, "nonce_digest")),
        );
    }
    out.push_str("</table>");
}

/// One run as the index lists it.
#[derive(Debug, Clone)]
struct Entry {
    page: String,
    name: String,
    package: String,
    pack: String,
    verdict: String,
    started_unix_ms: u64,
    duration_us: u64,
    machine: String,
    first_failure: Option<String>,
}

impl Entry {
    /// From a line of `index.jsonl` (the page is the report's, renamed).
    fn from_index_line(line: &Value) -> Option<Self> {
        let report = line.get("report")?.as_str()?;
        Some(Self {
            page: page_name(report),
            name: text(line, "name").to_owned(),
            package: text(line, "package").to_owned(),
            pack: text(line, "pack").to_owned(),
            verdict: text(line, "verdict").to_owned(),
            started_unix_ms: number(line, "started_unix_ms"),
            duration_us: number(line, "duration_us"),
            machine: machine_text(line.get("machine")),
            first_failure: line
                .get("first_failure")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    /// From a whole report document whose page is `page`.
    fn from_document(document: &Value, page: String) -> Self {
        Self {
            page,
            name: text(document, "name").to_owned(),
            package: text(document, "package").to_owned(),
            pack: text(document, "pack").to_owned(),
            verdict: text(document, "verdict").to_owned(),
            started_unix_ms: number(document, "started_unix_ms"),
            duration_us: number(document, "duration_us"),
            machine: machine_text(document.get("machine")),
            first_failure: first_failure_anchor(document),
        }
    }
}

fn index_page(entries: &mut [Entry]) -> String {
    entries.sort_by(|a, b| {
        (a.verdict == "passed")
            .cmp(&(b.verdict == "passed"))
            .then_with(|| a.package.cmp(&b.package))
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.machine.cmp(&b.machine))
    });
    let failed = entries.iter().filter(|e| e.verdict != "passed").count();
    let mut out = String::with_capacity(256 * entries.len() + 4096);
    page_start(&mut out, "symfonic-evals: pack runs");
    let _ = write!(
        out,
        "<header><h1>Pack runs</h1><div>{} run(s), {failed} not passed</div></header><main>\
         <label class=\"filter\"><input type=\"checkbox\" id=\"only-failed\"> runs not passed only</label>\
         <table><tr><th>verdict</th><th>run</th><th>pack</th><th>package</th><th>machine</th>\
         <th>started</th><th>duration</th><th>first failure</th></tr>",
        entries.len()
    );
    for entry in entries.iter() {
        let run = id_of(&["run", &entry.page]);
        let failure = entry.first_failure.as_ref().map_or_else(String::new, |a| {
            format!(
                "<a href=\"{}#{}\">first failure</a>",
                esc(&entry.page),
                esc(a)
            )
        });
        let _ = write!(
            out,
            "<tr id=\"{run}\" class=\"{}\"><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td>\
             <td>{}</td><td>{}</td><td class=\"nw\">{}</td><td class=\"nw\">{}</td><td>{failure}</td></tr>",
            if entry.verdict == "passed" {
                "hide-ok"
            } else {
                ""
            },
            verdict_badge(&entry.verdict),
            esc(&entry.page),
            esc(&entry.name),
            esc(&entry.pack),
            esc(&entry.package),
            esc(&entry.machine),
            utc(entry.started_unix_ms),
            millis(entry.duration_us),
        );
    }
    out.push_str("</table></main>");
    page_end(&mut out);
    out
}

/// Writes `contents` to `path` through a temporary file beside it and a
/// rename, so a reader never sees half a page and concurrent writers each
/// leave a whole one.
pub(super) fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::File::create(&temp)
        .and_then(|mut file| file.write_all(contents))
        .and_then(|()| std::fs::rename(&temp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// The entries `index.jsonl` lists, the last line of each report winning,
/// only those whose page exists.
fn entries_from_index(dir: &Path, index: &str) -> Vec<Entry> {
    let mut latest: BTreeMap<String, Entry> = BTreeMap::new();
    for value in super::index_digest::latest_lines(dir, index) {
        if let Some(entry) = Entry::from_index_line(&value) {
            latest.insert(entry.page.clone(), entry);
        }
    }
    latest
        .into_values()
        .filter(|e| dir.join(&e.page).is_file())
        .collect()
}

/// Rebuilds `dir/index.html` from `dir/index.jsonl` and returns its path.
/// Reads one file, whatever the number of reports, and parses only the
/// lines added since the last rebuild (see `index_digest`). If the index grew while
/// the page was being written (another test finished meanwhile), the page
/// is rebuilt, so the last writer's page lists every run.
pub fn refresh_index(dir: &Path) -> std::io::Result<PathBuf> {
    let path = dir.join(VIEWER_INDEX_FILE);
    let index_file = dir.join(super::INDEX_FILE);
    for _ in 0..4 {
        let index =
            crate::bounded_read::read_regular(&index_file, crate::bounded_read::max_file_bytes())
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .unwrap_or_default();
        let mut entries = entries_from_index(dir, &index);
        write_atomic(&path, index_page(&mut entries).as_bytes())?;
        let now = std::fs::metadata(&index_file).map_or(0, |m| m.len());
        if now == index.len() as u64 {
            break;
        }
    }
    Ok(path)
}

/// Writes the page of a report just written to `report`, then rebuilds the
/// directory's index. Returns the page's path; on an I/O error says so on
/// stderr and returns `None`: a viewer never fails a run.
pub(crate) fn write_after_report(document: &Value, report: &Path) -> Option<PathBuf> {
    let report_name = report.file_name()?.to_string_lossy().into_owned();
    let page = report.with_file_name(page_name(&report_name));
    if let Err(error) = write_atomic(&page, run_page(document).as_bytes()) {
        eprintln!(
            "symfonic-evals: viewer page {} not written: {error}",
            page.display()
        );
        return None;
    }
    if let Err(error) = refresh_index(report.parent().unwrap_or(Path::new("."))) {
        eprintln!("symfonic-evals: viewer index not written: {error}");
    }
    Some(page)
}

/// Whether a JSON value is a pack run's report (not the index, not a
/// summary some program wrote beside the reports).
fn is_report(value: &Value) -> bool {
    value.get("schema_version").is_some()
        && value.get("pack").is_some()
        && value.get("verdict").is_some()
}

/// Rebuilds a viewer in `out` from every JSON report in `dirs` (a suite
/// split over machines gives one directory per machine) and returns the
/// path of its `index.html`. Each report gets its page in `out`; a report
/// whose file name another directory already used gets its page under a
/// name prefixed with its directory's position (`2.X.html`). Unreadable
/// files, anything but a regular file (links followed), files past
/// [`max_file_bytes`](crate::bounded_read::max_file_bytes) and JSON that is
/// not a report are skipped.
///
/// # Errors
///
/// When a directory cannot be listed or a page cannot be written.
pub fn build_viewer(dirs: &[PathBuf], out: &Path) -> std::io::Result<PathBuf> {
    let mut entries = Vec::new();
    let mut taken = std::collections::HashSet::new();
    for (position, dir) in dirs.iter().enumerate() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        for file in files {
            // A report directory is a user's path: only regular files, and
            // none past the cap (a link to /dev/zero is skipped, not read).
            let Ok(bytes) =
                crate::bounded_read::read_regular(&file, crate::bounded_read::max_file_bytes())
            else {
                continue;
            };
            let Ok(document) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            if !is_report(&document) {
                continue;
            }
            let report_name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut page = page_name(&report_name);
            if !taken.insert(page.clone()) {
                page = format!("{}.{page}", position + 1);
                taken.insert(page.clone());
            }
            write_atomic(&out.join(&page), run_page(&document).as_bytes())?;
            entries.push(Entry::from_document(&document, page));
        }
    }
    let path = out.join(VIEWER_INDEX_FILE);
    write_atomic(&path, index_page(&mut entries).as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_ids_leave_no_markup() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(
            id_of(&["approval/forged token"]),
            "v-approval_2fforged_20token"
        );
        assert_ne!(id_of(&["a.b"]), id_of(&["a_b"]));
        assert_eq!(step_anchor("s", 0, 2), "v-s-t1-s3");
    }

    #[test]
    fn concurrent_runs_all_end_up_in_the_index_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let dir = dir.path().to_owned();
                std::thread::spawn(move || {
                    let report = format!("run-{i}.json");
                    std::fs::write(dir.join(page_name(&report)), "<html></html>").unwrap();
                    let line = serde_json::json!({
                        "name": format!("concurrent.run{i}"),
                        "pack": "extension-tools",
                        "verdict": if i % 2 == 0 { "passed" } else { "failed" },
                        "report": report,
                    });
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(dir.join(crate::report::INDEX_FILE))
                        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()))
                        .unwrap();
                    refresh_index(&dir).unwrap();
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let html = std::fs::read_to_string(dir.path().join(VIEWER_INDEX_FILE)).unwrap();
        for i in 0..16 {
            assert!(
                html.contains(&format!("concurrent.run{i}<")),
                "run {i} missing"
            );
        }
        assert!(html.contains("16 run(s), 8 not passed"));
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_796_156_594_397), "2026-12-01 20:23:14 UTC");
    }
}
