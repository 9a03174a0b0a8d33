//! The viewer's pages from typed reports: escaping, the overview's verdict
//! line, matrix, outcomes and trends, and concurrent writers.

use std::io::Write as _;

use super::super::model::{IndexEstimate, PinnedCatch, ReportVerdict, RunRole};
use super::overview::{verdict_line, Outcome};
use super::*;

fn line(name: &str, pack: &str, verdict: ReportVerdict, role: Option<RunRole>) -> IndexLine {
    IndexLine {
        name: name.to_owned(),
        pack: pack.to_owned(),
        verdict,
        report: Some(format!("{name}.json")),
        role,
        ..IndexLine::default()
    }
}

fn entry(line: IndexLine) -> Entry {
    Entry {
        page: page_name(line.report.as_deref().unwrap_or("x.json")),
        history: vec![Point::of(&line)],
        line,
    }
}

fn twin(name: &str, pinned: &str) -> RunRole {
    RunRole::Twin {
        deployment: "desk".into(),
        twin: name.into(),
        catch: PinnedCatch {
            scenario: pinned.into(),
            step: "blocked".into(),
            assertion: "ToolSucceeded".into(),
        },
    }
}

fn reference() -> RunRole {
    RunRole::Reference {
        deployment: "desk".into(),
    }
}

#[test]
fn a_twin_caught_where_pinned_is_the_expected_failure_and_an_escape_is_a_failure() {
    let pinned = "approval/forged-token";
    let caught = Outcome::of(
        Some(&twin("t", pinned)),
        ReportVerdict::Failed,
        &[pinned.into()],
    );
    assert_eq!(caught, Outcome::Caught);
    let elsewhere = Outcome::of(
        Some(&twin("t", pinned)),
        ReportVerdict::Failed,
        &["approval/other".into()],
    );
    assert_eq!(elsewhere, Outcome::Failed);
    assert_eq!(
        Outcome::of(Some(&twin("t", pinned)), ReportVerdict::Passed, &[]),
        Outcome::Failed
    );
    assert_eq!(
        Outcome::of(Some(&reference()), ReportVerdict::Failed, &[]),
        Outcome::Failed
    );
    assert_eq!(
        Outcome::of(Some(&reference()), ReportVerdict::NotApplicable, &[]),
        Outcome::Failed
    );
    assert_eq!(
        Outcome::of(None, ReportVerdict::NotApplicable, &[]),
        Outcome::Other
    );
    assert_eq!(
        Outcome::of(None, ReportVerdict::Passed, &[]),
        Outcome::Passed
    );
}

#[test]
fn the_verdict_line_counts_references_twins_and_variants_by_role() {
    let variant = |name: &str, verdict| {
        line(
            &format!("v-{name}-{verdict:?}"),
            "approval-resume",
            verdict,
            Some(RunRole::HonestVariant {
                deployment: "desk".into(),
                variant: name.into(),
            }),
        )
    };
    let mut caught = line(
        "t1",
        "approval-resume",
        ReportVerdict::Failed,
        Some(twin("t1", "p")),
    );
    caught.failed_scenarios = vec!["p".into()];
    let entries: Vec<Entry> = [
        line(
            "r1",
            "approval-resume",
            ReportVerdict::Passed,
            Some(reference()),
        ),
        line(
            "r2",
            "extension-tools",
            ReportVerdict::Passed,
            Some(reference()),
        ),
        caught,
        line(
            "t2",
            "approval-resume",
            ReportVerdict::Passed,
            Some(twin("t2", "p")),
        ),
        variant("a", ReportVerdict::Passed),
        variant("a", ReportVerdict::Passed),
        variant("b", ReportVerdict::Passed),
        variant("b", ReportVerdict::Failed),
    ]
    .into_iter()
    .map(entry)
    .collect();
    let (text, good) = verdict_line(&entries);
    assert_eq!(
        text,
        "references 2/2 passed, twins 1/2 caught, honest variants 1/2 passed"
    );
    assert!(!good);
    let (text, good) = verdict_line(&entries[..3]);
    assert_eq!(text, "references 2/2 passed, twins 1/1 caught");
    assert!(good);
    assert_eq!(verdict_line(&[]).0, "no runs yet");
}

