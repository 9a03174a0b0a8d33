#![doc = include_str!("../README.md")]
//!
//! ## In this documentation
//!
//! The contract pages are the docs of [`ProceduralPack`],
//! [`ApprovalResumePack`], [`ExtensionToolPack`] and [`ExactlyOncePack`];
//! the attributes' arguments are on [`procedural_pack`],
//! [`approval_resume_pack`], [`extension_tool_pack`] and
//! [`exactly_once_pack`]. The evidence a turn reports is [`TurnRecord`],
//! the fixtures the harness owns are [`TargetContext`] and
//! [`SideEffectLedger`], and the shared contracts a deployment builds on are
//! in [`contracts`].
#![warn(missing_docs)]

mod assertion;
mod async_target;
pub mod bounded_read;
mod capability;
mod clock;
pub mod contracts;
mod evidence;
#[cfg(test)]
mod import_cycles;
mod ledger;
pub mod mcp;
mod packs;
pub mod process;
mod redact;
mod registry;
pub mod replay;
mod report;
mod runner;
mod scenario;
mod scratch;
pub mod server_policy;
mod target;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use assertion::{
    ArgumentMatch, Assertion, Check, CrashSeen, Evidence, FixtureEvidence, GateVerdict,
    RetainedPause, Retries,
};
pub use packs::{
    explain_scenario, procedural_review_rows, procedure_identity, resolve_pack, ApprovalResumePack,
    ArgumentError, ExactlyOncePack, ExtensionToolPack, NotRunReason, PackDefinition, PackKind,
    PackResolution, Probe, ProbeNotRun, ProceduralPack, APPROVED, EXPLAIN_ENV, IDEMPOTENT_EFFECTS,
};
pub use redact::{short_digest, SHOW_VALUES_ENV};
pub use registry::{
    check_capability_coverage, check_coverage_by, registered_packs, RegisteredPack,
    UncoveredCapabilities,
};
pub use report::{
    build_viewer, refresh_index, report_dir, wilson_interval, ExtensionEvidence, Failure, Harness,
    IndexEstimate, IndexLine, Machine, MissingEntry, PackRun, PinnedCatch, ReportDocument,
    ReportVerdict, RunRole, ScenarioReport, ScenarioRun, ScenarioStats, StepAt, TrialStats,
    Verdict, INDEX_FILE, INTERVAL_WORDS, PARTITION_ENV, REPORT_DIR_ENV, REPORT_SCHEMA_VERSION,
    VIEWER_INDEX_FILE,
};
pub use runner::{
    run_pack, run_scenario, run_scenario_with, AssertionRun, EffectsProbe, FixtureCallSeen,
    Isolation, RunOptions, Session, StepError, StepErrorKind, StepRun, TrialRun,
    PROGRESS_AFTER_ENV,
};
pub use scenario::{
    Continuation, ErrorMatch, Expect, Forgery, QuestionSource, Restart, Scenario, ScenarioKind,
    Step, StepInput, Tail, TokenSource, TrialPolicy, REQUIRED_ENV, TRIALS_ENV,
};

pub use async_target::AsyncTarget;
#[cfg(feature = "tokio")]
pub use async_target::TokioTarget;
pub use capability::{
    CapabilityEvidence, Missing, Requirements, CONCURRENT_PAUSES, EDITABLE_CALLS,
    PROCEDURAL_PRECONDITION, PROCEDURAL_REVIEW, REPLICAS, RESET,
};
pub use clock::{Clock, CONTEXT_CLOCK};
pub use evidence::{
    is_plain_name, Approvers, EditDecision, EditedAction, ExceptionFrame, ExceptionTrace, Feedback,
    Operation, Pause, PromptRequest, ResetRequest, ResolvedCall, ResumeRequest, ReviewAction,
    ReviewRequest, Role, StageOutcome, StageRecord, Terminal, ToolCall, ToolOutcome, TurnError,
    TurnRecord, TurnRecordBuilder, PAUSED, PAUSE_FACTS, PAUSE_NAME, PAUSE_RESUMABLE,
};
pub use ledger::{
    Applied, EffectCall, LedgerCounts, LedgerEvent, SideEffectLedger, Witness, WitnessOutcome,
};
pub use process::ProcessTarget;
pub use scratch::{scratch_root, SCRATCH_DIR_ENV};
pub use target::{Target, TargetContext};

pub use symfonic_evals_macros::{
    approval_resume_pack, exactly_once_pack, extension_tool_pack, procedural_pack,
};

#[cfg(test)]
mod readme {
    /// The README's Cargo.toml snippet asks for this crate's own version,
    /// so a release that bumps it cannot leave the snippet behind.
    #[test]
    fn the_cargo_snippet_names_this_version() {
        let readme = include_str!("../README.md");
        let snippet = readme
            .split("```toml\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .expect("a toml block");
        let version = env!("CARGO_PKG_VERSION");
        let wanted = version.rsplit_once('.').map_or(version, |(minor, _)| minor);
        assert!(snippet.contains("[dev-dependencies]"), "{snippet}");
        assert!(
            snippet.contains(&format!("symfonic-evals = \"{wanted}\"")),
            "the snippet should ask for {wanted}: {snippet}"
        );
    }
}
