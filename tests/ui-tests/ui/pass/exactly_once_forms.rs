//! The exactly-once pack, with and without a pause/resume pair.
#![deny(warnings)]

use symfonic_evals::{exactly_once_pack, registered_packs, PackKind, TargetContext};

use symfonic_evals_ui::Inert as Deployment;

#[exactly_once_pack(prompt = "charge order 7")]
fn charge(_: &TargetContext) -> Deployment {
    Deployment
}

#[exactly_once_pack(
    prompt = "charge order 8 after approval",
    state = { account: "a-1" },
    answer = { approved: true },
    conversation = "payments",
    skip_probes = ["exactly-once/clock-advanced"],
    trials = 2,
)]
fn approved_charge(_: &TargetContext) -> Deployment {
    Deployment
}

fn main() {
    let packs = registered_packs();
    assert_eq!(packs.len(), 2);
    assert!(packs.iter().all(|p| p.kind() == PackKind::ExactlyOnce));
}
