//! Satisfied and blocked states equal as JSON (key order and layout ignored).
use symfonic_evals::{procedural_pack, TargetContext};

struct Deployment;

#[procedural_pack(
    demonstrations = ["refund order 1", "refund order 2"],
    draft_prompt = "refund order 3",
    draft_state = { "region": "EU" },
    review_prompt = "approve: governs issue_refund when region eq US",
    satisfied_prompt = "refund order 4",
    satisfied_state = { "region": "US", "tier": { "a": 1, "b": [1, 2] } },
    blocked_prompt = "refund order 5",
    blocked_state = {
        tier: { b: [1, 2], a: 1 },
        region: "US",
    },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
)]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
