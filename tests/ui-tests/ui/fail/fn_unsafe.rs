//! A pack function cannot be unsafe.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
unsafe fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
