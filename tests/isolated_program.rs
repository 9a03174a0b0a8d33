//! A program (not a test) that runs a scenario isolated from its own
//! `main`: the re-executed child gets the program's arguments, and a child
//! that dies before it connects is reported with what it wrote to stderr.
#![cfg(unix)]

use std::process::Command;

fn program(args: &[&str]) -> (bool, String) {
    // A full backtrace is longer than the quoted tail: the quote must
    // still start at the panic.
    let output = Command::new(env!("CARGO_BIN_EXE_isolated-program"))
        .args(args)
        .env("RUST_BACKTRACE", "full")
        .output()
        .expect("the program runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn the_re_executed_child_reads_the_programs_arguments() {
    let (passed, out) = program(&["word-5e2b"]);
    assert!(passed, "{out}");
    assert_eq!(out.trim(), "passed");
}

#[test]
fn a_child_that_dies_before_it_connects_is_reported_with_its_stderr() {
    let (passed, out) = program(&["word-5e2b", "--die-in-child"]);
    assert!(!passed, "{out}");
    assert!(out.contains("before it connected"), "{out}");
    assert!(out.contains("exit status: 101"), "{out}");
    assert!(
        out.contains("the program's set-up failed: marker-c41d"),
        "the child's panic is quoted: {out}"
    );
}
