//! Rejected demonstrations: at least one when given, and on-topic (never a
//! control turn, which has nothing to teach).
use symfonic_evals::{procedural_pack, TargetContext};

struct Deployment;

#[procedural_pack(
    demonstrations = ["refund order 1", "refund order 2"],
    draft_prompt = "refund order 3",
    draft_state = { "region": "EU" },
    review_prompt = "approve: governs issue_refund when region eq US",
    satisfied_prompt = "refund order 4",
    satisfied_state = { "region": "US" },
    blocked_prompt = "refund order 5",
    blocked_state = { "region": "EU" },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    rejected_demonstrations = [],
)]
fn empty(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[procedural_pack(
    demonstrations = ["refund order 1", "refund order 2"],
    draft_prompt = "refund order 3",
    draft_state = { "region": "EU" },
    review_prompt = "approve: governs issue_refund when region eq US",
    satisfied_prompt = "refund order 4",
    satisfied_state = { "region": "US" },
    blocked_prompt = "refund order 5",
    blocked_state = { "region": "EU" },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    control_demonstrations = ["hello"],
    rejected_demonstrations = ["refund order 6", "hello"],
)]
fn control_rejected(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
