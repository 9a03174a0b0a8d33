//! The same help desk written in Python (`examples/helpdesk-py/`), judged
//! over the process protocol: its launcher, the pack arguments it is
//! evaluated with, and its broken twins with where each must be caught.
//! The main job and `tests/python_packs.rs` share these definitions.

use std::path::PathBuf;

use serde_json::json;
use symfonic_evals::process::ProcessSpec;
use symfonic_evals::{
    ApprovalResumePack, ExtensionToolPack, PackDefinition, ProceduralPack, ProcessTarget,
    TargetContext,
};

use crate::twins::{Catch, Pack};

/// The command that starts the Python desk, or one of its twins.
pub fn spec(twin: Option<&str>) -> ProcessSpec {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../helpdesk-py/helpdesk.py");
    let spec = ProcessSpec::new("python3").arg(script);
    match twin {
        Some(twin) => spec.args(["--twin", twin]),
        None => spec,
    }
}

/// The command that starts the Python desk in its model mode
/// (`--model openai`, the official OpenAI SDK) under `python`, an
/// interpreter that has the SDK installed. The harness points the SDK at the
/// trial's model endpoint through `OPENAI_BASE_URL`.
pub fn model_spec(python: impl Into<std::ffi::OsString>) -> ProcessSpec {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../helpdesk-py/helpdesk.py");
    ProcessSpec::new(python)
        .arg(script)
        .args(["--model", "openai"])
}

/// Starts the desk for one trial.
///
/// # Panics
///
/// When the child cannot be started or fails its handshake; the runner
/// reports that as the deployment not building.
pub fn start(ctx: &TargetContext, spec: &ProcessSpec) -> ProcessTarget {
    ProcessTarget::spawn(ctx, spec).unwrap_or_else(|error| panic!("{error}"))
}

/// The procedural pack as the Python desk is evaluated with it.
pub fn procedural() -> PackDefinition {
    let lesson = "verify the account region, then issue the refund";
    PackDefinition::Procedural(ProceduralPack {
        demonstrations: (1..=2)
            .map(|n| format!("walk me through refunding order {n}: {lesson}"))
            .collect(),
        draft_prompt: "refund order 3".into(),
        draft_state: json!({"region": "US"}),
        review_prompt: "approve the refund procedure: governs issue_refund when region eq US"
            .into(),
        satisfied_prompt: "refund order 4".into(),
        satisfied_state: json!({"region": "US"}),
        blocked_prompt: "refund order 5".into(),
        blocked_state: json!({"region": "EU"}),
        action_tool: "issue_refund".into(),
        procedure_fragment: "verify the account region".into(),
        ..ProceduralPack::default()
    })
}

/// The approval pack.
pub fn approval() -> PackDefinition {
    PackDefinition::ApprovalResume(ApprovalResumePack {
        pause_prompt: "escalate ticket 7 to a supervisor".into(),
        answer: json!({"approved": true}),
        interaction_tool: "ask_user".into(),
        ..ApprovalResumePack::default()
    })
}

/// The extension pack.
pub fn extension() -> PackDefinition {
    PackDefinition::ExtensionTool(ExtensionToolPack {
        prompt: "what is the weather in Lisbon".into(),
        tool_name: "weather_lookup".into(),
        arguments: Some(json!({"city": "Lisbon"})),
        expected_fragments: vec!["Lisbon".into(), "sunny".into()],
        ..ExtensionToolPack::default()
    })
}

/// The definition of `pack` for the Python desk.
pub fn definition(pack: Pack) -> PackDefinition {
    match pack {
        Pack::Procedural => procedural(),
        Pack::ApprovalResume => approval(),
        Pack::ExtensionTool => extension(),
    }
}

/// A broken variant of the Python desk, selected with `--twin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PythonTwin {
    /// The `--twin` name.
    pub name: &'static str,
    /// The pack that must catch it.
    pub pack: Pack,
    /// Where.
    pub catch: Catch,
}

/// Every Python twin and where its pack must catch it.
pub const TWINS: [PythonTwin; 5] = [
    PythonTwin {
        name: "draft-in-recall",
        pack: Pack::Procedural,
        catch: Catch {
            scenario: "procedural-review-and-enforcement",
            step: "draft probe",
            assertion: "PromptRecallExcludes",
            detail: "PromptRecallExcludes(fragment)",
        },
    },
    PythonTwin {
        name: "review-in-memory",
        pack: Pack::Procedural,
        catch: Catch {
            scenario: "procedural-review-and-enforcement",
            step: "satisfied",
            assertion: "AttributeEquals",
            detail: "AttributeEquals(procedural_review)",
        },
    },
    PythonTwin {
        name: "gate-ignores-state",
        pack: Pack::Procedural,
        catch: Catch {
            scenario: "procedural-review-and-enforcement",
            step: "blocked",
            assertion: "StageObserved",
            detail: "outcome=rejected",
        },
    },
    PythonTwin {
        name: "tokens-in-memory",
        pack: Pack::ApprovalResume,
        catch: Catch {
            scenario: "approval/restart-before-replay",
            step: "replay",
            assertion: "ExpectedError",
            detail: "PauseTokenReplayedError",
        },
    },
    PythonTwin {
        name: "extension-unbound",
        pack: Pack::ExtensionTool,
        catch: Catch {
            scenario: "extension-tool-execution",
            step: "extension call",
            assertion: "ToolSucceeded",
            detail: "ToolSucceeded(weather_lookup, times=1)",
        },
    },
];
