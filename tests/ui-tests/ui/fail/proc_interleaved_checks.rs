//! The turn between the draft and the review: a prompt of its own, never
//! one of the prompts that call the governed tool.
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
    interleaved_prompt = "",
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
    interleaved_prompt = "refund order 3",
)]
fn calls_the_action(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
