//! The gated action is judged by its own effects: correct deployments that
//! apply other effects (a notice at the pause, a notification on the
//! denial), that put the approval on the gated call itself, or that retry
//! under the same key (with `retries = same_key`) pass the approval pack;
//! desks that run the action early, on a denial or twice still fail.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use symfonic_evals::{
    run_pack, ApprovalResumePack, CapabilityEvidence, PackDefinition, PackRun, Pause,
    PromptRequest, ResolvedCall, ResumeRequest, Retries, RunOptions, SideEffectLedger, Target,
    TargetContext, ToolCall, ToolOutcome, TurnError, TurnRecord,
};

const ASK: &str = "ask_manager";
const REFUND: &str = "issue_refund";

/// How the desk is shaped: each a correct deployment, or a broken one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Pauses on `ask_manager`, refunds on approval.
    Plain,
    /// Also applies a change notice of its own when it pauses.
    NoticeAtPause,
    /// Also notifies the requester when the manager says no.
    NotifyOnDenial,
    /// The approval sits on the refund call itself: the pause is that call,
    /// pending; approval runs it, denial resolves it unrun.
    OnTheCall,
    /// Applies the refund, then retries it under the same key (a client's
    /// retry that applies nothing twice).
    SameKeyRetry,
    /// Broken: refunds when it pauses, before anyone answered.
    RefundsBeforeAnswer,
    /// Broken: refunds whatever the answer.
    RefundsOnDenial,
    /// Broken: approval on the call, but the pause already ran it.
    OnTheCallRunsAtPause,
    /// Broken: refunds twice under two keys.
    RefundsTwice,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Pending {
    conversation: String,
    call: String,
    spent: bool,
}

struct Desk {
    shape: Shape,
    path: PathBuf,
    ledger: SideEffectLedger,
    pending: BTreeMap<String, Pending>,
}

impl Desk {
    fn open(ctx: &TargetContext, shape: Shape) -> Self {
        let path = ctx.durable_path("pauses.json");
        let pending = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Self {
            shape,
            path,
            ledger: ctx.ledger().clone(),
            pending,
        }
    }

    fn interaction(&self) -> &'static str {
        match self.shape {
            Shape::OnTheCall | Shape::OnTheCallRunsAtPause => REFUND,
            _ => ASK,
        }
    }

    fn refund(&self, key: &str) {
        self.ledger.record_for(REFUND, key);
    }
}

impl Target for Desk {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
            .capability("human")
            .operation("resume")
    }

    fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let n = self.pending.len() + 1;
        let token = {
            use std::hash::BuildHasher;
            let random = std::collections::hash_map::RandomState::new().hash_one(n);
            format!("tok-{random:016x}")
        };
        let call = format!("call-{n}");
        let key = format!("refund:{}", request.conversation);
        match self.shape {
            Shape::NoticeAtPause => {
                self.ledger
                    .record_for("post_notice", &format!("notice:{}", request.conversation));
            }
            Shape::RefundsBeforeAnswer | Shape::OnTheCallRunsAtPause => self.refund(&key),
            _ => {}
        }
        self.pending.insert(
            token.clone(),
            Pending {
                conversation: request.conversation.clone(),
                call: call.clone(),
                spent: false,
            },
        );
        std::fs::write(&self.path, serde_json::to_vec(&self.pending).unwrap()).unwrap();
        let arguments = json!({"order": 9});
        Ok(TurnRecord::builder()
            .answer("waiting for a manager")
            .tool_call(ToolCall::pending(call, self.interaction(), arguments))
            .paused(Pause::new(self.interaction(), true, token))
            .build())
    }

    fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
        let Some(approved) = request.answer.get("approved").and_then(Value::as_bool) else {
            return Err(TurnError::new(
                "AnswerRejected",
                "the answer must say yes or no",
            ));
        };
        let pending = self
            .pending
            .get_mut(&request.token)
            .filter(|p| p.conversation == request.conversation)
            .ok_or_else(|| TurnError::new("UnknownPauseToken", "no such pause"))?;
        if pending.spent {
            return Err(TurnError::new(
                "PauseTokenReplayedError",
                "already redeemed",
            ));
        }
        let (call, conversation) = (pending.call.clone(), pending.conversation.clone());
        let key = format!("refund:{conversation}");
        let mut record = TurnRecord::builder();
        let on_the_call = self.interaction() == REFUND;
        if approved || self.shape == Shape::RefundsOnDenial {
            self.refund(&key);
            match self.shape {
                Shape::SameKeyRetry => self.refund(&key),
                Shape::RefundsTwice => self.refund(&format!("{key}:again")),
                _ => {}
            }
            if !on_the_call {
                record = record.tool_call(ToolCall::succeeded(
                    format!("{call}-refund"),
                    REFUND,
                    json!({"order": 9}),
                    json!("refunded"),
                ));
            }
        } else if self.shape == Shape::NotifyOnDenial {
            self.ledger
                .record_for("notify_requester", &format!("denied:{conversation}"));
        }
        // Spent once the continuation is done: a resume killed after its
        // effect is retried with the same token.
        if let Some(pending) = self.pending.get_mut(&request.token) {
            pending.spent = true;
        }
        std::fs::write(&self.path, serde_json::to_vec(&self.pending).unwrap()).unwrap();
        let outcome = if approved || !on_the_call {
            ToolOutcome::Succeeded {
                result: request.answer.clone(),
            }
        } else {
            ToolOutcome::Failed {
                error: "the manager said no".into(),
            }
        };
        Ok(record
            .answer(if approved {
                "refund issued"
            } else {
                "refund declined"
            })
            .resolved(ResolvedCall::new(call, outcome))
            .attribute("resume_outcome", "resumed")
            .attribute("resume_name", self.interaction())
            .attribute("resume_checkpoint", true)
            .attribute("resume_continued", true)
            .build())
    }
}

