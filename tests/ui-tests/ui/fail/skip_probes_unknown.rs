//! A probe name that does not exist, with and without a near miss.
use symfonic_evals::{approval_resume_pack, extension_tool_pack, TargetContext};

struct Deployment;

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    skip_probes = ["approval/forged-tokens", 3],
)]
fn near_miss(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[extension_tool_pack(
    prompt = "weather?",
    tool_name = "weather",
    skip_probes = ["approval/forged-token"],
)]
fn another_packs_probe(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
