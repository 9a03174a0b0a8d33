//! The attribute goes on a function.
use symfonic_evals::extension_tool_pack;

struct Deployment;

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
struct Pack;

fn main() {}
