//! A secret planted in turn state (or in a person's answer) never reaches a
//! rendered account, a panic message, a JSON report or stderr, however a
//! deployment echoes it: into attributes, answer, model input, tool
//! arguments and results, count names, error messages or a panic.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use symfonic_evals::{
    run_pack, CapabilityEvidence, PackRun, Pause, PromptRequest, ResumeRequest, RunOptions,
    StageOutcome, StageRecord, Target, TargetContext, ToolCall, TurnError, TurnRecord, Verdict,
    PROCEDURAL_PRECONDITION, PROCEDURAL_REVIEW,
};

const SECRET: &str = "SECRET-CARD-4111-1111-1111-1111";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Leak {
    /// Echoes the state into every part of the turn record.
    Echo,
    /// Fails the turn with the state in the error message.
    Error,
    /// Fails the turn with a secret as the error's kind and in its code,
    /// each a plain name the process protocol would accept.
    Kind,
    /// Panics with the state in the message.
    Panic,
    /// Spawns a thread of its own that panics with the state in the message.
    SpawnedPanic,
}

/// A deployment that leaks whatever it is given.
struct Leaky {
    leak: Leak,
    saw_secret: Arc<AtomicUsize>,
}

impl Leaky {
    fn echo(text: &str, state: Value) -> TurnRecord {
        TurnRecord::builder()
            .answer(text)
            .model_input(format!("recall: {text}"))
            .tool_call(ToolCall::succeeded(
                "c1",
                "issue_refund",
                state.clone(),
                json!(text),
            ))
            .tool_call(ToolCall::failed("c1", "issue_refund", state.clone(), text))
            .stage(StageRecord::new("procedural_precondition", StageOutcome::Passed).count(text, 1))
            .attribute("procedural_promoted", state.clone())
            .attribute("procedural_review", state)
            .attribute("procedural_review_ids", [text])
            .attribute("procedural_enforcement_ids", [format!("{text}!")])
            .build()
    }

    fn leak(&self, value: Value) -> Result<TurnRecord, TurnError> {
        if value.is_null() {
            // A demonstration: promote, so the run reaches the turns with state.
            return Ok(TurnRecord::builder()
                .attribute("procedural_promoted", 1)
                .build());
        }
        let text = value.to_string();
        if text.contains(SECRET) {
            self.saw_secret.fetch_add(1, Ordering::SeqCst);
            match self.leak {
                Leak::Panic => panic!("refund failed for {text}"),
                Leak::SpawnedPanic => {
                    let message = text.clone();
                    let _ =
                        std::thread::spawn(move || panic!("worker failed for {message}")).join();
                }
                Leak::Error => return Err(TurnError::new("RefundDeclined", text)),
                Leak::Kind => {
                    return Err(
                        TurnError::new(SECRET, "declined").with_code(format!("card:{SECRET}"))
                    );
                }
                Leak::Echo => {}
            }
        }
        Ok(Self::echo(&text, value))
    }
}

impl Target for Leaky {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
            .capability("tools")
            .capability("human")
            .operation("resume")
            .with_trait(PROCEDURAL_PRECONDITION)
            .with_trait(PROCEDURAL_REVIEW)
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        if request.prompt.starts_with("pause") {
            let pause = Pause::new(format!("ask {SECRET}"), true, SECRET);
            return Ok(TurnRecord::builder().paused(pause).build());
        }
        self.leak(request.state.clone().unwrap_or(Value::Null))
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        self.leak(request.answer.clone())
    }
}

fn procedural_with_secret() -> symfonic_evals::PackDefinition {
    let mut pack = common::procedural_pack();
    pack.draft_state = json!({"region": "EU", "card": SECRET, "draft": true});
    pack.satisfied_state = json!({"region": "US", "card": SECRET});
    pack.blocked_state = json!({"region": "EU", "card": SECRET});
    common::procedural(pack)
}

fn approval_with_secret() -> symfonic_evals::PackDefinition {
    let mut pack = common::approval_pack();
    pack.pause_prompt = "pause for a manager".into();
    pack.answer = json!({"approved": true, "note": SECRET});
    common::approval(pack)
}

