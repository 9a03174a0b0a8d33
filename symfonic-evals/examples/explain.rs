//! Prints each pack's contract as the tables `SYMFONIC_EVALS_EXPLAIN=1`
//! shows before a run: `cargo run -p symfonic-evals --example explain`.

use serde_json::json;
use symfonic_evals::{
    ApprovalResumePack, ExactlyOncePack, ExtensionToolPack, PackDefinition, ProceduralPack,
};

fn main() {
    let packs = [
        PackDefinition::Procedural(ProceduralPack {
            demonstrations: vec!["refund order 1".into(), "refund order 2".into()],
            draft_prompt: "refund order 3".into(),
            draft_state: json!({"region": "EU"}),
            review_prompt: "approve the refund procedure: governs issue_refund when region eq US"
                .into(),
            satisfied_prompt: "refund order 4".into(),
            satisfied_state: json!({"region": "US"}),
            blocked_prompt: "refund order 5".into(),
            blocked_state: json!({"region": "EU"}),
            action_tool: "issue_refund".into(),
            procedure_fragment: "verify the account region".into(),
            ..ProceduralPack::default()
        }),
        PackDefinition::ApprovalResume(ApprovalResumePack {
            pause_prompt: "cancel the subscription of customer 42".into(),
            answer: json!({"approved": true}),
            interaction_tool: "ask_user".into(),
            ..ApprovalResumePack::default()
        }),
        PackDefinition::ExtensionTool(ExtensionToolPack {
            prompt: "where is the parcel for order 7?".into(),
            tool_name: "track_shipment".into(),
            arguments: Some(json!({"order": 7})),
            ..ExtensionToolPack::default()
        }),
        PackDefinition::ExactlyOnce(ExactlyOncePack {
            prompt: "charge order 7".into(),
            ..ExactlyOncePack::default()
        }),
    ];
    for pack in packs {
        println!("{}", pack.explain());
    }
}
