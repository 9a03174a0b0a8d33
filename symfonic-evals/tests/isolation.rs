//! Deployments run isolated in a child process: a hostile one (exit, abort,
//! stack overflow, a signal, evidence nested 100,000 levels deep) fails the
//! step it happened in with a named error while this binary and its other
//! tests go on; a restart is a real process restart, so a store kept in a
//! `static` is caught; and a crash can be injected at an effect boundary.
#![cfg(unix)]

use crate::common;

use std::sync::Mutex;

use serde_json::{json, Value};
use symfonic_evals::{
    run_pack, run_scenario, run_scenario_with, Assertion, CapabilityEvidence, Isolation,
    PromptRequest, ResumeRequest, RunOptions, Scenario, Step, StepErrorKind, Target, TargetContext,
    ToolCall, TrialPolicy, TurnError, TurnRecord, Verdict,
};

/// Misbehaves as its prompt says; otherwise answers with the tool call the
/// extension pack wants.
struct Hostile {
    calls: u32,
}

fn nested(levels: usize) -> Value {
    let mut value = Value::Null;
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    value
}

#[allow(unconditional_recursion)]
fn overflow(depth: u64) -> u64 {
    // A large frame, so the stack runs out after few calls.
    let frame = std::hint::black_box([depth; 4096]);
    overflow(frame[7] + 1) + frame[0]
}

impl Target for Hostile {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new().contributes("extensions", common::extension::TOOL)
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        match request.prompt.as_str() {
            "exit" => std::process::exit(3),
            "abort" => std::process::abort(),
            "overflow" => {
                let _ = overflow(0);
                unreachable!()
            }
            "signal" => {
                // SAFETY: signals this very process, which then dies.
                unsafe { libc::raise(libc::SIGKILL) };
                unreachable!()
            }
            "deep" => Ok(TurnRecord::builder()
                .attribute("trail", nested(100_000))
                .tool_call(ToolCall::succeeded("c1", "t", nested(100_000), json!(1)))
                .build()),
            _ => {
                self.calls += 1;
                Ok(TurnRecord::builder()
                    .answer("Oslo: 12 degrees, clear")
                    .model_input("tool result: {\"sky\": \"clear\", \"celsius\": 12}")
                    .tool_call(ToolCall::succeeded(
                        common::call_id(),
                        common::extension::TOOL,
                        json!({"city": "Oslo"}),
                        json!({"celsius": 12, "sky": "clear"}),
                    ))
                    .build())
            }
        }
    }
}

fn hostile_run(name: &str, prompt: &str) -> symfonic_evals::PackRun {
    let mut pack = common::extension_pack();
    pack.prompt = prompt.into();
    run_pack(
        name,
        &common::extension(pack),
        &RunOptions::default(),
        |_| Hostile { calls: 0 },
    )
}

#[test]
fn a_deployment_that_ends_its_process_fails_the_step_naming_how() {
    for (prompt, how) in [
        ("exit", "exit status: 3"),
        ("abort", "signal: 6"),
        ("overflow", "signal: 6"),
        ("signal", "signal: 9"),
    ] {
        let run = hostile_run(&format!("isolation.hostile.{prompt}"), prompt);
        let failure = common::assert_fails_at(&run, "extension call", "ProcessFailed");
        assert!(failure.observed.contains("ProcessExited"), "{failure:?}");
        assert!(failure.observed.contains(how), "{prompt}: {failure:?}");
    }
}

#[test]
fn the_binary_goes_on_after_a_deployment_ended_its_process() {
    // Beside the hostile runs above (same binary, maybe at the same time):
    // this one is unaffected.
    let run = hostile_run("isolation.unaffected", "what is the weather in Oslo");
    run.assert_passed();
}

#[test]
fn evidence_nested_100_000_levels_deep_is_a_named_error_in_either_mode() {
    for isolation in [Isolation::Process, Isolation::Thread] {
        let mut pack = common::extension_pack();
        pack.prompt = "deep".into();
        let options = RunOptions {
            isolation,
            ..RunOptions::default()
        };
        let run = run_pack(
            &format!("isolation.deep.{}", isolation.as_str()),
            &common::extension(pack),
            &options,
            |_| Hostile { calls: 0 },
        );
        let failure = common::assert_fails_at(&run, "extension call", "MalformedEvidence");
        assert!(
            failure.observed.contains("EvidenceTooDeep"),
            "{isolation:?}: {failure:?}"
        );
        assert!(
            failure.observed.contains("attribute `trail`"),
            "{failure:?}"
        );
    }
}

/// Remembers spent tokens in a `static`: it survives a drop and rebuild in
/// one process, and nothing else.
static SPENT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A desk whose pauses and checkpoints live in the durable directory, but
/// whose spent marks live in the static above.
struct StaticSpent {
    dir: std::path::PathBuf,
}

