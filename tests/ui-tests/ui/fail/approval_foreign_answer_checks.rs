//! The person not entitled cannot answer as the entitled one does, and an
//! empty foreign answer names nobody.
use symfonic_evals::{approval_resume_pack, TargetContext};

struct Deployment;

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    foreign_answer = { approved: true },
)]
fn same(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: true },
    interaction_tool = "approve_refund",
    foreign_answer = {},
)]
fn empty(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
