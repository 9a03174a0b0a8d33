//! `symfonic-evals`: the harness's command line.
//!
//! ```text
//! symfonic-evals view [--out DIR] [DIR...]
//! symfonic-evals conformance [--prompt TEXT] [--effect-prompt TEXT] [--effect-state JSON] -- PROGRAM [ARG...]
//! ```
//!
//! `view` rebuilds the evidence viewer (a self-contained `index.html` and a
//! page per pack run, no server or network needed) from the JSON reports in
//! each `DIR` (default: the report directory, `$SYMFONIC_EVALS_REPORT_DIR`
//! or `target/symfonic-evals`), and prints the path of its `index.html`.
//! Several directories (one per CI machine of a partitioned suite) give one
//! viewer, each run showing the machine and partition it ran on. The viewer
//! goes to `--out`, else to the directory itself when there is one, else to
//! `merged/` in the first.
//!
//! `conformance` starts `PROGRAM` as a deployment speaking the process
//! protocol and runs the conformance check against it, so a deployment in
//! any language is checked from its own test suite without writing Rust.

mod conformance;
mod view;

use std::process::ExitCode;

const USAGE: &str = "\
usage: symfonic-evals view [--out DIR] [DIR...]
       symfonic-evals conformance [OPTIONS] -- PROGRAM [ARG...]
(symfonic-evals COMMAND --help for a command's options)";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("view") => view::run(args),
        Some("conformance") => conformance::run(args),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
