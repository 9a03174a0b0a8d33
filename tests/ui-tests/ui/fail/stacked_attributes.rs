//! Two pack attributes on one function would write two tests of one name.
use symfonic_evals::{
    extension_tool_pack, procedural_pack, CapabilityEvidence, PromptRequest, Target,
    TargetContext, TurnError, TurnRecord,
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
#[procedural_pack(
    demonstrations = ["refund order 1"],
    draft_prompt = "refund order 3", draft_state = { "region": "EU" },
    review_prompt = "approve it",
    satisfied_prompt = "refund order 4", satisfied_state = { "region": "US" },
    blocked_prompt = "refund order 5", blocked_state = { "region": "EU", "x": 1 },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
)]
fn desk(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
