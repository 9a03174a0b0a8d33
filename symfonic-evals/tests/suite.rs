//! The library's integration tests, one module per subject, in one binary:
//! linked once instead of once per subject, and its tests run side by side
//! instead of one binary after another. Run one subject with its name as the
//! filter, e.g. `cargo test -p symfonic-evals --test suite runner::`.
//!
//! No test here changes its process's environment (several re-execute this
//! binary, or search what a child inherits, and rely on that). Those that
//! must are elsewhere: `reports` (the tests that read the reports their runs
//! write, into a directory they set), and a binary for each test that sets
//! variables of its own (`process_blind`, `process_environment`,
//! `process_exception`, `viewer_merge`).

mod common;

mod assertions;
mod async_target;
mod cassette_links;
mod contracts_governance;
mod contracts_predicates;
mod exactly_once;
mod gated_effects;
mod hanging;
mod isolation;
mod isolation_blind;
mod mcp_delivery;
mod mcp_fixture;
mod mcp_policy;
mod packs_arguments;
mod packs_discrimination;
mod parser_boundaries;
mod process_fork_server;
mod process_large_lines;
mod process_protocol;
mod process_robustness;
mod process_stderr_tail;
mod runner;
mod seed_pins;
