//! A pack function must take the context.
use symfonic_evals::extension_tool_pack;

struct Deployment;

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
fn pack() -> Deployment {
    Deployment
}

fn main() {}
