// The robustness cases, included by `process_robustness.rs` (children
// spawned) and `process_fork_server.rs` (children forked by the fork
// server), each defining `FORK_SERVER`: every guarantee holds either way.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use symfonic_evals::process::{kinds, ProcessSpec, DURABLE_DIR_ENV};
use symfonic_evals::{
    LedgerCounts, ProcessTarget, PromptRequest, Target, TargetContext, TurnError,
};

fn script() -> PathBuf {
    // The fork server imports its script once: the misbehaving child runs
    // at import, so it is reached through a script that does nothing then.
    let name = if FORK_SERVER {
        "misbehave_forkable.py"
    } else {
        "misbehave.py"
    };
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/process_children")
        .join(name)
}

fn spec(flags: &[&str]) -> ProcessSpec {
    ProcessSpec::new("python3")
        .arg(script())
        .args(flags)
        .fork_server(FORK_SERVER)
        .request_timeout(Duration::from_secs(10))
        .handshake_timeout(Duration::from_secs(10))
        .shutdown_grace(Duration::from_millis(500))
}

fn prompt(text: &str) -> PromptRequest {
    PromptRequest::new("robustness", text)
}

/// Every pid the script recorded for this context, in start order.
fn started_pids(context: &TargetContext) -> Vec<u32> {
    std::fs::read_to_string(context.durable_path("child.pids"))
        .unwrap_or_default()
        .lines()
        .map(|line| line.parse().expect("a pid per line"))
        .collect()
}

/// Whether `pid` is a live process (a zombie is not live, and is reported
/// separately by `reaped`).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !(state.starts_with('Z') || state.starts_with('X'))
        }
    }
}

/// Whether our child `pid` is gone entirely: not running and not a zombie.
fn reaped(pid: u32) -> bool {
    !PathBuf::from(format!("/proc/{pid}")).exists()
}

fn assert_all_reaped(context: &TargetContext) {
    let pids = started_pids(context);
    assert!(!pids.is_empty(), "the child never started");
    for pid in pids {
        assert!(
            reaped(pid),
            "child {pid} is still present (running or zombie)"
        );
    }
}

/// Runs one misbehaving turn and returns its error, checking the child is
/// gone immediately (before the target is dropped) and that later turns
/// report the process as unavailable.
fn broken_turn(context: &TargetContext, spec: &ProcessSpec, text: &str) -> TurnError {
    let mut target = ProcessTarget::spawn(context, spec).expect("the handshake succeeds");
    let error = target
        .run_turn(&prompt(text))
        .expect_err("the turn must fail");
    assert_eq!(
        target.pid(),
        None,
        "a child that broke the protocol is stopped"
    );
    assert_all_reaped(context);
    let later = target
        .run_turn(&prompt("echo"))
        .expect_err("the child is gone");
    assert_eq!(later.kind, kinds::PROCESS_UNAVAILABLE);
    assert!(later.message.contains(&error.kind), "{later}");
    error
}

#[test]
fn durable_dir_reaches_the_child_by_flag_environment_and_handshake() {
    let context = TargetContext::fresh(4).unwrap();
    let mut target = ProcessTarget::spawn(&context, &spec(&[])).unwrap();
    assert_eq!(target.protocol_version(), 1);
    assert!(target.capabilities().has_capability("tools"));
    let record = target.run_turn(&prompt("echo")).unwrap();
    let dir = serde_json::json!(context.durable_dir().to_str().unwrap());
    for name in ["env", "flag", "hello"] {
        assert_eq!(record.attributes()[name], dir, "{name} ({DURABLE_DIR_ENV})");
    }
    assert_eq!(record.attributes()["trial"], 4);
    assert_eq!(record.attributes()["versions"], serde_json::json!([1]));
}

#[test]
fn the_harness_owns_the_ledger_the_child_applies_through() {
    let context = TargetContext::fresh(0).unwrap();
    let mut target = ProcessTarget::spawn(&context, &spec(&[])).unwrap();
    let record = target.run_turn(&prompt("ledger")).unwrap();
    assert_eq!(
        record.attributes()["applied"],
        serde_json::json!([true, false, true])
    );
    let expected = LedgerCounts {
        attempts: 3,
        effects: 2,
        duplicates: 1,
    };
    assert_eq!(context.ledger().counts(), expected);
}

