//! Every procedural argument, optional ones included, under the strictest lints.
#![deny(warnings)]
#![deny(clippy::pedantic)]

use symfonic_evals::{procedural_pack, PackKind, TargetContext};

use symfonic_evals_ui::{registered_in, Inert as Deployment};

#[procedural_pack(
    demonstrations = ["refund order 1", "refund order 2", "refund order 3"],
    review_prompt = "approve: governs issue_refund when region eq US",
    draft_prompt = "refund order 4",
    satisfied_prompt = "refund order 5",
    blocked_prompt = "refund order 6",
    satisfied_state = { "region": "US" },
    blocked_state = { "region": "EU" },
    draft_state = { "region": "EU" },
    action_tool = "issue_refund",
    procedure_fragment = "verify the account region",
    promotion_attribute = "promoted",
    review_attribute = "review",
    review_identity_attribute = "review_ids",
    enforcement_identity_attribute = "enforcement_ids",
    precondition_stage = "precondition",
    procedures_attribute = "procedures",
    restart_before_enforcement = false,
    conversation = "refunds",
    decoy_demonstrations = ["track parcel 1", "track parcel 2"],
    decoy_fragment = "look up the carrier",
    control_demonstrations = ["what are your opening hours"],
    rejected_demonstrations = ["refund order 7", "refund order 8"],
    paraphrases = ["express refund order 9"],
    interleaved_prompt = "where is the parcel for order 31?",
    multi_call_prompt = "refund orders 9 and 10",
    approval_prompt = "refund order 11 in full",
    approval_answer = { "approved": true },
    gate_sweep = 8,
    retries = "same_key",
    skip_probes = ["procedural/gate-sweep"],
    effects_probe = crate::procedural_all_arguments::oracle::refunds,
)]
fn refund_rule(_ctx: &TargetContext) -> Deployment {
    Deployment
}

mod oracle {
    // The effect oracle's signature is the attribute's, whatever the body.
    #[allow(clippy::unnecessary_wraps)]
    pub fn refunds(_: &std::path::Path) -> Result<u64, String> {
        Ok(0)
    }
}

/// What the attributes above registered, checked.
pub fn check() {
    let packs = registered_in(module_path!());
    assert_eq!(packs.len(), 1);
    assert_eq!(packs[0].name(), "refund_rule");
    assert_eq!(packs[0].kind(), PackKind::Procedural);
    assert_eq!(packs[0].fingerprint().len(), 64);
}
