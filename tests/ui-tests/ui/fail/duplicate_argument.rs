//! An argument given twice.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    tool_name = "other"
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
