//! What the pack attributes' generated code calls. Not public API: the
//! macros and this module change together, and adopters never name it.
//!
//! Keeping these helpers here, rather than spelling their bodies out in every
//! expansion, keeps each expanded pack small (build time scales with it) and
//! keeps the generated code free of anything an adopter's lints could flag.

pub use inventory;

pub use crate::registry::RegisteredPack;
pub use crate::{
    run_pack, EffectsProbe, PackDefinition, PackKind, PackRun, RunOptions, TargetContext,
};

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
    PackDefinition::from_arguments(kind, text)
        .expect("the pack attribute emits arguments checked against the same fields")
}

/// Expands one checked pack attribute into its runner, its `#[test]` and its
/// registration. The attribute hands over names and literals only; spelling
/// the items out here means they are produced by the compiler's own macro
/// engine rather than token by token in the proc macro, which every rebuild
/// re-runs for every pack. Not public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __symfonic_evals_pack {
    (
        cfg: [$(#[$cfg:meta])*],
        test: [$(#[$test:meta])*],
        vis: $vis:vis,
        name: $name:ident,
        title: $title:literal,
        runner: $runner:ident,
        factory: $mode:ident $build:ident,
        kind: $kind:ident,
        definition: $definition:literal,
        tracked: [$($file:literal),*],
        accept: $accept:literal,
        thread: $thread:literal,
        effects: [$($effects:path)?],
        expected_to_pass: $expected_to_pass:literal
    ) => {
        $(#[$cfg])*
        #[doc(hidden)]
        fn $runner() -> $crate::__private::PackRun {
            $(const _: &str = ::core::include_str!(::core::concat!(
                ::core::env!("CARGO_MANIFEST_DIR"), "/", $file
            ));)*
            $crate::__private::run_pack(
                ::core::concat!(::core::module_path!(), "::", $title),
                &$crate::__private::definition($crate::__private::PackKind::$kind, $definition),
                &$crate::__private::options(
                    $accept,
                    $thread,
                    $crate::__symfonic_evals_pack!(@effects $($effects)?),
                ),
                $crate::__symfonic_evals_pack!(@factory $mode $build),
            )
        }

        $(#[$cfg])*
        #[::core::prelude::v1::test]
        $(#[$test])*
        $vis fn $name() {
            $crate::__private::finish(&$runner());
        }

        $(#[$cfg])*
        $crate::__private::inventory::submit! {
            $crate::__private::RegisteredPack::new(
                $title,
                ::core::module_path!(),
                $crate::__private::PackKind::$kind,
                (::core::file!(), ::core::line!()),
                $definition,
                $expected_to_pass,
                $runner,
            )
        }
    };
    // A fn pointer, not the fn item: every pack whose builder returns the same
    // deployment type then shares one instantiation of the generic runner.
    (@factory sync $build:ident) => {
        $build as fn(&$crate::__private::TargetContext) -> _
    };
    (@effects) => {
        ::core::option::Option::None
    };
    (@effects $effects:path) => {
        ::core::option::Option::Some($effects as $crate::__private::EffectsProbe)
    };
    (@factory async $build:ident) => {
        (|ctx: &$crate::__private::TargetContext| $crate::__private::tokio_target(ctx, $build))
            as fn(&$crate::__private::TargetContext) -> _
    };
}

pub use crate::__symfonic_evals_pack as pack;

/// Run options from the attribute's `accept_not_applicable`, `isolation`
/// and `effects_probe`.
pub fn options(
    accept_not_applicable: bool,
    on_a_thread: bool,
    effects_probe: Option<EffectsProbe>,
) -> RunOptions {
    RunOptions {
        accept_not_applicable,
        effects_probe,
        isolation: if on_a_thread {
            crate::Isolation::Thread
        } else {
            crate::Isolation::Process
        },
        ..RunOptions::default()
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
/// failure or with `--nocapture`) and panics unless the pack passed, at the
/// attribute that wrote the test.
#[track_caller]
pub fn finish(run: &PackRun) {
    if run.passed() {
        println!("{}", run.render());
    }
    run.assert_passed();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::{ApprovalResumePack, ExtensionToolPack, TrialPolicy};

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
