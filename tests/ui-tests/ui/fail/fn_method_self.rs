//! A pack function is a free function, not a method.
use symfonic_evals::{extension_tool_pack, TargetContext};

struct Deployment;

impl Deployment {
    #[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
    fn pack(&self) -> Deployment {
        Deployment
    }
}

fn main() {
    let _ = TargetContext::fresh(0);
}
