//! Every problem in one attribute, and in the function, is reported at once.
use symfonic_evals::{procedural_pack, TargetContext};

struct Deployment;

#[procedural_pack(
    demonstrations = [],
    draft_state = {},
    review_prompt = "",
    satisfied_prompt = "refund order 4",
    satisfied_state = { region: "US" },
    blocked_prompt = "refund order 5",
    blocked_state = { "region": "US" },
    action_tool = "",
    procedure_fragment = "verify the account region",
    demonstraitons = ["refund order 1"],
    trials = 0,
)]
fn pack<T>(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
