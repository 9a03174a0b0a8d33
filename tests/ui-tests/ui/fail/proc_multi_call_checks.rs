//! The multi-call prompt must be a request of its own, and say something.
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
    multi_call_prompt = "refund order 5",
)]
fn repeats_the_blocked_prompt(_ctx: &TargetContext) -> Deployment {
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
    multi_call_prompt = "",
)]
fn empty(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
