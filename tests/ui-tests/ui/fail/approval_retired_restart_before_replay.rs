//! The old single restart switch says what replaced it.
use symfonic_evals::{approval_resume_pack, TargetContext};

struct Deployment;

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    restart_before_replay = true,
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
