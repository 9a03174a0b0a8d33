//! The evidence viewer in a real browser: headless Chromium opens the page
//! of a failing run at its first failure's anchor, the page's script runs
//! without an error, the first failure is shown and its anchor found, and a
//! screenshot is saved as `<target dir>/symfonic-evals/viewer.png`; then
//! the overview of a small run's report directory shows its verdict line,
//! its matrix and a trend, and is saved as
//! `<target dir>/symfonic-evals/overview.png`.
//!
//! Both need a browser, so both are ignored by default, which the test
//! run reports as ignored with the reason: run them with
//! `cargo test -p symfonic-evals --test reports -- --include-ignored viewer_browser::`
//! (`.ci/run` does, after installing Debian's `chromium`). Asked to run
//! with no browser installed, they fail.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::extension::{ExtensionFlaw, WeatherDesk};
use symfonic_evals::{run_pack, Isolation, PinnedCatch, RunOptions, RunRole, VIEWER_INDEX_FILE};

fn browser() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome", "chrome"]
        .iter()
        .find_map(|name| {
            let found = Command::new("sh")
                .args(["-c", &format!("command -v {name}")])
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&found.stdout).trim().to_owned();
            (found.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
        })
}

/// Runs the browser headless on `url` with a fresh profile, plus `extra`.
fn headless(browser: &Path, url: &str, extra: &[&str]) -> Output {
    let profile = tempfile::tempdir().expect("a profile directory");
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("the browser starts");
    drop(profile);
    output
}

fn file_url(path: &Path, anchor: Option<&str>) -> String {
    let mut url = format!("file://{}", path.display());
    if let Some(anchor) = anchor {
        url.push('#');
        url.push_str(anchor);
    }
    url
}

/// Console lines that report a script error.
fn script_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("Uncaught") || (l.contains("CONSOLE") && l.contains("Error")))
        .collect()
}

/// The browser, or a failure saying how to install one: a test asked to
/// run in a browser never passes without one.
fn required_browser() -> PathBuf {
    browser().expect("no chromium installed (apt-get install -y chromium)")
}

/// Where screenshots go: `<target dir>/symfonic-evals`, for a person to
/// look at.
fn screenshot(name: &str) -> PathBuf {
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("symfonic-evals");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(name);
    let _ = std::fs::remove_file(&shot);
    shot
}

#[test]
#[ignore = "needs a headless Chromium (apt-get install -y chromium); run with --include-ignored"]
fn the_viewer_renders_and_reaches_the_first_failure() {
    let browser = required_browser();
    let dir = common::private_report_dir("reports");
    let thread = RunOptions {
        isolation: Isolation::Thread,
        ..RunOptions::default()
    };
    let definition = common::extension(common::extension_pack());
    let passing = run_pack("viewer.passing", &definition, &thread, |_| {
        WeatherDesk::with(None)
    });
    assert!(passing.passed());
    let failing = run_pack("viewer.failing", &definition, &thread, |_| {
        WeatherDesk::with(Some(ExtensionFlaw::WrongArguments))
    });
    assert!(!failing.passed());

    // The failure's account points at the viewer's page and anchor.
    let link = failing.viewer_link().expect("a viewer page was written");
    assert!(
        failing.render().contains(&format!("viewer: {link}")),
        "{}",
        failing.render()
    );
    let (page, anchor) = link.split_once('#').expect("an anchor");
    let page = PathBuf::from(page);
    assert!(
        page.starts_with(dir) && page.is_file(),
        "{}",
        page.display()
    );

    // The page at the first failure's anchor: the script ran, found it.
    let output = headless(&browser, &file_url(&page, Some(anchor)), &["--dump-dom"]);
    let dom = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        dom.contains("data-viewer=\"ready\""),
        "the script did not run: {dom}"
    );
    assert!(
        dom.contains(&format!("data-anchor-found=\"{anchor}\"")),
        "the anchor {anchor} was not reached: {dom}"
    );
    assert!(dom.contains("id=\"failure\"") && dom.contains("First failure:"));
    assert!(dom.contains("first failure</span>"), "the step is marked");
    assert!(script_errors(&stderr).is_empty(), "{stderr}");

    // The index lists both runs, the failing one first.
    let index = dir.join(VIEWER_INDEX_FILE);
    let output = headless(&browser, &file_url(&index, None), &["--dump-dom"]);
    let dom = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(dom.contains("data-viewer=\"ready\""), "{dom}");
    let (failed_at, passed_at) = (
        dom.find("viewer.failing")
            .expect("the failing run is listed"),
        dom.find("viewer.passing")
            .expect("the passing run is listed"),
    );
    assert!(failed_at < passed_at, "failures first");
    assert!(script_errors(&stderr).is_empty(), "{stderr}");

    // A screenshot under the target directory, for a person to look at.
    let shot = screenshot("viewer.png");
    let output = headless(
        &browser,
        &file_url(&page, None),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,900",
        ],
    );
    assert!(
        shot.is_file(),
        "no screenshot: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("screenshot: {}", shot.display());
}

