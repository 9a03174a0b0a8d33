//! Running a pack end to end and accounting for what happened: the verdict,
//! the first failure, a readable table and a JSON report on disk.

mod render;
mod run;
mod write;

pub use run::{run_pack, Failure, PackRun, RunOptions, Verdict};
pub use write::{report_dir, REPORT_DIR_ENV};
