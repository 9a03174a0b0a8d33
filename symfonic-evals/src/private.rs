//! What the pack attributes' generated code calls. Not public API: the
//! macros and this module change together, and adopters never name it.
//!
//! Keeping these helpers here, rather than spelling their bodies out in every
//! expansion, keeps each expanded pack small (build time scales with it) and
//! keeps the generated code free of anything an adopter's lints could flag.

use std::time::Duration;

use serde_json::Value;

pub use inventory;

pub use crate::registry::RegisteredPack;
pub use crate::{
    run_pack, ApprovalResumePack, ExtensionToolPack, PackDefinition, PackKind, PackRun,
    ProceduralPack, RunOptions, TargetContext, TrialPolicy,
};

/// A procedural pack: the runtime defaults with the attribute's arguments on
/// top. The filler is a plain `fn` (the expansion's closure captures
/// nothing), so these helpers are compiled once, not once per pack.
pub fn procedural(fill: fn(&mut ProceduralPack)) -> PackDefinition {
    let mut pack = ProceduralPack::default();
    fill(&mut pack);
    PackDefinition::Procedural(pack)
}

/// An approval-and-resume pack: defaults plus the attribute's arguments.
pub fn approval_resume(fill: fn(&mut ApprovalResumePack)) -> PackDefinition {
    let mut pack = ApprovalResumePack::default();
    fill(&mut pack);
    PackDefinition::ApprovalResume(pack)
}

/// An extension-tool pack: defaults plus the attribute's arguments.
pub fn extension_tool(fill: fn(&mut ExtensionToolPack)) -> PackDefinition {
    let mut pack = ExtensionToolPack::default();
    fill(&mut pack);
    PackDefinition::ExtensionTool(pack)
}

/// Owned strings from the literals of an array argument.
pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

/// Parses the canonical JSON text the macro emitted for a literal.
///
/// # Panics
///
/// Never for text the macro emitted: it serialised a value it had parsed.
pub fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("the pack attribute emits well-formed JSON")
}

/// Parses a `file("...")` fixture embedded at compile time.
///
/// # Panics
///
/// Never in practice: the macro parsed the same file when it expanded, and
/// a change to the file re-expands the test.
pub fn json_file(text: &str, path: &str) -> Value {
    serde_json::from_str(text)
        .unwrap_or_else(|error| panic!("JSON fixture `{path}` is malformed: {error}"))
}

/// A trial policy from the attribute's `trials`, `require` and
/// `step_timeout_ms` (the runtime default timeout when not given).
pub fn policy(trials: u32, required: u32, step_timeout_ms: Option<u64>) -> TrialPolicy {
    let mut policy = TrialPolicy {
        trials,
        required,
        ..TrialPolicy::default()
    };
    if let Some(ms) = step_timeout_ms {
        policy.step_timeout = Duration::from_millis(ms);
    }
    policy
}

/// Run options from the attribute's `accept_not_applicable`.
pub fn options(accept_not_applicable: bool) -> RunOptions {
    RunOptions {
        accept_not_applicable,
    }
}

/// Builds an async deployment from an `async fn` builder on a runtime the
/// target owns.
#[cfg(feature = "tokio")]
pub fn tokio_target<T, F>(context: &TargetContext, build: F) -> crate::TokioTarget<T>
where
    T: crate::AsyncTarget,
    F: AsyncFnOnce(&TargetContext) -> T,
{
    crate::TokioTarget::build(context, build)
}

/// Ends an expanded test: prints the report table (shown by `cargo test` on
/// failure or with `--nocapture`) and panics unless the pack passed.
pub fn finish(run: &PackRun) {
    if run.passed() {
        println!("{}", run.render());
    }
    run.assert_passed();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_start_from_the_runtime_defaults() {
        let definition = extension_tool(|pack| pack.tool_name = "weather".into());
        let PackDefinition::ExtensionTool(pack) = definition else {
            panic!("an extension pack")
        };
        assert_eq!(pack.tool_name, "weather");
        assert_eq!(pack.conversation, ExtensionToolPack::default().conversation);
    }

    #[test]
    fn policy_keeps_the_default_timeout_unless_given() {
        assert_eq!(
            policy(3, 2, None).step_timeout,
            TrialPolicy::default().step_timeout
        );
        assert_eq!(
            policy(3, 2, Some(250)).step_timeout,
            Duration::from_millis(250)
        );
        assert_eq!(
            (policy(3, 2, None).trials, policy(3, 2, None).required),
            (3, 2)
        );
    }

    #[test]
    fn json_helpers_parse_and_name_a_bad_fixture() {
        assert_eq!(json(r#"{"a":[1]}"#), serde_json::json!({"a": [1]}));
        assert_eq!(strings(&["a", "b"]), ["a", "b"]);
        let panic = std::panic::catch_unwind(|| json_file("{", "fixtures/x.json")).unwrap_err();
        let message = panic.downcast_ref::<String>().unwrap();
        assert!(message.starts_with("JSON fixture `fixtures/x.json` is malformed"));
    }
}
