//! A boolean argument given a string.
use symfonic_evals::{approval_resume_pack, TargetContext};

struct Deployment;

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    resumable = "yes",
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