fn run(shape: Shape, retries: Retries) -> PackRun {
    let on_the_call = matches!(shape, Shape::OnTheCall | Shape::OnTheCallRunsAtPause);
    let pack = ApprovalResumePack {
        pause_prompt: "refund order 9 needs a manager".into(),
        answer: json!({"approved": true}),
        interaction_tool: (if on_the_call { REFUND } else { ASK }).into(),
        gated_tool: Some(REFUND.into()),
        retries,
        ..ApprovalResumePack::default()
    };
    run_pack(
        &format!("gated_effects.{shape:?}.{}", retries.as_str()),
        &PackDefinition::ApprovalResume(pack),
        &RunOptions::default(),
        move |ctx| Desk::open(ctx, shape),
    )
}

#[test]
fn correct_desks_with_effects_of_their_own_pass_every_probe() {
    for shape in [
        Shape::Plain,
        Shape::NoticeAtPause,
        Shape::NotifyOnDenial,
        Shape::OnTheCall,
    ] {
        let run = run(shape, Retries::Exact);
        assert!(run.passed(), "{shape:?}:\n{}", run.render());
        assert!(run.scenario("approval/gated-action").is_some(), "{shape:?}");
    }
}

#[test]
fn a_same_key_retry_passes_under_the_policy_and_fails_without_it() {
    run(Shape::SameKeyRetry, Retries::SameKey).assert_passed();
    let strict = run(Shape::SameKeyRetry, Retries::Exact);
    assert!(
        strict.failed_scenarios().contains(&"approval/gated-action"),
        "{}",
        strict.render()
    );
    let failure = strict
        .failures()
        .into_iter()
        .find(|f| f.scenario == "approval/gated-action")
        .unwrap();
    assert_eq!(failure.assertion, "ToolEffects");
}

#[test]
fn desks_that_run_the_action_early_on_a_denial_or_twice_still_fail() {
    for (shape, scenario, step) in [
        (Shape::RefundsBeforeAnswer, "approval/gated-action", "pause"),
        (Shape::RefundsOnDenial, "approval/deny-answer", "deny"),
        (
            Shape::OnTheCallRunsAtPause,
            "approval/gated-action",
            "pause",
        ),
        (Shape::RefundsTwice, "approval/gated-action", "resume"),
    ] {
        for retries in [Retries::Exact, Retries::SameKey] {
            let run = run(shape, retries);
            let failures: Vec<_> = run
                .failures()
                .into_iter()
                .filter(|f| f.scenario == scenario)
                .collect();
            // The effects are judged whatever else the step noticed (a
            // reported refund call fails ToolSucceeded beside them).
            assert!(
                failures
                    .iter()
                    .any(|f| f.step_label == step && f.assertion == "ToolEffects"),
                "{shape:?} {}:\n{}",
                retries.as_str(),
                run.render()
            );
        }
    }
}

#[test]
fn effects_that_name_no_tool_are_judged_by_the_whole_ledger() {
    // The same notice, applied without naming its tool: nothing tells it
    // from the refund, so the pause that moved the ledger fails, and the
    // message says the whole ledger was judged.
    struct Unnamed(Desk);
    impl Target for Unnamed {
        fn capabilities(&self) -> CapabilityEvidence {
            self.0.capabilities()
        }
        fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
            self.0
                .ledger
                .record(&format!("notice:{}", request.conversation));
            self.0.run_turn(request)
        }
        fn resume(&mut self, request: &ResumeRequest) -> Result<TurnRecord, TurnError> {
            self.0.resume(request)
        }
    }
    let pack = ApprovalResumePack {
        pause_prompt: "refund order 9 needs a manager".into(),
        answer: json!({"approved": true}),
        interaction_tool: ASK.into(),
        gated_tool: Some(REFUND.into()),
        ..ApprovalResumePack::default()
    };
    let run = run_pack(
        "gated_effects.unnamed",
        &PackDefinition::ApprovalResume(pack),
        &RunOptions::default(),
        |ctx| Unnamed(Desk::open(ctx, Shape::Plain)),
    );
    let failure = run
        .failures()
        .into_iter()
        .find(|f| f.scenario == "approval/gated-action")
        .expect("the whole ledger moved at the pause");
    assert_eq!(failure.step_label, "pause");
    assert!(
        failure.observed.contains("whole ledger"),
        "{}",
        failure.observed
    );
}

#[test]
fn the_procedural_seed_counts_retries_by_the_same_policy() {
    let kinds = |retries: Retries| {
        let pack = symfonic_evals::ProceduralPack {
            retries,
            ..common::procedural_pack()
        };
        let seed = pack.seed();
        seed.steps
            .iter()
            .flat_map(|step| step.assertions.iter().map(|a| a.kind()))
            // The route check is the same under either policy.
            .filter(|kind| kind.contains("Effect") && *kind != "GovernedEffectWithheld")
            .collect::<Vec<_>>()
    };
    // The draft probe and the satisfied run; the blocked step reads no
    // totals (a log of the refused request is allowed beside it).
    assert_eq!(kinds(Retries::Exact), ["SideEffectCount"; 2]);
    assert_eq!(kinds(Retries::SameKey), ["EffectsApplied"; 2]);
}
