//! Honest variants: the reference desk configured the way real deployments
//! differ from it, and correct all the same.
//!
//! A pack that fails a correct deployment is worse than one that misses a
//! broken one: an adopter whose desk signs its tokens, draws random call
//! ids or keeps its outbox in a file learns to ignore the harness. Each
//! [`Variant`] is one such shape, switched at the line in the real code
//! where it lives (search for `Variant::` to find them), and must pass
//! every pack it is meant for with every probe on, as the reference does.
//! They are the twins' mirror image: a twin must be caught, a variant must
//! never be.
//!
//! Adding a variant is one line in the list below plus its switch; the
//! main job and `tests/helpdesk_honest.rs` run every one.

pub mod jwt;

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use symfonic_evals::{
    run_pack, ArgumentMatch, NotRunReason, PackDefinition, PackRun, Retries, Verdict,
};

use crate::twins::Pack;
use crate::Helpdesk;

/// Declares [`Variant`], its names, summaries and packs, and
/// [`Variant::ALL`] from one list, so a variant cannot be added without
/// being run by the main job and the honest-variant suite.
macro_rules! variants {
    ($($name:ident = $kebab:literal, $what:literal,
        for [$($pack:ident),*], python [$($py:ident),*];)*) => {
        /// One correct-but-unusual configuration of the reference desk.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Variant {
            $(#[doc = $what] $name,)*
        }

        impl Variant {
            /// Every variant, in the order the main job reports them.
            pub const ALL: &'static [Self] = &[$(Self::$name),*];

            /// A short kebab-case name for reports; the Python desk takes
            /// the same name after `--variant`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$name => $kebab,)*
                }
            }

            /// What the variant changes, in one sentence.
            pub fn summary(self) -> &'static str {
                match self {
                    $(Self::$name => $what,)*
                }
            }

            /// The packs the Rust desk in this configuration must pass.
            pub fn packs(self) -> &'static [Pack] {
                match self {
                    $(Self::$name => &[$(Pack::$pack),*],)*
                }
            }

            /// The packs the Python desk in this configuration must pass
            /// over the protocol; empty when it has no such configuration.
            pub fn python_packs(self) -> &'static [Pack] {
                match self {
                    $(Self::$name => &[$(Pack::$py),*],)*
                }
            }
        }
    };
}

