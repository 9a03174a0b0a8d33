//! The three packs as this desk is evaluated by them: its own prompts, its
//! own tool names, its own states. The tests apply the same arguments
//! through the attribute macros; the main job runs these definitions
//! against the reference and every twin.

use serde_json::json;
use symfonic_evals::{ApprovalResumePack, ExtensionToolPack, PackDefinition, ProceduralPack};

use crate::twins::Pack;

/// Learn "verify the account region before a refund", approve it for US
/// accounts, and enforce it across a restart.
pub fn procedural() -> PackDefinition {
    PackDefinition::Procedural(ProceduralPack {
        demonstrations: vec!["refund order 1".into(), "refund order 2".into()],
        draft_prompt: "refund order 3".into(),
        draft_state: json!({ "region": "US" }),
        review_prompt: "approve the refund procedure: governs issue_refund when region eq US"
            .into(),
        satisfied_prompt: "refund order 4".into(),
        satisfied_state: json!({ "region": "US" }),
        blocked_prompt: "refund order 5".into(),
        blocked_state: json!({ "region": "EU" }),
        action_tool: "issue_refund".into(),
        procedure_fragment: "verify the account region".into(),
        ..ProceduralPack::default()
    })
}

/// Ask a person before cancelling a subscription, resume on their answer,
/// refuse the replayed token, with a restart before the replay.
pub fn approval_resume() -> PackDefinition {
    PackDefinition::ApprovalResume(ApprovalResumePack {
        pause_prompt: "cancel the subscription of customer 42".into(),
        answer: json!({ "approved": true }),
        interaction_tool: "ask_user".into(),
        ..ApprovalResumePack::default()
    })
}

/// Track a parcel through the shipping extension's tool.
pub fn extension_tool() -> PackDefinition {
    PackDefinition::ExtensionTool(ExtensionToolPack {
        prompt: "where is the parcel for order 7?".into(),
        tool_name: "track_shipment".into(),
        arguments: Some(json!({ "order": 7 })),
        expected_fragments: vec!["Order 7".into(), "in transit".into()],
        ..ExtensionToolPack::default()
    })
}

/// The definition of `pack`.
pub fn definition(pack: Pack) -> PackDefinition {
    match pack {
        Pack::Procedural => procedural(),
        Pack::ApprovalResume => approval_resume(),
        Pack::ExtensionTool => extension_tool(),
    }
}
