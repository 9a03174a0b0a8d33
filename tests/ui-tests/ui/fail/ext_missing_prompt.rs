//! The extension pack needs its prompt.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(tool_name = "weather_lookup")]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
