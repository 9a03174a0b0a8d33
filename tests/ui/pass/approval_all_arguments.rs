//! Every approval-and-resume argument.
#![deny(warnings)]

use symfonic_evals::{approval_resume_pack, registered_packs, PackKind, TargetContext};

use symfonic_evals_e2e::Inert as Deployment;

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: false, reason: "over the limit" },
    interaction_tool = "approve_refund",
    resumable = false,
    resume_attribute = "outcome",
    resume_outcome = "declined",
    continued_attribute = "continued",
    checkpoint_attribute = "checkpoint",
    replay_error = "TokenSpent",
    restart_before_replay = true,
    conversation = "manager",
)]
fn declined_approval(_: &TargetContext) -> Deployment {
    Deployment
}

fn main() {
    assert_eq!(registered_packs()[0].kind(), PackKind::ApprovalResume);
}