#[test]
fn the_overview_shows_the_matrix_the_trend_the_estimates_and_escapes_names() {
    let mut caught = line(
        "desk::twin::<skips>",
        "approval-resume",
        ReportVerdict::Failed,
        Some(twin("<skips>", "approval/forged-token")),
    );
    caught.failed_scenarios = vec!["approval/forged-token".into()];
    caught.first_failure = Some("v-approval_2fforged-t1-s2".into());
    let mut tested = line("plain.test", "extension-tools", ReportVerdict::Failed, None);
    tested.estimates = vec![IndexEstimate {
        scenario: "extension/seed".into(),
        n: 5,
        c: 3,
        k: 2,
        pass_hat_k: Some(0.3),
        pass_hat_k_interval: Some((0.05, 0.78)),
    }];
    let mut with_history = entry(tested);
    with_history.history.insert(
        0,
        Point {
            started_unix_ms: 1,
            verdict: ReportVerdict::Passed,
            duration_us: 10,
            failed_scenarios: Vec::new(),
        },
    );
    let html = overview::page(vec![
        entry(line(
            "desk::reference::approval-resume",
            "approval-resume",
            ReportVerdict::Passed,
            Some(reference()),
        )),
        entry(caught),
        with_history,
    ]);
    assert!(html.contains("id=\"verdict-line\""));
    assert!(html.contains("references 1/1 passed, twins 1/1 caught, runs 0/1 passed"));
    // The twin's name is escaped, its cell says caught and links to the
    // first failure.
    assert!(html.contains("desk twin &lt;skips&gt;") && !html.contains("<skips>"));
    assert!(html.contains("class=\"o o-caught\""));
    assert!(
        html.contains("desk..twin..skips.html#v-approval_2fforged-t1-s2")
            || html.contains("#v-approval_2fforged-t1-s2")
    );
    assert!(html.contains("class=\"o o-failed\""));
    // Two runs of the plain test: a trend of two bars.
    assert!(html.contains("last 2 run(s), oldest first: passed, failed"));
    // pass^k with its interval only where more than one trial ran.
    assert!(html.contains("extension/seed: pass^2 0.30 [0.05, 0.78] (3 of 5)"));
    assert_eq!(html.matches("pass^").count(), 1);
    // Filters, the probe legend with its contract page, the script.
    for id in ["f-search", "f-pack", "f-deployment", "f-verdict", "f-probe"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(html.contains("<option value=\"approval/forged-token\">"));
    assert!(html.contains("struct.ApprovalResumePack.html"));
    assert!(html.contains(crate::PackKind::ApprovalResume.probes()[0].catches));
}

#[test]
fn concurrent_runs_all_end_up_in_the_overview_and_no_temporary_file_stays() {
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
    assert!(html.contains("runs 8/16 passed"), "{html}");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_report_written_before_roles_and_typed_fields_still_loads_and_renders() {
    // A version-2 report as an older build wrote it: no role, no stats.
    let old = r#"{
        "schema_version": 2,
        "harness": {"name": "symfonic-evals", "version": "0.1.0"},
        "package": null,
        "name": "old.run",
        "pack": "extension-tools",
        "fingerprint": "abc",
        "started_unix_ms": 0,
        "duration_us": 5,
        "verdict": "failed",
        "scenarios": [{
            "name": "extension/seed", "kind": "seed", "passed": false,
            "trials_planned": 1, "trials_required": 1, "trials_passed": 0,
            "trials": [{"trial": 0, "planned_steps": 1, "finished": true, "notes": [],
                "duration_us": 3, "steps": [{"index": 0, "label": "call <b>",
                "operation": "prompt", "role": "user", "conversation": "main",
                "input_digest": "sha256:1", "restarted": false, "error": null,
                "duration_us": 2, "assertions": [{"kind": "ToolSucceeded",
                "description": "ToolSucceeded(x)", "passed": false,
                "expected": "1", "observed": "0"}]}]}]
        }],
        "probes_not_run": [],
        "machine": {"host": "h"},
        "some_future_field": true
    }"#;
    let document = as_report(old.as_bytes()).expect("an older report loads");
    assert_eq!(
        document.first_failure_anchor().as_deref(),
        Some("v-extension_2fseed-t1-s1")
    );
    let html = run_page::run_page(&document);
    assert!(html.contains("First failure:") && html.contains("call &lt;b&gt;"));
    assert!(html.contains("id=\"v-extension_2fseed-t1-s1\""));
    assert!(!html.contains("call <b>"));
    // Not a report: the summary a program writes beside them.
    assert!(as_report(br#"{"runs": []}"#).is_none());
}

#[test]
fn the_same_test_from_several_places_gets_a_row_each() {
    let entries: Vec<Entry> = (0..3)
        .map(|i| {
            let mut same = line(
                "merged.test",
                "extension-tools",
                ReportVerdict::Passed,
                None,
            );
            same.report = Some(format!("{i}.merged.test.json"));
            entry(same)
        })
        .collect();
    let html = overview::page(entries);
    assert!(html.contains("3 run(s) in 3 row(s)"), "{html}");
    assert_eq!(html.matches("class=\"o o-passed\"").count(), 3);
}
