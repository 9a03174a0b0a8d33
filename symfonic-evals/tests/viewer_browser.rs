//! The evidence viewer in a real browser: headless Chromium opens the page
//! of a failing run at its first failure's anchor, the page's script runs
//! without an error, the first failure is shown and its anchor found, and a
//! screenshot is saved as `<target dir>/symfonic-evals/viewer.png`.
//!
//! Skipped, saying so, when no Chromium is installed, except under
//! `CI=true`, where a missing browser fails the test (`.ci/run` installs
//! Debian's `chromium`).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::extension::{ExtensionFlaw, WeatherDesk};
use symfonic_evals::{run_pack, Isolation, RunOptions, VIEWER_INDEX_FILE};

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

#[test]
fn the_viewer_renders_and_reaches_the_first_failure() {
    let Some(browser) = browser() else {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(
            !ci,
            "CI=true but no chromium is installed (apt-get install -y chromium)"
        );
        eprintln!("skipped: no chromium installed (apt-get install -y chromium); CI runs this");
        return;
    };
    let dir = common::private_report_dir("viewer_browser");
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
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("symfonic-evals");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join("viewer.png");
    let _ = std::fs::remove_file(&shot);
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
