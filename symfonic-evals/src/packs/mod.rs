//! The three capability packs, as library functions the macros expand into.
//! Each says only what to run: its seed scenario and its probes. How a trial
//! runs is the runner's business, and accounting for it the report's.

pub mod approval;
mod arguments;
mod definition;
pub mod exactly_once;
mod explain;
pub mod extension;
pub mod probes;
pub mod procedural;
mod review;
mod serde_forms;

pub use approval::ApprovalResumePack;
pub use arguments::ArgumentError;
pub(crate) use definition::sorted as with_sorted_keys;
pub use definition::{resolve_pack, PackDefinition, PackKind, PackResolution};
pub use exactly_once::{ExactlyOncePack, IDEMPOTENT_EFFECTS};
pub(crate) use explain::explaining;
pub use explain::{explain_scenario, EXPLAIN_ENV};
pub use extension::ExtensionToolPack;
pub use probes::{NotRunReason, Probe, ProbeNotRun};
pub use procedural::{ProceduralPack, APPROVED};
pub use review::{procedural_review_rows, procedure_identity};
