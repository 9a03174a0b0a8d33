//! A JSON object with a key twice.
use symfonic_evals::{approval_resume_pack, TargetContext};

struct Deployment;

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true, "approved": false },
    interaction_tool = "approve_refund",
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
