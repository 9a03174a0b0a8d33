//! `symfonic-evals view` merges the report directories of a suite split
//! over machines into one viewer, each run showing its partition, and a
//! run name both machines used keeps both pages.

mod common;

use std::path::Path;
use std::process::Command;

use common::extension::{ExtensionFlaw, WeatherDesk};
use symfonic_evals::{run_pack, Isolation, RunOptions, PARTITION_ENV, REPORT_DIR_ENV};

fn run_into(dir: &Path, partition: &str, flaw: Option<ExtensionFlaw>) {
    // SAFETY: the only test of this binary sets these between runs, with
    // no run in flight.
    unsafe {
        std::env::set_var(REPORT_DIR_ENV, dir);
        std::env::set_var(PARTITION_ENV, partition);
    }
    let thread = RunOptions {
        isolation: Isolation::Thread,
        ..RunOptions::default()
    };
    let run = run_pack(
        "viewer.merged",
        &common::extension(common::extension_pack()),
        &thread,
        move |_| WeatherDesk::with(flaw),
    );
    assert!(run.viewer_path().is_some_and(|p| p.starts_with(dir)));
}

#[test]
fn view_merges_the_report_directories_of_partitions() {
    // One test in this binary: the environment it sets is its own.
    let root =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("viewer-merge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (one, two) = (root.join("machine-1"), root.join("machine-2"));
    run_into(&one, "1/2", None);
    run_into(&two, "2/2", Some(ExtensionFlaw::WrongArguments));

    let output = Command::new(env!("CARGO_BIN_EXE_symfonic-evals"))
        .arg("view")
        .arg(&one)
        .arg(&two)
        .output()
        .expect("the command runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    assert_eq!(Path::new(&printed), one.join("merged").join("index.html"));
    let index = std::fs::read_to_string(&printed).unwrap();
    assert!(
        index.contains("partition 1/2") && index.contains("partition 2/2"),
        "{index}"
    );
    // The same run name from both machines: two pages, the failing one first.
    let pages: Vec<_> = std::fs::read_dir(one.join("merged"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".html") && n != "index.html")
        .collect();
    assert_eq!(pages.len(), 2, "{pages:?}");
    let failed = index.find("class=\"o o-failed\"").expect("a failed run");
    let passed = index.find("class=\"o o-passed\"").expect("a passed run");
    assert!(failed < passed, "failures first");

    // A bad invocation says how to call it.
    let usage = Command::new(env!("CARGO_BIN_EXE_symfonic-evals"))
        .arg("unknown")
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("usage: symfonic-evals view"));
    assert!(String::from_utf8_lossy(&usage.stderr).contains("symfonic-evals conformance"));
    // Help is asked for after the command too, and answered on stdout.
    let help = Command::new(env!("CARGO_BIN_EXE_symfonic-evals"))
        .args(["view", "--help"])
        .output()
        .unwrap();
    assert_eq!(help.status.code(), Some(0), "{help:?}");
    assert!(String::from_utf8_lossy(&help.stdout).contains("--out DIR"));
    // A directory that is not there is named.
    let missing = one.join("no-such-reports");
    let absent = Command::new(env!("CARGO_BIN_EXE_symfonic-evals"))
        .arg("view")
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(absent.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&absent.stderr).contains(&missing.display().to_string()),
        "{absent:?}"
    );
    let error = symfonic_evals::build_viewer(std::slice::from_ref(&missing), &missing)
        .expect_err("no directory to read");
    assert!(error.to_string().contains("no-such-reports"), "{error}");
}
