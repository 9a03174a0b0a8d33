//! Every approval-and-resume argument.
#![deny(warnings)]

use symfonic_evals::{approval_resume_pack, PackKind, TargetContext};

use symfonic_evals_ui::{registered_in, Inert as Deployment};

#[approval_resume_pack(
    pause_prompt = "refund order 9",
    answer = { approved: false, reason: "over the limit" },
    interaction_tool = "approve_refund",
    resumable = false,
    resume_attribute = "outcome",
    resume_outcome = "declined",
    continued_attribute = "continued",
    checkpoint_attribute = "checkpoint",
    replay_error = ["TokenSpent", "gone"],
    conversation = "manager",
    gated_tool = "issue_refund",
    deny_answer = { approved: false, reason: "no" },
    unfit_answer = {},
    foreign_answer = { approved: true, approver: "intern" },
    amended_answer = { approved: true, amount: 180 },
    amended_call = { amount: 180 },
    retries = "same_key",
    skip_probes = ["approval/forged-token", "approval/two-conversations"],
    isolation = "thread",
    concurrency = 2,
    effects_probe = count_refunds,
)]
fn declined_approval(_: &TargetContext) -> Deployment {
    Deployment
}

fn count_refunds(_: &std::path::Path) -> Result<u64, String> {
    Ok(0)
}

/// What the attributes above registered, checked.
pub fn check() {
    assert_eq!(
        registered_in(module_path!())[0].kind(),
        PackKind::ApprovalResume
    );
}
