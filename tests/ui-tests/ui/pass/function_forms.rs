//! The function shapes and attributes a pack function may carry: visibility,
//! docs, `#[ignore]`, `#[cfg]`, `impl Target`, any spelling of the context,
//! a raw identifier for a name.
#![deny(warnings)]
// `cfg(all())` and `cfg(any())` are the shortest always and never: on purpose.
#![allow(clippy::non_minimal_cfg)]

use symfonic_evals::{extension_tool_pack, Target};

use symfonic_evals_ui::{registered_in, Inert as Deployment};

/// Documented, public, ignored by default.
#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
#[ignore]
pub fn public_and_ignored(_: &'_ ::symfonic_evals::TargetContext) -> impl Target {
    Deployment
}

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
#[cfg(all())]
#[allow(clippy::needless_pass_by_value)]
fn kept_by_cfg(ctx: &symfonic_evals::TargetContext) -> Box<dyn Target> {
    let _ = ctx.trial();
    Box::new(Deployment)
}

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
#[cfg(any())]
fn removed_by_cfg(_: &symfonic_evals::TargetContext) -> Deployment {
    Deployment
}

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup")]
fn r#match(_: &symfonic_evals::TargetContext) -> Deployment {
    Deployment
}

/// What the attributes above registered, checked.
pub fn check() {
    let names: Vec<&str> = registered_in(module_path!())
        .iter()
        .map(|p| p.name())
        .collect();
    assert_eq!(names, ["kept_by_cfg", "match", "public_and_ignored"]);
}
