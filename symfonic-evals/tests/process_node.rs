//! The TypeScript companion (`typescript/`, the npm package
//! `symfonic-evals-protocol`) judged from this side: its example help desk,
//! run under `node` as any other child, passes the protocol conformance
//! check and the approval pack, every default probe and the gated-action,
//! denial and unfit-answer probes; a twin that never spends its token is
//! caught by the probe that restarts before the replay and nowhere else, one
//! that reads the answer for truthiness by the unfit and type-confused
//! answers and nowhere else.
//! The same desk passes the extension pack (its `weather_lookup`,
//! witnessed) and, with the desk on LangGraph.js, the exactly-once pack.
//! The desk on LangGraph.js, through the package's adapter, passes the
//! approval pack with the approval on the gated call; its twins (a graph on the
//! in-memory saver, an effect before the `interrupt()` that a resume runs
//! again) are caught where pinned and nowhere else.
//!
//! Where `node` or the package's dependencies are missing, each test says so
//! and passes without running (CI installs them first:
//! `cd typescript && npm ci && npm test`).
#![cfg(unix)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::json;
use symfonic_evals::process::{conformance, CheckVerdict, ConformanceInputs, ProcessSpec};
use symfonic_evals::{
    run_pack, ApprovalResumePack, ExactlyOncePack, ExtensionToolPack, PackDefinition, PackRun,
    ProcessTarget, RunOptions,
};

fn typescript_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../typescript")
}

/// The compiled examples, built once per test binary from the sources (a
/// stale build would judge old code), or why they cannot run here.
fn built() -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let node = Command::new("node").arg("--version").output();
            if !node.is_ok_and(|out| out.status.success()) {
                return Err("`node` is not on PATH".into());
            }
            let dir = typescript_dir();
            if !dir.join("node_modules").is_dir() {
                return Err("typescript/node_modules is missing (run `npm ci` there)".into());
            }
            for script in ["build", "build:test"] {
                let status = Command::new("npm")
                    .args(["run", "--silent", script])
                    .current_dir(&dir)
                    .status()
                    .map_err(|e| format!("npm could not start: {e}"))?;
                assert!(status.success(), "`npm run {script}` in typescript/ failed");
            }
            Ok(dir.join("build/examples"))
        })
        .clone()
}

/// The example (or a twin, by its path under `examples/`) as a process spec.
fn spec(example: &str) -> Option<ProcessSpec> {
    match built() {
        Ok(dir) => Some(
            ProcessSpec::new("node")
                .arg(dir.join(example))
                .include_stderr_tail(true),
        ),
        Err(why) => {
            println!("skipped: {why}");
            None
        }
    }
}

/// The approval pack as the desks are judged: `interaction` is the call
/// that pauses (`ask_user` for the plain desk; the gated call itself for the
/// LangGraph desk, whose approval sits on it).
fn approval(interaction: &str) -> PackDefinition {
    PackDefinition::ApprovalResume(ApprovalResumePack {
        pause_prompt: "escalate ticket 7 to a supervisor".into(),
        answer: json!({"approved": true}),
        interaction_tool: interaction.into(),
        replay_error: vec!["PauseTokenReplayedError".into(), "pause.replayed".into()],
        gated_tool: Some("escalate_ticket".into()),
        deny_answer: Some(json!({"approved": false})),
        unfit_answer: Some(json!({"approved": "maybe"})),
        ..ApprovalResumePack::default()
    })
}

fn run(name: &str, interaction: &str, spec: ProcessSpec) -> PackRun {
    run_pack(
        name,
        &approval(interaction),
        &RunOptions::default(),
        move |ctx| ProcessTarget::spawn(ctx, &spec).expect("the desk starts"),
    )
}

#[test]
fn the_typescript_desk_speaks_the_protocol() {
    let Some(spec) = spec("helpdesk.js") else {
        return;
    };
    let report = conformance(
        &spec,
        &ConformanceInputs::default().effect_prompt("refund order 3"),
    );
    println!("{}", report.render());
    report.assert_passed();
    assert!(
        report
            .checks
            .iter()
            .all(|c| c.verdict == CheckVerdict::Passed),
        "every check ran:\n{}",
        report.render()
    );
}

#[test]
fn the_typescript_desk_passes_the_approval_pack() {
    let Some(spec) = spec("helpdesk.js") else {
        return;
    };
    let run = run("typescript.helpdesk.approval", "ask_user", spec);
    run.assert_passed();
    if run.served_elsewhere() {
        return;
    }
    let names: Vec<&str> = run.scenarios().iter().map(|s| s.name.as_str()).collect();
    println!(
        "approval pack against the TypeScript desk: {} scenarios passed in {:.1?}",
        names.len(),
        run.duration()
    );
    for probe in [
        "approval/crash-inside-resume",
        "approval/gated-action",
        "approval/deny-answer",
        "approval/unfit-answer",
        "approval/type-confused-answer",
    ] {
        assert!(names.contains(&probe), "{probe} ran: {names:?}");
    }
}

