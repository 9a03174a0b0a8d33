//! `symfonic-evals view`: the evidence viewer rebuilt from report
//! directories.

use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: symfonic-evals view [--out DIR] [DIR...]";

const HELP: &str = "\
usage: symfonic-evals view [--out DIR] [DIR...]

Rebuilds the evidence viewer (index.html and a page per pack run; no server
or network needed) from the JSON reports in each DIR, and prints the path of
its index.html.

  DIR        a report directory (default: $SYMFONIC_EVALS_REPORT_DIR, else
             target/symfonic-evals); several give one merged viewer
  --out DIR  where the viewer goes (default: the directory itself when
             there is one, else merged/ in the first)
  -h, --help this help";

/// Runs `view` with the arguments after the command's name.
pub(crate) fn run(mut args: impl Iterator<Item = String>) -> ExitCode {
    let mut out = None;
    let mut dirs = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            println!("{HELP}");
            return ExitCode::SUCCESS;
        } else if arg == "--out" {
            let Some(dir) = args.next() else {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            };
            out = Some(PathBuf::from(dir));
        } else if arg.starts_with('-') {
            eprintln!("unknown option {arg}\n{USAGE}");
            return ExitCode::from(2);
        } else {
            dirs.push(PathBuf::from(arg));
        }
    }
    if dirs.is_empty() {
        dirs.push(symfonic_evals::report_dir());
    }
    let out = out.unwrap_or_else(|| match dirs.as_slice() {
        [one] => one.clone(),
        [first, ..] => first.join("merged"),
        [] => unreachable!("a directory was added above"),
    });
    if let Some(missing) = dirs.iter().find(|dir| !dir.is_dir()) {
        eprintln!(
            "symfonic-evals view: no report directory at {} (run the tests first, or name one)",
            missing.display()
        );
        return ExitCode::FAILURE;
    }
    match symfonic_evals::build_viewer(&dirs, &out) {
        Ok(index) => {
            println!("{}", index.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("symfonic-evals view: {error}");
            ExitCode::FAILURE
        }
    }
}
