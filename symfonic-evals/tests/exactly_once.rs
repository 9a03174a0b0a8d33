//! The exactly-once effects pack against small deployments: a faithful one
//! (keys derived from the request, a resume that can be retried until its
//! continuation is done) passes; each broken variant fails where its flaw
//! shows.
#![cfg(unix)]

use crate::common;

use std::path::PathBuf;

use serde_json::json;
use symfonic_evals::{
    run_pack, CapabilityEvidence, ExactlyOncePack, PackDefinition, PackRun, Pause, PromptRequest,
    ResumeRequest, Retries, RunOptions, SideEffectLedger, Target, TargetContext, TurnError,
    TurnRecord, IDEMPOTENT_EFFECTS,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flaw {
    /// Every attempt takes a fresh key (unique to the process and the
    /// attempt, as a random id per call is).
    FreshKeyPerAttempt,
    /// The desk skips effects it remembers doing, but remembers only in
    /// memory, and keys each attempt afresh.
    DoneOnlyInMemory,
    /// The token is spent durably before the continuation runs, so a crash
    /// inside the resume loses it.
    ResumeNotRetriable,
    /// Effects are keyed by how many orders this process has paid: a retry
    /// in a fresh process reuses the key, and so does the next order after
    /// a restart, which the ledger then refuses as paid before.
    KeyFromProcessCounter,
    /// Both invoices of an order go under the order's key, with neither
    /// tool nor arguments: the ledger refuses the second as paid before,
    /// and nothing in it tells that refusal from a retry of the first.
    InvoicesShareKey,
    /// Not a flaw where retries are the deployment's way: every invoice is
    /// sent twice under its key, as a delivery layer whose acknowledgement
    /// was lost sends it again, and the ledger refuses the second.
    DeliveredTwice,
}

/// Pays two invoices per order: on the prompt, or on the resume when the
/// prompt asks for approval first.
struct Payments {
    ledger: SideEffectLedger,
    dir: PathBuf,
    flaw: Option<Flaw>,
    attempt: u32,
    done: Vec<String>,
    paid_orders: u32,
}

impl Payments {
    fn open(ctx: &TargetContext, flaw: Option<Flaw>) -> Self {
        Self {
            ledger: ctx.ledger().clone(),
            dir: ctx.durable_dir().to_owned(),
            flaw,
            attempt: 0,
            done: Vec::new(),
            paid_orders: 0,
        }
    }

    fn pay(&mut self, order: &str) {
        self.attempt += 1;
        self.paid_orders += 1;
        for invoice in 1..=2 {
            let key = match self.flaw {
                Some(Flaw::KeyFromProcessCounter) => format!("pay:{}:{invoice}", self.paid_orders),
                Some(Flaw::FreshKeyPerAttempt | Flaw::DoneOnlyInMemory) => {
                    format!(
                        "pay:{order}:{invoice}:{}:{}",
                        std::process::id(),
                        self.attempt
                    )
                }
                Some(Flaw::InvoicesShareKey) => format!("pay:{order}"),
                _ => format!("pay:{order}:{invoice}"),
            };
            let logical = format!("{order}:{invoice}");
            if self.flaw == Some(Flaw::DoneOnlyInMemory) && self.done.contains(&logical) {
                continue;
            }
            self.ledger.record(&key);
            if self.flaw == Some(Flaw::DeliveredTwice) {
                self.ledger.record(&key);
            }
            self.done.push(logical);
        }
    }

    fn marker(&self, token: &str) -> PathBuf {
        self.dir.join(format!("{token}.state"))
    }
}

impl Target for Payments {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
            .capability("tools")
            .with_trait(IDEMPOTENT_EFFECTS)
            .operation("resume")
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        if let Some(order) = request.prompt.strip_prefix("approve then pay ") {
            let token = format!("tok-{order}");
            std::fs::write(self.marker(&token), "pending").unwrap();
            return Ok(TurnRecord::builder()
                .paused(Pause::new("ask_user", true, token))
                .build());
        }
        let order = request.prompt.trim_start_matches("pay ").to_owned();
        if order == "order 8" && self.flaw.is_none() && self.dir.join("no-order-8").exists() {
            return Err(TurnError::new("UnknownOrder", "no such order"));
        }
        self.pay(&order);
        Ok(TurnRecord::builder().answer("paid").build())
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        let marker = self.marker(&request.token);
        let state = std::fs::read_to_string(&marker)
            .map_err(|_| TurnError::new("UnknownPauseToken", "no such pause"))?;
        if state == "done" || (state == "spent" && self.flaw == Some(Flaw::ResumeNotRetriable)) {
            return Err(TurnError::new("PauseTokenReplayedError", "spent"));
        }
        std::fs::write(&marker, "spent").unwrap();
        let order = request.token.trim_start_matches("tok-").to_owned();
        self.pay(&order);
        // The continuation is done: only now is the token spent for good.
        std::fs::write(&marker, "done").unwrap();
        Ok(TurnRecord::builder().answer("paid").build())
    }
}