variants! {
    JwtPauseTokens = "jwt-pause-tokens",
        "Pause tokens are JWTs (header.payload.signature, base64url, HMAC-SHA256 under a \
         per-desk secret) and redemption verifies the signature before looking the token up.",
        for [ApprovalResume, ExactlyOnce], python [ApprovalResume, ExactlyOnce];
    TimeOrderedPauseTokens = "time-ordered-pause-tokens",
        "Pause tokens are random ids that sort by time: UUIDv7 in the Rust desk and ULIDs in \
         the Python one, a millisecond timestamp first and random bits after it, so tokens \
         issued close together share their first characters.",
        for [ApprovalResume], python [ApprovalResume];
    RandomCallIds = "random-call-ids",
        "Call ids are random, uuid-shaped, instead of drawn from a durable counter.",
        for [Procedural, ApprovalResume, ExtensionTool, ExactlyOnce],
        python [Procedural, ApprovalResume, ExtensionTool, ExactlyOnce];
    LooksUpBeforeActing = "looks-up-before-acting",
        "The model makes an extra read-only call before the gated action (the subscription, \
         or the ticket, is looked up before asking the person).",
        for [ApprovalResume, ExactlyOnce], python [ApprovalResume, ExactlyOnce];
    OutboxAsJsonLines = "outbox-as-json-lines",
        "The business outbox is a JSON-lines file in the durable directory instead of a \
         table, deduplicated under the same keys; the effect oracle reads it back.",
        for [Procedural, ApprovalResume, ExtensionTool, ExactlyOnce],
        python [Procedural, ApprovalResume, ExactlyOnce];
    DefaultedToolArgument = "defaulted-tool-argument",
        "The tool call carries an extra argument at its default value (`detail: \"summary\"` \
         for tracking, `units: \"metric\"` for the weather); the pack matches arguments as a \
         subset.",
        for [ExtensionTool], python [ExtensionTool];
    ExtraSystemMessage = "extra-system-message",
        "The model input carries a second system message (the shop's tone of voice) before \
         the recall block.",
        for [Procedural, ApprovalResume, ExtensionTool, ExactlyOnce],
        python [Procedural, ApprovalResume, ExtensionTool, ExactlyOnce];
    NoticeAtPause = "notice-at-pause",
        "Pausing for a person also posts a change notice of the desk's own (an effect of \
         `post_notice`, once per question), before anyone answered; judged with the \
         approval pack's arguments as a newcomer writes them.",
        for [ApprovalResume, ExactlyOnce], python [ApprovalResume, ExactlyOnce];
    NoticeOnGovernedCalls = "notice-on-governed-calls",
        "Every governed call is announced on the desk's channel, as a desk posting to a team \
         chat does: an effect of `post_notice` under a key of its own when the cancellation is \
         held for a person (at the pause) and another when it runs (on the resume).",
        for [ApprovalResume, ExactlyOnce], python [ApprovalResume, ExactlyOnce];
    RejectedAsGuardrail = "rejected-as-guardrail",
        "A demonstration a reviewer rejected is kept as a guardrail (\"never repeat the \
         handling a reviewer rejected\"), listed by the review door as `guardrail`: it governs \
         no tool and is never recalled, and nothing is learned from the turn.",
        for [Procedural], python [Procedural];
    NotifyOnDenial = "notify-on-denial",
        "When the person declines, the model tells the customer so through `notify_requester`, \
         an effect of its own on the denial; judged with the approval pack's arguments as a \
         newcomer writes them.",
        for [ApprovalResume], python [ApprovalResume];
    ApprovalOnTheCall = "approval-on-the-call",
        "The approval sits on the gated call itself, as agent SDKs' `needs_approval` puts it: \
         the pause is the pending `cancel_subscription` call, approval runs it once and a \
         denial resolves it unrun (the pack names the gated tool as the interaction). A person \
         may also amend it (when the cancellation takes effect) or edit it (`editable-calls`), \
         and the call runs as amended or edited. The Python desk holds its escalation so.",
        for [ApprovalResume, ExactlyOnce], python [ApprovalResume];
    ResetIsNewSession = "reset-is-new-session",
        "A reset starts a new session for the conversation instead of deleting anything: \
         pauses are kept, each under the session it was issued in, and a token redeems only \
         in its conversation's current session.",
        for [ApprovalResume], python [ApprovalResume];
    EditRefused = "edit-refused",
        "The approval sits on the gated call and a person may edit it (`editable-calls`), but \
         an edit that changes which customer a cancellation names is refused: the held call is \
         resolved refused (stage `edit-review`), nothing is cancelled, and the person is told \
         to deny the request and ask again.",
        for [ApprovalResume], python [];
    SameKeyRetries = "same-key-retries",
        "Every effect is delivered twice under its idempotency key, as a client whose \
         acknowledgement was lost retries; the ledger refuses the second (the packs count \
         retries with `retries = same_key`).",
        for [Procedural, ApprovalResume, ExactlyOnce], python [Procedural, ApprovalResume, ExactlyOnce];
    InvoiceBeforeCancelling = "invoice-before-cancelling",
        "The approved continuation applies a pair of effects, the final invoice \
         (`issue_final_invoice`) first and the cancellation second, so the gated effect is \
         not the turn's first and a crash can fall between the two. The Python desk sends \
         the supervisor's brief (`brief_supervisor`) before the escalation so.",
        for [ApprovalResume, ExactlyOnce], python [ApprovalResume, ExactlyOnce];
    GatedAliasTool = "gated-alias-tool",
        "A second refund tool, `express_refund`, reaches the refund's effect under the same \
         key for a request worded \"express\"; the gate judges it under the refund's \
         procedures, as it judges `issue_refund`. Judged with `paraphrases`, which the model \
         routes to the express tool.",
        for [Procedural], python [Procedural];
    LogsRefundRequests = "logs-refund-requests",
        "A refund the gate refused is still logged as requested: the desk records a \
         \"refund requested\" row for the order through `log_refund_request`, an effect of its \
         own under a key next to the refund's (`refund:order:7:requested`), as a desk that \
         keeps a trail of what customers asked for does.",
        for [Procedural], python [Procedural];
    RunningTotals = "running-totals",
        "Consolidation keeps running totals: each lesson's supporting episodes are counted in \
         the store as turns arrive, each turn adding its own episode to the lessons it shows, \
         and a lesson is promoted when its total reaches the threshold, instead of re-reading \
         a window of recent episodes every turn (the Python desk's store adds each turn's \
         lesson to its total).",
        for [Procedural], python [Procedural];
    AsksAgainAfterRestart = "asks-again-after-restart",
        "The desk remembers, in memory only, the requests a person approved and it carried \
         out in a conversation, and answers the same request there again as already done, \
         asking nobody and running nothing; after a restart that memory is gone, and the same \
         request asks the person again (a new pause), whose approval the ledger finds applied \
         before.",
        for [ApprovalResume, ExactlyOnce], python [ApprovalResume, ExactlyOnce];
    AsciiEscapedResults = "ascii-escaped-results",
        "Tool results reach the model as Python's `json.dumps` writes them by default, every \
         character outside ASCII as a `\\u` escape, and the forecast service writes its degree \
         sign (the Rust desk's serializer keeps non-ASCII as it is, so it has no such shape).",
        for [], python [ExtensionTool];
}

