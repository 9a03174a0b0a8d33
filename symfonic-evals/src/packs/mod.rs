//! The three capability packs, as library functions the macros expand into.

mod approval;
mod definition;
mod extension;
mod procedural;
mod review;

pub use approval::ApprovalResumePack;
pub use definition::{resolve_pack, ArgumentError, PackDefinition, PackKind, PackResolution};
pub use extension::ExtensionToolPack;
pub use procedural::{ProceduralPack, APPROVED};
pub use review::{procedural_review_rows, procedure_identity};
