//! A builder must return a type that implements `Target`.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
fn weather(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