#[test]
#[ignore = "needs a headless Chromium (apt-get install -y chromium); run with --include-ignored"]
fn the_overview_shows_the_verdict_line_the_matrix_and_a_trend() {
    let browser = required_browser();
    let dir = common::private_report_dir("reports");
    let definition = common::extension(common::extension_pack());
    let seed = definition.kind().seed_scenario();
    let options = |role: RunRole| RunOptions {
        isolation: Isolation::Thread,
        role: Some(role),
        ..RunOptions::default()
    };
    // Twice each, so every test has a trend of two runs.
    for _ in 0..2 {
        let reference = run_pack(
            "overview.reference",
            &definition,
            &options(RunRole::Reference {
                deployment: "weather".into(),
            }),
            |_| WeatherDesk::with(None),
        );
        assert!(reference.passed());
        let twin = run_pack(
            "overview.twin.never-called",
            &definition,
            &options(RunRole::Twin {
                deployment: "weather".into(),
                twin: "never-called".into(),
                catch: PinnedCatch {
                    scenario: seed.into(),
                    step: "call".into(),
                    assertion: "ToolCalled".into(),
                },
            }),
            |_| WeatherDesk::with(Some(ExtensionFlaw::NeverCalled)),
        );
        assert_eq!(twin.failed_scenarios()[0], seed);
    }
    let index = dir.join(VIEWER_INDEX_FILE);
    let output = headless(&browser, &file_url(&index, None), &["--dump-dom"]);
    let dom = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        dom.contains("data-viewer=\"ready\""),
        "the script did not run: {dom}"
    );
    assert!(script_errors(&stderr).is_empty(), "{stderr}");
    // The verdict line counts the reference and the caught twin (other
    // tests of this binary add their own runs after it).
    let verdict = dom
        .split("id=\"verdict-line\"")
        .nth(1)
        .and_then(|rest| rest.split("</div>").next())
        .expect("a verdict line");
    assert!(
        verdict.contains("references 1/1 passed, twins 1/1 caught"),
        "{verdict}"
    );
    // The matrix: the reference's row and the twin's, the twin caught, each
    // cell a link to its run's page.
    assert!(dom.contains("class=\"matrix\""), "{dom}");
    assert!(dom.contains("weather twin never-called"), "{dom}");
    assert!(dom.contains("class=\"o o-caught\""), "{dom}");
    assert!(
        dom.contains("href=\"symfonic-evals.overview.reference.html\""),
        "{dom}"
    );
    // A trend of the two runs, drawn as two bars.
    let trend = dom
        .split("<svg class=\"trend\"")
        .nth(1)
        .and_then(|rest| rest.split("</svg>").next())
        .expect("a trend");
    assert_eq!(trend.matches("<rect").count(), 2, "{trend}");
    // The search runs in the page: a link searching for the twin hides
    // every other row.
    let output = headless(
        &browser,
        &file_url(&index, Some("q=never-called")),
        &["--dump-dom"],
    );
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(dom.contains("<span id=\"shown\">1</span>"), "{dom}");
    assert!(
        dom.contains("class=\"row hidden\" data-deployment=\"weather\""),
        "the reference's row is hidden: {dom}"
    );
    let shot = screenshot("overview.png");
    let output = headless(
        &browser,
        &file_url(&index, None),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,900",
        ],
    );
    assert!(
        shot.is_file(),
        "no screenshot: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("screenshot: {}", shot.display());
}
