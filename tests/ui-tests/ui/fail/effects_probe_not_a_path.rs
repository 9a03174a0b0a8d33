//! The effect oracle is named by a path to a function, not a string.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather?",
    tool_name = "weather",
    effects_probe = "crate::count",
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