#[test]
fn a_typescript_desk_that_never_spends_its_token_is_caught_after_a_restart() {
    let Some(spec) = spec("twins/unspent-token.js") else {
        return;
    };
    let run = run("typescript.twin.unspent-token", "ask_user", spec);
    assert_failed_only(&run, &["approval/restart-before-replay"]);
}

#[test]
fn a_typescript_desk_that_reads_the_answer_for_truthiness_is_caught_by_unfit_answers() {
    let Some(spec) = spec("twins/lax-answer.js") else {
        return;
    };
    let run = run("typescript.twin.lax-answer", "ask_user", spec);
    assert_failed_only(
        &run,
        &["approval/unfit-answer", "approval/type-confused-answer"],
    );
}

/// The twin's run failed exactly these scenarios: each probe that catches
/// it is needed, and the seed and every other probe still pass it.
fn assert_failed_only(run: &PackRun, expected: &[&str]) {
    if run.served_elsewhere() {
        return;
    }
    let failed: Vec<&str> = run
        .scenarios()
        .iter()
        .filter(|s| !s.passed())
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(failed, expected, "caught there and only there");
}

#[test]
fn the_langgraph_desk_passes_the_approval_pack() {
    let Some(spec) = spec("langgraph/desk.js") else {
        return;
    };
    let run = run("typescript.langgraph.approval", "escalate_ticket", spec);
    run.assert_passed();
    if !run.served_elsewhere() {
        println!(
            "approval pack against the LangGraph.js desk: {} scenarios passed in {:.1?}",
            run.scenarios().len(),
            run.duration()
        );
    }
}

#[test]
fn a_langgraph_desk_on_the_in_memory_saver_is_caught_after_a_restart() {
    let Some(spec) = spec("twins/langgraph-memory-saver.js") else {
        return;
    };
    let run = run(
        "typescript.twin.langgraph-memory-saver",
        "escalate_ticket",
        spec,
    );
    assert_failed_only(
        &run,
        &[
            "approval/restart-between-pause-and-resume",
            "approval/crash-inside-resume",
        ],
    );
}

#[test]
fn a_langgraph_effect_before_the_interrupt_is_caught_at_the_pause() {
    let Some(spec) = spec("twins/langgraph-effect-before-interrupt.js") else {
        return;
    };
    let run = run(
        "typescript.twin.langgraph-effect-before-interrupt",
        "escalate_ticket",
        spec,
    );
    assert_failed_only(
        &run,
        &[
            "approval/crash-inside-resume",
            "approval/gated-action",
            "approval/deny-answer",
        ],
    );
}

fn extension() -> PackDefinition {
    PackDefinition::ExtensionTool(ExtensionToolPack {
        prompt: "what is the weather in Lisbon".into(),
        tool_name: "weather_lookup".into(),
        arguments: Some(json!({"city": "Lisbon"})),
        expected_fragments: vec!["Lisbon".into(), "sunny".into()],
        witnessed: true,
        second_prompt: Some("what is the weather in Oslo".into()),
        second_arguments: Some(json!({"city": "Oslo"})),
        // What the harness's MCP fixture answers beside its nonce, so the
        // desk bound to it answers like the real service.
        fixture_result: Some(json!({"city": "Lisbon", "forecast": "sunny, 21 C"})),
        ..ExtensionToolPack::default()
    })
}

fn exactly_once() -> PackDefinition {
    PackDefinition::ExactlyOnce(ExactlyOncePack {
        prompt: "escalate ticket 7 to a supervisor".into(),
        answer: Some(json!({"approved": true})),
        ..ExactlyOncePack::default()
    })
}

/// Runs `pack` against `spec` and requires a pass with `scenarios` scenarios.
fn passes(name: &str, pack: &PackDefinition, spec: ProcessSpec, scenarios: usize) {
    let run = run_pack(name, pack, &RunOptions::default(), move |ctx| {
        ProcessTarget::spawn(ctx, &spec).expect("the desk starts")
    });
    run.assert_passed();
    if !run.served_elsewhere() {
        assert_eq!(run.scenarios().len(), scenarios, "{name}");
        println!(
            "{name}: {scenarios} scenario(s) passed in {:.1?}",
            run.duration()
        );
    }
}

#[test]
fn the_typescript_desk_passes_the_extension_pack() {
    let Some(spec) = spec("helpdesk.js") else {
        return;
    };
    // The seed, repeated and fresh conversations, the result reaching the
    // model, the tool body's witness, a fresh result for a second city, and
    // (the desk binds the harness's MCP fixture) every call judged by what
    // the fixture received.
    passes("typescript.helpdesk.extension", &extension(), spec, 6);
}

#[test]
fn the_typescript_desks_pass_the_exactly_once_pack() {
    let Some(plain) = spec("helpdesk.js") else {
        return;
    };
    let Some(langgraph) = spec("langgraph/desk.js") else {
        return;
    };
    passes(
        "typescript.helpdesk.exactly-once",
        &exactly_once(),
        plain,
        1,
    );
    passes(
        "typescript.langgraph.exactly-once",
        &exactly_once(),
        langgraph,
        1,
    );
}
