//! A count cannot be negative.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    step_timeout_ms = -5,
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
