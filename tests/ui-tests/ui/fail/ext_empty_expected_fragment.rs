//! An empty expected fragment matches every answer.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    expected_fragments = ["Oslo", ""],
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
