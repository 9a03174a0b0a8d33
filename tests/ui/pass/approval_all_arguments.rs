//! Every approval-and-resume argument.
#![deny(warnings)]

use symfonic_evals::{approval_resume_pack, registered_packs, PackKind, Target, TargetContext};

struct Deployment;

impl Target for Deployment {
    fn capabilities(&self) -> symfonic_evals::CapabilityEvidence {
        symfonic_evals::CapabilityEvidence::new()
    }
    fn run_turn(
        &mut self,
        _: &symfonic_evals::PromptRequest,
    ) -> Result<symfonic_evals::TurnRecord, symfonic_evals::TurnError> {
        Ok(symfonic_evals::TurnRecord::builder().build())
    }
}

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
