//! The fresh-result probe's second request: its arguments must differ from
//! the first call's and come with the request that makes the call; the
//! second prompt must be another request.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    arguments = { city: "Oslo" },
    second_arguments = { city: "Oslo" },
)]
fn same_arguments_and_no_second_prompt(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    second_prompt = "weather in Oslo?",
)]
fn same_prompt(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
