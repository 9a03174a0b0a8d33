//! The governance pipeline: stages that judge a turn's query, tool calls,
//! tool results and draft answer, in an order a rulebook fixes.
//!
//! The pipeline owns what no single stage can: the order (checked against the
//! rulebook when it is built), declaration integrity (a stage cannot declare
//! itself fail-open where its rule says fail-closed), containment (a stage
//! that errors or panics is handled by its own failure mode), and the trace of
//! every answer, which converts directly into a turn record's governance trace.

mod budget;
mod pipeline;
mod precondition;
mod rulebook;
mod scrub;
mod stage;
mod trace;

pub use budget::BudgetCeiling;
pub use pipeline::GovernancePipeline;
pub use precondition::{ApprovedProcedure, ProceduralPrecondition};
pub use rulebook::{
    FailureMode, Phase, PipelineError, Rule, RuleBook, BUDGET_CEILING_STAGE,
    CREDENTIAL_SCRUB_STAGE, PRECONDITION_STAGE, REFLECTION_STAGE,
};
pub use scrub::{redact_text, redact_value, CredentialScrubber, REDACTED};
pub use stage::{FnStage, GovernanceStage, Judgement, Payload, StageError, StageVerdict, Subject};
pub use trace::{GovernanceTrace, TraceEntry};
