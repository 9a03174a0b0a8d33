//! Returning `()` is no deployment.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
fn pack(_ctx: &TargetContext) -> () {}

fn main() {}
