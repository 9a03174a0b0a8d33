//! A denial must be a non-empty answer and differ from the approval.
use symfonic_evals::{approval_resume_pack, TargetContext};

struct Deployment;

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    deny_answer = { approved: true },
)]
fn same_as_approval(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    deny_answer = {},
)]
fn empty(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
