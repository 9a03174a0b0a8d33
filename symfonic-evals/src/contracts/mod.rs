//! The contracts a deployment builds on and the packs read: state predicates,
//! procedural drafts and the governance pipeline.
