//! A pack function cannot be variadic.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
unsafe extern "C" fn pack(_ctx: &TargetContext, _args: ...) -> Deployment {
    Deployment
}

fn main() {}