#[test]
fn a_typed_error_passes_through_and_the_child_keeps_serving() {
    let context = TargetContext::fresh(0).unwrap();
    let mut target = ProcessTarget::spawn(&context, &spec(&[])).unwrap();
    let error = target.run_turn(&prompt("typed_error")).unwrap_err();
    assert_eq!(error.kind, "PauseTokenReplayedError");
    assert!(target.run_turn(&prompt("next")).is_ok());
}

#[test]
fn a_child_that_exits_mid_turn_names_its_exit_status() {
    let context = TargetContext::fresh(0).unwrap();
    let error = broken_turn(&context, &spec(&[]), "exit");
    assert_eq!(error.kind, kinds::PROCESS_EXITED);
    assert!(error.message.contains("exit status: 3"), "{error}");
    assert!(
        !error.message.contains("marker-7f3a"),
        "stderr is opt-in: {error}"
    );
}

#[test]
fn the_stderr_tail_is_quoted_only_when_the_adopter_opts_in() {
    let context = TargetContext::fresh(0).unwrap();
    let opted_in = spec(&[]).include_stderr_tail(true);
    let error = broken_turn(&context, &opted_in, "exit");
    assert_eq!(error.kind, kinds::PROCESS_EXITED);
    assert!(error.message.contains("marker-7f3a"), "{error}");
}

#[test]
fn malformed_json_and_non_protocol_lines_are_protocol_violations() {
    for text in ["malformed", "non_protocol", "unknown_type"] {
        let context = TargetContext::fresh(0).unwrap();
        let error = broken_turn(&context, &spec(&[]), text);
        assert_eq!(error.kind, kinds::PROTOCOL_VIOLATION, "{text}: {error}");
        assert!(
            !error.message.contains("refund"),
            "no line content: {error}"
        );
    }
}

#[test]
fn fields_that_break_the_evidence_contract_are_protocol_violations() {
    for text in [
        "pending_completed",
        "long_code",
        "free_code",
        "malformed_question",
        "empty_question_id",
        "unknown_role",
    ] {
        let context = TargetContext::fresh(0).unwrap();
        let error = broken_turn(&context, &spec(&[]), text);
        assert_eq!(error.kind, kinds::PROTOCOL_VIOLATION, "{text}: {error}");
        assert!(!error.message.contains("tok-1"), "no content: {error}");
    }
}

#[test]
fn an_oversized_line_is_refused_without_buffering_it() {
    let context = TargetContext::fresh(0).unwrap();
    let capped = spec(&[]).max_line_bytes(1 << 20);
    let error = broken_turn(&context, &capped, "oversized");
    assert_eq!(error.kind, kinds::MESSAGE_TOO_LARGE);
    assert!(error.message.len() < 400, "no line content in the error");
}

