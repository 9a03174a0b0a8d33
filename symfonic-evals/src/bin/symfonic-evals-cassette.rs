//! `symfonic-evals-cassette`: the review step of model replay.
//!
//! Recording writes new exchanges to `<cassette>.pending.jsonl`, and replay
//! never uses them. After reading a pending file (it is plain JSON lines, so
//! `git diff --no-index` or any viewer shows it), accept it into its
//! cassette with this command, then commit the cassette:
//!
//! ```text
//! symfonic-evals-cassette accept <cassette | pending file | directory>...
//! symfonic-evals-cassette check  <cassette | directory>...
//! ```
//!
//! A directory stands for every cassette (or pending file) in it. `check`
//! loads each cassette strictly and reports its exchanges, or the file and
//! line of the first malformed one. Volatile fields beyond the defaults are
//! given with `--volatile <path>` (repeatable), as in `ReplayConfig`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use symfonic_evals::replay::{accept_pending, Cassette, DEFAULT_VOLATILE_FIELDS};

const USAGE: &str =
    "usage: symfonic-evals-cassette <accept|check> [--volatile PATH]... <cassette|pending|dir>...";

/// The cassette a path names: a pending file's cassette, or itself.
fn cassette_of(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.strip_suffix(".pending.jsonl") {
        Some(stem) => path.with_file_name(format!("{stem}.jsonl")),
        None => path.to_owned(),
    }
}

/// Every cassette `arg` stands for; for `accept`, only those with a pending file.
fn cassettes(arg: &Path, pending_only: bool) -> Result<Vec<PathBuf>, String> {
    if !arg.is_dir() {
        return Ok(vec![cassette_of(arg)]);
    }
    let entries = std::fs::read_dir(arg).map_err(|e| format!("{}: {e}", arg.display()))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if pending_only {
                name.ends_with(".pending.jsonl")
            } else {
                name.ends_with(".jsonl") && !name.ends_with(".pending.jsonl")
            }
        })
        .map(|p| cassette_of(&p))
        .collect();
    found.sort();
    Ok(found)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(command) = args.next() else {
        eprintln!("{USAGE}");
        return ExitCode::FAILURE;
    };
    let mut volatile: Vec<String> = DEFAULT_VOLATILE_FIELDS
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let mut paths = Vec::new();
    while let Some(arg) = args.next() {
        if arg == "--volatile" {
            match args.next() {
                Some(field) => volatile.push(field),
                None => {
                    eprintln!("{USAGE}");
                    return ExitCode::FAILURE;
                }
            }
        } else {
            paths.push(PathBuf::from(arg));
        }
    }
    if paths.is_empty() || !matches!(command.as_str(), "accept" | "check") {
        eprintln!("{USAGE}");
        return ExitCode::FAILURE;
    }
    let mut failed = false;
    for arg in &paths {
        let found = match cassettes(arg, command == "accept") {
            Ok(found) => found,
            Err(error) => {
                eprintln!("{error}");
                failed = true;
                continue;
            }
        };
        if found.is_empty() {
            println!("{}: nothing to {command}", arg.display());
        }
        for cassette in found {
            let result = if command == "accept" {
                accept_pending(&cassette, &volatile).map(|a| {
                    format!(
                        "accepted: {} added, {} replaced, {} kept",
                        a.added, a.replaced, a.kept
                    )
                })
            } else {
                Cassette::load(&cassette, &volatile).map(|c| format!("ok: {} exchange(s)", c.len()))
            };
            match result {
                Ok(message) => println!("{}: {message}", cassette.display()),
                Err(error) => {
                    eprintln!("{error}");
                    failed = true;
                }
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
