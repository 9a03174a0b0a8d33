//! Arguments forwarded from `macro_rules!` as `$x:literal`, `$x:expr` and
//! `$x:tt` fragments are read as if written in place.
#![deny(warnings)]

use symfonic_evals::{
    extension_tool_pack, CapabilityEvidence, PromptRequest, Target, TargetContext, TurnError,
    TurnRecord,
};
use symfonic_evals_ui::registered_in;

struct Desk;

impl Target for Desk {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }
    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        Ok(TurnRecord::builder().build())
    }
}

macro_rules! weather_pack {
    ($name:ident, $prompt:literal, $tool:expr, $trials:literal, $args:tt) => {
        #[extension_tool_pack(prompt = $prompt, tool_name = $tool, trials = $trials, arguments = $args)]
        fn $name(_ctx: &TargetContext) -> Desk {
            Desk
        }
    };
}

weather_pack!(oslo, "weather in Oslo?", "weather_lookup", 2, { "city": "Oslo" });

/// What the attributes above registered, checked.
pub fn check() {
    let pack = &registered_in(module_path!())[0];
    assert_eq!(pack.name(), "oslo");
    let symfonic_evals::PackDefinition::ExtensionTool(definition) = pack.definition() else {
        panic!("an extension pack");
    };
    assert_eq!(definition.prompt, "weather in Oslo?");
    assert_eq!(definition.tool_name, "weather_lookup");
    assert_eq!(definition.policy.trials, 2);
    assert_eq!(
        definition.arguments,
        Some(serde_json::json!({ "city": "Oslo" }))
    );
}
