//! A pack function takes exactly one argument.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
fn pack(_ctx: &TargetContext, _extra: u32) -> Deployment {
    Deployment
}

fn main() {}
