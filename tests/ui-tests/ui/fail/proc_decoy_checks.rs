//! Decoys must teach something else and name their text; controls must
//! teach nothing.
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
    decoy_demonstrations = ["refund order 2", "track parcel 1"],
    control_demonstrations = ["refund order 1"],
    gate_sweep = 0,
)]
fn pack(_ctx: &TargetContext) -> Deployment {
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
    decoy_fragment = "verify the account region",
)]
fn fragment_without_decoys(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
