//! An async deployment implements `AsyncTarget` with plain `async fn`s,
//! awaits timers and spawned tasks inside tokio, and is driven by the
//! harness through `TokioTarget` with no executor code of its own.

use crate::common;

use std::time::{Duration, Instant};

use serde_json::json;
use symfonic_evals::{
    run_pack, AsyncTarget, CapabilityEvidence, PromptRequest, RunOptions, TargetContext,
    TokioTarget, ToolCall, TurnError, TurnRecord,
};

/// An async weather desk: its tool runs on a spawned task after a timer.
struct AsyncWeather {
    ledger: symfonic_evals::SideEffectLedger,
    delay: Duration,
    calls: u32,
}

impl AsyncWeather {
    /// An async constructor, as a deployment that connects to something would
    /// have. It takes what it needs from the context by value: the future
    /// `TokioTarget::build` awaits cannot borrow the context.
    /// Borrows the context across an await, as an `async fn open(ctx)` does.
    async fn connect(context: &TargetContext, delay: Duration) -> Self {
        tokio::time::sleep(Duration::from_millis(1)).await;
        Self {
            ledger: context.ledger().clone(),
            delay,
            calls: 0,
        }
    }
}

impl AsyncTarget for AsyncWeather {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new().contributes("extensions", common::extension::TOOL)
    }

    async fn run_turn(&mut self, request: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let city = if request.prompt.contains("Oslo") {
            "Oslo"
        } else {
            "elsewhere"
        };
        let delay = self.delay;
        let ledger = self.ledger.clone();
        let key = format!("forecast:{}", request.prompt);
        // The tool runs on its own task, as a framework's tool executor would.
        let forecast = tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            ledger.record(&key);
            json!({"celsius": 12})
        })
        .await
        .map_err(|e| TurnError::new("ToolTaskFailed", e.to_string()))?;
        self.calls += 1;
        Ok(TurnRecord::builder()
            .answer(format!("{city}: {} degrees", forecast["celsius"]))
            .model_input(format!("user: {}\ntool result: {forecast}", request.prompt))
            .tool_call(ToolCall::succeeded(
                common::call_id(),
                common::extension::TOOL,
                json!({ "city": city }),
                forecast,
            ))
            .build())
    }
}

fn desk(delay: Duration) -> impl Fn(&TargetContext) -> TokioTarget<AsyncWeather> {
    move |context| {
        TokioTarget::build(context, async move |context: &TargetContext| {
            AsyncWeather::connect(context, delay).await
        })
    }
}

#[test]
fn an_awaiting_deployment_passes_the_extension_pack() {
    let mut pack = common::extension_pack();
    pack.policy = symfonic_evals::TrialPolicy::all_of(2);
    let run = run_pack(
        "async.extension",
        &common::extension(pack),
        &RunOptions::default(),
        desk(Duration::from_millis(20)),
    );
    run.assert_passed();
    assert_eq!(run.seed().expect("the seed ran").trials.len(), 2);
    let step = &run.seed().expect("the seed ran").trials[0].steps[0];
    assert!(
        step.duration >= Duration::from_millis(20),
        "the timer was really awaited: {:?}",
        step.duration
    );
}

#[test]
fn an_awaiting_deployment_still_fails_on_the_evidence() {
    let mut pack = common::extension_pack();
    pack.prompt = "what is the weather in Bergen".into();
    let run = run_pack(
        "async.extension_wrong_city",
        &common::extension(pack),
        &RunOptions::default(),
        desk(Duration::from_millis(1)),
    );
    common::assert_fails_at(&run, "extension call", "ToolCalled");
}

#[test]
fn an_async_turn_past_the_step_limit_is_abandoned() {
    let mut pack = common::extension_pack();
    pack.policy.step_timeout = Duration::from_millis(200);
    let started = Instant::now();
    let run = run_pack(
        "async.extension_hang",
        &common::extension(pack),
        &RunOptions::default(),
        desk(Duration::from_secs(30)),
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    common::assert_fails_at(&run, "extension call", "StepTimeout");
}

#[test]
fn a_tokio_target_can_be_driven_by_hand() {
    use symfonic_evals::Target as _;
    let context = TargetContext::fresh(0).unwrap();
    let mut target = desk(Duration::from_millis(1))(&context);
    let request = PromptRequest::new("c", "Oslo?");
    let record = target.run_turn(&request).unwrap();
    assert_eq!(record.answer(), "Oslo: 12 degrees");
    assert_eq!(target.inner().calls, 1);
    assert_eq!(context.ledger().counts().effects, 1);
}
