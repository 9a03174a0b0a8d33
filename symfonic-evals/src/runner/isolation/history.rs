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
use std::sync::OnceLock;

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

/// Which run an entry records. Each entry is one line: this key as JSON, a
/// tab, then the outcome as JSON (a tab never occurs inside JSON text), so
/// a child reads every key but parses only the outcomes it looks up.
#[derive(Serialize, Deserialize)]
struct Key {
    name: String,
    occurrence: u32,
}

thread_local! {
    /// This thread's history file, removed when the thread ends.
    static WRITTEN: RefCell<Option<tempfile::NamedTempFile>> = const { RefCell::new(None) };
}

/// The history this child was handed, read once: each run's outcome, not
/// yet parsed.
static READ: OnceLock<HashMap<(String, u32), String>> = OnceLock::new();

/// Appends a finished run to the calling thread's history. A history that
/// cannot be written costs only the fidelity of a later child's pass over
/// this run, so the error is dropped.
pub(crate) fn record(name: &str, occurrence: u32, outcome: Recorded) {
    let key = Key {
        name: name.to_owned(),
        occurrence,
    };
    let (Ok(mut line), Ok(outcome)) = (serde_json::to_vec(&key), serde_json::to_vec(&outcome))
    else {
        return;
    };
    line.push(b'\t');
    line.extend(outcome);
    line.push(b'\n');
    WRITTEN.with(|file| {
        let mut file = file.borrow_mut();
        if file.is_none() {
            *file = tempfile::Builder::new()
                .prefix("h-")
                .tempfile_in(crate::scratch::scratch_root())
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
    let outcome = READ.get_or_init(load).get(&(name.to_owned(), occurrence))?;
    serde_json::from_str(outcome).ok()
}

fn load() -> HashMap<(String, u32), String> {
    let Some(path) = std::env::var_os(SERVE_HISTORY_ENV) else {
        return HashMap::new();
    };
    let Ok(bytes) = crate::bounded_read::read_regular(
        std::path::Path::new(&path),
        crate::bounded_read::max_file_bytes(),
    ) else {
        return HashMap::new();
    };
    bytes
        .as_slice()
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| {
            let (key, outcome) = line.split_once('\t')?;
            let key: Key = serde_json::from_str(key).ok()?;
            Some(((key.name, key.occurrence), outcome.to_owned()))
        })
        .collect()
}
