//! The refund pack the probes' unit tests start from, each overriding what
//! its probe reads.

use serde_json::json;

use super::ProceduralPack;

/// A valid pack: two demonstrations, a draft under a state the rule
/// refuses, and a satisfied and a blocked turn that differ in the region.
pub(super) fn refund_pack() -> ProceduralPack {
    ProceduralPack {
        demonstrations: vec!["refund order 1".into(), "refund order 2".into()],
        review_prompt: "approve the refund procedure".into(),
        draft_prompt: "refund order 3".into(),
        satisfied_prompt: "refund order 4".into(),
        blocked_prompt: "refund order 5".into(),
        satisfied_state: json!({"region": "US"}),
        blocked_state: json!({"region": "EU"}),
        draft_state: json!({"region": "MX"}),
        action_tool: "issue_refund".into(),
        procedure_fragment: "verify the account region".into(),
        ..ProceduralPack::default()
    }
}
