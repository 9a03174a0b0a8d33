//! Every JSON form a state or answer literal may take.
#![deny(warnings)]

use symfonic_evals::{approval_resume_pack, procedural_pack, TargetContext};

use symfonic_evals_ui::{registered_in, Inert as Deployment};

#[procedural_pack(
    demonstrations = ["a", "b",],
    draft_prompt = "d",
    draft_state = { region: "EU", },
    review_prompt = "r",
    satisfied_prompt = "s",
    satisfied_state = {
        "region": "US",
        tier: 2,
        ratio: -0.25,
        big: 1.5e3,
        negative: -7,
        flags: ["a", 1, true, null, [false], { nested: "yes" }],
        limits: { max: 10, "min": 0, inner: { deeper: [] } },
        empty: {},
        none: null,
    },
    blocked_prompt = "b",
    blocked_state = { "region": "EU" },
    action_tool = "t",
    procedure_fragment = "f",
)]
fn every_json_form(_: &TargetContext) -> Deployment {
    Deployment
}

#[approval_resume_pack(
    pause_prompt = "p",
    answer = { "approved": true, "comment": "quoted \"text\" and unicode é" },
    interaction_tool = "ask",
)]
fn escaped_strings(_: &TargetContext) -> Deployment {
    Deployment
}

/// What the attributes above registered, checked.
pub fn check() {
    assert_eq!(registered_in(module_path!()).len(), 2);
}
