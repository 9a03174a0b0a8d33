//! Compile-time behaviour of the pack attributes: every check is a
//! compile-fail case with its reviewed message, every argument form a case
//! that must compile (under `#![deny(warnings)]`).

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("ui/pass/*.rs");
    cases.compile_fail("ui/fail/*.rs");
}
