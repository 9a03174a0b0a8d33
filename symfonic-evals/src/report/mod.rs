//! Accounting for a pack run: the verdict, the first failure, a readable
//! table, a JSON report on disk and the evidence viewer's HTML beside it. Reporting only reports: running a pack
//! is the runner's business.

mod document;
mod index_digest;
mod render;
mod run;
mod stats;
mod viewer;
mod write;

pub use document::{PARTITION_ENV, REPORT_SCHEMA_VERSION};
pub use run::{Failure, PackRun, ScenarioRun, Verdict};
pub use stats::{wilson_interval, TrialStats};
pub use viewer::{build_viewer, refresh_index, VIEWER_INDEX_FILE};
pub(crate) use write::write_report;
pub use write::{report_dir, INDEX_FILE, REPORT_DIR_ENV};
