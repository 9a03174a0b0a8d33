//! With `builder = path` the annotated function only names the test.
use symfonic_evals::{extension_tool_pack, TargetContext};

fn open(_: &TargetContext) -> u8 {
    0
}

#[extension_tool_pack(builder = open, prompt = "weather in Oslo?", tool_name = "weather_lookup")]
async fn weather(ctx: &TargetContext) -> u8 {
    open(ctx)
}

fn main() {}
