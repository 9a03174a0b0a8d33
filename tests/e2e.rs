//! The end-to-end tests: packs run against the reference deployments (the
//! Rust help desk, the Python desks, the framework desks), their twins and
//! honest variants, the replay endpoint, isolation from a program's own
//! `main`. One module per subject; run one with its name as the filter, e.g.
//! `cargo test -p symfonic-evals-e2e --test e2e python_packs::`.
//!
//! The attribute macros' own end-to-end test (`macros_e2e`) stays a binary
//! of its own: it asserts on every pack its binary registers.

mod framework_desks;
mod helpdesk_honest;
mod helpdesk_packs;
mod helpdesk_twins;
mod isolated_program;
mod python_mcp;
mod python_packs;
mod replay_desks;
mod replay_endpoint;
mod replay_security;
mod typescript_packs;
