//! Compile-time behaviour of the pack attributes: every check is a
//! compile-fail case with its reviewed message.
//!
//! Every argument form that must compile (under `#![deny(warnings)]`) is a
//! program in `ui/pass/`, built and run as a test target of this crate
//! (`Cargo.toml` lists them): a pass case in trybuild would make it build
//! every case, one cargo run each, instead of checking them all in one.

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("ui/fail/*.rs");
}
