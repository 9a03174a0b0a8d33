//! The exactly-once pack, with and without a pause/resume pair, and with
//! same-key retries accepted.
#![deny(warnings)]

use symfonic_evals::{exactly_once_pack, PackDefinition, PackKind, Retries, TargetContext};

use symfonic_evals_ui::{registered_in, Inert as Deployment};

#[exactly_once_pack(prompt = "charge order 7")]
fn charge(_: &TargetContext) -> Deployment {
    Deployment
}

#[exactly_once_pack(
    prompt = "charge order 8 after approval",
    state = { account: "a-1" },
    answer = { approved: true },
    conversation = "payments",
    retries = "same_key",
    skip_probes = ["exactly-once/clock-advanced"],
    trials = 2,
)]
fn approved_charge(_: &TargetContext) -> Deployment {
    Deployment
}

/// What the attributes above registered, checked.
pub fn check() {
    let packs = registered_in(module_path!());
    assert_eq!(packs.len(), 2);
    assert!(packs.iter().all(|p| p.kind() == PackKind::ExactlyOnce));
    let retries = |name: &str| {
        let registered = packs.iter().find(|p| p.name() == name).unwrap();
        match registered.definition() {
            PackDefinition::ExactlyOnce(pack) => pack.retries,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(retries("charge"), Retries::Exact);
    assert_eq!(retries("approved_charge"), Retries::SameKey);
}
