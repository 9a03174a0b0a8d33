//! Accounting for a pack run: the verdict, the first failure, a readable
//! table, a JSON report on disk (its typed model in `model`) and the
//! evidence viewer's HTML beside it. Reporting only reports: running a pack
//! is the runner's business.
//!
//! The modules import one way: `model` is the report's shape; `document`
//! builds one from a run; `write` writes it and its index line;
//! `index_digest` reads the index back; `viewer` renders pages from the
//! model and the digest.

mod anchors;
mod atomic;
mod document;
mod index_digest;
mod model;
mod render;
mod run;
mod stats;
mod viewer;
mod write;

pub use document::{PARTITION_ENV, REPORT_SCHEMA_VERSION};
pub use model::{
    ExtensionEvidence, Harness, IndexEstimate, IndexLine, Machine, MissingEntry, PinnedCatch,
    ReportDocument, ReportVerdict, RunRole, ScenarioReport, ScenarioStats, StepAt, INTERVAL_WORDS,
};
pub use run::{Failure, PackRun, ScenarioRun, Verdict};
pub use stats::{wilson_interval, TrialStats};
pub use viewer::{build_viewer, refresh_index, VIEWER_INDEX_FILE};
pub(crate) use write::write_report;
pub use write::{report_dir, INDEX_FILE, REPORT_DIR_ENV};