/// `pack` as an adopter whose approval sits on the gated call writes it:
/// the gated tool is the interaction.
pub fn on_the_call(
    mut pack: symfonic_evals::ApprovalResumePack,
) -> symfonic_evals::ApprovalResumePack {
    if let Some(gated) = &pack.gated_tool {
        pack.interaction_tool.clone_from(gated);
    }
    pack
}

impl Variant {
    /// Whether the desk holds the cancellation itself for a person (the
    /// approval on the call), rather than asking through `ask_user`.
    pub fn holds_the_call(self) -> bool {
        matches!(self, Self::ApprovalOnTheCall | Self::EditRefused)
    }

    /// The pack arguments this variant is judged with: the reference
    /// desk's, except where the variant's shape is one a pack argument
    /// exists for (an added defaulted argument is matched as a subset).
    pub fn definition(self, pack: Pack) -> PackDefinition {
        self.adjusted(crate::packs::definition(pack))
    }

    /// As [`Variant::definition`], for the Python desk.
    pub fn python_definition(self, pack: Pack) -> PackDefinition {
        self.adjusted(crate::python::definition(pack))
    }

    fn adjusted(self, definition: PackDefinition) -> PackDefinition {
        match (self, definition) {
            (Self::DefaultedToolArgument, PackDefinition::ExtensionTool(mut pack)) => {
                pack.argument_match = ArgumentMatch::Subset;
                PackDefinition::ExtensionTool(pack)
            }
            // The pause is the gated tool's own pending call.
            (Self::ApprovalOnTheCall | Self::EditRefused, PackDefinition::ApprovalResume(pack)) => {
                PackDefinition::ApprovalResume(on_the_call(pack))
            }
            // Shapes real frameworks take, judged with the arguments a
            // newcomer writes: the pack infers what the denial must
            // withhold from the runs it makes.
            (Self::NotifyOnDenial | Self::NoticeAtPause, definition) => {
                crate::packs::as_a_newcomer_writes(definition)
            }
            (Self::SameKeyRetries, PackDefinition::ApprovalResume(mut pack)) => {
                pack.retries = Retries::SameKey;
                PackDefinition::ApprovalResume(pack)
            }
            // Other wordings of the refund, which reach the express tool.
            (Self::GatedAliasTool, PackDefinition::Procedural(mut pack)) => {
                pack.paraphrases = vec![
                    "express refund order 5".into(),
                    "express refund order 6, please".into(),
                ];
                PackDefinition::Procedural(pack)
            }
            (Self::SameKeyRetries, PackDefinition::Procedural(mut pack)) => {
                pack.retries = Retries::SameKey;
                PackDefinition::Procedural(pack)
            }
            (Self::SameKeyRetries, PackDefinition::ExactlyOnce(mut pack)) => {
                pack.retries = Retries::SameKey;
                PackDefinition::ExactlyOnce(pack)
            }
            (_, definition) => definition,
        }
    }
}

/// `options` recording the run as `variant` of `deployment` in its report,
/// so the viewer's overview counts it with the honest variants.
fn with_role(
    options: symfonic_evals::RunOptions,
    deployment: &str,
    variant: Variant,
) -> symfonic_evals::RunOptions {
    symfonic_evals::RunOptions {
        role: Some(symfonic_evals::RunRole::HonestVariant {
            deployment: deployment.to_owned(),
            variant: variant.name().to_owned(),
        }),
        ..options
    }
}

/// Runs `pack`, as [`Variant::definition`] gives it, against the Rust desk
/// in the configuration `variant`, with the reference's run options. Each
/// (variant, pack) pair has a run name of its own, so runs side by side
/// are told apart.
pub fn run_rust(variant: Variant, pack: Pack) -> PackRun {
    let definition = variant.definition(pack);
    run_pack(
        &format!(
            "helpdesk::honest::{}::{}",
            variant.name(),
            definition.kind().name()
        ),
        &definition,
        &with_role(crate::packs::run_options(), "helpdesk", variant),
        move |ctx| Helpdesk::open_variant(ctx, variant),
    )
}

