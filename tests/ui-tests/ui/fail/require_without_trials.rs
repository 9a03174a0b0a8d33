//! Require above one with the single default trial.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup", require = 2)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
