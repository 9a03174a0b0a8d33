//! A sync builder of an `AsyncTarget` is told to become an `async fn`.
use symfonic_evals::{
    extension_tool_pack, AsyncTarget, CapabilityEvidence, PromptRequest, TargetContext, TurnError,
    TurnRecord,
};

struct Deployment;

impl AsyncTarget for Deployment {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    async fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().build())
    }
}

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
fn weather(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
