//! A Python deployment whose turn raises is reported with the exception's
//! type, qualified name and frame (file, line, function), over the process
//! protocol, in the failure message and the report directory (JSON report,
//! index and viewer pages), and the exception's text appears nowhere: not
//! in the report directory, the failure message or the child's stderr.
//! Only the adopter's opt-in (`serve(..., exception_messages=True)`) shows
//! it.
#![cfg(unix)]

use std::path::{Path, PathBuf};

use symfonic_evals::process::{python_interpreter, ProcessSpec};
use symfonic_evals::{
    run_pack, ExtensionToolPack, Isolation, PackDefinition, PackRun, ProcessTarget, RunOptions,
    StepErrorKind, REPORT_DIR_ENV,
};

const SECRET: &str = "secret-text 9f2c";

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/process_children/raises.py")
}

/// The line of `raises.py` that raises, found by its comment.
fn raising_line() -> u64 {
    let source = std::fs::read_to_string(script()).unwrap();
    let index = source
        .lines()
        .position(|line| line.contains("# the raising line"))
        .expect("the raising line is marked");
    index as u64 + 1
}

/// Runs the extension pack against `raises.py`, its stderr appended to
/// `stderr_log`, with the package directory as the child's working
/// directory (what the frames' files are relative to).
fn run_raises(name: &str, opt_in: bool, stderr_log: &Path) -> PackRun {
    let mut spec = ProcessSpec::new("sh")
        .arg("-c")
        .arg("exec \"$@\" 2>>\"$RAISES_STDERR\"")
        .arg("sh")
        .arg(python_interpreter("python3"))
        .arg(script())
        .env("RAISES_STDERR", stderr_log)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if opt_in {
        spec = spec.arg("--opt-in");
    }
    let pack = PackDefinition::ExtensionTool(ExtensionToolPack {
        prompt: "what is the weather in Lisbon".into(),
        tool_name: "weather_lookup".into(),
        ..ExtensionToolPack::default()
    });
    let options = RunOptions {
        isolation: Isolation::Thread,
        ..RunOptions::default()
    };
    run_pack(name, &pack, &options, move |ctx| {
        ProcessTarget::spawn(ctx, &spec).unwrap()
    })
}

/// Every file under `dir`, read as text.
fn files_under(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            out.push((path, text));
        }
    }
    out
}

/// The panic message of `assert_passed`: the failure message a test shows.
fn failure_message(run: &PackRun) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.assert_passed()))
        .expect_err("the pack fails");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .expect("a text panic")
}

#[test]
fn a_raised_exception_is_reported_by_type_and_frame_never_by_its_text() {
    let reports = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary sets it before anything runs, so
    // no other thread reads the environment meanwhile.
    unsafe { std::env::set_var(REPORT_DIR_ENV, reports.path()) };
    let logs = tempfile::tempdir().unwrap();
    let stderr_log = logs.path().join("stderr.log");
    let frame = format!(
        "tests/process_children/raises.py:{} in parse_amount",
        raising_line()
    );

    let run = run_raises("raises.default", false, &stderr_log);
    let failure = run.first_failure().expect("the pack fails");
    assert_eq!(failure.assertion, StepErrorKind::UnexpectedError.as_str());
    assert!(
        failure.observed.starts_with(&format!(
            "error UnhandledException; raised ValueError (builtins.ValueError) at {frame}"
        )),
        "{failure:?}"
    );
    let message = failure_message(&run);
    assert!(
        message.contains("ValueError (builtins.ValueError)"),
        "{message}"
    );
    assert!(message.contains(&frame), "{message}");
    assert!(
        message.contains("Traceback (most recent call last):"),
        "{message}"
    );
    assert!(message.contains("in Raises.run_turn"), "{message}");
    assert!(!message.contains(SECRET), "{message}");

    let files = files_under(reports.path());
    let page = run.viewer_path().expect("a run page");
    assert!(files.iter().any(|(path, _)| path == page));
    for (path, text) in &files {
        assert!(
            !text.contains(SECRET),
            "{} quotes the exception",
            path.display()
        );
    }
    let report = std::fs::read_to_string(run.report_path().unwrap()).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let step = &report["scenarios"][0]["trials"][0]["steps"][0];
    let exception = &step["error"]["exception"];
    assert_eq!(exception["type"], "ValueError", "{step:#}");
    assert_eq!(exception["qualified_name"], "builtins.ValueError");
    let innermost = exception["frames"].as_array().unwrap().last().unwrap();
    assert_eq!(innermost["file"], "tests/process_children/raises.py");
    assert_eq!(innermost["line"], raising_line());
    assert_eq!(innermost["function"], "parse_amount");
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        html.contains("class=\"traceback\""),
        "the run page shows the traceback"
    );
    assert!(html.contains(&frame.replace('<', "&lt;")));

    let stderr = std::fs::read_to_string(&stderr_log).unwrap_or_default();
    assert!(!stderr.contains(SECRET), "{stderr}");

    // Opted in, the message is the adopter's to show.
    let opted = run_raises("raises.opted_in", true, &stderr_log);
    let failure = opted.first_failure().expect("the pack fails");
    assert!(
        failure
            .observed
            .contains(&format!("ValueError (builtins.ValueError) \"{SECRET}")),
        "{failure:?}"
    );
}
