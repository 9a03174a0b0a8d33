//! The packs as this desk is evaluated by them: its own prompts, its
//! own tool names, its own states, and every optional argument that turns
//! a probe on. The tests apply the same arguments through the attribute
//! macros; the main job runs these definitions against the reference and
//! every twin, with the store's effect oracle.

use serde_json::json;
use symfonic_evals::{
    ApprovalResumePack, ExactlyOncePack, ExtensionToolPack, PackDefinition, ProceduralPack,
    RunOptions,
};

use crate::store::effects_in_store;
use crate::twins::Pack;

/// Learn "verify the account region before a refund", approve it for
/// verified US accounts with a receipt on file (`verified` a boolean, so
/// the gate sweep tries its text spellings and another type), and enforce
/// it across a restart; a tracking habit learned beside it must stay a
/// draft, turns with nothing to learn must promote nothing, two refunds
/// asked for at once are each judged by the gate, and a whole order's
/// refund, which a manager approves first, is still judged by the gate
/// after the approval.
pub fn procedural() -> PackDefinition {
    PackDefinition::Procedural(ProceduralPack {
        demonstrations: vec!["refund order 1".into(), "refund order 2".into()],
        draft_prompt: "refund order 3".into(),
        draft_state: json!({ "region": "EU", "priority": "urgent" }),
        review_prompt: "approve the refund procedure: governs issue_refund when region eq US \
                        and receipt exists and verified eq true"
            .into(),
        satisfied_prompt: "refund order 4".into(),
        satisfied_state: json!({
            "region": "US", "receipt": "r-104", "priority": "normal", "verified": true
        }),
        blocked_prompt: "refund order 5".into(),
        // Verified too: the region alone refuses it.
        blocked_state: json!({
            "region": "EU", "receipt": "r-105", "priority": "normal", "verified": true
        }),
        action_tool: "issue_refund".into(),
        procedure_fragment: "verify the account region".into(),
        decoy_demonstrations: (21..=24).map(|n| format!("track order {n}")).collect(),
        decoy_fragment: Some("call track_shipment".into()),
        control_demonstrations: vec![
            "where is the parcel for order 31?".into(),
            "what can you help me with?".into(),
        ],
        // Tracks a parcel between the draft and the review.
        interleaved_prompt: Some("where is the parcel for order 32?".into()),
        multi_call_prompt: Some("refund orders 6 and 7".into()),
        // A whole order's refund waits for a manager, then the gate.
        approval_prompt: Some("refund order 8 in full".into()),
        approval_answer: Some(json!({ "approved": true })),
        // Every state the three predicates give (26, the boolean's text
        // spellings and a number in its place last), which the default
        // budget (20) stops short of, and the unnamed leaf's three.
        gate_sweep: 32,
        ..ProceduralPack::default()
    })
}

/// Ask a person before cancelling a subscription, resume on their answer,
/// refuse the replayed token; the cancellation is the gated action, a
/// denial keeps the subscription, and an answer that does not fit the
/// question is refused without spending the token.
pub fn approval_resume() -> PackDefinition {
    PackDefinition::ApprovalResume(ApprovalResumePack {
        pause_prompt: "cancel the subscription of customer 42".into(),
        answer: json!({ "approved": true }),
        interaction_tool: "ask_user".into(),
        gated_tool: Some("cancel_subscription".into()),
        deny_answer: Some(json!({ "approved": false })),
        unfit_answer: Some(json!({ "approved": "maybe" })),
        amended_answer: Some(json!({ "approved": true, "effective": "end_of_term" })),
        amended_call: Some(json!({ "effective": "end_of_term" })),
        second_prompt: Some("cancel the subscription of customer 43".into()),
        ..ApprovalResumePack::default()
    })
}

/// `definition` as a newcomer first writes it: for the approval pack,
/// the prompt that pauses, the approving answer and the interaction, and
/// none of the optional arguments (`gated_tool`, `deny_answer`,
/// `unfit_answer`, `foreign_answer`, `amended_answer`). The pack then derives the denial and the unfit answer
/// from `answer` and judges the denial by the effects the approval
/// applied. Other packs are returned as given.
pub fn as_a_newcomer_writes(definition: PackDefinition) -> PackDefinition {
    match definition {
        PackDefinition::ApprovalResume(pack) => {
            PackDefinition::ApprovalResume(ApprovalResumePack {
                gated_tool: None,
                deny_answer: None,
                unfit_answer: None,
                foreign_answer: None,
                amended_answer: None,
                amended_call: None,
                ..pack
            })
        }
        other => other,
    }
}

/// Track a parcel through the shipping extension's tool, whose body
/// witnesses what it received; a second parcel's lookup must return its
/// own result. Tracking runs on the carrier's MCP server, which the
/// harness serves: every result it sends reads as a parcel in transit.
pub fn extension_tool() -> PackDefinition {
    PackDefinition::ExtensionTool(ExtensionToolPack {
        prompt: "where is the parcel for order 7?".into(),
        tool_name: "track_shipment".into(),
        arguments: Some(json!({ "order": 7, "include_eta": true })),
        expected_fragments: vec!["Order 7".into(), "in transit".into()],
        witnessed: true,
        second_prompt: Some("where is the parcel for order 8?".into()),
        second_arguments: Some(json!({ "order": 8, "include_eta": true })),
        fixture_result: Some(json!({
            "status": "in transit", "carrier": "Northpost", "eta_days": 2
        })),
        ..ExtensionToolPack::default()
    })
}

/// Cancel a subscription on a person's approval with the desk killed at
/// every effect boundary (and between the pause and the resume) and the
/// request retried: the cancellation must be applied exactly once.
pub fn exactly_once() -> PackDefinition {
    PackDefinition::ExactlyOnce(ExactlyOncePack {
        prompt: "cancel the subscription of customer 42".into(),
        answer: Some(json!({ "approved": true })),
        second_prompt: Some("cancel the subscription of customer 43".into()),
        ..ExactlyOncePack::default()
    })
}

/// The definition of `pack`.
pub fn definition(pack: Pack) -> PackDefinition {
    match pack {
        Pack::Procedural => procedural(),
        Pack::ApprovalResume => approval_resume(),
        Pack::ExtensionTool => extension_tool(),
        Pack::ExactlyOnce => exactly_once(),
    }
}

/// How every pack runs against this desk: after every step the effects in
/// its store must equal the ledger's.
pub fn run_options() -> RunOptions {
    RunOptions {
        effects_probe: Some(effects_in_store),
        ..RunOptions::default()
    }
}