#[test]
fn a_silent_child_times_out_on_the_targets_own_deadline() {
    let context = TargetContext::fresh(0).unwrap();
    let quick = spec(&[]).request_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let error = broken_turn(&context, &quick, "silent");
    assert_eq!(error.kind, kinds::PROCESS_TIMEOUT);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_silent_handshake_times_out_too() {
    let context = TargetContext::fresh(0).unwrap();
    // Long enough for the interpreter to start (and record its pid) on a
    // loaded machine, short enough to show the deadline is the target's own.
    let quick = spec(&["--silent-handshake"]).handshake_timeout(Duration::from_secs(4));
    let error = ProcessTarget::spawn(&context, &quick).unwrap_err();
    assert_eq!(error.kind, kinds::PROCESS_TIMEOUT);
    assert_all_reaped(&context);
}

#[test]
fn a_stderr_flood_neither_blocks_the_child_nor_grows_without_bound() {
    let context = TargetContext::fresh(0).unwrap();
    let mut target = ProcessTarget::spawn(&context, &spec(&[]).include_stderr_tail(true)).unwrap();
    // A child blocked on a full stderr pipe never answers: the request's
    // own deadline turns that into an error, so no wall-clock bound is
    // needed here (one flaked on a loaded machine).
    let record = target
        .run_turn(&prompt("flood"))
        .expect("the flood is drained");
    assert_eq!(record.attributes()["flooded"], true);
    let error = target.run_turn(&prompt("exit")).unwrap_err();
    let tail = error.message.split("--- stderr tail ---").nth(1).unwrap();
    assert!(
        tail.len() <= 2048 + 1,
        "the quoted tail is bounded: {}",
        tail.len()
    );
    assert!(tail.contains("marker-7f3a"));
}

#[test]
fn an_unknown_protocol_version_is_refused_at_the_handshake() {
    let context = TargetContext::fresh(0).unwrap();
    let error = ProcessTarget::spawn(&context, &spec(&["--version", "7"])).unwrap_err();
    assert_eq!(error.kind, kinds::UNSUPPORTED_PROTOCOL_VERSION);
    assert!(error.message.contains('7'), "{error}");
    assert_all_reaped(&context);
}

#[test]
fn an_answer_to_a_request_never_sent_is_an_id_mismatch() {
    let context = TargetContext::fresh(0).unwrap();
    let error = broken_turn(&context, &spec(&[]), "wrong_id");
    assert_eq!(error.kind, kinds::RESPONSE_ID_MISMATCH);
}

#[test]
fn a_missing_program_fails_to_spawn_with_a_named_cause() {
    let context = TargetContext::fresh(0).unwrap();
    let error =
        ProcessTarget::spawn(&context, &ProcessSpec::new("/nonexistent/deployment")).unwrap_err();
    assert_eq!(error.kind, kinds::PROCESS_SPAWN_FAILED);
}

#[test]
fn shutdown_is_orderly_for_a_child_that_obeys_it() {
    let context = TargetContext::fresh(0).unwrap();
    let patient = spec(&[]).shutdown_grace(Duration::from_secs(5));
    let mut target = ProcessTarget::spawn(&context, &patient).unwrap();
    let pid = target.pid().unwrap();
    let status = target.shutdown().expect("it was running");
    assert!(status.success(), "it exited on its own, unkilled: {status}");
    assert!(reaped(pid));
    assert_eq!(
        target.shutdown(),
        None,
        "a second shutdown has nothing to stop"
    );
}

#[test]
fn dropping_the_target_reaps_the_child() {
    let context = TargetContext::fresh(0).unwrap();
    let target = ProcessTarget::spawn(&context, &spec(&[])).unwrap();
    let pid = target.pid().unwrap();
    drop(target);
    assert!(reaped(pid));
}

#[test]
fn a_child_ignoring_shutdown_is_killed_after_the_grace_period() {
    let context = TargetContext::fresh(0).unwrap();
    let grace = Duration::from_millis(300);
    let stubborn = spec(&["--ignore-shutdown"]).shutdown_grace(grace);
    let mut target = ProcessTarget::spawn(&context, &stubborn).unwrap();
    let pid = target.pid().unwrap();
    let started = Instant::now();
    let status = target.shutdown().expect("it was running");
    let took = started.elapsed();
    assert!(
        took >= grace && took < grace + Duration::from_secs(2),
        "{took:?}"
    );
    assert!(!status.success(), "it was killed: {status}");
    assert!(reaped(pid));
}

#[test]
fn nothing_the_child_started_outlives_it() {
    let context = TargetContext::fresh(0).unwrap();
    let mut target = ProcessTarget::spawn(&context, &spec(&[])).unwrap();
    let record = target.run_turn(&prompt("grandchild")).unwrap();
    let grandchild = u32::try_from(record.attributes()["grandchild"].as_u64().unwrap()).unwrap();
    assert!(running(grandchild));
    drop(target);
    let deadline = Instant::now() + Duration::from_secs(2);
    while running(grandchild) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        !running(grandchild),
        "the grandchild {grandchild} was orphaned"
    );
    assert_all_reaped(&context);
}

mod conformance_checks {
    use symfonic_evals::process::{conformance, CheckVerdict, ConformanceInputs};

    use super::spec;

    fn verdicts(flags: &[&str], inputs: &ConformanceInputs) -> Vec<(&'static str, CheckVerdict)> {
        let report = conformance(&spec(flags), inputs);
        println!("{}", report.render());
        report.checks.iter().map(|c| (c.name, c.verdict)).collect()
    }

    #[test]
    fn a_conforming_child_passes_every_check_it_was_given_inputs_for() {
        let inputs = ConformanceInputs::default().effect_prompt("ledger");
        let report = conformance(&spec(&[]), &inputs);
        report.assert_passed();
        assert_eq!(report.checks.len(), 6, "{}", report.render());
        let without = conformance(&spec(&[]), &ConformanceInputs::default());
        assert!(without.passed());
        let ledger = without
            .checks
            .iter()
            .find(|c| c.name == "ledger round trip")
            .unwrap();
        assert_eq!(ledger.verdict, CheckVerdict::NotRun);
    }

