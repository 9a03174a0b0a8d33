//! The exactly-once pack needs a prompt, and a state or answer it is given
//! must not be empty.
use symfonic_evals::{exactly_once_pack, TargetContext};

struct Deployment;

#[exactly_once_pack(state = {}, answer = {}, conversation = "")]
fn pack(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[exactly_once_pack(prompt = "", anwser = { approved: true })]
fn typo(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
