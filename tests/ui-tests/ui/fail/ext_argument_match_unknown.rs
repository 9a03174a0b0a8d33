//! The argument match is exact or subset.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather?",
    tool_name = "weather",
    arguments = { city: "Oslo" },
    argument_match = "prefix",
    isolation = "container",
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
