//! What the pack attributes' generated code calls. Not public API: the
//! macros and this module change together, and adopters never name it.
//!
//! Keeping these helpers here, rather than spelling their bodies out in every
//! expansion, keeps each expanded pack small (build time scales with it) and
//! keeps the generated code free of anything an adopter's lints could flag.

pub use inventory;

pub use crate::registry::RegisteredPack;
pub use crate::{
    run_pack, EffectsProbe, PackDefinition, PackKind, PackRun, RunOptions, Target, TargetContext,
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
        factory: [$($factory:tt)+],
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
            let name = ::core::concat!(::core::module_path!(), "::", $title);
            let definition =
                $crate::__private::definition($crate::__private::PackKind::$kind, $definition);
            let options = $crate::__private::options(
                $accept,
                $thread,
                $crate::__symfonic_evals_pack!(@effects $($effects)?),
            );
            $crate::__symfonic_evals_pack!(@run [$($factory)+] name, &definition, &options)
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
    // The returned type is named with the user's spans, so one that is no
    // `Target` is reported once, on it.
    (@run [sync $build:ident $returned:ty] $($run:tt)*) => {
        $crate::__private::run_sync::<$returned>($($run)*, $build)
    };
    (@run [async $build:ident $returned:ty] $($run:tt)*) => {
        $crate::__private::run_pack(
            $($run)*,
            (|ctx: &$crate::__private::TargetContext| {
                $crate::__private::tokio_target::<$returned, _>(ctx, $build)
            }) as fn(&$crate::__private::TargetContext) -> _,
        )
    };
    (@run [builder $build:path] $($run:tt)*) => {
        $crate::__private::run_built($($run)*, $build)
    };
    (@effects) => {
        ::core::option::Option::None
    };
    (@effects $effects:path) => {
        ::core::option::Option::Some($effects as $crate::__private::EffectsProbe)
    };
}

pub use crate::__symfonic_evals_pack as pack;

/// Marks [`Builder`] for a function that returns its deployment.
pub struct Returns;

/// Marks [`Builder`] for an `async fn` that awaits its deployment.
pub struct Awaits;

/// What `builder = path` may name: `fn(&TargetContext) -> T` with `T:
/// Target`, or (feature `tokio`) `async fn(&TargetContext) -> T` with `T:
/// AsyncTarget`. The marker `M` lets one path stand for either without the
/// attribute seeing the function: exactly one impl's bounds hold for it.
#[diagnostic::on_unimplemented(
    message = "`builder = ...` must name a function that builds a deployment",
    label = "this cannot build a deployment",
    note = "a builder is `fn(&symfonic_evals::TargetContext) -> T` where `T: symfonic_evals::Target`, \
            or `async fn(&symfonic_evals::TargetContext) -> T` where `T: symfonic_evals::AsyncTarget`"
)]
pub trait Builder<M>: Send + Sync + 'static {
    /// The deployment it builds, as the runner drives it.
    type Built: Target + 'static;
    /// Builds one.
    fn build(&self, context: &TargetContext) -> Self::Built;
}

impl<F, T> Builder<Returns> for F
where
    F: Fn(&TargetContext) -> T + Send + Sync + 'static,
    T: Target + 'static,
{
    type Built = T;
    fn build(&self, context: &TargetContext) -> T {
        self(context)
    }
}

#[cfg(feature = "tokio")]
impl<F, T> Builder<Awaits> for F
where
    F: AsyncFn(&TargetContext) -> T + Send + Sync + 'static,
    T: crate::AsyncTarget + 'static,
{
    type Built = crate::TokioTarget<T>;
    fn build(&self, context: &TargetContext) -> Self::Built {
        crate::TokioTarget::build(context, async |ctx: &TargetContext| self(ctx).await)
    }
}

/// Runs a pack whose builder is the annotated (sync) function.
pub fn run_sync<T: Target + 'static>(
    name: &str,
    definition: &PackDefinition,
    options: &RunOptions,
    build: fn(&TargetContext) -> T,
) -> PackRun {
    run_pack(name, definition, options, build)
}

/// Runs a pack whose builder a `builder = path` argument names.
pub fn run_built<M, B: Builder<M>>(
    name: &str,
    definition: &PackDefinition,
    options: &RunOptions,
    builder: B,
) -> PackRun {
    run_pack(name, definition, options, move |context: &TargetContext| {
        builder.build(context)
    })
}

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
