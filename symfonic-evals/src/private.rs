//! What the pack attributes' generated code calls. Not public API: the
//! macros and this module change together, and adopters never name it.
//!
//! Keeping these helpers here, rather than spelling their bodies out in every
//! expansion, keeps each expanded pack small (build time scales with it) and
//! keeps the generated code free of anything an adopter's lints could flag.

use std::time::Duration;

use serde_json::{Map, Value};

pub use inventory;

pub use crate::registry::RegisteredPack;
use crate::TrialPolicy;
pub use crate::{run_pack, PackDefinition, PackKind, PackRun, RunOptions, TargetContext};

/// The pack the attribute defined: the runtime defaults with the
/// attribute's explicit arguments on top, given as one canonical JSON object
/// (field name to value, plus `policy` for `trials`/`require`/
/// `step_timeout_ms`). One string per pack keeps each expansion small, and
/// this function is compiled once for all of them.
///
/// # Panics
///
/// Never for text the macro emitted: it serialised arguments it had checked
/// against the same field table.
pub fn definition(kind: PackKind, text: &str) -> PackDefinition {
    let mut fields: Map<String, Value> =
        serde_json::from_str(text).expect("the pack attribute emits a JSON object");
    let policy = fields.remove("policy").map(|p| {
        serde_json::from_value::<PolicyArguments>(p).expect("the pack attribute emits a policy")
    });
    let fields = Value::Object(fields);
    let mut definition = match kind {
        PackKind::Procedural => PackDefinition::Procedural(parse(fields)),
        PackKind::ApprovalResume => PackDefinition::ApprovalResume(parse(fields)),
        PackKind::ExtensionTool => PackDefinition::ExtensionTool(parse(fields)),
    };
    if let Some(arguments) = policy {
        let policy = arguments.policy();
        match &mut definition {
            PackDefinition::Procedural(pack) => pack.policy = policy,
            PackDefinition::ApprovalResume(pack) => pack.policy = policy,
            PackDefinition::ExtensionTool(pack) => pack.policy = policy,
        }
    }
    definition
}

fn parse<T: serde::de::DeserializeOwned>(fields: Value) -> T {
    serde_json::from_value(fields).expect("the pack attribute emits known fields")
}

/// The attribute's `trials`, `require` and `step_timeout_ms`.
#[derive(serde::Deserialize)]
struct PolicyArguments {
    trials: u32,
    required: u32,
    step_timeout_ms: Option<u64>,
}

impl PolicyArguments {
    /// The runtime default timeout unless one was given.
    fn policy(&self) -> TrialPolicy {
        let mut policy = TrialPolicy {
            trials: self.trials,
            required: self.required,
            ..TrialPolicy::default()
        };
        if let Some(ms) = self.step_timeout_ms {
            policy.step_timeout = Duration::from_millis(ms);
        }
        policy
    }
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
    use crate::{ApprovalResumePack, ExtensionToolPack};

    #[test]
    fn definitions_start_from_the_runtime_defaults() {
        let definition = definition(
            PackKind::ExtensionTool,
            r#"{"tool_name":"weather","arguments":{"city":"Oslo"},"expected_fragments":["Oslo"]}"#,
        );
        let PackDefinition::ExtensionTool(pack) = definition else {
            panic!("an extension pack")
        };
        assert_eq!(pack.tool_name, "weather");
        assert_eq!(pack.arguments, Some(serde_json::json!({"city": "Oslo"})));
        assert_eq!(pack.expected_fragments, ["Oslo"]);
        assert_eq!(pack.conversation, ExtensionToolPack::default().conversation);
        assert_eq!(pack.policy, TrialPolicy::default());
    }

    #[test]
    fn policy_keeps_the_default_timeout_unless_given() {
        let policy_of = |text: &str| definition(PackKind::ApprovalResume, text).policy();
        let given = policy_of(r#"{"policy":{"trials":3,"required":2,"step_timeout_ms":250}}"#);
        assert_eq!((given.trials, given.required), (3, 2));
        assert_eq!(given.step_timeout, Duration::from_millis(250));
        let defaulted = policy_of(r#"{"policy":{"trials":3,"required":3,"step_timeout_ms":null}}"#);
        assert_eq!(defaulted.step_timeout, TrialPolicy::default().step_timeout);
        let PackDefinition::ApprovalResume(pack) = definition(PackKind::ApprovalResume, "{}")
        else {
            panic!("an approval pack")
        };
        assert_eq!(pack, ApprovalResumePack::default());
    }

    #[test]
    fn an_unknown_field_is_refused_rather_than_dropped() {
        let refused = std::panic::catch_unwind(|| {
            definition(PackKind::Procedural, r#"{"action_tol":"issue_refund"}"#)
        });
        assert!(refused.is_err());
    }
}
