//! The MCP fixture's arguments: the tool's schema must be an object's, and
//! its fixed result must leave the nonce to the fixture.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    tool_schema = { type: "string" },
    fixture_result = { forecast: "rain", nonce: "fixed" },
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
