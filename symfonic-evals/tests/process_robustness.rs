//! Every way an out-of-process deployment can break the protocol ends the
//! step with an error naming the cause, never deadlocks, and leaves no
//! process behind.
#![cfg(unix)]

/// Every child here is a fresh interpreter.
const FORK_SERVER: bool = false;

include!("process_support/robustness_cases.rs");
