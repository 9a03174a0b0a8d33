//! The contracts a deployment builds on and the packs read: state predicates,
//! procedural drafts and the governance pipeline.
//!
//! They live here, independent of the runner, so that an adopter's deployment
//! and the harness that judges it share one interpreter of every stored
//! contract instead of two copies that drift apart while both keep answering.

mod drafts;
mod extractor;
pub mod governance;
pub(crate) mod path;
mod predicates;

pub use drafts::{Precondition, ProceduralDraft, ProceduralDraftBuilder, ProceduralKind};
pub use extractor::{extract_contained, Episode, ExtractionReport, ProceduralExtractor};
pub use governance::{
    redact_text, redact_value, ApprovedProcedure, BudgetCeiling, CredentialScrubber, FailureMode,
    FnStage, GovernancePipeline, GovernanceStage, GovernanceTrace, Judgement, Payload, Phase,
    PipelineError, ProceduralPrecondition, Rule, RuleBook, StageError, StageVerdict, Subject,
    TraceEntry, BUDGET_CEILING_STAGE, CREDENTIAL_SCRUB_STAGE, PRECONDITION_STAGE, REDACTED,
    REFLECTION_STAGE,
};
pub use path::resolve_path;
pub use predicates::{
    evaluate_state_predicate, precondition_problem, skill_applies, state_predicates_in,
    PredicateOutcome, PREDICATE_OPERATORS,
};