fn judged(name: &str, pack: ExactlyOncePack, flaw: Option<Flaw>) -> PackRun {
    run_pack(
        name,
        &PackDefinition::ExactlyOnce(pack),
        &RunOptions::default(),
        move |ctx| Payments::open(ctx, flaw),
    )
}

fn prompt_only() -> ExactlyOncePack {
    ExactlyOncePack {
        prompt: "pay order 7".into(),
        ..ExactlyOncePack::default()
    }
}

fn with_pause() -> ExactlyOncePack {
    ExactlyOncePack {
        prompt: "approve then pay order 8".into(),
        answer: Some(json!({"approved": true})),
        ..ExactlyOncePack::default()
    }
}

#[test]
fn a_faithful_deployment_applies_every_effect_once_through_every_crash() {
    let run = judged("exactly_once.faithful", prompt_only(), None);
    run.assert_passed();
    let labels: Vec<String> = run.seed().unwrap().trials[0]
        .steps
        .iter()
        .map(|s| s.label.clone())
        .collect();
    // `prompt` names an order: the second request is the next order.
    assert_eq!(
        labels,
        [
            "learn",
            "crash at effect 1",
            "crash at effect 2",
            "second request alone",
            "first request",
            "second request after a restart"
        ]
    );
    assert!(run.seed().unwrap().trials[0]
        .notes
        .iter()
        .any(|n| n.starts_with("second request derived")));
    let paused = judged("exactly_once.faithful_pause", with_pause(), None);
    paused.assert_passed();
    let labels: Vec<String> = paused.seed().unwrap().trials[0]
        .steps
        .iter()
        .map(|s| s.label.clone())
        .collect();
    assert_eq!(
        labels,
        [
            "learn",
            "learn resume",
            "pause",
            "resume after a crash",
            "pause",
            "crash at resume effect 1",
            "pause",
            "crash at resume effect 2",
            "second request alone",
            "second request alone resumed",
            "first request",
            "first request resumed",
            "second request after a restart",
            "second request after a restart resumed"
        ]
    );
}

#[test]
fn a_fresh_key_per_attempt_applies_the_crashed_effect_twice() {
    let run = judged(
        "exactly_once.fresh_key",
        prompt_only(),
        Some(Flaw::FreshKeyPerAttempt),
    );
    common::assert_fails_at(&run, "crash at effect 1", "CrashedEffectRetried");
}

#[test]
fn effects_remembered_only_in_memory_are_applied_again_after_the_crash() {
    let run = judged(
        "exactly_once.in_memory",
        prompt_only(),
        Some(Flaw::DoneOnlyInMemory),
    );
    common::assert_fails_at(&run, "crash at effect 1", "CrashedEffectRetried");
}

#[test]
fn a_resume_that_cannot_be_retried_loses_its_continuation() {
    let run = judged(
        "exactly_once.resume",
        with_pause(),
        Some(Flaw::ResumeNotRetriable),
    );
    let failure = common::assert_fails_at(&run, "crash at resume effect 1", "UnexpectedError");
    assert!(
        failure.observed.contains("PauseTokenReplayedError"),
        "{failure:?}"
    );
}

