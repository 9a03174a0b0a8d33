//! An amendment comes with what the call must carry, and changes something.
use symfonic_evals::{approval_resume_pack, TargetContext};

struct Deployment;

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    amended_answer = { approved: true, amount: 180 },
)]
fn without_call(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    amended_call = { amount: 180 },
)]
fn without_answer(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    amended_answer = { approved: true },
    amended_call = { amount: 180 },
)]
fn unchanged(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
