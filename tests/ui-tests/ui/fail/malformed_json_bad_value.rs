//! A bare identifier is not a JSON value.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    arguments = { city: Oslo },
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
