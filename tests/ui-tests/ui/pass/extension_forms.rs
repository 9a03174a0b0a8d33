//! Extension packs with and without their optional arguments; two packs in
//! one module do not collide.
#![deny(warnings)]

use symfonic_evals::{extension_tool_pack, TargetContext};

use symfonic_evals_ui::{registered_in, Inert as Deployment};

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
fn minimal(_: &TargetContext) -> Deployment {
    Deployment
}

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    arguments = { city: "Oslo", units: ["C"] },
    expected_fragments = ["Oslo", "degrees"],
    argument_match = "subset",
    witnessed = true,
    skip_probes = ["extension/result-reaches-model"],
    tool_schema = { type: "object", properties: { city: { type: "string" } } },
    fixture_result = { forecast: "rain" },
    conversation = "weather",
)]
fn full(_: &TargetContext) -> Deployment {
    Deployment
}

mod nested {
    use super::Deployment;

    #[symfonic_evals::extension_tool_pack(
        prompt = "weather in Oslo?",
        tool_name = "weather_lookup"
    )]
    fn minimal(_: &symfonic_evals::TargetContext) -> Deployment {
        Deployment
    }
}

/// What the attributes above registered, checked.
pub fn check() {
    // The test harness's names: the module path without the crate.
    let paths: Vec<String> = registered_in(module_path!())
        .iter()
        .map(|p| p.path())
        .collect();
    assert_eq!(
        paths,
        [
            "extension_forms::full",
            "extension_forms::minimal",
            "extension_forms::nested::minimal"
        ]
    );
}