fn run(name: &str, definition: &symfonic_evals::PackDefinition, leak: Leak) -> PackRun {
    common::private_report_dir("reports");
    let saw_secret = Arc::new(AtomicUsize::new(0));
    let seen = saw_secret.clone();
    // On a thread: the counter below is read in this process.
    let on_a_thread = RunOptions {
        isolation: symfonic_evals::Isolation::Thread,
        ..RunOptions::default()
    };
    let run = run_pack(name, definition, &on_a_thread, move |_| Leaky {
        leak,
        saw_secret: seen.clone(),
    });
    assert!(
        saw_secret.load(Ordering::SeqCst) > 0,
        "the secret never reached the target"
    );
    run
}

/// Checks every account of `run` for the secret, and that the run failed.
fn assert_sealed(run: &PackRun) {
    assert!(!run.passed());
    let rendered = run.render();
    assert!(!rendered.contains(SECRET), "{rendered}");
    assert!(!format!("{run:?}").contains(SECRET));
    assert!(!format!("{:?}", run.failures()).contains(SECRET));

    let panic = catch_unwind(AssertUnwindSafe(|| run.assert_passed())).expect_err("must fail");
    let message = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .expect("a text panic");
    assert!(message.starts_with("pack "), "{message}");
    assert!(!message.contains(SECRET), "{message}");

    let path = run.report_path().expect("a report was written");
    assert!(path.starts_with(common::private_report_dir("reports")));
    let report = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<Value>(&report).expect("valid JSON");
    assert!(!report.contains(SECRET), "{report}");

    // The run's viewer page and the directory's index, every byte.
    let page = run.viewer_path().expect("a viewer page was written");
    assert_no_secret_in(&std::fs::read(page).unwrap(), page);
    let index = path.with_file_name(symfonic_evals::VIEWER_INDEX_FILE);
    assert_no_secret_in(&std::fs::read(&index).unwrap(), &index);
}

/// Searches every byte of `bytes` for the secret and its distinctive part,
/// case-insensitively.
fn assert_no_secret_in(bytes: &[u8], path: &std::path::Path) {
    let needles = [SECRET, "4111-1111-1111-1111", "SECRET-CARD"];
    for needle in needles {
        assert!(
            !bytes
                .windows(needle.len())
                .any(|w| w.eq_ignore_ascii_case(needle.as_bytes())),
            "{} carries {needle}",
            path.display()
        );
    }
}

#[test]
fn the_rebuilt_viewer_carries_no_secret() {
    // A secret in every field the deployment controls: answer, model
    // input, tool arguments and results, count names, attributes (echo);
    // error messages (error); error kinds and codes (kind); panic messages
    // (panic); a person's answer and pause (approval).
    let runs = [
        run("secrets.viewer_echo", &procedural_with_secret(), Leak::Echo),
        run(
            "secrets.viewer_error",
            &procedural_with_secret(),
            Leak::Error,
        ),
        run("secrets.viewer_kind", &procedural_with_secret(), Leak::Kind),
        run(
            "secrets.viewer_panic",
            &procedural_with_secret(),
            Leak::Panic,
        ),
        run("secrets.viewer_answer", &approval_with_secret(), Leak::Echo),
    ];
    for run in &runs {
        assert!(!run.passed());
        // The secret reached the report's source: the runs saw it.
        assert!(run.viewer_path().is_some());
    }
    let dir = common::private_report_dir("reports");
    let out = dir.join("rebuilt");
    let index = symfonic_evals::build_viewer(&[dir.to_path_buf()], &out).expect("rebuilt");
    let mut pages = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        assert_no_secret_in(&std::fs::read(&path).unwrap(), &path);
        pages += 1;
    }
    assert!(pages > runs.len(), "{pages} file(s) in {}", out.display());
    let html = std::fs::read_to_string(index).unwrap();
    for run in &runs {
        assert!(html.contains(run.name()), "{} is listed", run.name());
    }
    // And the pages written beside the reports as the runs finished.
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "html") {
            assert_no_secret_in(&std::fs::read(&path).unwrap(), &path);
        }
    }
}

