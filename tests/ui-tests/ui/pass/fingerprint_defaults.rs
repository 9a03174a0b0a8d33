//! Spelling out a default does not change a pack's fingerprint; changing a
//! value does.
#![deny(warnings)]

use symfonic_evals::{approval_resume_pack, TargetContext};

use symfonic_evals_ui::{registered_in, Inert as Deployment};

#[approval_resume_pack(pause_prompt = "p", answer = { a: 1, b: 2 }, interaction_tool = "ask")]
fn implicit(_: &TargetContext) -> Deployment {
    Deployment
}

#[approval_resume_pack(
    pause_prompt = "p",
    answer = { "b": 2, "a": 1 },
    interaction_tool = "ask",
    resumable = true,
    replay_error = "PauseTokenReplayedError",
    conversation = "approval",
    trials = 1,
    require = 1,
    step_timeout_ms = 30000,
)]
fn explicit(_: &TargetContext) -> Deployment {
    Deployment
}

#[approval_resume_pack(pause_prompt = "p", answer = { a: 1, b: 3 }, interaction_tool = "ask")]
fn different(_: &TargetContext) -> Deployment {
    Deployment
}

/// What the attributes above registered, checked.
pub fn check() {
    let print = |name: &str| {
        registered_in(module_path!())
            .into_iter()
            .find(|p| p.name() == name)
            .unwrap()
            .fingerprint()
    };
    assert_eq!(print("implicit"), print("explicit"));
    assert_ne!(print("implicit"), print("different"));
}
