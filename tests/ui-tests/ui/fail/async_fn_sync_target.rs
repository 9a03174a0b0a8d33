//! An `async fn` builder of a sync `Target` is told to become a plain `fn`.
use symfonic_evals::{
    extension_tool_pack, CapabilityEvidence, PromptRequest, Target, TargetContext, TurnError,
    TurnRecord,
};

struct Deployment;

impl Target for Deployment {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().build())
    }
}

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
async fn weather(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