#[test]
fn echoed_state_stays_out_of_every_account() {
    let run = run("secrets.echo", &procedural_with_secret(), Leak::Echo);
    assert_eq!(run.verdict(), &Verdict::Failed);
    // Observed values were reported, as digests.
    let observed: Vec<String> = run.failures().into_iter().map(|f| f.observed).collect();
    assert!(
        observed.iter().any(|o| o.contains("sha256:")),
        "{observed:?}"
    );
    // Each step's state is named by its digest, never by its values.
    assert!(run.render().contains("; state sha256:"), "{}", run.render());
    assert_sealed(&run);
}

#[test]
fn state_in_an_error_message_stays_out_of_every_account() {
    let run = run("secrets.error", &procedural_with_secret(), Leak::Error);
    common::assert_fails_at(&run, "draft probe", "UnexpectedError");
    assert_sealed(&run);
}

#[test]
fn a_secret_as_the_error_kind_or_code_stays_out_of_every_account() {
    let run = run("secrets.kind", &procedural_with_secret(), Leak::Kind);
    let failure = common::assert_fails_at(&run, "draft probe", "UnexpectedError");
    assert!(
        failure.observed.starts_with("error sha256:"),
        "the kind is digested: {}",
        failure.observed
    );
    assert!(
        failure.observed.contains("[code sha256:"),
        "{}",
        failure.observed
    );
    assert_sealed(&run);
}

#[test]
fn state_in_a_panic_message_stays_out_of_every_account() {
    let run = run("secrets.panic", &procedural_with_secret(), Leak::Panic);
    common::assert_fails_at(&run, "draft probe", "TargetPanicked");
    assert_sealed(&run);
}

#[test]
fn a_secret_answer_and_pause_stay_out_of_every_account() {
    for (name, leak) in [
        ("secrets.answer_echo", Leak::Echo),
        ("secrets.answer_error", Leak::Error),
    ] {
        let run = run(name, &approval_with_secret(), leak);
        assert_sealed(&run);
    }
}

#[test]
fn a_constructor_panic_stays_out_of_the_verdict() {
    common::private_report_dir("reports");
    let run = run_pack(
        "secrets.constructor",
        &procedural_with_secret(),
        &RunOptions::default(),
        |_: &TargetContext| -> Leaky { panic!("cannot open store at {SECRET}") },
    );
    assert!(matches!(run.verdict(), Verdict::Unbuildable(_)));
    assert_sealed(&run);
}

/// Run by [`stderr_carries_no_secret`] in a child process, whose stderr it reads.
#[test]
#[ignore = "run as a child process by stderr_carries_no_secret"]
fn child_leaks_into_stderr() {
    for leak in [Leak::Echo, Leak::Error] {
        let run = run("secrets.child", &procedural_with_secret(), leak);
        let _ = catch_unwind(AssertUnwindSafe(|| run.assert_passed()));
    }
    let spawned = run(
        "secrets.child",
        &procedural_with_secret(),
        Leak::SpawnedPanic,
    );
    let _ = catch_unwind(AssertUnwindSafe(|| spawned.assert_passed()));
    run("secrets.child", &approval_with_secret(), Leak::Echo).assert_passed();
    run("secrets.child", &procedural_with_secret(), Leak::Panic).assert_passed();
}

#[test]
fn stderr_carries_no_secret() {
    let dir = common::private_report_dir("reports");
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "secrets::child_leaks_into_stderr",
            "--ignored",
            "--nocapture",
        ])
        .args(["--test-threads", "1"])
        .env(symfonic_evals::REPORT_DIR_ENV, dir)
        .env_remove(symfonic_evals::SHOW_VALUES_ENV)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("the child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the child's last run must fail");
    assert!(
        stderr.contains("[FAIL]"),
        "the child's account was captured: {stderr}"
    );
    assert!(!stderr.contains(SECRET), "{stderr}");
    assert!(!stdout.contains(SECRET), "{stdout}");
    // A thread the deployment spawned panicked: where is shown, what is not.
    assert!(
        stderr.contains("panicked at") && stderr.contains("message withheld"),
        "{stderr}"
    );
}
