//! A JSON key must be a string or an identifier.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    arguments = { 1: "Oslo" },
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