    /// The command line's `conformance`: what a test suite outside cargo
    /// (`npm test`, `pytest`) runs; its exit code is the verdict.
    #[test]
    fn the_command_line_checks_a_program_and_exits_with_the_verdict() {
        let cli = |flags: &[&str]| {
            std::process::Command::new(env!("CARGO_BIN_EXE_symfonic-evals"))
                .args(["conformance", "--effect-prompt", "ledger", "--", "python3"])
                .arg(super::script())
                .args(flags)
                .output()
                .expect("the command line runs")
        };
        let passed = cli(&[]);
        let out = String::from_utf8_lossy(&passed.stdout);
        assert_eq!(passed.status.code(), Some(0), "{out}");
        assert!(out.contains("ok   ledger round trip"), "{out}");
        let failed = cli(&["--version", "2"]);
        let out = String::from_utf8_lossy(&failed.stdout);
        assert_eq!(failed.status.code(), Some(1), "{out}");
        assert!(out.contains("FAIL handshake and version choice"), "{out}");
        let usage = std::process::Command::new(env!("CARGO_BIN_EXE_symfonic-evals"))
            .args(["conformance", "--effect-state", "{", "--", "python3"])
            .output()
            .expect("the command line runs");
        assert_eq!(usage.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&usage.stderr).contains("--effect-state is not JSON"));
    }

    #[test]
    fn each_breach_fails_its_own_check() {
        let inputs = ConformanceInputs::default();
        let wrong_version = verdicts(&["--version", "2"], &inputs);
        assert_eq!(
            wrong_version[0],
            ("handshake and version choice", CheckVerdict::Failed)
        );
        let stubborn = verdicts(&["--ignore-shutdown"], &inputs);
        assert!(
            stubborn.contains(&("shutdown", CheckVerdict::Failed)),
            "{stubborn:?}"
        );
        assert!(stubborn.contains(&("end of input is a shutdown", CheckVerdict::Failed)));
        assert!(stubborn.contains(&("request id echoed", CheckVerdict::Passed)));
        let no_effect = ConformanceInputs::default().effect_prompt("echo");
        let report = verdicts(&[], &no_effect);
        assert!(report.contains(&("ledger round trip", CheckVerdict::Failed)));
        let wrong_id = ConformanceInputs {
            prompt: "wrong_id".into(),
            ..ConformanceInputs::default()
        };
        let report = verdicts(&[], &wrong_id);
        assert!(
            !report.contains(&("request id echoed", CheckVerdict::Passed)),
            "{report:?}"
        );
    }
}

#[test]
fn a_spare_answers_the_later_restarts_and_is_killed_with_its_trial() {
    let context = TargetContext::fresh(0).unwrap();
    let spec = spec(&[]).spare(true);
    let first = ProcessTarget::spawn(&context, &spec).unwrap();
    assert!(!first.from_spare(), "the trial's first start is a cold one");
    drop(first);
    let second = ProcessTarget::spawn(&context, &spec).unwrap();
    assert!(!second.from_spare(), "so is its first restart, which starts a spare");
    drop(second);
    let mut third = ProcessTarget::spawn(&context, &spec).unwrap();
    // Forked or spawned, the later restart answers from the spare.
    assert!(third.from_spare(), "the second restart answers from the spare");
    // The spare learns the trial from the handshake, as a cold start does.
    let record = third.run_turn(&prompt("echo")).unwrap();
    let dir = serde_json::json!(context.durable_dir().to_str().unwrap());
    assert_eq!(record.attributes()["hello"], dir);
    assert_eq!(record.attributes()["env"], dir);
    drop(third);
    // Two cold starts, the spare that answered the second restart, and
    // the one started for the next (each records itself as it starts).
    let expected = 4;
    let deadline = Instant::now() + Duration::from_secs(10);
    while started_pids(&context).len() < expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let pids = started_pids(&context);
    assert_eq!(pids.len(), expected, "{pids:?}");
    drop(context);
    for pid in pids {
        assert!(reaped(pid), "child {pid} outlived its trial");
    }
}
