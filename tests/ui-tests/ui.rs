//! Compile-time behaviour of the pack attributes: every check is a
//! compile-fail case with its reviewed message.
//!
//! Every argument form that must compile (under `#![deny(warnings)]`) is a
//! program in `ui/pass/`, built and run as a test target of this crate
//! (`Cargo.toml` lists them): a pass case in trybuild would make it build
//! every case, one cargo run each, instead of checking them all in one.

#[test]
fn ui() {
    // trybuild checks the cases in a target directory of its own, building
    // their dependencies there first (most of this test's time on a fresh
    // clone). Without debug information, which no diagnostic depends on,
    // that build costs about a tenth less. This is the binary's only test:
    // nothing else reads the environment meanwhile.
    std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "0");
    trybuild::TestCases::new().compile_fail("ui/fail/*.rs");
}
