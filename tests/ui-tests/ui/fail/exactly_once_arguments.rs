//! The exactly-once pack needs a prompt, a state or answer it is given must
//! not be empty, a second request must be another one, `skip_probes`
//! names only the pack's probes, and `retries` is one of its two policies.
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

#[exactly_once_pack(prompt = "charge order 7", second_prompt = "charge order 7")]
fn same_request_twice(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[exactly_once_pack(prompt = "charge order 7", skip_probes = ["exactly-once/clock"])]
fn unknown_probe(_ctx: &TargetContext) -> Deployment {
    Deployment
}

#[exactly_once_pack(prompt = "charge order 7", retries = "twice")]
fn unknown_retries(_ctx: &TargetContext) -> Deployment {
    Deployment
}

fn main() {}
