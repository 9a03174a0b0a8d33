//! Cannot require more passes than trials.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    trials = 2,
    require = 3
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
