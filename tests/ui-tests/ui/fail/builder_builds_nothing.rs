//! `builder = path` must name a function that builds a deployment.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct NotADeployment;

fn open(_: &TargetContext) -> NotADeployment {
    NotADeployment
}

#[extension_tool_pack(builder = open, prompt = "weather in Oslo?", tool_name = "weather_lookup")]
fn weather() {}

fn main() {}
