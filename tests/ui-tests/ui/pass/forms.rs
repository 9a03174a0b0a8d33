//! The argument forms that must compile and register what they say, one
//! module per case, linked as one program: each case was a program of its
//! own, and linking eight copies of the library for eight short checks cost
//! the test build more than the checks. Each module keeps its own
//! `#![deny(warnings)]` (and lints), and checks only the packs written in
//! it ([`symfonic_evals_ui::registered_in`]).
//!
//! The cases that run a pack stay programs of their own
//! (`async_builder.rs`, `policy_and_options.rs`, `shared_builder.rs`): an
//! isolated run re-executes its program up to the run, which should then be
//! that case's alone.
#![deny(warnings)]

#[path = "approval_all_arguments.rs"]
mod approval_all_arguments;
#[path = "exactly_once_forms.rs"]
mod exactly_once_forms;
#[path = "extension_forms.rs"]
mod extension_forms;
#[path = "fingerprint_defaults.rs"]
mod fingerprint_defaults;
#[path = "forwarded_fragments.rs"]
mod forwarded_fragments;
#[path = "function_forms.rs"]
mod function_forms;
#[path = "json_forms.rs"]
mod json_forms;
#[path = "procedural_all_arguments.rs"]
mod procedural_all_arguments;

fn main() {
    approval_all_arguments::check();
    exactly_once_forms::check();
    extension_forms::check();
    fingerprint_defaults::check();
    forwarded_fragments::check();
    function_forms::check();
    json_forms::check();
    procedural_all_arguments::check();
}