impl Target for StaticSpent {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
            .capability("human")
            .operation("resume")
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        // Unique per trial: every trial has a durable directory of its own.
        let trial = self.dir.file_name().unwrap().to_string_lossy().into_owned();
        // A random part: a token spelled from the conversation's name
        // alone is one a neighbour can guess.
        let random = {
            use std::hash::BuildHasher;
            std::collections::hash_map::RandomState::new().hash_one(&trial)
        };
        let token = format!("{}-{trial}-{random:016x}", request.conversation);
        std::fs::write(self.dir.join(&token), &request.conversation).unwrap();
        Ok(TurnRecord::builder()
            .tool_call(ToolCall::pending("c1", "ask_user", json!({})))
            .paused(symfonic_evals::Pause::new("ask_user", true, token))
            .build())
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        let owner = std::fs::read_to_string(self.dir.join(&request.token))
            .map_err(|_| TurnError::new("UnknownPauseToken", "no such pause"))?;
        if owner != request.conversation {
            return Err(TurnError::new("ForeignPauseToken", "not yours"));
        }
        let mut spent = SPENT.lock().unwrap();
        if spent.contains(&request.token) {
            return Err(TurnError::new("PauseTokenReplayedError", "spent"));
        }
        spent.push(request.token.clone());
        Ok(TurnRecord::builder()
            .resolved(symfonic_evals::ResolvedCall::new(
                "c1",
                symfonic_evals::ToolOutcome::Succeeded {
                    result: request.answer.clone(),
                },
            ))
            .attribute("resume_outcome", "resumed")
            .attribute("resume_name", "ask_user")
            .attribute("resume_checkpoint", true)
            .attribute("resume_continued", true)
            .build())
    }
}

#[test]
fn a_store_kept_in_a_static_survives_an_in_thread_restart_but_not_an_isolated_one() {
    let mut pack = common::approval_pack();
    pack.interaction_tool = "ask_user".into();
    // The fixture reads no answer; what this test watches is its store.
    pack.skip_probes = vec![
        "approval/unfit-answer".into(),
        "approval/type-confused-answer".into(),
    ];
    let definition = common::approval(pack);
    let run = |isolation| {
        run_pack(
            &format!("isolation.static.{isolation:?}"),
            &definition,
            &RunOptions {
                isolation,
                ..RunOptions::default()
            },
            |ctx: &TargetContext| StaticSpent {
                dir: ctx.durable_dir().to_owned(),
            },
        )
    };
    // On a thread the static outlives the "restart": the probe is fooled.
    run(Isolation::Thread).assert_passed();
    // In a child the restart is real: the spent mark is gone, the replay
    // redeems again, and the placement probe catches it.
    let isolated = run(Isolation::Process);
    let failure = common::assert_fails_at(&isolated, "replay", "ExpectedError");
    assert_eq!(failure.scenario, "approval/restart-before-replay");
}

/// Applies two effects per turn through the ledger, keyed by the prompt so
/// a retry reuses the keys, and remembers nothing else.
struct TwoEffects {
    ledger: symfonic_evals::SideEffectLedger,
}

impl Target for TwoEffects {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        for n in 1..=2 {
            self.ledger.record(&format!("{}:{n}", request.prompt));
        }
        Ok(TurnRecord::builder().answer("done").build())
    }
}

fn crash_at(k: u32, expected: Vec<Assertion>) -> Scenario {
    let step = Step::prompt("pay", "pay order 7", "c")
        .crashing_at_effect(k)
        .asserting(expected);
    Scenario::new(
        format!("isolation.crash.{k}"),
        vec![step],
        TrialPolicy::default(),
    )
}

#[test]
fn a_crash_at_an_effect_restarts_the_deployment_and_retries_the_request() {
    // Killed right after the harness granted effect k: the retry reuses the
    // keys, so effect k shows as a duplicate and nothing is applied twice.
    for k in [1, 2] {
        let retried = vec![
            Assertion::CrashedEffectRetried,
            Assertion::ledger(2 + k as u64, 2, k as u64),
        ];
        let trials = run_scenario_with(
            &crash_at(k, retried),
            Isolation::Process,
            |ctx: &TargetContext| TwoEffects {
                ledger: ctx.ledger().clone(),
            },
        );
        assert!(trials[0].passed(), "crash at {k}: {:#?}", trials[0]);
        assert!(trials[0].steps[0].restarted || trials[0].steps[0].error.is_none());
    }
}

#[test]
fn a_crash_point_past_the_last_effect_or_on_a_thread_is_refused_by_name() {
    let never = crash_at(3, vec![]);
    let trials = run_scenario_with(&never, Isolation::Process, |ctx: &TargetContext| {
        TwoEffects {
            ledger: ctx.ledger().clone(),
        }
    });
    let error = trials[0].steps[0].error.as_ref().expect("refused");
    assert_eq!(error.kind, StepErrorKind::CrashNotInjected);
    assert!(error.observed.contains("fewer than 3"), "{error:?}");
    let on_a_thread = run_scenario(&crash_at(1, vec![]), |ctx: &TargetContext| TwoEffects {
        ledger: ctx.ledger().clone(),
    });
    let error = on_a_thread[0].steps[0].error.as_ref().expect("refused");
    assert_eq!(error.kind, StepErrorKind::CrashNotInjected);
    assert!(error.observed.contains("child process"), "{error:?}");
}

#[test]
fn other_tests_in_this_binary_run_normally() {
    assert_eq!(2 + 2, 4);
    let verdict = Verdict::Passed;
    assert_eq!(verdict, Verdict::Passed);
}
