//! The tests that read the reports their runs write, in one binary: every
//! test first points the binary's reports at a directory of its own
//! (`common::private_report_dir`, which sets the variable once, before any
//! run reads it), so no test here may run a pack before calling it. Run one
//! subject with its name as the filter, e.g. `cargo test -p symfonic-evals
//! --test reports secrets::`; the browser tests are ignored without a
//! browser (`-- --include-ignored viewer_browser::` runs them).

mod common;

mod render_snapshots;
mod report;
mod secrets;
mod viewer_browser;