#[test]
fn a_second_effect_under_the_first_ones_key_fails_the_uncrashed_run() {
    // The second invoice is never paid, and every count the experiments
    // learn would be one short: the uncrashed run fails, with no crash to
    // excuse a refusal.
    for (name, pack, step) in [
        ("exactly_once.shared_key", prompt_only(), "learn"),
        (
            "exactly_once.shared_key_pause",
            with_pause(),
            "learn resume",
        ),
    ] {
        let run = judged(name, pack, Some(Flaw::InvoicesShareKey));
        let failure = common::assert_fails_at(&run, step, "KeysNotShared");
        assert_eq!(failure.description, "KeysNotShared(retries=exact)");
        assert!(
            failure
                .observed
                .starts_with("1 attempt(s) refused as already applied"),
            "{failure:?}"
        );
        assert!(!failure.observed.contains("order"), "{failure:?}");
    }
    // Where the deployment retries under the same key, a refusal that
    // names no tool and no arguments is read as a retry: the policy's
    // limit, which arguments on the effects lift.
    let same_key = ExactlyOncePack {
        retries: Retries::SameKey,
        ..prompt_only()
    };
    judged(
        "exactly_once.shared_key_same_key",
        same_key,
        Some(Flaw::InvoicesShareKey),
    )
    .assert_passed();
}

#[test]
fn a_deployment_that_retries_under_the_same_key_is_judged_with_same_key() {
    let same_key = |pack: ExactlyOncePack| ExactlyOncePack {
        retries: Retries::SameKey,
        ..pack
    };
    for (name, pack) in [
        ("exactly_once.twice", prompt_only()),
        ("exactly_once.twice_pause", with_pause()),
    ] {
        judged(name, same_key(pack), Some(Flaw::DeliveredTwice)).assert_passed();
    }
    // The exact policy has no room for the second delivery.
    let run = judged(
        "exactly_once.twice_exact",
        prompt_only(),
        Some(Flaw::DeliveredTwice),
    );
    common::assert_fails_at(&run, "learn", "KeysNotShared");
}

#[test]
fn a_turn_with_no_effect_is_a_named_error_not_a_pass() {
    let mut pack = prompt_only();
    pack.prompt = "approve then pay order 9".into();
    let run = judged("exactly_once.no_effect", pack, None);
    common::assert_fails_at(&run, "learn", "MalformedEvidence");
}

#[test]
fn keys_from_a_process_counter_lose_the_next_request_derived_from_the_prompt() {
    // No `second_prompt`: the pack asks for the next order itself.
    let run = judged(
        "exactly_once.counter_key",
        prompt_only(),
        Some(Flaw::KeyFromProcessCounter),
    );
    common::assert_fails_at(&run, "second request after a restart", "EffectsApplied");
}

#[test]
fn a_derived_request_the_deployment_cannot_serve_is_left_out_with_a_note() {
    // The next order does not exist on this desk: run alone it fails, so
    // it is not of the prompt's shape and judges nothing.
    let run = run_pack(
        "exactly_once.no_next_order",
        &PackDefinition::ExactlyOnce(prompt_only()),
        &RunOptions::default(),
        |ctx| {
            std::fs::write(ctx.durable_dir().join("no-order-8"), "").unwrap();
            Payments::open(ctx, None)
        },
    );
    run.assert_passed();
    let trial = &run.seed().unwrap().trials[0];
    assert!(
        trial
            .notes
            .iter()
            .any(|n| n.starts_with("no second request")),
        "{:?}",
        trial.notes
    );
    assert!(!trial.steps.iter().any(|s| s.label == "first request"));
    // A prompt with no number derives nothing to ask.
    let mut pack = prompt_only();
    pack.prompt = "pay the open order".into();
    let run = judged("exactly_once.no_number", pack, None);
    run.assert_passed();
    assert!(!run.seed().unwrap().trials[0]
        .steps
        .iter()
        .any(|s| s.label.starts_with("first request")));
}
