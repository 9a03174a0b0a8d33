//! An `async fn` builder needs no second test attribute.
#![deny(warnings)]

use symfonic_evals::{
    extension_tool_pack, AsyncTarget, CapabilityEvidence, PromptRequest, TargetContext, TurnError,
    TurnRecord,
};

struct Deployment;

impl Deployment {
    async fn connect(_: &TargetContext) -> Self {
        Deployment
    }
}

impl AsyncTarget for Deployment {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    async fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().build())
    }
}

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
async fn weather(ctx: &TargetContext) -> Deployment {
    Deployment::connect(ctx).await
}

fn main() {
    let run = symfonic_evals::registered_packs()[0].run();
    assert!(!run.passed(), "declares no extensions, so not applicable");
}
