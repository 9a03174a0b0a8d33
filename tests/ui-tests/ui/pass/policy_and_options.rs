//! The trial policy and the not-applicable opt-in.
#![deny(warnings)]

use symfonic_evals::{extension_tool_pack, registered_packs, TargetContext, Verdict};

use symfonic_evals_ui::Inert as Deployment;

#[extension_tool_pack(
    prompt = "weather in Oslo?",
    tool_name = "weather_lookup",
    trials = 5,
    require = 4,
    step_timeout_ms = 2_500,
    accept_not_applicable = true
)]
fn accepted(_: &TargetContext) -> Deployment {
    Deployment
}

#[extension_tool_pack(prompt = "weather in Oslo?", tool_name = "weather_lookup", trials = 3)]
fn all_of_three(_: &TargetContext) -> Deployment {
    Deployment
}

fn main() {
    // The refused pack's panic is expected; keep its account off the output.
    std::panic::set_hook(Box::new(|_| {}));
    for pack in registered_packs() {
        let run = pack.run();
        assert!(matches!(run.verdict(), Verdict::NotApplicable(_)));
        let accepted = std::panic::catch_unwind(|| run.assert_passed()).is_ok();
        assert_eq!(accepted, pack.name() == "accepted");
    }
}
