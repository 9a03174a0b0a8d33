//! One builder serves several packs: each test names it with `builder =`,
//! sync or async, from another module, under `cfg` and `ignore`.
#![deny(warnings)]

use symfonic_evals::{approval_resume_pack, extension_tool_pack, TargetContext};

mod desks {
    use symfonic_evals::{
        AsyncTarget, CapabilityEvidence, PromptRequest, Target, TargetContext, TurnError,
        TurnRecord,
    };

    pub struct Desk;

    impl Target for Desk {
        fn capabilities(&self) -> CapabilityEvidence {
            CapabilityEvidence::new()
        }
        fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
            Ok(TurnRecord::builder().build())
        }
    }

    pub fn open(_: &TargetContext) -> Desk {
        Desk
    }

    pub struct AsyncDesk;

    impl AsyncTarget for AsyncDesk {
        fn capabilities(&self) -> CapabilityEvidence {
            CapabilityEvidence::new()
        }
        async fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
            Ok(TurnRecord::builder().build())
        }
    }

    pub async fn connect(_: &TargetContext) -> AsyncDesk {
        AsyncDesk
    }
}

fn local(ctx: &TargetContext) -> desks::Desk {
    desks::open(ctx)
}

#[extension_tool_pack(builder = desks::open, prompt = "weather in Oslo?", tool_name = "weather_lookup")]
fn weather() {}

/// A doc comment on the test is kept.
#[approval_resume_pack(
    builder = local,
    pause_prompt = "cancel it",
    answer = { "approved": true },
    interaction_tool = "ask_user",
)]
#[ignore]
fn cancellation() {}

#[extension_tool_pack(builder = desks::connect, prompt = "weather in Oslo?", tool_name = "weather_lookup")]
#[cfg(not(any()))]
pub fn weather_async() {}

fn main() {
    let packs = symfonic_evals::registered_packs();
    let names: Vec<&str> = packs.iter().map(|p| p.name()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    for pack in packs {
        let run = pack.run();
        assert!(!run.passed(), "declares no capability, so not applicable");
    }
}
