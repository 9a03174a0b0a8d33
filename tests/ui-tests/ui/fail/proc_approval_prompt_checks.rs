//! The request a person approves comes with its answer, is not a seed
//! prompt, and neither is empty.
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
    approval_prompt = "refund order 8 in full",
)]
fn without_its_answer(_ctx: &TargetContext) -> Deployment {
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
    approval_answer = { "approved": true },
)]
fn an_answer_without_a_request(_ctx: &TargetContext) -> Deployment {
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
    approval_prompt = "refund order 5",
    approval_answer = { "approved": true },
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
    approval_prompt = "refund order 8 in full",
    approval_answer = {},
)]
fn an_empty_answer(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