/// Runs `pack`, as [`Variant::python_definition`] gives it, against the
/// Python desk started with `--variant`, over the process protocol.
pub fn run_python(variant: Variant, pack: Pack) -> PackRun {
    let spec = crate::python::variant_spec(variant.name());
    let definition = variant.python_definition(pack);
    run_pack(
        &format!(
            "helpdesk-py::honest::{}::{}",
            variant.name(),
            definition.kind().name()
        ),
        &definition,
        &with_role(crate::python::run_options(), "helpdesk-py", variant),
        move |ctx| crate::python::start(ctx, &spec),
    )
}

/// Every way `run` fails a correct deployment, one line each, naming the
/// desk, the variant, the pack, the scenario, the step and the assertion;
/// empty when it passed. A run that never judged (the deployment not built,
/// arguments refused, the pack not applicable) is a complaint too, and so is
/// a probe left out because the deployment hung.
pub fn complaints(desk: &str, variant: Variant, run: &PackRun) -> Vec<String> {
    let at = format!("{desk} variant {}: {}", variant.name(), run.kind().name());
    // The arguments leave out the probes they leave out of the reference's
    // run too; a probe left out for what the deployment did is a failure.
    let mut complaints: Vec<String> = run
        .probes_not_run()
        .iter()
        .filter(|probe| matches!(probe.reason, NotRunReason::DeploymentHung { .. }))
        .map(|probe| format!("{at}: probe {} not run: {}", probe.probe, probe.reason))
        .collect();
    complaints.extend(match run.verdict() {
        Verdict::Passed => Vec::new(),
        Verdict::Failed => run
            .failures()
            .into_iter()
            .map(|f| {
                format!(
                    "{at}: scenario {}, trial {}, step `{}`: {} failed ({}; expected {}, observed {})",
                    f.scenario, f.trial, f.step_label, f.assertion, f.description, f.expected, f.observed
                )
            })
            .collect(),
        other => vec![format!("{at}: not judged: {other:?}")],
    });
    complaints
}

/// `words` random 64-bit words as lower-case hex. Seeded from the standard
/// library's per-process random keys, the clock and a process-wide counter
/// (so two draws in one process never repeat); a production desk would use
/// the operating system's CSPRNG.
pub fn random_words(words: usize) -> Vec<u64> {
    static DRAWS: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    (0..words)
        .map(|_| {
            let mut hasher = RandomState::new().build_hasher();
            hasher.write_u128(nanos);
            hasher.write_u32(std::process::id());
            hasher.write_u64(DRAWS.fetch_add(1, Ordering::Relaxed));
            hasher.finish()
        })
        .collect()
}

/// A version-7 UUID: 48 bits of milliseconds since the epoch, the version,
/// then 74 random bits (with the variant's two).
pub fn uuid_v7() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
        & 0xffff_ffff_ffff;
    let words = random_words(2);
    format!(
        "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
        millis >> 16,
        millis & 0xffff,
        words[0] & 0x0fff,
        0x8000 | ((words[1] >> 48) & 0x3fff),
        words[1] & 0xffff_ffff_ffff
    )
}

/// A random id shaped like a version-4 UUID.
pub fn uuid_like() -> String {
    let words = random_words(2);
    let (a, b) = (words[0], words[1]);
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_variant_is_meant_for_a_pack() {
        let names: std::collections::BTreeSet<_> = Variant::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(names.len(), Variant::ALL.len());
        assert!(Variant::ALL
            .iter()
            .all(|v| !v.packs().is_empty() || !v.python_packs().is_empty()));
    }

    #[test]
    fn uuid_like_ids_have_the_shape_and_do_not_repeat() {
        let a = uuid_like();
        assert_eq!(a.len(), 36, "{a}");
        assert_eq!(a.as_bytes()[14], b'4', "{a}");
        assert_ne!(a, uuid_like());
    }

    #[test]
    fn only_the_defaulted_argument_changes_its_packs_arguments() {
        let subset = Variant::DefaultedToolArgument.definition(Pack::ExtensionTool);
        let PackDefinition::ExtensionTool(pack) = subset else {
            panic!("an extension pack");
        };
        assert_eq!(pack.argument_match, ArgumentMatch::Subset);
        assert_eq!(
            Variant::RandomCallIds
                .definition(Pack::ExtensionTool)
                .fingerprint(),
            crate::packs::definition(Pack::ExtensionTool).fingerprint()
        );
    }
}
