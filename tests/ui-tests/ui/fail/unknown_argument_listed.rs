//! An unknown argument with no close match lists the known ones.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    colour = "blue"
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
