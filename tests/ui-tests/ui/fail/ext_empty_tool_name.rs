//! The contributed tool's name cannot be empty.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "")]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
