//! What a test's earlier runs produced, handed to the child that serves a
//! later one.
//!
//! A served child re-runs the test from the top until it reaches the run it
//! serves, passing through the runs before it. Running those again would be
//! slow, and a hostile deployment could end the child on the way; returning
//! an empty result would let the test's own checks between runs go another
//! way than they did in the parent. So the parent writes every run it
//! finishes on a thread to that thread's history file, and the child returns
//! each earlier run exactly as the parent saw it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::super::outcome::TrialRun;
use crate::process::SERVE_HISTORY_ENV;
use crate::report::PackRun;

/// One earlier run's outcome.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Recorded {
    /// A pack run.
    Pack(Box<PackRun>),
    /// A scenario's trials.
    Trials(Vec<TrialRun>),
}

#[derive(Serialize, Deserialize)]
struct Entry {
    name: String,
    occurrence: u32,
    outcome: Recorded,
}

thread_local! {
    /// This thread's history file, removed when the thread ends.
    static WRITTEN: RefCell<Option<tempfile::NamedTempFile>> = const { RefCell::new(None) };
    /// The history this child was handed, read once.
    static READ: RefCell<Option<HashMap<(String, u32), Recorded>>> = const { RefCell::new(None) };
}

/// Appends a finished run to the calling thread's history. A history that
/// cannot be written costs only the fidelity of a later child's pass over
/// this run, so the error is dropped.
pub(crate) fn record(name: &str, occurrence: u32, outcome: Recorded) {
    let entry = Entry {
        name: name.to_owned(),
        occurrence,
        outcome,
    };
    let Ok(mut line) = serde_json::to_vec(&entry) else {
        return;
    };
    line.push(b'\n');
    WRITTEN.with(|file| {
        let mut file = file.borrow_mut();
        if file.is_none() {
            *file = tempfile::Builder::new()
                .prefix("symfonic-evals-history-")
                .tempfile()
                .ok();
        }
        if let Some(file) = file.as_mut() {
            let _ = file.write_all(&line).and_then(|()| file.flush());
        }
    });
}

/// The calling thread's history file, for a child it starts.
pub(crate) fn path() -> Option<PathBuf> {
    WRITTEN.with(|file| file.borrow().as_ref().map(|f| f.path().to_owned()))
}

/// The outcome the parent recorded for the `occurrence`-th run of `name`.
pub(crate) fn recorded(name: &str, occurrence: u32) -> Option<Recorded> {
    READ.with(|read| {
        let mut read = read.borrow_mut();
        let history = read.get_or_insert_with(load);
        history.get(&(name.to_owned(), occurrence)).cloned()
    })
}

fn load() -> HashMap<(String, u32), Recorded> {
    let Some(path) = std::env::var_os(SERVE_HISTORY_ENV) else {
        return HashMap::new();
    };
    let Ok(file) = std::fs::File::open(path) else {
        return HashMap::new();
    };
    std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<Entry>(&line).ok())
        .map(|entry| ((entry.name, entry.occurrence), entry.outcome))
        .collect()
}
