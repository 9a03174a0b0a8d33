//! A Rust deployment served from a re-executed test binary cannot tell it
//! is tested: searching its environment, its arguments, its thread's name
//! and its durable directory for the harness's name or the word "harness",
//! it finds only what the test binary was started with.
//!
//! The served child is the adopter's own test binary, so it inherits that
//! binary's environment and runs its test again (whose name libtest needs
//! in the arguments). What the harness adds must be neutral: the parent
//! leaves a snapshot of its own environment and arguments where the child
//! finds it by its parent's id, and the deployment reports every hit that
//! is not in the snapshot.
//!
//! No test of its binary (`suite`) changes the environment, so none does
//! between the snapshot and the child's start.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use symfonic_evals::process::SERVE_RUN_ENV;
use symfonic_evals::{
    run_scenario_with, Assertion, CapabilityEvidence, Isolation, PromptRequest, Scenario, Step,
    Target, TargetContext, TrialPolicy, TurnError, TurnRecord,
};

const WORDS: [&str; 3] = ["symfonic", "evals", "harness"];

fn hits(text: &str) -> bool {
    let lowered = text.to_lowercase();
    WORDS.iter().any(|word| lowered.contains(word))
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Snapshot {
    env: BTreeMap<String, String>,
    args: Vec<String>,
}

fn snapshot_path(pid: u32) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("blind-parent-{pid}.json"))
}

/// Searches where it runs, and answers with what it found beyond the
/// parent's own environment and arguments.
struct Searcher {
    durable_dir: PathBuf,
}

impl Searcher {
    fn found(&self) -> Result<Vec<String>, String> {
        let parent = std::os::unix::process::parent_id();
        let text = std::fs::read_to_string(snapshot_path(parent))
            .map_err(|_| "not served from a child of the test".to_owned())?;
        let snapshot: Snapshot = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let mut found = Vec::new();
        for (name, value) in std::env::vars() {
            if (hits(&name) || hits(&value)) && snapshot.env.get(&name) != Some(&value) {
                found.push(format!("env {name}={value}"));
            }
        }
        // The test's own name (the libtest filter) is the adopter's word.
        let test = "a_served_deployment_finds_nothing_of_what_serves_it";
        for arg in std::env::args().filter(|arg| hits(arg)) {
            if !snapshot.args.contains(&arg) && arg != test {
                found.push(format!("arg {arg}"));
            }
        }
        let thread = std::thread::current().name().unwrap_or_default().to_owned();
        if hits(&thread) {
            found.push(format!("thread {thread}"));
        }
        let durable = self.durable_dir.to_string_lossy().into_owned();
        if hits(&durable) {
            found.push(format!("durable {durable}"));
        }
        Ok(found)
    }
}

impl Target for Searcher {
    fn capabilities(&self) -> CapabilityEvidence {
        CapabilityEvidence::new()
    }

    fn run_turn(&mut self, _: &PromptRequest) -> Result<TurnRecord, TurnError> {
        let answer = match self.found() {
            Ok(found) => format!("hits={found:?}"),
            Err(why) => why,
        };
        Ok(TurnRecord::builder().answer(answer).build())
    }
}

#[test]
fn a_served_deployment_finds_nothing_of_what_serves_it() {
    if std::env::var_os(SERVE_RUN_ENV).is_none() {
        let snapshot = Snapshot {
            env: std::env::vars().collect(),
            args: std::env::args().collect(),
        };
        std::fs::write(
            snapshot_path(std::process::id()),
            serde_json::to_vec(&snapshot).unwrap(),
        )
        .unwrap();
    }
    let scenario = Scenario::new(
        "blind",
        vec![Step::prompt("search", "look around", "c")
            .asserting([Assertion::ResponseContains(vec!["hits=[]".into()])])],
        TrialPolicy::all_of(1),
    );
    let trials = run_scenario_with(&scenario, Isolation::Process, |ctx: &TargetContext| {
        Searcher {
            durable_dir: ctx.durable_dir().to_owned(),
        }
    });
    let _ = std::fs::remove_file(snapshot_path(std::process::id()));
    assert!(!trials.is_empty());
    for step in trials.iter().flat_map(|trial| &trial.steps) {
        assert!(step.passed(), "{step:#?}");
    }
}
