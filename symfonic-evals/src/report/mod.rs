//! Accounting for a pack run: the verdict, the first failure, a readable
//! table and a JSON report on disk. Reporting only reports: running a pack
//! is the runner's business.

mod document;
mod render;
mod run;
mod stats;
mod write;

pub use document::REPORT_SCHEMA_VERSION;
pub use run::{Failure, PackRun, ScenarioRun, Verdict};
pub use stats::{wilson_interval, TrialStats};
pub(crate) use write::write_report;
pub use write::{report_dir, INDEX_FILE, REPORT_DIR_ENV};
