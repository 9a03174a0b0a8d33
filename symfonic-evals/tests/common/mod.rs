//! Fixtures shared by the integration tests: one small deployment per pack,
//! each with a switch that breaks it in exactly one way the pack must catch,
//! and the pack definitions those deployments are run against.
#![allow(dead_code)]

pub mod approval;
pub mod extension;
pub mod procedural;

use serde_json::json;
use symfonic_evals::{
    ApprovalResumePack, ExtensionToolPack, Failure, PackDefinition, PackRun, ProceduralPack,
};

/// A tool call id no other call of the trial has, whatever restarts come
/// between them: a random component, as a framework's ids have (a counter
/// alone would start over in every process).
pub fn call_id() -> String {
    use std::hash::BuildHasher;
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        "call-{:016x}",
        std::collections::hash_map::RandomState::new().hash_one(n)
    )
}

/// The procedural pack as the refund desk in [`procedural`] is meant to pass it.
pub fn procedural_pack() -> ProceduralPack {
    ProceduralPack {
        demonstrations: vec![
            "demonstrate: refund order 1 after checking the region".into(),
            "demonstrate: refund order 2 after checking the region".into(),
        ],
        draft_prompt: "refund order 3".into(),
        draft_state: json!({"region": "EU"}),
        review_prompt: "approve the refund procedure".into(),
        satisfied_prompt: "refund order 4".into(),
        satisfied_state: json!({"region": "US"}),
        blocked_prompt: "refund order 5".into(),
        blocked_state: json!({"region": "EU"}),
        action_tool: procedural::TOOL.into(),
        procedure_fragment: procedural::FRAGMENT.into(),
        ..ProceduralPack::default()
    }
}

/// The approval pack as the desk in [`approval`] is meant to pass it.
pub fn approval_pack() -> ApprovalResumePack {
    ApprovalResumePack {
        pause_prompt: "refund order 9 needs a manager".into(),
        answer: json!({"approved": true}),
        interaction_tool: approval::INTERACTION.into(),
        ..ApprovalResumePack::default()
    }
}

/// The extension pack as the deployment in [`extension`] is meant to pass it.
pub fn extension_pack() -> ExtensionToolPack {
    ExtensionToolPack {
        prompt: "what is the weather in Oslo".into(),
        tool_name: extension::TOOL.into(),
        arguments: Some(json!({"city": "Oslo"})),
        expected_fragments: vec!["Oslo".into(), "12".into()],
        ..ExtensionToolPack::default()
    }
}

/// Wraps each pack in its definition.
pub fn procedural(pack: ProceduralPack) -> PackDefinition {
    PackDefinition::Procedural(pack)
}

/// See [`procedural`].
pub fn approval(pack: ApprovalResumePack) -> PackDefinition {
    PackDefinition::ApprovalResume(pack)
}

/// See [`procedural`].
pub fn extension(pack: ExtensionToolPack) -> PackDefinition {
    PackDefinition::ExtensionTool(pack)
}

/// The first failure of a run that must have failed, with the run's account
/// in the message when it did not.
pub fn first_failure(run: &PackRun) -> Failure {
    assert!(!run.passed(), "expected a failure:\n{}", run.render());
    run.first_failure()
        .unwrap_or_else(|| panic!("a failed run names no failure:\n{}", run.render()))
}

/// The failures of the seed scenario alone: a flaw the seed catches also
/// fails the probes that repeat the seed's steps.
pub fn seed_failures(run: &PackRun) -> Vec<Failure> {
    let seed = run.kind().seed_scenario();
    run.failures()
        .into_iter()
        .filter(|f| f.scenario == seed)
        .collect()
}

/// Asserts that the first failure is `assertion` at `step_label`.
pub fn assert_fails_at(run: &PackRun, step_label: &str, assertion: &str) -> Failure {
    let failure = first_failure(run);
    assert_eq!(
        (failure.step_label.as_str(), failure.assertion.as_str()),
        (step_label, assertion),
        "wrong first failure:\n{}",
        run.render()
    );
    failure
}

/// Points the report directory of this test binary at a directory of its own,
/// once, before any run reads it. Every test of a binary that calls this must
/// call it first, so no run reads the variable while it is being set.
pub fn private_report_dir(binary: &str) -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        // A child serving an isolated pack inherits its parent's directory,
        // so the runs it passes over report where the parent's did.
        if std::env::var_os(symfonic_evals::process::SERVE_RUN_ENV).is_some() {
            if let Some(dir) = std::env::var_os(symfonic_evals::REPORT_DIR_ENV) {
                return dir.into();
            }
        }
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("{binary}-reports-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a report directory");
        // SAFETY: every test of a binary that calls this calls it first (see
        // above) and the lock holds the others until it returns, so no thread
        // of the binary reads the environment while it is set.
        unsafe { std::env::set_var(symfonic_evals::REPORT_DIR_ENV, &dir) };
        dir
    })
}
